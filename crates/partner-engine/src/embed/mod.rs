//! Embedders: text to vectors, so memory can be searched by meaning. One
//! trait, chosen in `partner.toml` (`[embeddings]`): a sentence-transformers
//! model run in process (the default when one is found), a local Model2Vec
//! model directory (the fast choice), the `/v1/embeddings` endpoint of an
//! OpenAI-compatible server or Ollama, or none (full-text search only).
//! Whatever a model file or a server gives is checked: one vector per
//! text, all of one dimension, finite numbers, bounded sizes.

mod model2vec;
pub mod models;
pub mod recall;
pub mod relevance;
mod remote;
#[cfg(feature = "transformer")]
mod transformer;

use std::sync::Arc;

pub use model2vec::{Model2Vec, write_model};
pub use partner_core::embedder::{EmbedError, Embedder, MAX_BATCH, cosine};
pub use recall::{Found, IndexStatus, Recall};
pub use remote::{RemoteEmbedder, RemoteSettings};
#[cfg(feature = "transformer")]
pub use transformer::Transformer;

/// Largest vector dimension accepted.
pub const MAX_DIMS: usize = 8192;

/// Longest text embedded, in bytes (longer text is cut at a character
/// boundary: the start of a memory says most about it).
pub const MAX_TEXT: usize = 16 * 1024;

/// Which embedder a constellation uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EmbeddingsConfig {
    /// None: full-text search only (the default).
    #[default]
    None,
    /// A Model2Vec model directory (`tokenizer.json`, `model.safetensors`,
    /// `config.json`).
    Model2Vec {
        /// The directory.
        path: std::path::PathBuf,
    },
    /// A sentence-transformers model directory (`config.json`,
    /// `model.safetensors`, `tokenizer.json`, pooling), run in process.
    Transformer {
        /// The directory.
        path: std::path::PathBuf,
    },
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    Remote(RemoteSettings),
}

/// The embedder `config` names (none for [`EmbeddingsConfig::None`]).
pub fn open(config: &EmbeddingsConfig) -> Result<Option<Arc<dyn Embedder>>, EmbedError> {
    Ok(match config {
        EmbeddingsConfig::None => None,
        EmbeddingsConfig::Model2Vec { path } => Some(Arc::new(Model2Vec::load(path)?)),
        #[cfg(feature = "transformer")]
        EmbeddingsConfig::Transformer { path } => Some(Arc::new(Transformer::load(path)?)),
        #[cfg(not(feature = "transformer"))]
        EmbeddingsConfig::Transformer { path } => {
            return Err(EmbedError::Failed(format!(
                "{}: this partner was built without the transformer embedder (cargo feature `transformer`)",
                path.display()
            )));
        }
        EmbeddingsConfig::Remote(settings) => {
            Some(Arc::new(RemoteEmbedder::new(settings.clone())?))
        }
    })
}

/// The file `name` of model directory `dir`, refused when it is larger
/// than `max` bytes; errors name the file.
pub(crate) fn read_bounded(
    dir: &std::path::Path,
    name: &str,
    max: u64,
) -> Result<Vec<u8>, EmbedError> {
    let path = dir.join(name);
    let failed = |why: String| EmbedError::Failed(format!("{}: {why}", path.display()));
    let len = std::fs::metadata(&path)
        .map_err(|e| failed(e.to_string()))?
        .len();
    if len > max {
        return Err(failed(format!("{len} bytes, more than the {max} read")));
    }
    std::fs::read(&path).map_err(|e| failed(e.to_string()))
}

/// Whether `dir` looks like a sentence-transformers BERT directory (a
/// BERT config, weights, a tokenizer and the pooling or module list),
/// without loading it.
pub fn looks_like_transformer(dir: &std::path::Path) -> bool {
    let has = |name: &str| dir.join(name).is_file();
    let bert_config = || {
        let path = dir.join("config.json");
        std::fs::metadata(&path).is_ok_and(|m| m.len() <= 1 << 20)
            && std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|c| {
                    c.get("hidden_size").is_some() && c.get("num_hidden_layers").is_some()
                })
    };
    has("model.safetensors")
        && has("tokenizer.json")
        && (has("1_Pooling/config.json") || has("modules.json"))
        && bert_config()
}

/// `text` cut to [`MAX_TEXT`] bytes at a character boundary.
pub fn bounded(text: &str) -> &str {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Embeds `texts` in batches of at most [`MAX_BATCH`], each text cut to
/// [`MAX_TEXT`], with `batch`; the vectors checked.
pub fn in_batches(
    texts: &[String],
    mut batch: impl FnMut(Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(MAX_BATCH) {
        let chunk: Vec<String> = chunk.iter().map(|t| bounded(t).to_string()).collect();
        let count = chunk.len();
        out.extend(checked(count, batch(chunk)?)?);
    }
    checked(texts.len(), out)
}

/// Checks what an embedder gave for `count` texts: that many vectors, one
/// dimension (at most [`MAX_DIMS`]), finite numbers.
pub fn checked(count: usize, vectors: Vec<Vec<f32>>) -> Result<Vec<Vec<f32>>, EmbedError> {
    if vectors.len() != count {
        return Err(EmbedError::Failed(format!(
            "{} vectors for {count} texts",
            vectors.len()
        )));
    }
    let dims = vectors.first().map_or(0, Vec::len);
    if count > 0 && (dims == 0 || dims > MAX_DIMS) {
        return Err(EmbedError::Failed(format!(
            "vectors of {dims} dimensions (1 to {MAX_DIMS} accepted)"
        )));
    }
    for v in &vectors {
        if v.len() != dims {
            return Err(EmbedError::Failed(format!(
                "vectors of {} and {dims} dimensions in one answer",
                v.len()
            )));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(EmbedError::Failed(
                "a vector holds a number that is not finite".into(),
            ));
        }
    }
    Ok(vectors)
}
