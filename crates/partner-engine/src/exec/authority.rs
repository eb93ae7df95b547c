//! The authority verbs as an agent's own actions: `/approve`, `/deny`,
//! `/escalate` and `/cancel` decide (or withdraw) other requests.

use serde_json::json;

use super::context::TurnContext;
use super::executor::{ExecError, Executor};
use super::handlers::Effect;
use super::registry::{ActionError, Outcome};
use partner_dialect::{ActionOp, ParsedAction, Verb};
use partner_policy::pending::{self};
use partner_policy::{Authority, Decision, PendingRequest};

impl Executor {
    /// The authority verbs as an agent's action: `/approve`, `/deny`,
    /// `/escalate`, `/cancel`.
    pub(crate) fn authority_action(&self, ctx: &TurnContext, action: &ParsedAction) -> Outcome {
        let me = Authority::Agent(ctx.agent.clone());
        let waiting = self.store.read(|tx| tx.waiting())?;
        if action.verb == Verb::Cancel {
            let mine: Vec<&PendingRequest> = waiting
                .iter()
                .filter(|r| {
                    r.agent == ctx.agent
                        && action
                            .target
                            .as_deref()
                            .is_none_or(|t| pending::row_id(t) == pending::row_id(&r.id))
                })
                .collect();
            if mine.is_empty() {
                return Err(match &action.target {
                    Some(id) => format!("you have no waiting request {id}"),
                    None => "you have no waiting requests to cancel".to_string(),
                }
                .into());
            }
            let mut done = Vec::new();
            for request in mine {
                self.decide(&request.id, Decision::Cancel, &me, None)
                    .map_err(decision_error)?;
                done.push(request.id.clone());
            }
            return Ok(Effect::text(format!("cancelled {}", done.join(", ")))
                .with_data(json!({ "cancelled": done })));
        }
        let id = match &action.target {
            Some(id) => id.clone(),
            None => {
                let mine: Vec<&PendingRequest> =
                    waiting.iter().filter(|r| r.decidable_by(&me)).collect();
                match mine.as_slice() {
                    [one] => one.id.clone(),
                    [] => return Err("no request is waiting on you".into()),
                    many => {
                        return Err(format!(
                            "several requests wait on you ({}); name one",
                            many.iter()
                                .map(|r| r.id.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                        .into());
                    }
                }
            }
        };
        let reason = action.content.clone();
        let always = action.op == Some(ActionOp::Always);
        let decision = match action.verb {
            Verb::Approve if always => Decision::ApproveAlways,
            Verb::Approve => Decision::ApproveOnce,
            Verb::Deny if always => Decision::DenyAlways(reason),
            Verb::Deny => Decision::Deny(reason),
            _ => Decision::Escalate(reason),
        };
        let name = decision.name().replace('_', " ");
        let result = self
            .decide(&id, decision, &me, None)
            .map_err(decision_error)?;
        Ok(Effect::text(format!("{name} {id}: {}", result.summary()))
            .with_data(json!({ "request": id, "result": result })))
    }
}

/// A decision that could not be made, told to the deciding agent: its own
/// doing (no such request, not its to decide) or the system's.
fn decision_error(e: ExecError) -> ActionError {
    match e {
        ExecError::Memory(e) => ActionError::from(e),
        ExecError::System(m) => ActionError::System(m),
        other => ActionError::Agent(other.to_string()),
    }
}
