//! `/recall` (long-term memory) and `/context` (working memory).

use serde_json::json;

use super::Effect;
use crate::exec::context::TurnContext;
use crate::exec::executor::Executor;
use crate::exec::registry::{ActionError, ActionTx, Cx, Outcome, Stage, VerbHandler};
use partner_core::clock::Millis;
use partner_dialect::{ActionOp, ContextEdit, ParsedAction};
use partner_policy::{Limits, VerbTraits, WriteKind, WrittenBlock};
use partner_store::memory::search::{SearchDomain, SearchQuery};
use partner_store::memory::{Block, BlockKind, NewBlock, blocks};

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

fn missing_block(tx: &dyn ActionTx, agent: &str, label: &str) -> String {
    let labels: Vec<String> = tx
        .blocks(Some(agent))
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

fn block(tx: &dyn ActionTx, agent: &str, label: &str) -> Result<Block, ActionError> {
    tx.block(agent, label)?
        .ok_or_else(|| missing_block(tx, agent, label).into())
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
    tx: &dyn ActionTx,
    agent: &str,
    label: &str,
    value: &str,
    now: Millis,
    verb: &str,
) -> Outcome {
    let (block, change) = super::write_own(tx, agent, label, value, now)?;
    Ok(Effect {
        text: format!("{verb} {}", describe(&block)),
        data: json!({ "block": block }),
        memory: Some(change),
        needs_continuation: false,
    })
}

/// `/recall`: read, search, insert, append, delete, patch.
fn recall(
    tx: &dyn ActionTx,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
    limits: Limits,
) -> Outcome {
    let agent = ctx.agent.as_str();
    match action.op.unwrap_or(ActionOp::Search) {
        ActionOp::Read => {
            let block = block(tx, agent, target(action)?)?;
            Ok(
                Effect::text(format!("{}:\n{}", describe(&block), block.value))
                    .with_data(json!({ "block": block }))
                    .continued(),
            )
        }
        ActionOp::Insert => {
            let text = content(action)?;
            match action.target.as_deref() {
                Some(label) => {
                    let new = NewBlock::new(agent, label, BlockKind::Archival, text);
                    let (block, change) = tx.create_block(&new, agent, now)?;
                    Ok(Effect {
                        text: format!("stored {}", describe(&block)),
                        data: json!({ "block": block }),
                        memory: Some(change),
                        needs_continuation: false,
                    })
                }
                None => {
                    if text.len() > limits.archival_bytes {
                        return Err(ActionError::Agent(format!(
                            "that memory is {} bytes, over the {} bytes one archival entry may hold; store it in parts or summarize it first",
                            text.len(),
                            limits.archival_bytes
                        )));
                    }
                    let id = tx.add_archival(agent, text, now)?;
                    Ok(Effect::text(format!("stored in archival memory (#{id})"))
                        .with_data(json!({ "archival_id": id })))
                }
            }
        }
        ActionOp::Append => {
            let label = target(action)?;
            let current = block(tx, agent, label)?;
            written(
                tx,
                agent,
                label,
                &blocks::appended(&current.value, content(action)?),
                now,
                "appended to",
            )
        }
        ActionOp::Delete => {
            let label = target(action)?;
            block(tx, agent, label)?;
            let change = tx.delete_block(agent, label, agent, now)?;
            Ok(Effect {
                text: format!("deleted block {label} (the partner can undo this)"),
                data: json!({ "deleted": label }),
                memory: Some(change),
                needs_continuation: false,
            })
        }
        ActionOp::Patch => {
            let label = target(action)?;
            let current = block(tx, agent, label)?;
            let value = blocks::patched(label, &current.value, content(action)?)?;
            written(tx, agent, label, &value, now, "patched")
        }
        _ => Err(ActionError::System(
            "a memory search ran inside a write transaction".into(),
        )),
    }
}

/// True when a `/recall` searches (no operation, or `search`) rather than
/// reading or writing a block.
fn searches(action: &ParsedAction) -> bool {
    !matches!(
        action.op,
        Some(
            ActionOp::Read
                | ActionOp::Insert
                | ActionOp::Append
                | ActionOp::Delete
                | ActionOp::Patch
        )
    )
}

/// `/recall "…"`: the agent's blocks and archival memory, by meaning and
/// keyword when an embedder is configured.
fn recall_search(exec: &Executor, ctx: &TurnContext, action: &ParsedAction) -> Outcome {
    let mut query = SearchQuery::new(content(action)?, Some(&ctx.agent));
    query.domains = vec![SearchDomain::Blocks, SearchDomain::Archival];
    let found = exec.search_memory(&query)?;
    Ok(super::lookup::format_hits(&query.text, &found).continued())
}

/// `/context`: append, replace, archive, load, swap.
fn context(tx: &dyn ActionTx, ctx: &TurnContext, action: &ParsedAction, now: Millis) -> Outcome {
    let agent = ctx.agent.as_str();
    let label = target(action)?;
    let current = block(tx, agent, label)?;
    let kind_change =
        |label: &str, from: &[BlockKind], to: BlockKind| -> Result<Block, ActionError> {
            let b = block(tx, agent, label)?;
            if !from.contains(&b.kind) {
                return Err(format!(
                    "block {label} is {}, so it cannot become {to} this way",
                    b.kind
                )
                .into());
            }
            Ok(tx.set_block_kind(agent, label, to, now)?)
        };
    match action.op.unwrap_or(ActionOp::Append) {
        ActionOp::Append => written(
            tx,
            agent,
            label,
            &blocks::appended(&current.value, content(action)?),
            now,
            "appended to",
        ),
        ActionOp::Replace => {
            let old = edit_of(action).and_then(|e| e.old.as_deref()).unwrap_or("");
            let value = blocks::replaced(label, &current.value, old, content(action)?)?;
            written(tx, agent, label, &value, now, "replaced text in")
        }
        ActionOp::Archive => {
            let b = kind_change(
                label,
                &[BlockKind::Working, BlockKind::Core],
                BlockKind::Archival,
            )?;
            Ok(Effect::text(format!("archived {}", describe(&b))).with_data(json!({ "block": b })))
        }
        ActionOp::Load => {
            let b = kind_change(label, &[BlockKind::Archival], BlockKind::Working)?;
            Ok(
                Effect::text(format!("loaded {} into working memory", describe(&b)))
                    .with_data(json!({ "block": b })),
            )
        }
        ActionOp::Swap => {
            let other = edit_of(action)
                .and_then(|e| e.other.as_deref())
                .ok_or("/context swap needs an archival label")?;
            block(tx, agent, other)?;
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
        other => Err(format!("/context cannot {}", other.as_str()).into()),
    }
}

/// The block an action writes, and how.
fn block_write(action: &ParsedAction, kind: WriteKind) -> Option<WrittenBlock> {
    action
        .target
        .clone()
        .map(|label| WrittenBlock { label, kind })
}

/// `/recall`: long-term memory.
pub(super) struct Recall;

impl VerbHandler for Recall {
    /// A search reads beside the writer and may ask an embedder about the
    /// query, so it runs before any transaction, and replay reuses its
    /// result (the vectors are not in the trace).
    fn stage(&self, action: &ParsedAction) -> Stage {
        if searches(action) {
            Stage::External
        } else {
            Stage::Store
        }
    }

    fn traits(&self, action: &ParsedAction) -> VerbTraits {
        let write = match action.op {
            Some(ActionOp::Append) => Some(WriteKind::Append),
            Some(ActionOp::Delete) => Some(WriteKind::Delete),
            Some(ActionOp::Patch) => Some(WriteKind::Change),
            _ => None,
        };
        VerbTraits {
            writes_block: write.and_then(|kind| block_write(action, kind)),
            carries_text: matches!(
                action.op,
                Some(ActionOp::Insert | ActionOp::Append | ActionOp::Patch)
            ),
            ..VerbTraits::default()
        }
    }

    fn preview(&self, action: &ParsedAction, block: &Block) -> Option<String> {
        match action.op {
            Some(ActionOp::Append) => {
                Some(blocks::appended(&block.value, action.content.as_deref()?))
            }
            Some(ActionOp::Patch) => {
                blocks::patched(&block.label, &block.value, action.content.as_deref()?).ok()
            }
            Some(ActionOp::Delete) => Some(String::new()),
            _ => None,
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        if searches(action) {
            return recall_search(cx.exec, cx.ctx, action);
        }
        let limits = cx.exec.engine().policy().limits;
        recall(cx.tx()?, cx.ctx, action, cx.now, limits)
    }
}

/// `/context`: working memory.
pub(super) struct Context;

impl VerbHandler for Context {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Store
    }

    fn traits(&self, action: &ParsedAction) -> VerbTraits {
        let kind = match action.op.unwrap_or(ActionOp::Append) {
            ActionOp::Append => WriteKind::Append,
            _ => WriteKind::Change,
        };
        VerbTraits {
            writes_block: block_write(action, kind),
            carries_text: matches!(action.op, Some(ActionOp::Append | ActionOp::Replace) | None),
            ..VerbTraits::default()
        }
    }

    fn preview(&self, action: &ParsedAction, block: &Block) -> Option<String> {
        match action.op.unwrap_or(ActionOp::Append) {
            ActionOp::Append => Some(blocks::appended(&block.value, action.content.as_deref()?)),
            ActionOp::Replace => blocks::replaced(
                &block.label,
                &block.value,
                edit_of(action)?.old.as_deref()?,
                action.content.as_deref()?,
            )
            .ok(),
            _ => None,
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        context(cx.tx()?, cx.ctx, action, cx.now)
    }
}

/// What a `/context` edit names beyond its block: the replaced text, the
/// archival label of a swap.
fn edit_of(action: &ParsedAction) -> Option<&ContextEdit> {
    action.args.get::<ContextEdit>()
}
