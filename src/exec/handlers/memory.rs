//! `/recall` (long-term memory) and `/context` (working memory).

use rusqlite::Connection;
use serde_json::json;

use super::{Effect, Outcome};
use crate::clock::Millis;
use crate::dialect::{Op, ParsedAction};
use crate::exec::context::TurnContext;
use crate::memory::records::add_archival;
use crate::memory::search::{SearchDomain, SearchQuery, search};
use crate::memory::{Block, BlockKind, NewBlock, blocks};
use crate::permission::Limits;

fn describe(block: &Block) -> String {
    format!(
        "{} ({}, v{}, {}/{} chars)",
        block.label,
        block.kind,
        block.version,
        block.chars(),
        block.char_limit
    )
}

fn missing_block(conn: &Connection, agent: &str, label: &str) -> String {
    let labels: Vec<String> = blocks::list(conn, Some(agent))
        .map(|bs| bs.into_iter().map(|b| b.label).collect())
        .unwrap_or_default();
    if labels.is_empty() {
        format!("you have no block '{label}' (you have no blocks yet)")
    } else {
        format!(
            "you have no block '{label}'; your blocks are {}",
            labels.join(", ")
        )
    }
}

fn block(conn: &Connection, agent: &str, label: &str) -> Result<Block, String> {
    blocks::get(conn, agent, label)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| missing_block(conn, agent, label))
}

fn target(action: &ParsedAction) -> Result<&str, String> {
    action
        .target
        .as_deref()
        .ok_or_else(|| format!("/{} needs a block label", action.verb))
}

fn content(action: &ParsedAction) -> Result<&str, String> {
    action
        .content
        .as_deref()
        .ok_or_else(|| format!("/{} needs some text", action.verb))
}

fn written(
    conn: &Connection,
    agent: &str,
    label: &str,
    value: &str,
    now: Millis,
    verb: &str,
) -> Outcome {
    let (block, change) =
        blocks::write(conn, agent, label, value, agent, now).map_err(|e| e.to_string())?;
    Ok(Effect {
        text: format!("{verb} {}", describe(&block)),
        data: json!({ "block": block }),
        memory: Some(change),
        needs_continuation: false,
    })
}

/// `/recall`: read, search, insert, append, delete, patch.
pub(super) fn recall(
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
    limits: Limits,
) -> Outcome {
    let agent = ctx.agent.as_str();
    match action.op.unwrap_or(Op::Search) {
        Op::Read => {
            let block = block(conn, agent, target(action)?)?;
            Ok(
                Effect::text(format!("{}:\n{}", describe(&block), block.value))
                    .with_data(json!({ "block": block }))
                    .continued(),
            )
        }
        Op::Insert => {
            let text = content(action)?;
            match action.target.as_deref() {
                Some(label) => {
                    let new = NewBlock::new(agent, label, BlockKind::Archival, text);
                    let (block, change) =
                        blocks::create(conn, &new, agent, now).map_err(|e| e.to_string())?;
                    Ok(Effect {
                        text: format!("stored {}", describe(&block)),
                        data: json!({ "block": block }),
                        memory: Some(change),
                        needs_continuation: false,
                    })
                }
                None => {
                    if text.len() > limits.archival_bytes {
                        return Err(format!(
                            "that memory is {} bytes, over the {} bytes one archival entry may hold; store it in parts or summarize it first",
                            text.len(),
                            limits.archival_bytes
                        ));
                    }
                    let id = add_archival(conn, agent, text, now).map_err(|e| e.to_string())?;
                    Ok(Effect::text(format!("stored in archival memory (#{id})"))
                        .with_data(json!({ "archival_id": id })))
                }
            }
        }
        Op::Append => {
            let label = target(action)?;
            let current = block(conn, agent, label)?;
            written(
                conn,
                agent,
                label,
                &blocks::appended(&current.value, content(action)?),
                now,
                "appended to",
            )
        }
        Op::Delete => {
            let label = target(action)?;
            block(conn, agent, label)?;
            let change =
                blocks::delete(conn, agent, label, agent, now).map_err(|e| e.to_string())?;
            Ok(Effect {
                text: format!("deleted block {label} (the partner can undo this)"),
                data: json!({ "deleted": label }),
                memory: Some(change),
                needs_continuation: false,
            })
        }
        Op::Patch => {
            let label = target(action)?;
            let current = block(conn, agent, label)?;
            let value = blocks::patched(label, &current.value, content(action)?)
                .map_err(|e| e.to_string())?;
            written(conn, agent, label, &value, now, "patched")
        }
        _ => {
            let mut query = SearchQuery::new(content(action)?, Some(agent));
            query.domains = vec![SearchDomain::Blocks, SearchDomain::Archival];
            let hits = search(conn, &query).map_err(|e| e.to_string())?;
            Ok(super::lookup::format_hits(&query.text, &hits).continued())
        }
    }
}

/// `/context`: append, replace, archive, load, swap.
pub(super) fn context(
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let agent = ctx.agent.as_str();
    let label = target(action)?;
    let current = block(conn, agent, label)?;
    let kind_change = |label: &str, from: &[BlockKind], to: BlockKind| -> Result<Block, String> {
        let b = block(conn, agent, label)?;
        if !from.contains(&b.kind) {
            return Err(format!(
                "block {label} is {}, so it cannot become {to} this way",
                b.kind
            ));
        }
        blocks::set_kind(conn, agent, label, to, now).map_err(|e| e.to_string())
    };
    match action.op.unwrap_or(Op::Append) {
        Op::Append => written(
            conn,
            agent,
            label,
            &blocks::appended(&current.value, content(action)?),
            now,
            "appended to",
        ),
        Op::Replace => {
            let old = action.old.as_deref().unwrap_or("");
            let value = blocks::replaced(label, &current.value, old, content(action)?)
                .map_err(|e| e.to_string())?;
            written(conn, agent, label, &value, now, "replaced text in")
        }
        Op::Archive => {
            let b = kind_change(
                label,
                &[BlockKind::Working, BlockKind::Core],
                BlockKind::Archival,
            )?;
            Ok(Effect::text(format!("archived {}", describe(&b))).with_data(json!({ "block": b })))
        }
        Op::Load => {
            let b = kind_change(label, &[BlockKind::Archival], BlockKind::Working)?;
            Ok(
                Effect::text(format!("loaded {} into working memory", describe(&b)))
                    .with_data(json!({ "block": b })),
            )
        }
        Op::Swap => {
            let other = action
                .other
                .as_deref()
                .ok_or("/context swap needs an archival label")?;
            block(conn, agent, other)?;
            let out = kind_change(
                label,
                &[BlockKind::Working, BlockKind::Core],
                BlockKind::Archival,
            )?;
            let inn = kind_change(other, &[BlockKind::Archival], BlockKind::Working)?;
            Ok(Effect::text(format!(
                "swapped: {} is archived, {} is in working memory",
                out.label, inn.label
            ))
            .with_data(json!({ "archived": out, "loaded": inn })))
        }
        other => Err(format!("/context cannot {}", other.as_str())),
    }
}
