//! One handler per verb. Handlers whose effect is outside the database
//! (fetch, web, calc, data, summarize) run before the transaction; the
//! others run inside the action's transaction, so an action's memory change,
//! its approval and its trace index row commit together.

mod calc;
mod comms;
mod data;
mod intentions;
mod lookup;
mod memory;
mod web;

use rusqlite::Connection;

use super::context::TurnContext;
use super::executor::Executor;
use crate::clock::Millis;
use crate::dialect::{Op, ParsedAction, Verb};
use crate::memory::MemoryChange;

pub(crate) use calc::CalcState;
pub(crate) use web::FetchPages;

/// What a handler did.
#[derive(Debug, Clone, Default)]
pub(crate) struct Effect {
    /// For the model.
    pub text: String,
    /// For the console.
    pub data: serde_json::Value,
    /// The block changed, if any.
    pub memory: Option<MemoryChange>,
    /// The model should see this before going on.
    pub needs_continuation: bool,
}

impl Effect {
    pub(crate) fn text(text: impl Into<String>) -> Self {
        Effect {
            text: text.into(),
            ..Effect::default()
        }
    }

    pub(crate) fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = data;
        self
    }

    pub(crate) fn continued(mut self) -> Self {
        self.needs_continuation = true;
        self
    }
}

/// A handler's result: an effect, or a message for the agent.
pub(crate) type Outcome = Result<Effect, String>;

/// True for verbs handled outside the database.
pub(crate) fn is_external(action: &ParsedAction) -> bool {
    match action.verb {
        Verb::Fetch | Verb::Web => true,
        Verb::Data => matches!(action.op, Some(Op::List | Op::Read | Op::Search) | None),
        _ => false,
    }
}

/// Runs the part of an action that happens outside the database. `None`
/// for verbs that work on the database.
pub(crate) fn outside(
    exec: &Executor,
    ctx: &TurnContext,
    action: &ParsedAction,
) -> Option<Outcome> {
    Some(match action.verb {
        Verb::Fetch => web::fetch(exec, &ctx.agent, action),
        Verb::Web => web::web(exec, action),
        Verb::Data if is_external(action) => data::data(exec, action),
        Verb::Calc => calc::calc(exec, &ctx.agent, action),
        Verb::Summarize => intentions::summarize(action),
        Verb::Custom(ref name) => Err(format!("/{name} has no handler in this constellation")),
        _ => return None,
    })
}

/// Runs the database part of an action inside its transaction.
pub(crate) fn inside(
    exec: &Executor,
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    match action.verb {
        Verb::Recall => memory::recall(conn, ctx, action, now, exec.engine().policy().limits),
        Verb::Context => memory::context(conn, ctx, action, now),
        Verb::Search => lookup::search(exec, conn, ctx, action, now),
        Verb::Send | Verb::Reply | Verb::Post | Verb::Dm | Verb::Tell => {
            comms::deliver(exec, conn, ctx, action, now)
        }
        Verb::Uncertain => comms::uncertain(conn, ctx, action, now),
        Verb::Remind => intentions::remind(conn, ctx, action, now),
        Verb::Complete | Verb::Dismiss => intentions::close(conn, ctx, action, now),
        Verb::Intentions => intentions::list(conn, ctx),
        Verb::Pulse => intentions::pulse(conn, ctx, action, now),
        Verb::Halt => intentions::halt(exec, conn, ctx, action, now),
        Verb::Data => data::watch(exec, conn, ctx, action, now),
        _ => Err(format!("/{} cannot run here", action.verb)),
    }
}
