//! What a decision leaves in its action's transaction: the request
//! decided (once: one decided elsewhere meanwhile rolls it all back), the
//! standing rule an "always" or "for a while" makes, the trace record, and
//! what the requester should hear, kept for whichever process routes it.

use super::commit::Approval;
use super::executor::Executor;
use super::registry::ActionTx;
use partner_core::clock::Millis;
use partner_policy::pending::NewRule;
use partner_policy::requests::{DecideError, Decided};
use partner_policy::{Decision, DecisionKind, RequestStatus};
use partner_protocol::report::ActionReport;
use partner_store::memory::MemoryError;
use partner_store::trace::{TraceOutcome, TraceRecord};

/// What a decided request's requester hears, kept with the request until
/// the runtime routes it (whichever process decided).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Settled {
    pub(super) decision: DecisionKind,
    pub(super) by: String,
    pub(super) report: ActionReport,
}

impl Executor {
    /// In the action's transaction: the approval (and any standing rule it
    /// creates) and the trace record, whose sequence number is allocated
    /// here, under the transaction's write lock.
    pub(super) fn finalize(
        &self,
        tx: &dyn ActionTx,
        record: TraceRecord,
        approval: Option<&Approval<'_>>,
        now: Millis,
    ) -> Result<TraceRecord, MemoryError> {
        if let Some(approval) = approval {
            decided(tx, approval, record.outcome, now)?;
        }
        if self.keeps_trace {
            tx.append(record)
        } else {
            Ok(record)
        }
    }

    /// In a decision's transaction: keeps what the requester should hear,
    /// for the runtime to route (whichever process made the decision).
    pub(super) fn settle(
        &self,
        tx: &dyn ActionTx,
        approval: Option<&Approval<'_>>,
        report: &ActionReport,
    ) -> Result<(), MemoryError> {
        let Some(approval) = approval else {
            return Ok(());
        };
        let settled = Settled {
            decision: approval.kind(),
            by: approval.by.to_string(),
            report: report.clone(),
        };
        let json = serde_json::to_string(&settled).map_err(|e| MemoryError::Corrupt {
            what: "decision result",
            value: e.to_string(),
        })?;
        tx.keep_result(&approval.request.id, &json)
    }
}

/// In a decision's transaction: the request's decision, and the standing
/// rule it makes. A request decided elsewhere meanwhile rolls it all back.
fn decided(
    tx: &dyn ActionTx,
    approval: &Approval<'_>,
    outcome: TraceOutcome,
    now: Millis,
) -> Result<(), MemoryError> {
    let request = approval.request;
    let status = if approval.decision.approves() {
        RequestStatus::Approved
    } else if *approval.decision == Decision::Cancel {
        RequestStatus::Cancelled
    } else {
        RequestStatus::Denied
    };
    let note = match approval.decision {
        Decision::Deny(r) | Decision::DenyAlways(r) => r.as_deref(),
        _ => None,
    };
    let by = approval.by.to_string();
    let decision = Decided {
        status,
        decision: approval.kind().as_str(),
        by: &by,
        note,
        claimant: approval.claimant,
    };
    match tx.decide(&request.id, &decision, now) {
        Ok(_) => {}
        Err(DecideError::Store(e)) => return Err(e),
        Err(_) => {
            return Err(MemoryError::Conflict(format!(
                "request {} was decided meanwhile, so this decision was not made",
                request.id
            )));
        }
    }
    // A standing rule covers exactly this verb, op and target, and an
    // allowing one is made only when the approved action really ran.
    let ran = outcome == TraceOutcome::Executed;
    let standing = match approval.decision {
        Decision::ApproveAlways if ran => Some((true, None, None)),
        Decision::ApproveFor(d) if ran => {
            Some((true, None, Some(partner_core::clock::after(now, *d))))
        }
        Decision::DenyAlways(reason) => Some((false, reason.as_deref(), None)),
        _ => None,
    };
    if let Some((allow, reason, expires_at)) = standing {
        let rule = NewRule {
            agent: &request.agent,
            verb: request.verb.name(),
            op: request.action.op.map(partner_dialect::ActionOp::as_str),
            target: request.action.target.as_deref(),
            allow,
            reason,
            by: &by,
            expires_at,
        };
        tx.add_rule(&rule, now)?;
    }
    Ok(())
}
