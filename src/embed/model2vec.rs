//! A local Model2Vec model: static token embeddings averaged, fast on a
//! CPU, no network. The directory's files are read with size bounds and
//! handed to the `model2vec-rs` crate; a broken file is an error, never a
//! panic.

use std::path::Path;

use model2vec_rs::model::StaticModel;

use super::{EmbedError, Embedder, in_batches};

/// Largest files read: the tokenizer, the model, its config.
const MAX_TOKENIZER: u64 = 64 << 20;
const MAX_MODEL: u64 = 2 << 30;
const MAX_CONFIG: u64 = 1 << 20;

/// A loaded Model2Vec model.
pub struct Model2Vec {
    model: StaticModel,
    id: String,
}

fn read(dir: &Path, name: &str, max: u64) -> Result<Vec<u8>, EmbedError> {
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

impl Model2Vec {
    /// The model in `dir` (`tokenizer.json`, `model.safetensors`,
    /// `config.json`).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let tokenizer = read(dir, "tokenizer.json", MAX_TOKENIZER)?;
        let weights = read(dir, "model.safetensors", MAX_MODEL)?;
        let config = read(dir, "config.json", MAX_CONFIG)?;
        let model = crate::isolate::contain(|| {
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
                crate::isolate::contain(|| self.model.encode(&batch)).map_err(|panic| {
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
