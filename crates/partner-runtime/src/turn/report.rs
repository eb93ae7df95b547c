//! What a turn tells the world about the actions it ran, and whether their
//! results call for another pass.

use super::TurnEnv;
use crate::events::Event;
use partner_engine::exec::{ActionReport, ActionStatus};
use partner_policy::PendingRequest;

/// Publishes the events of one report (and its batch members), each with
/// the action's id, so the console follows each action exactly. Requests it
/// made are collected, not announced: the runtime announces every request
/// from the database (whichever process made it), once.
pub fn emit_report(env: &TurnEnv, report: &ActionReport, requests: &mut Vec<PendingRequest>) {
    for child in &report.children {
        emit_report(env, child, requests);
    }
    match (&report.request, report.status) {
        (Some(request), ActionStatus::Pending) => requests.push(request.clone()),
        (_, ActionStatus::Pending) => {}
        _ => {
            env.emit(Event::ActionExecuted {
                agent: report.agent.clone(),
                action_id: report.action_id.clone(),
                verb: report.verb.clone(),
                op: report.op,
                canonical: report.canonical.clone(),
                status: report.status,
                result: report.text.clone(),
                trace_id: report.trace_id.clone(),
                system_error: report.system_error,
                flagged: report.flagged,
            });
            if report.system_error {
                env.emit(Event::Error {
                    agent: Some(report.agent.clone()),
                    message: format!(
                        "system error running {} (not the agent's doing): {}",
                        report.canonical, report.text
                    ),
                });
            }
            if let Some(change) = &report.memory {
                env.emit(Event::MemoryChanged {
                    agent: change.agent.clone(),
                    label: change.label.clone(),
                    version_before: change.version_before,
                    version_after: change.version_after,
                });
            }
        }
    }
}

/// True when the model should see these results before the turn ends:
/// reads, searches, fetches and the like, and anything that failed or was
/// refused (so the model learns why).
pub(super) fn wants_continuation(reports: &[ActionReport]) -> bool {
    reports.iter().any(|r| {
        (r.status == ActionStatus::Executed && r.needs_continuation)
            || matches!(r.status, ActionStatus::Failed | ActionStatus::Denied)
            || wants_continuation(&r.children)
    })
}
