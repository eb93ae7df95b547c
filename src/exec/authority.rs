//! The authority verbs as an agent's own actions: `/approve`, `/deny`,
//! `/escalate` and `/cancel` decide (or withdraw) other requests.

use serde_json::json;

use super::context::TurnContext;
use super::executor::Executor;
use super::handlers::Effect;
use crate::dialect::{Op, ParsedAction, Verb};
use crate::permission::pending::{self};
use crate::permission::{Authority, Decision, PendingRequest};

impl Executor {
    /// The authority verbs as an agent's action: `/approve`, `/deny`,
    /// `/escalate`, `/cancel`.
    pub(super) fn authority_action(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
    ) -> Result<Effect, String> {
        let me = Authority::Agent(ctx.agent.clone());
        let waiting = pending::waiting(&self.store.conn()).map_err(|e| e.to_string())?;
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
                });
            }
            let mut done = Vec::new();
            for request in mine {
                self.decide(&request.id, Decision::Cancel, &me)
                    .map_err(|e| e.to_string())?;
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
                        ));
                    }
                }
            }
        };
        let reason = action.content.clone();
        let always = action.op == Some(Op::Always);
        let decision = match action.verb {
            Verb::Approve if always => Decision::ApproveAlways,
            Verb::Approve => Decision::ApproveOnce,
            Verb::Deny if always => Decision::DenyAlways(reason),
            Verb::Deny => Decision::Deny(reason),
            _ => Decision::Escalate(reason),
        };
        let name = decision.name().replace('_', " ");
        let result = self.decide(&id, decision, &me).map_err(|e| e.to_string())?;
        Ok(Effect::text(format!("{name} {id}: {}", result.summary()))
            .with_data(json!({ "request": id, "result": result })))
    }
}
