//! What search by meaning needs of an embedder, for every crate that
//! searches (memory, the parse gate, the console): the [`Embedder`] trait,
//! its error, its batch bound and [`cosine`]. The embedders themselves (a
//! local model, a server) are the engine's (`partner_engine::embed`).

/// Most texts embedded in one call (more are split into batches).
pub const MAX_BATCH: usize = 64;

/// Why texts could not be embedded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// The embedder cannot be reached now (a server down or busy): try
    /// again later; nothing is wrong with the texts.
    #[error("the embedder is unavailable: {0}")]
    Unavailable(String),
    /// The model or the server's answer is not usable.
    #[error("the embedder failed: {0}")]
    Failed(String),
}

/// Turns texts into vectors.
pub trait Embedder: Send + Sync {
    /// What makes two vectors comparable: the kind and model (vectors from
    /// another id are re-embedded).
    fn id(&self) -> &str;

    /// One vector per text, in order, all of one dimension.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

impl std::fmt::Debug for dyn Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Embedder({})", self.id())
    }
}

/// The cosine similarity of two vectors (0 when either is all zeros or
/// their lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}
