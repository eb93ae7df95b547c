//! One handler per verb, grouped in families: `memory` (recall, context),
//! `lookup` (search), `comms` (send, reply, post, dm, tell, uncertain),
//! `web` (fetch, web), `calc` (calc, summarize), `data`, `intentions`
//! (remind, complete, dismiss, intentions, pulse, halt), `authority`
//! (approve, deny, escalate, cancel, batch), `ask` (a question for the
//! partner), `shell` (the parse gate's
//! verb), `tool` (Pattern Lisp tools) and `custom` (verbs from a verb
//! file). [`of_builtin`] binds each built-in verb to its handler in one
//! exhaustive match.

mod ask;
mod authority;
mod calc;
mod comms;
mod custom;
mod data;
mod integers;
mod intentions;
mod lookup;
mod mcp;
mod memory;
pub(super) mod shell;
mod tool;
mod web;

use std::sync::Arc;

pub(crate) use crate::exec::registry::Effect;
use crate::exec::registry::VerbHandler;
use partner_dialect::{CustomAction, Verb};

pub(crate) use calc::CalcState;

use crate::exec::registry::ActionTx;
use partner_core::clock::Millis;
use partner_store::memory::backend::BlockWrite;
use partner_store::memory::{Block, MemoryChange, MemoryResult};

/// Writes `value` as the next version of `agent`'s own block `label`, in
/// the action's transaction.
fn write_own(
    tx: &dyn ActionTx,
    agent: &str,
    label: &str,
    value: &str,
    now: Millis,
) -> MemoryResult<(Block, MemoryChange)> {
    let write = BlockWrite {
        agent,
        label,
        value,
        base: None,
    };
    tx.write_block(&write, agent, now)
}
pub(crate) use web::FetchPages;

/// The handler of a built-in verb; `None` for a verb from a verb file
/// (bound by its action) or one added in code. The match names every
/// verb of the dialect, so a verb added to it without a handler does not
/// compile.
pub(crate) fn of_builtin(verb: &Verb) -> Option<Arc<dyn VerbHandler>> {
    let handler: Arc<dyn VerbHandler> = match verb {
        Verb::Recall => Arc::new(memory::Recall),
        Verb::Context => Arc::new(memory::Context),
        Verb::Search => Arc::new(lookup::Search),
        Verb::Send | Verb::Reply | Verb::Post | Verb::Dm | Verb::Tell => Arc::new(comms::Message),
        Verb::Uncertain => Arc::new(comms::Uncertain),
        Verb::Fetch => Arc::new(web::Fetch),
        Verb::Web => Arc::new(web::Web),
        Verb::Calc => Arc::new(calc::Calc),
        Verb::Summarize => Arc::new(calc::Summarize),
        Verb::Data => Arc::new(data::Data),
        Verb::Remind => intentions::reminder(),
        Verb::Complete | Verb::Dismiss => intentions::closer(),
        Verb::Intentions => intentions::lister(),
        Verb::Pulse => intentions::pulser(),
        Verb::Halt => intentions::halter(),
        Verb::Approve | Verb::Deny | Verb::Escalate => {
            Arc::new(authority::Decides { needs_role: true })
        }
        Verb::Cancel => Arc::new(authority::Decides { needs_role: false }),
        Verb::Batch => Arc::new(authority::Batch),
        Verb::Shell => Arc::new(shell::Shell),
        Verb::Tool => Arc::new(tool::RunTool { tool: None }),
        Verb::Ask => Arc::new(ask::Ask),
        Verb::Custom(_) => return None,
    };
    Some(handler)
}

/// At most this many lines of a pretty-printed value in the queue.
const SHOWN_LINES: usize = 40;

/// `value` pretty-printed for the queue, at most [`SHOWN_LINES`] lines of
/// at most 200 characters, saying what was left out.
pub(crate) fn pretty(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let total = text.lines().count();
    let mut shown: Vec<String> = text
        .lines()
        .take(SHOWN_LINES)
        .map(|l| match l.char_indices().nth(200) {
            Some((cut, _)) => format!("{}…", &l[..cut]),
            None => l.to_string(),
        })
        .collect();
    if total > SHOWN_LINES {
        shown.push(format!("… ({} more lines)", total - SHOWN_LINES));
    }
    shown.join("\n")
}

/// The handler of a verb file's action.
pub(crate) fn custom(action: &CustomAction) -> Arc<dyn VerbHandler> {
    custom::handler(action)
}

/// The handler of an MCP tool the running server listed.
pub(crate) fn mcp_tool(info: partner_mcp::ToolInfo) -> Arc<dyn VerbHandler> {
    Arc::new(mcp::McpCall {
        server: info.server.clone(),
        tool: info.name.clone(),
        info: Some(info),
    })
}
