//! `partner models`: the embedding models in partner's data directory —
//! which are there and which one search uses when `partner.toml` names
//! none — and fetching a known one by name, every file checked against
//! its pinned hash.

use std::io::Write;

use super::common::{line, write_json};
use crate::engine::embed::models::{self, KNOWN, ModelKind};
use crate::error::{Error, Result};

/// `partner models`.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelsOptions {
    /// What to do.
    #[command(subcommand)]
    pub command: ModelsCommand,
}

/// What `partner models` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ModelsCommand {
    /// The models in the data directory, the one search uses when
    /// `[embeddings]` names none, and those `fetch` knows.
    List {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Fetch a known model into the data directory (each file checked
    /// against the SHA-256 pinned for it; `PARTNER_MODELS_URL` names a
    /// mirror laid out as the Hugging Face hub).
    Fetch {
        /// The model's name (`partner models list` shows them).
        #[arg(default_value = models::DEFAULT_MODEL)]
        name: String,
        /// Fetch it again when it is already there.
        #[arg(long)]
        replace: bool,
    },
}

/// Runs `partner models`.
pub fn run_models(
    options: &ModelsOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let dir = models::models_dir()
        .ok_or_else(|| Error::Usage("no data directory: set HOME or XDG_DATA_HOME".into()))?;
    match &options.command {
        ModelsCommand::List { json } => list(&dir, *json, out),
        ModelsCommand::Fetch { name, replace } => fetch(&dir, name, *replace, out, err),
    }
}

fn kind_name(kind: ModelKind) -> &'static str {
    match kind {
        ModelKind::Transformer => "transformer",
        ModelKind::Model2Vec => "model2vec",
    }
}

fn list(dir: &std::path::Path, json: bool, out: &mut dyn Write) -> Result<i32> {
    let found = models::models_in(dir);
    let default = match models::default_in(dir) {
        crate::engine::embed::EmbeddingsConfig::Transformer { path }
        | crate::engine::embed::EmbeddingsConfig::Model2Vec { path } => Some(path),
        _ => None,
    };
    if json {
        let value = serde_json::json!({
            "dir": dir,
            "models": found.iter().map(|(name, path, kind)| serde_json::json!({
                "name": name, "path": path, "kind": kind_name(*kind),
                "default": default.as_ref() == Some(path),
            })).collect::<Vec<_>>(),
            "known": KNOWN.iter().map(|k| serde_json::json!({
                "name": k.name, "about": k.about, "repo": k.repo, "revision": k.revision,
                "bytes": k.files.iter().map(|f| f.1).sum::<u64>(),
            })).collect::<Vec<_>>(),
        });
        write_json(out, &value)?;
        return Ok(0);
    }
    line(out, format!("models in {}:", dir.display()))?;
    if found.is_empty() {
        line(
            out,
            "  none: search is by keyword unless [embeddings] names a model (`partner models fetch` gets one)",
        )?;
    }
    for (name, path, kind) in &found {
        let used = if default.as_ref() == Some(path) {
            "  ← used when [embeddings] names none"
        } else {
            ""
        };
        line(out, format!("  {name:<24} {}{used}", kind_name(*kind)))?;
    }
    line(out, "fetch knows:")?;
    for known in KNOWN {
        line(out, format!("  {:<24} {}", known.name, known.about))?;
    }
    Ok(0)
}

fn fetch(
    dir: &std::path::Path,
    name: &str,
    replace: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let Some(known) = models::known(name) else {
        let names: Vec<&str> = KNOWN.iter().map(|k| k.name).collect();
        return Err(Error::Usage(format!(
            "no known model {name} (known: {})",
            names.join(", ")
        )));
    };
    let hub = models::hub_url();
    line(
        err,
        format!(
            "fetching {} ({} at {}) from {hub}",
            known.name, known.repo, known.revision
        ),
    )?;
    let started = std::time::Instant::now();
    let mut told = started;
    // On this thread, so progress is written where the command writes
    // (its error output is held locked by this thread).
    let mut progress = |done: u64, total: u64| {
        if told.elapsed().as_secs_f64() >= 1.0 || done == total {
            told = std::time::Instant::now();
            let rate = done as f64 / started.elapsed().as_secs_f64().max(0.001);
            let _ = writeln!(
                err,
                "  {:.1} of {:.1} MB, {:.1} MB/s",
                done as f64 / 1e6,
                total as f64 / 1e6,
                rate / 1e6
            );
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("could not start the fetch: {e}")))?;
    let fetched = runtime
        .block_on(models::fetch(known, &hub, dir, replace, &mut progress))
        .map_err(Error::Usage)?;
    line(
        out,
        format!(
            "{} is in {}, every file as pinned; search uses it where [embeddings] names no model",
            known.name,
            fetched.display()
        ),
    )?;
    Ok(0)
}
