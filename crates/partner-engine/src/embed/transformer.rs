//! A sentence-transformers model run in process: a BERT encoder (with
//! candle, on the CPU) whose token vectors are pooled over the attention
//! mask and normalised, as the `sentence-transformers` library does. Far
//! better at paraphrases than a static model ("small rodent got loose"
//! finds "the hamster escaped"), and slower: about a hundred short texts a
//! second on two cores.
//!
//! The directory is read as the library writes it: `config.json` (the
//! BERT), `model.safetensors` (float32 or float16 weights, computed in
//! float32), `tokenizer.json`, `1_Pooling/config.json` (mean or CLS
//! pooling), `sentence_bert_config.json` (the longest input) and
//! `modules.json` (whether a `Normalize` module follows). Every file is
//! read with a size bound and every figure of the config is checked before
//! anything is allocated from it; a broken or hostile model is an error,
//! never a panic.

use std::path::Path;

use bert_tokenizers::Tokenizer;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde::Deserialize;

use super::{EmbedError, Embedder, in_batches, read_bounded as read};

/// Largest files read.
const MAX_TOKENIZER: u64 = 64 << 20;
const MAX_WEIGHTS: u64 = 2 << 30;
const MAX_SMALL: u64 = 1 << 20;

/// Largest figures a config may give (a BERT-large is 1024 wide, 24 deep).
const MAX_HIDDEN: usize = 4096;
const MAX_LAYERS: usize = 48;
const MAX_VOCAB: usize = 1 << 20;
const MAX_POSITIONS: usize = 8192;

/// Longest input in tokens when the model does not say (the
/// sentence-transformers default for this family).
const DEFAULT_MAX_TOKENS: usize = 256;

/// Texts run through the encoder at once: sorted by length first, so a
/// group pads little.
const GROUP: usize = 16;

/// How token vectors become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    /// The mean over the tokens the attention mask keeps.
    Mean,
    /// The first token's vector.
    Cls,
}

/// A loaded sentence-transformers BERT model.
pub struct Transformer {
    model: BertModel,
    tokenizer: Tokenizer,
    pooling: Pooling,
    normalize: bool,
    max_tokens: usize,
    dims: usize,
    id: String,
}

impl std::fmt::Debug for Transformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transformer").field("id", &self.id).finish()
    }
}

/// The small JSON file `name` of `dir`, when it is there.
fn optional_json<T: for<'de> Deserialize<'de>>(
    dir: &Path,
    name: &str,
) -> Result<Option<T>, EmbedError> {
    if !dir.join(name).is_file() {
        return Ok(None);
    }
    let bytes = read(dir, name, MAX_SMALL)?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| EmbedError::Failed(format!("{}: {e}", dir.join(name).display())))
}

#[derive(Deserialize)]
struct PoolingFile {
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct Module {
    #[serde(rename = "type", default)]
    kind: String,
}

/// Checks the figures of a BERT config before any tensor is made from them.
fn check_config(config: &Config) -> Result<(), String> {
    let bad = |what: &str, value: usize, max: usize| {
        Err(format!("{what} is {value}; 1 to {max} accepted"))
    };
    for (what, value, max) in [
        ("hidden_size", config.hidden_size, MAX_HIDDEN),
        ("num_hidden_layers", config.num_hidden_layers, MAX_LAYERS),
        (
            "num_attention_heads",
            config.num_attention_heads,
            MAX_HIDDEN,
        ),
        (
            "intermediate_size",
            config.intermediate_size,
            4 * MAX_HIDDEN,
        ),
        ("vocab_size", config.vocab_size, MAX_VOCAB),
        (
            "max_position_embeddings",
            config.max_position_embeddings,
            MAX_POSITIONS,
        ),
        ("type_vocab_size", config.type_vocab_size, 16),
    ] {
        if value == 0 || value > max {
            return bad(what, value, max);
        }
    }
    if !config
        .hidden_size
        .is_multiple_of(config.num_attention_heads)
    {
        return Err(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            config.hidden_size, config.num_attention_heads
        ));
    }
    Ok(())
}

