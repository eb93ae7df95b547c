//! One agent turn: the first pass (a message or a pulse), then, while any
//! action's result should be seen, continuation passes carrying an
//! `[Action Results]` message — up to a cap. The same system prompt is
//! reused for every pass; every pass is fitted to the agent's context
//! budget. The first message carries the turn's changing context (time,
//! recalled memories) at its end, and is stored as sent: the next turn's
//! request starts with this one's bytes.
//!
//! What is sent and what is stored:
//!
//! | prompt type | messages sent | stored in history |
//! |---|---|---|
//! | first pass, message | history + user message | the user message as sent |
//! | first pass, pulse | history + full pulse prompt | the pulse prompt as sent |
//! | continuation | … + assistant reply + `[Action Results]…` | the reply and the results |
//! | continuation of a pulse | as above, after the pulse prompt | the same |

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

mod env;
mod pass;
mod prepare;
mod report;
mod store;

pub use env::{AgentInfo, TokenScale, Trigger, TurnEnv, TurnOutcome};

use prepare::Turn;
pub use report::emit_report;

use super::events::Event;
use partner_engine::exec::Executor;

/// Most tool calls read from one reply.
const MAX_TOOL_CALLS: usize = 32;

/// A turn that could not go on: the partner is told why.
fn failed(env: &TurnEnv, agent: String, message: String) -> TurnOutcome {
    env.emit(Event::Error {
        agent: Some(agent),
        message: message.clone(),
    });
    TurnOutcome {
        error: Some(message),
        ..TurnOutcome::default()
    }
}

/// The verbs `agent` may use — all but the authority verbs, unless it has
/// an authority role; the constellation's own verbs included, and the
/// tools of the MCP servers running here that serve it — from the verb
/// registry.
pub fn allowed_verbs(
    executor: &Executor,
    agent: &str,
    authority: bool,
) -> Vec<partner_dialect::VerbSpec> {
    executor
        .registry()
        .verbs_for(authority)
        .into_iter()
        .filter(|spec| match &spec.action {
            Some(partner_dialect::CustomAction::Mcp { server, .. }) => {
                executor.mcp().is_some_and(|hub| hub.serves(server, agent))
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// Runs one turn to its end (or until cancelled), inside a `turn` span
/// (agent, turn number, what started it) for `RUST_LOG=partner=debug`.
pub async fn run_turn(
    env: Arc<TurnEnv>,
    agent: Arc<AgentInfo>,
    trigger: Trigger,
    pulse: Duration,
    turns: u64,
    cancel: watch::Receiver<bool>,
) -> TurnOutcome {
    use tracing::Instrument;
    let started_by = match &trigger {
        Trigger::Message { .. } => "message",
        Trigger::Pulse { .. } => "pulse",
        Trigger::Results { .. } => "results",
    };
    let span = tracing::debug_span!("turn", agent = %agent.name, turn = turns, started_by);
    async move {
        tracing::debug!("turn starts");
        let outcome = run_turn_steps(env, agent, trigger, pulse, turns, cancel).await;
        tracing::debug!("turn ends");
        outcome
    }
    .instrument(span)
    .await
}

/// The steps of one turn: its prompt, then passes until one ends it.
async fn run_turn_steps(
    env: Arc<TurnEnv>,
    agent: Arc<AgentInfo>,
    trigger: Trigger,
    pulse: Duration,
    turns: u64,
    cancel: watch::Receiver<bool>,
) -> TurnOutcome {
    let mut turn = match Turn::prepare(env, agent, &trigger, pulse, turns, cancel).await {
        Ok(turn) => turn,
        Err(outcome) => return outcome,
    };
    let mut outcome = None;
    for pass in 1..=turn.env.max_passes {
        if let std::ops::ControlFlow::Break(ended) = turn.pass(pass).await {
            outcome = Some(ended);
            break;
        }
    }
    let outcome = outcome.unwrap_or_else(|| std::mem::take(&mut turn.outcome));
    // Answered, unless cut short: a halt drops the message itself, and a
    // lost lease leaves it to the daemon that takes the agent over.
    if let Some(id) = turn.delivery
        && !outcome.cancelled
    {
        store::answered(&turn.env, &turn.ctx, id).await;
    }
    outcome
}
