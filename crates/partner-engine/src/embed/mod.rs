//! Embedders: text to vectors, so memory can be searched by meaning. One
//! trait, chosen in `partner.toml` (`[embeddings]`): a local Model2Vec
//! model directory (no network), the `/v1/embeddings` endpoint of an
//! OpenAI-compatible server or Ollama, or none (full-text search only).
//! Whatever a model file or a server gives is checked: one vector per
//! text, all of one dimension, finite numbers, bounded sizes.

mod model2vec;
pub mod recall;
pub mod relevance;
mod remote;

use std::sync::Arc;

pub use model2vec::{Model2Vec, write_model};
pub use partner_core::embedder::{EmbedError, Embedder, MAX_BATCH, cosine};
pub use recall::{Found, IndexStatus, Recall};
pub use remote::{RemoteEmbedder, RemoteSettings};

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
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    Remote(RemoteSettings),
}

/// The embedder `config` names (none for [`EmbeddingsConfig::None`]).
pub fn open(config: &EmbeddingsConfig) -> Result<Option<Arc<dyn Embedder>>, EmbedError> {
    Ok(match config {
        EmbeddingsConfig::None => None,
        EmbeddingsConfig::Model2Vec { path } => Some(Arc::new(Model2Vec::load(path)?)),
        EmbeddingsConfig::Remote(settings) => {
            Some(Arc::new(RemoteEmbedder::new(settings.clone())?))
        }
    })
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