impl Transformer {
    /// The sentence-transformers model in `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let failed = |why: String| EmbedError::Failed(format!("{}: {why}", dir.display()));
        let config: Config = serde_json::from_slice(&read(dir, "config.json", MAX_SMALL)?)
            .map_err(|e| failed(format!("config.json: {e}")))?;
        check_config(&config).map_err(|e| failed(format!("config.json: {e}")))?;
        let pooling = pooling(dir)?;
        let normalize = optional_json::<Vec<Module>>(dir, "modules.json")?
            .is_none_or(|modules| modules.iter().any(|m| m.kind.ends_with("Normalize")));
        let max_tokens = optional_json::<SentenceConfig>(dir, "sentence_bert_config.json")?
            .and_then(|c| c.max_seq_length)
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .clamp(1, config.max_position_embeddings);
        let tokenizer_bytes = read(dir, "tokenizer.json", MAX_TOKENIZER)?;
        let weights = read(dir, "model.safetensors", MAX_WEIGHTS)?;
        let dims = config.hidden_size;
        let loaded = partner_core::isolate::contain(move || {
            let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
                .map_err(|e| format!("tokenizer.json: {e}"))?;
            tokenizer.with_padding(None);
            tokenizer
                .with_truncation(None)
                .map_err(|e| format!("tokenizer.json: {e}"))?;
            // Float16 files are computed in float32: candle's BERT masks
            // with f32::MIN, which is −∞ in float16 (and ∞·0 is NaN).
            let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
                .map_err(|e| format!("model.safetensors: {e}"))?;
            let model =
                BertModel::load(vb, &config).map_err(|e| format!("model.safetensors: {e}"))?;
            Ok::<_, String>((model, tokenizer))
        })
        .map_err(|panic| failed(format!("the model could not be read ({panic})")))?
        .map_err(failed)?;
        let (model, tokenizer) = loaded;
        let name = dir
            .file_name()
            .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
        Ok(Transformer {
            id: format!("transformer:{name}:{dims}"),
            dims,
            model,
            tokenizer,
            pooling,
            normalize,
            max_tokens,
        })
    }

    /// Vectors for one group of texts (at most [`GROUP`]).
    fn encode_group(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let mut ids: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
        for text in texts {
            let encoding = self
                .tokenizer
                .encode(text.as_str(), true)
                .map_err(|e| format!("the tokenizer failed: {e}"))?;
            let mut tokens = encoding.get_ids().to_vec();
            if tokens.len() > self.max_tokens {
                // Keep the closing [SEP]: the model was trained with it.
                let last = tokens.last().copied();
                tokens.truncate(self.max_tokens);
                if let (Some(last), Some(end)) = (last, tokens.last_mut()) {
                    *end = last;
                }
            }
            ids.push(tokens);
        }
        let width = ids.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let mut flat = Vec::with_capacity(ids.len() * width);
        let mut mask = Vec::with_capacity(ids.len() * width);
        for tokens in &ids {
            flat.extend(tokens.iter().copied());
            flat.extend(std::iter::repeat_n(0u32, width - tokens.len()));
            mask.extend(std::iter::repeat_n(1u32, tokens.len()));
            mask.extend(std::iter::repeat_n(0u32, width - tokens.len()));
        }
        let shape = (ids.len(), width);
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let input = Tensor::from_vec(flat, shape, &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, shape, &Device::Cpu)?;
            let types = input.zeros_like()?;
            let out = self.model.forward(&input, &types, Some(&mask))?;
            let pooled = match self.pooling {
                Pooling::Cls => out.narrow(1, 0, 1)?.squeeze(1)?,
                Pooling::Mean => {
                    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                    let sum = out.broadcast_mul(&mask)?.sum(1)?;
                    let count = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
                    sum.broadcast_div(&count)?
                }
            };
            let pooled = if self.normalize {
                let norm = pooled
                    .sqr()?
                    .sum_keepdim(1)?
                    .sqrt()?
                    .clamp(1e-12f32, f32::MAX)?;
                pooled.broadcast_div(&norm)?
            } else {
                pooled
            };
            pooled.to_vec2::<f32>()
        };
        run().map_err(|e| format!("the model failed: {e}"))
    }
}

/// The pooling `1_Pooling/config.json` asks for (mean when absent).
fn pooling(dir: &Path) -> Result<Pooling, EmbedError> {
    let Some(file) = optional_json::<PoolingFile>(dir, "1_Pooling/config.json")? else {
        return Ok(Pooling::Mean);
    };
    match (
        file.pooling_mode_mean_tokens,
        file.pooling_mode_cls_token,
        file.pooling_mode_max_tokens,
    ) {
        (true, false, false) => Ok(Pooling::Mean),
        (false, true, false) => Ok(Pooling::Cls),
        _ => Err(EmbedError::Failed(format!(
            "{}: 1_Pooling/config.json asks for a pooling partner does not do (mean or CLS, one of them)",
            dir.display()
        ))),
    }
}

impl Embedder for Transformer {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        in_batches(texts, |batch| {
            // Shortest first, so each group pads to about its own length;
            // the vectors go back in the texts' order.
            let mut order: Vec<usize> = (0..batch.len()).collect();
            order.sort_by_key(|&i| batch[i].len());
            let mut vectors = vec![Vec::new(); batch.len()];
            for group in order.chunks(GROUP) {
                let texts: Vec<String> = group.iter().map(|&i| batch[i].clone()).collect();
                let made = partner_core::isolate::contain(|| self.encode_group(&texts))
                    .map_err(|panic| {
                        EmbedError::Failed(format!("the model failed on a text ({panic})"))
                    })?
                    .map_err(EmbedError::Failed)?;
                for (&i, vector) in group.iter().zip(made) {
                    vectors[i] = vector;
                }
            }
            if vectors.iter().any(|v| v.len() != self.dims) {
                return Err(EmbedError::Failed(format!(
                    "the model gave vectors that are not of {} dimensions",
                    self.dims
                )));
            }
            Ok(vectors)
        })
    }
}
