//! Requests that need several partners to approve them: each partner's
//! approval is counted once, in its own transaction, and the action runs
//! on the approval that completes the count (under whichever partner's
//! name gave it). One partner's denial denies it.

use super::executor::{ExecError, Executor};
use partner_policy::approvals::{Approving, NotDecider};
use partner_policy::{Authority, Decision, PendingRequest};
use partner_protocol::report::{ActionInfo, ActionReport, ActionStatus};

/// What counting an approval left.
pub(super) enum Counted {
    /// The request still waits for more partners: what the one who
    /// approved is told.
    Waits(Box<ActionReport>),
    /// The approvals are complete (or only one was needed): the partners
    /// who approved it, in order (empty when one sufficed).
    Complete(Vec<String>),
}

impl Executor {
    /// Counts `by`'s approval of `request` when it needs several.
    pub(super) fn count_approval(
        &self,
        request: &PendingRequest,
        decision: &Decision,
        by: &Authority,
    ) -> Result<Counted, ExecError> {
        let needed = request.approvals_needed;
        if needed <= 1 {
            return Ok(Counted::Complete(Vec::new()));
        }
        if *decision != Decision::ApproveOnce {
            return Err(ExecError::Refused(format!(
                "{} needs {needed} partners to approve it each time: approve it once, not always",
                request.id
            )));
        }
        let Some(name) = by.partner_name() else {
            return Err(ExecError::NotDecider {
                id: request.id.clone(),
                by: by.to_string(),
                why: NotDecider::Unnamed(needed).to_string(),
            });
        };
        let counted = self
            .store
            .transaction(|tx| tx.add_approval(&request.id, name))?;
        let current = || -> Result<PendingRequest, ExecError> {
            self.store
                .read(|tx| tx.request(&request.id))?
                .ok_or_else(|| ExecError::NoRequest(request.id.clone()))
        };
        let approved = match counted {
            Approving::Added(approved) => approved,
            Approving::NotWaiting => return Err(super::decide::not_waiting(&current()?)),
            Approving::Again => {
                let now = current()?;
                if now.approvals_missing() == 0 {
                    // Complete already (an earlier run stopped short of
                    // the action): the action runs now.
                    return Ok(Counted::Complete(now.approved_by));
                }
                return Err(ExecError::Refused(format!(
                    "{by} has approved {} already; it waits for {}",
                    request.id,
                    more(now.approvals_missing())
                )));
            }
        };
        if approved.len() >= needed {
            return Ok(Counted::Complete(approved));
        }
        let waiting = current()?;
        let mut report = ActionReport::new(
            &request.agent,
            &ActionInfo::of_request(request),
            ActionStatus::Pending,
            format!(
                "{by} approved {} ({} of {needed}); it waits for {}",
                request.id,
                approved.len(),
                more(needed - approved.len())
            ),
        );
        report.request = Some(waiting);
        Ok(Counted::Waits(Box::new(report)))
    }
}

/// "1 more partner", "2 more partners".
fn more(n: usize) -> String {
    format!("{n} more partner{}", if n == 1 { "" } else { "s" })
}
