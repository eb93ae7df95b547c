//! `partner gate`: the parse gate's layers one at a time — `check` (the
//! safety level of a command), `extract` (the command in a reply),
//! `intent` (what a request in words asks for), `propose` (intent, context
//! and a proposal, nothing run) and `index` (rebuild the index of
//! applications and packages).

use std::io::{Read, Write};
use std::path::PathBuf;

use serde_json::json;

use super::common::{line, text_arg, write_json};
use crate::error::{Error, Result};
use crate::gate::context::SystemProbe;
use crate::gate::index::{Index, xdg_application_dirs};
use crate::gate::{analyze, assess, extract, propose};

/// What `partner gate` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum GateCommand {
    /// Classify a command: blocked, high, medium or low, with reasons.
    Check {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The command (`-` for standard input).
        command: String,
    },
    /// Take the command out of a reply (sanitize and validate).
    Extract {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The text; standard input when absent or `-`.
        text: Option<String>,
    },
    /// What a request in words asks for.
    Intent {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The request.
        text: String,
    },
    /// Intent, context and the proposed command with its risk; runs nothing.
    Propose {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The index file (default: partner's data directory).
        #[arg(long)]
        index: Option<PathBuf>,
        /// The request.
        text: String,
    },
    /// Rebuild the index of desktop applications and installed packages.
    Index {
        /// The index file (default: partner's data directory).
        #[arg(long)]
        index: Option<PathBuf>,
        /// Directories of `.desktop` files (default: the XDG data directories').
        #[arg(long = "applications")]
        applications: Vec<PathBuf>,
    },
}

/// Options of `partner gate`.
#[derive(Debug, Clone, clap::Args)]
pub struct GateOptions {
    /// The constellation config whose `[embeddings]` finds programs by
    /// meaning (default: ./partner.toml if present).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: GateCommand,
}

/// Where the index is kept unless `--index` says.
fn index_path(given: Option<&PathBuf>) -> Result<PathBuf> {
    match given {
        Some(p) => Ok(p.clone()),
        None => Ok(super::data_dir()?.join("gate-index.sqlite")),
    }
}

/// The embedder `[embeddings]` names, opened (none without one).
fn embedder(
    options: &GateOptions,
) -> Result<Option<std::sync::Arc<dyn crate::engine::embed::Embedder>>> {
    crate::engine::embed::open(&super::common::embeddings(options.config.as_deref())?)
        .map_err(|e| Error::Usage(e.to_string()))
}

/// Runs `partner gate`.
pub fn run_gate(options: &GateOptions, stdin: &mut dyn Read, out: &mut dyn Write) -> Result<i32> {
    match &options.command {
        GateCommand::Check { json, command } => check(&text_arg(command, stdin)?, *json, out),
        GateCommand::Extract { json, text } => {
            let text = text_arg(text.as_deref().unwrap_or("-"), stdin)?;
            let e = extract(&text);
            if *json {
                write_json(out, &e)?;
            } else {
                match (&e.command, &e.reason) {
                    (Some(c), _) => line(out, c)?,
                    (None, Some(r)) => line(out, format!("no command: {r}"))?,
                    (None, None) => line(out, "no command")?,
                }
            }
            Ok(if e.command.is_some() { 0 } else { 1 })
        }
        GateCommand::Intent { json, text } => {
            let i = analyze(text);
            if *json {
                write_json(
                    out,
                    &json!({"intent": i.intent.map(|k| k.as_str()), "target": i.target}),
                )?;
            } else {
                line(
                    out,
                    format!(
                        "{} {}",
                        i.intent.map_or("none", |k| k.as_str()),
                        i.target.as_deref().unwrap_or("")
                    ),
                )?;
            }
            Ok(0)
        }
        GateCommand::Propose { json, index, text } => {
            propose_for(options, *json, index.as_ref(), text, out)
        }
        GateCommand::Index {
            index,
            applications,
        } => build_index(options, index.as_ref(), applications, out),
    }
}

/// `gate check`: the command's risk and reasons, and how it would be
/// sandboxed; exit 1 when it is blocked.
fn check(command: &str, json: bool, out: &mut dyn Write) -> Result<i32> {
    let a = assess(command);
    let scene = crate::gate::Scene::current();
    let sandbox = crate::gate::sandbox::describe(command, &scene);
    if json {
        let mut v = serde_json::to_value(&a).map_err(|e| Error::Usage(e.to_string()))?;
        v["sandbox"] = serde_json::Value::String(sandbox);
        write_json(out, &v)?;
    } else {
        line(out, a.risk.as_str())?;
        for r in &a.reasons {
            line(out, format!("  {r}"))?;
        }
        if !a.blocked() {
            line(out, sandbox)?;
        }
    }
    Ok(if a.blocked() { 1 } else { 0 })
}

/// `gate propose`: a command for a request in words, with what the system
/// said and its risk (or the prompt a model would be given).
fn propose_for(
    options: &GateOptions,
    json: bool,
    index: Option<&std::path::PathBuf>,
    text: &str,
    out: &mut dyn Write,
) -> Result<i32> {
    let path = index_path(index)?;
    let probe = SystemProbe {
        index: Some(path),
        embedder: embedder(options)?,
    };
    let p = propose::propose(text, &probe);
    if json {
        write_json(
            out,
            &json!({
                "intent": p.intent.intent.map(|k| k.as_str()),
                "target": p.intent.target,
                "context": p.context.as_ref().map(|c| c.lines()).unwrap_or_default(),
                "command": p.command,
                "risk": p.safety.as_ref().map(|s| s.risk.as_str()),
                "reasons": p.safety.as_ref().map(|s| s.reasons.clone()).unwrap_or_default(),
                "note": p.note,
                "prompt": p.command.is_none().then(|| propose::model_prompt(text, p.context.as_ref())),
            }),
        )?;
        return Ok(0);
    }
    for l in p.context.as_ref().map(|c| c.lines()).unwrap_or_default() {
        line(out, l)?;
    }
    match (&p.command, &p.safety) {
        (Some(c), Some(s)) => line(
            out,
            format!("Proposed: {c}  [{}] {}", s.risk.as_str(), p.note),
        )?,
        _ => line(out, format!("No proposal: {}", p.note))?,
    }
    Ok(0)
}

/// `gate index`: the applications and packages indexed again, and
/// embedded when an embedder is configured.
fn build_index(
    options: &GateOptions,
    index: Option<&std::path::PathBuf>,
    applications: &[std::path::PathBuf],
    out: &mut dyn Write,
) -> Result<i32> {
    let path = index_path(index)?;
    let dirs = if applications.is_empty() {
        xdg_application_dirs()
    } else {
        applications.to_vec()
    };
    let mut idx = Index::open(&path).map_err(Error::Usage)?;
    let built = idx.rebuild(&dirs).map_err(Error::Usage)?;
    line(
        out,
        format!(
            "indexed {} applications and {} packages in {}",
            built.applications,
            built.packages,
            path.display()
        ),
    )?;
    if let Some(embedder) = embedder(options)? {
        let (embedded, _) = idx
            .embed_entries(embedder.as_ref(), std::time::Duration::MAX)
            .map_err(Error::Usage)?;
        line(
            out,
            format!("embedded {embedded} entries with {}", embedder.id()),
        )?;
    }
    Ok(0)
}
