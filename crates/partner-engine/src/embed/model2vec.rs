//! A local Model2Vec model: static token embeddings averaged, fast on a
//! CPU, no network. The directory's files are read with size bounds and
//! handed to the `model2vec-rs` crate; a broken file is an error, never a
//! panic.

use std::path::Path;

use model2vec_rs::model::StaticModel;

use super::{EmbedError, Embedder, in_batches, read_bounded as read};

/// Largest files read: the tokenizer, the model, its config.
const MAX_TOKENIZER: u64 = 64 << 20;
const MAX_MODEL: u64 = 2 << 30;
const MAX_CONFIG: u64 = 1 << 20;

/// A loaded Model2Vec model.
pub struct Model2Vec {
    model: StaticModel,
    id: String,
}

impl Model2Vec {
    /// The model in `dir` (`tokenizer.json`, `model.safetensors`,
    /// `config.json`).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let tokenizer = read(dir, "tokenizer.json", MAX_TOKENIZER)?;
        let weights = read(dir, "model.safetensors", MAX_MODEL)?;
        let config = read(dir, "config.json", MAX_CONFIG)?;
        let model = partner_core::isolate::contain(|| {
            StaticModel::from_bytes(&tokenizer, &weights, &config, None)
        })
        .map_err(|panic| {
            EmbedError::Failed(format!(
                "{}: the model could not be read ({panic})",
                dir.display()
            ))
        })?
        .map_err(|e| EmbedError::Failed(format!("{}: {e:#}", dir.display())))?;
        let name = dir
            .file_name()
            .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
        Ok(Model2Vec {
            id: format!("model2vec:{name}:{}", model.dim()),
            model,
        })
    }
}

impl Embedder for Model2Vec {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        in_batches(texts, |batch| {
            let vectors =
                partner_core::isolate::contain(|| self.model.encode(&batch)).map_err(|panic| {
                    EmbedError::Failed(format!("the model failed on a text ({panic})"))
                })?;
            // A text of words the model does not know has no direction:
            // a zero vector (similar to nothing), not an error.
            Ok(vectors
                .into_iter()
                .map(|v| {
                    if v.iter().all(|x| x.is_finite()) {
                        v
                    } else {
                        vec![0.0; v.len()]
                    }
                })
                .collect())
        })
    }
}

/// Writes a Model2Vec model directory whose vocabulary is `words`, each
/// with its vector (all of one length): a WordPiece tokenizer that
/// lowercases, the vectors as an F32 matrix, a config that normalizes. For
/// test suites and benchmarks that need a model whose neighbours are
/// known, and for anyone who wants a small hand-made vocabulary.
pub fn write_model(dir: &Path, words: &[(&str, Vec<f32>)]) -> std::io::Result<()> {
    use serde_json::json;
    let dims = words.first().map_or(1, |(_, v)| v.len().max(1));
    if words.iter().any(|(_, v)| v.len() != dims) {
        return Err(std::io::Error::other("vectors of different lengths"));
    }
    let mut vocab = serde_json::Map::new();
    vocab.insert("[UNK]".into(), json!(0));
    for (i, (w, _)) in words.iter().enumerate() {
        vocab.insert((*w).into(), json!(i + 1));
    }
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    });
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string())?;
    let unknown = vec![0.0f32; dims];
    let mut data: Vec<u8> = Vec::with_capacity((words.len() + 1) * dims * 4);
    for v in std::iter::once(&unknown).chain(words.iter().map(|(_, v)| v)) {
        for x in v {
            data.extend_from_slice(&x.to_le_bytes());
        }
    }
    let header = json!({"embeddings": {"dtype": "F32", "shape": [words.len() + 1, dims],
                                       "data_offsets": [0, data.len()]}})
    .to_string();
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    std::fs::write(dir.join("model.safetensors"), file)?;
    std::fs::write(dir.join("config.json"), r#"{"normalize": true}"#)
}
