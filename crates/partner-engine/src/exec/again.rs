//! A turn run again: after a crash or a lost lease cut a turn short, the
//! daemon that answers its message runs it again from the start, under
//! the same turn id, so its actions have the same ids. An action the cut
//! turn already ran (or asked for) is not run twice: the agent hears what
//! became of it.

use super::commit::status_of;
use super::context::TurnContext;
use super::executor::{ExecError, Executor};
use partner_policy::RequestStatus;
use partner_protocol::report::{ActionInfo, ActionReport, ActionStatus};

impl Executor {
    /// What became of action `info` in the run of this turn that was cut
    /// short, when it got that far; `None` when it did not (it runs now).
    pub(super) fn earlier(
        &self,
        ctx: &TurnContext,
        info: &ActionInfo,
    ) -> Result<Option<ActionReport>, ExecError> {
        let Some(id) = info.action_id.as_deref().filter(|_| ctx.again) else {
            return Ok(None);
        };
        let (record, request) = self
            .store
            .read(|tx| Ok((tx.by_action(id)?, tx.for_action(id)?)))?;
        if let Some(record) = record {
            let mut report = ActionReport::new(
                &ctx.agent,
                info,
                status_of(record.outcome),
                format!(
                    "not run again: this turn was cut short and runs again, and {} had already ended as {} ({}): {}",
                    record.canonical,
                    record.outcome.as_str(),
                    record.id,
                    record.result
                ),
            );
            report.trace_id = Some(record.id);
            report.data = record.data;
            return Ok(Some(report));
        }
        let Some(request) =
            request.filter(|r| matches!(r.status, RequestStatus::Waiting | RequestStatus::Running))
        else {
            return Ok(None);
        };
        let mut report = ActionReport::new(
            &ctx.agent,
            info,
            ActionStatus::Pending,
            format!(
                "not asked again: this turn was cut short and runs again, and {} still waits for {} ({})",
                request.canonical,
                request.waiting_on(),
                request.id
            ),
        );
        report.data = serde_json::json!({ "request": request.id });
        report.request = Some(request);
        Ok(Some(report))
    }
}
