//! Embedding models kept in partner's data directory (`models/NAME/`):
//! which one a constellation with no `[embeddings]` uses, the models
//! partner knows how to fetch (each file pinned by size and SHA-256 at one
//! upstream revision), and the fetch itself — streamed, bounded, checked,
//! and moved into place only when every file is right.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::EmbeddingsConfig;

/// Most entries of the models directory looked at.
const MAX_ENTRIES: usize = 256;

/// Where fetched models are kept: the data directory's `models/`.
pub fn models_dir() -> Option<PathBuf> {
    partner_core::doorman::data_dir().map(|d| d.join("models"))
}

/// What kind of model a directory holds, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// A sentence-transformers BERT, run in process.
    Transformer,
    /// A Model2Vec static model.
    Model2Vec,
}

/// The kind of model in `dir` (by its files; nothing is loaded).
pub fn kind_of(dir: &Path) -> Option<ModelKind> {
    if super::looks_like_transformer(dir) {
        return Some(ModelKind::Transformer);
    }
    let has = |name: &str| dir.join(name).is_file();
    (has("tokenizer.json") && has("model.safetensors") && has("config.json"))
        .then_some(ModelKind::Model2Vec)
}

/// The models in `dir`, by name, with their kinds (sorted).
pub fn models_in(dir: &Path) -> Vec<(String, PathBuf, ModelKind)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf, ModelKind)> = entries
        .take(MAX_ENTRIES)
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| {
            let path = e.path();
            let kind = kind_of(&path)?;
            Some((e.file_name().to_string_lossy().into_owned(), path, kind))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// The embedder a constellation with no `[embeddings]` uses: a transformer
/// found in `dir` (the one partner fetches by default first), else a
/// Model2Vec model, else none.
pub fn default_in(dir: &Path) -> EmbeddingsConfig {
    let found = models_in(dir);
    let transformer = found
        .iter()
        .filter(|(_, _, kind)| *kind == ModelKind::Transformer && cfg!(feature = "transformer"))
        .min_by_key(|(name, _, _)| name != DEFAULT_MODEL);
    if let Some((_, path, _)) = transformer {
        return EmbeddingsConfig::Transformer { path: path.clone() };
    }
    match found
        .iter()
        .find(|(_, _, kind)| *kind == ModelKind::Model2Vec)
    {
        Some((_, path, _)) => EmbeddingsConfig::Model2Vec { path: path.clone() },
        None => EmbeddingsConfig::None,
    }
}

/// The model fetched when none is named, and preferred when several are
/// found.
pub const DEFAULT_MODEL: &str = "all-minilm-l6-v2";

/// A model partner can fetch.
#[derive(Debug, Clone, Copy)]
pub struct Known {
    /// Its name here (the directory it is kept in).
    pub name: &'static str,
    /// What it is, in a few words.
    pub about: &'static str,
    /// The Hugging Face repository.
    pub repo: &'static str,
    /// The upstream revision the files are pinned at.
    pub revision: &'static str,
    /// Its files: path in the repository, size in bytes, SHA-256.
    pub files: &'static [(&'static str, u64, &'static str)],
}

/// The models partner knows how to fetch. The hashes are upstream's at
/// the revision (the ones public projects pin for it).
pub const KNOWN: &[Known] = &[Known {
    name: DEFAULT_MODEL,
    about: "sentence-transformers all-MiniLM-L6-v2: BERT, 6 layers, 384 dimensions, 91 MB, Apache-2.0",
    repo: "sentence-transformers/all-MiniLM-L6-v2",
    revision: "1110a243fdf4706b3f48f1d95db1a4f5529b4d41",
    files: &[
        (
            "config.json",
            612,
            "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        ),
        (
            "tokenizer.json",
            466_247,
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        ),
        (
            "modules.json",
            349,
            "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
        ),
        (
            "sentence_bert_config.json",
            53,
            "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
        ),
        (
            "1_Pooling/config.json",
            190,
            "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
        ),
        (
            "model.safetensors",
            90_868_376,
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        ),
    ],
}];

/// The known model called `name`.
pub fn known(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.name.eq_ignore_ascii_case(name))
}

/// Where files are fetched from: `PARTNER_MODELS_URL` (a mirror laid out
/// as the hub is), else the Hugging Face hub.
pub fn hub_url() -> String {
    std::env::var("PARTNER_MODELS_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "https://huggingface.co".into())
        .trim_end_matches('/')
        .to_string()
}

/// Longest wait to connect, and for each read of a file.
const CONNECT: Duration = Duration::from_secs(15);
const READ: Duration = Duration::from_secs(60);
/// A file's whole fetch may last a minute plus a second for each 64 KB
/// (a server that trickles is given up on, not waited for).
fn deadline(size: u64) -> Duration {
    Duration::from_secs(60 + size / (64 << 10))
}

/// Fetches `model` from `hub` into `dest/NAME`, telling `progress` the
/// bytes done and the bytes in all. Each file must have exactly its pinned
/// size and hash; the model is moved into place only when all are right,
/// so a failed or interrupted fetch leaves nothing half there. An existing
/// model is replaced only with `replace`.
pub async fn fetch(
    model: &Known,
    hub: &str,
    dest: &Path,
    replace: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<PathBuf, String> {
    let target = dest.join(model.name);
    if target.exists() && !replace {
        return Err(format!(
            "{} is already there (--replace fetches it again)",
            target.display()
        ));
    }
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let staging = dest.join(format!(".{}.fetching-{}", model.name, std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let fetched = fetch_files(model, hub, &staging, progress).await;
    if let Err(e) = fetched {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    }
    std::fs::rename(&staging, &target).map_err(|e| format!("{}: {e}", target.display()))?;
    Ok(target)
}

async fn fetch_files(
    model: &Known,
    hub: &str,
    staging: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), String> {
    let client = crate::net::client_builder(CONNECT, READ)
        .redirect(reqwest::redirect::Policy::limited(5))
        .build()
        .map_err(|e| format!("could not set up HTTP: {}", crate::net::error_chain(&e)))?;
    let total: u64 = model.files.iter().map(|f| f.1).sum();
    let mut done = 0u64;
    for &(path, size, sha256) in model.files {
        let url = format!("{hub}/{}/resolve/{}/{path}", model.repo, model.revision);
        let file = staging.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let fetching = fetch_one(&client, &url, &file, size, done, total, progress);
        let got = tokio::time::timeout(deadline(size), fetching)
            .await
            .map_err(|_| {
                format!(
                    "{path}: not fetched within {}s; nothing was kept",
                    deadline(size).as_secs()
                )
            })??;
        if got != sha256 {
            return Err(format!(
                "{path}: its SHA-256 is {got}, not the pinned {sha256}; nothing was kept"
            ));
        }
        done += size;
    }
    Ok(())
}

/// Streams `url` to `file`, at most `size` bytes: the file's SHA-256.
async fn fetch_one(
    client: &reqwest::Client,
    url: &str,
    file: &Path,
    size: u64,
    done: u64,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<String, String> {
    let name = file
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("{url}: {}", crate::net::error_chain(&e)))?;
    if !response.status().is_success() {
        return Err(format!("{url}: the server answered {}", response.status()));
    }
    let mut out = std::fs::File::create(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut hasher = Sha256::new();
    let mut got = 0u64;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{url}: {}", crate::net::error_chain(&e)))?
    {
        got += chunk.len() as u64;
        if got > size {
            return Err(format!(
                "{name}: more than its pinned {size} bytes; nothing was kept"
            ));
        }
        hasher.update(&chunk);
        out.write_all(&chunk)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        progress(done + got, total);
    }
    if got != size {
        return Err(format!(
            "{name}: {got} bytes, not its pinned {size}; nothing was kept"
        ));
    }
    out.sync_all()
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(hex::encode(hasher.finalize()))
}
