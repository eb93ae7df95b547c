//! `/data`: file and directory sources configured by the partner — list,
//! read, search, monitor and pause.

use std::io::Read;
use std::path::Path;

use serde_json::json;

use super::Effect;
use crate::exec::context::TurnContext;
use crate::exec::executor::Executor;
use crate::exec::registry::{ActionTx, Cx, Outcome, Stage, VerbHandler};
use partner_core::clock::Millis;
use partner_dialect::{ActionOp, ParsedAction};
use partner_policy::VerbTraits;

const READ_LIMIT: usize = 20_000;
const SEARCH_LIMIT: usize = 50;

/// Most bytes read from one file (a read shows at most [`READ_LIMIT`]
/// characters; a search looks at this much of each file).
const FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Reads at most [`FILE_BYTES`] of a file as text.
fn read_text(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(FILE_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn source<'a>(exec: &'a Executor, action: &ParsedAction) -> Result<(&'a str, &'a Path), String> {
    let id = action
        .target
        .as_deref()
        .ok_or("which data source? /data list shows them")?;
    let sources = &exec.config().data_sources;
    sources
        .get_key_value(id)
        .map(|(k, v)| (k.as_str(), v.as_path()))
        .ok_or_else(|| {
            if sources.is_empty() {
                format!("there is no data source '{id}'; none are configured")
            } else {
                format!(
                    "there is no data source '{id}'; the sources are {}",
                    sources.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            }
        })
}

fn files(path: &Path) -> Vec<std::path::PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out: Vec<_> = std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// `/data list|read|search` (outside the database).
fn data(exec: &Executor, action: &ParsedAction) -> Outcome {
    match action.op.unwrap_or(ActionOp::List) {
        ActionOp::List => {
            let sources = &exec.config().data_sources;
            if sources.is_empty() {
                return Ok(Effect::text("no data sources are configured").continued());
            }
            let mut text = String::from("data sources:");
            for (id, path) in sources {
                let what = if path.is_dir() {
                    format!("directory, {} files", files(path).len())
                } else if path.is_file() {
                    "file".to_string()
                } else {
                    "missing".to_string()
                };
                text.push_str(&format!("\n  {id}: {} ({what})", path.display()));
            }
            Ok(Effect::text(text)
                .with_data(json!({ "sources": sources }))
                .continued())
        }
        ActionOp::Read => {
            let (id, path) = source(exec, action)?;
            if path.is_dir() {
                let names: Vec<String> = files(path)
                    .iter()
                    .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect();
                return Ok(Effect::text(format!(
                    "{id} holds {} files:\n{}",
                    names.len(),
                    names.join("\n")
                ))
                .with_data(json!({ "files": names }))
                .continued());
            }
            let text = read_text(path).map_err(|e| format!("could not read {id}: {e}"))?;
            let cut: String = text.chars().take(READ_LIMIT).collect();
            let note = if cut.len() < text.len() {
                format!("\n[cut at {READ_LIMIT} characters]")
            } else {
                String::new()
            };
            Ok(Effect::text(format!("{id}:\n{cut}{note}")).continued())
        }
        ActionOp::Search => {
            let (id, path) = source(exec, action)?;
            let query = action
                .content
                .as_deref()
                .ok_or("/data search needs a query")?;
            let needle = query.to_lowercase();
            let mut hits = Vec::new();
            for file in files(path) {
                let Ok(text) = read_text(&file) else {
                    continue;
                };
                let name = file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for (n, line) in text.lines().enumerate() {
                    if line.to_lowercase().contains(&needle) && hits.len() < SEARCH_LIMIT {
                        hits.push(format!("{name}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
            let text = if hits.is_empty() {
                format!("nothing in {id} matches \"{query}\"")
            } else {
                format!("{} matches in {id}:\n{}", hits.len(), hits.join("\n"))
            };
            Ok(Effect::text(text)
                .with_data(json!({ "hits": hits }))
                .continued())
        }
        _ => Err("monitor and pause are handled with the database".into()),
    }
}

/// `/data monitor|pause source` (in the database).
fn watch(
    exec: &Executor,
    tx: &dyn ActionTx,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let (id, _) = source(exec, action)?;
    let active = action.op == Some(ActionOp::Monitor);
    tx.set_watch(&ctx.agent, id, active, now)?;
    let text = if active {
        format!("watching {id}; you'll hear when it changes")
    } else {
        format!("paused notifications from {id}")
    };
    Ok(Effect::text(text).with_data(json!({ "source": id, "active": active })))
}

/// True for the `/data` ops that read files (the others change watches in
/// the database).
fn reads_files(action: &ParsedAction) -> bool {
    matches!(
        action.op,
        Some(ActionOp::List | ActionOp::Read | ActionOp::Search) | None
    )
}

/// `/data`: the partner's file and directory sources.
pub(super) struct Data;

impl VerbHandler for Data {
    fn stage(&self, action: &ParsedAction) -> Stage {
        if reads_files(action) {
            Stage::External
        } else {
            Stage::Store
        }
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        if reads_files(action) {
            data(cx.exec, action)
        } else {
            watch(cx.exec, cx.tx()?, cx.ctx, action, cx.now)
        }
    }
}
