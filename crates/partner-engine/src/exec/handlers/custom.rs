//! Verbs added from a verb file, bound by their `action`: `tell` sends the
//! action's text to an agent, `append` adds it to one of the acting
//! agent's blocks. Both go through the same permission checks as the
//! built-in verbs that do the same.

use std::sync::Arc;

use serde_json::json;

use super::{Effect, comms};
use crate::exec::registry::{ActionError, Cx, Outcome, Stage, VerbHandler};
use partner_dialect::{CustomAction, ParsedAction};
use partner_policy::{VerbTraits, WriteKind, WrittenBlock};
use partner_store::memory::{Block, blocks};

/// The action's text, which a custom verb needs.
fn text(action: &ParsedAction) -> Result<&str, ActionError> {
    action
        .content
        .as_deref()
        .ok_or_else(|| format!("/{} needs some text", action.verb).into())
}

/// `action = { kind = "tell", agent = "…" }`.
struct Tell {
    agent: String,
}

impl VerbHandler for Tell {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Store
    }

    fn needs_content(&self) -> bool {
        true
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            carries_text: true,
            ..VerbTraits::default()
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        comms::tell(
            cx.exec,
            cx.tx()?,
            cx.ctx,
            &self.agent,
            text(action)?,
            cx.now,
        )
    }
}

/// `action = { kind = "append", block = "…" }`.
struct Append {
    block: String,
}

impl VerbHandler for Append {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Store
    }

    fn needs_content(&self) -> bool {
        true
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            writes_block: Some(WrittenBlock {
                label: self.block.clone(),
                kind: WriteKind::Append,
            }),
            carries_text: true,
            ..VerbTraits::default()
        }
    }

    fn preview(&self, action: &ParsedAction, block: &Block) -> Option<String> {
        Some(blocks::appended(&block.value, action.content.as_deref()?))
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        let tx = cx.tx()?;
        let agent = &cx.ctx.agent;
        let Some(current) = tx.block(agent, &self.block)? else {
            return Err(format!(
                "/{} appends to your block '{}', which does not exist",
                action.verb, self.block
            )
            .into());
        };
        let value = blocks::appended(&current.value, text(action)?);
        let (block, change) = super::write_own(tx, agent, &self.block, &value, cx.now)?;
        Ok(Effect {
            text: format!("appended to {} (v{})", block.label, block.version),
            data: json!({ "block": block }),
            memory: Some(change),
            needs_continuation: false,
        })
    }
}

/// The handler of a verb file's action.
pub(super) fn handler(action: &CustomAction) -> Arc<dyn VerbHandler> {
    match action {
        CustomAction::Tell { agent } => Arc::new(Tell {
            agent: agent.clone(),
        }),
        CustomAction::Append { block } => Arc::new(Append {
            block: block.clone(),
        }),
        CustomAction::Tool { tool } => Arc::new(super::tool::RunTool {
            tool: Some(tool.clone()),
        }),
        CustomAction::Mcp { server, tool } => Arc::new(super::mcp::McpCall {
            server: server.clone(),
            tool: tool.clone(),
            info: None,
        }),
    }
}
