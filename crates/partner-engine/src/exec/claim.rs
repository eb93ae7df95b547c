//! A request runs at most once. An approval whose effect happens outside
//! the database (a shell command, a fetch, a post) first **claims** the
//! request — one compare-and-set, committed before anything runs, on
//! SQLite and PostgreSQL alike — so that of two deciders (two consoles,
//! two `partner pending approve`, two daemons of a team) exactly one runs
//! it and the other is told who did, before anything runs. An action done
//! in the database needs no claim: its decision commits with its effect.
//!
//! A claim names the process that holds it (`HOST:PID:START`). When that
//! process is gone while its request still runs (partner was killed), the
//! request is closed as interrupted: whether its effect finished is not
//! known, and the agent is told so ([`Executor::settle_interrupted`]).

use std::sync::OnceLock;
use std::time::Instant;

use super::commit::{Approval, Origin};
use super::decide::{not_waiting, request_context};
use super::executor::{ExecError, Executor};
use super::handlers::Effect;
use super::registry::Stage;
use super::settled::Settled;
use partner_core::clock::Millis;
use partner_dialect::ParsedAction;
use partner_policy::requests::{DecideError, Decided};
use partner_policy::{Check, Decision, DecisionKind, PendingRequest, RequestStatus, Verdict};
use partner_protocol::report::{ActionInfo, ActionReport, ActionStatus};
use partner_store::memory::MemoryError;
use partner_store::trace::{TraceOutcome, TraceSource};

/// This machine's name, as `/proc` says.
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty() && !h.contains(':'))
        .unwrap_or_else(|| "localhost".into())
}

/// When process `pid` started (in clock ticks since boot), which tells a
/// process from a later one given the same number.
fn started(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(19).map(str::to_string)
}

/// This process as a claim names it: `HOST:PID:START`.
pub(super) fn claimant() -> &'static str {
    static ME: OnceLock<String> = OnceLock::new();
    ME.get_or_init(|| {
        let pid = std::process::id();
        let start = started("self").unwrap_or_default();
        format!("{}:{pid}:{start}", host())
    })
}

/// Whether the process a claim names still runs: `None` when it is on
/// another machine (its own daemon settles it).
pub(super) fn alive(claim: &str) -> Option<bool> {
    let mut parts = claim.rsplitn(3, ':');
    let (start, pid, on) = (parts.next()?, parts.next()?, parts.next()?);
    if on != host() {
        return None;
    }
    Some(started(pid).as_deref() == Some(start))
}

/// How a request was closed without its effect running here.
pub(super) struct Closing<'a> {
    pub(super) status: RequestStatus,
    pub(super) outcome: TraceOutcome,
    pub(super) report_status: ActionStatus,
    pub(super) kind: DecisionKind,
    pub(super) by: &'a str,
    pub(super) claimant: Option<&'a str>,
    pub(super) step: String,
    pub(super) text: String,
}

impl Executor {
    /// Claims `request` for running `action` (approved as `kind` by
    /// `by`) when its effect happens outside the database; `None` when
    /// the decision commits with the effect and needs no claim. A request
    /// someone else claimed or decided first is an error naming them.
    pub(super) fn claim_for(
        &self,
        request: &PendingRequest,
        action: &ParsedAction,
        kind: DecisionKind,
        by: &str,
    ) -> Result<Option<&'static str>, ExecError> {
        let outside = self
            .registry
            .handler(&action.verb)
            .is_some_and(|h| h.stage(action) != Stage::Store);
        if !outside {
            return Ok(None);
        }
        let me = claimant();
        let claim = Decided {
            status: RequestStatus::Running,
            decision: kind.as_str(),
            by,
            note: None,
            claimant: None,
        };
        match self
            .store
            .transaction(|tx| tx.claim(&request.id, &claim, me, self.now()))
        {
            Ok(_) => Ok(Some(me)),
            Err(DecideError::Store(e)) => Err(e.into()),
            Err(DecideError::NoRequest(id)) => Err(ExecError::NoRequest(id)),
            Err(DecideError::AlreadyDecided { .. }) => {
                match self.store.read(|tx| tx.request(&request.id)) {
                    Ok(Some(now)) => Err(not_waiting(&now)),
                    _ => Err(not_waiting(request)),
                }
            }
        }
    }

    /// Runs an approved action under its claim: a failure before anything
    /// ran (a system error) gives the claim back, so the request waits
    /// again, as it would have without one.
    pub(super) fn run_claimed(
        &self,
        action: &ParsedAction,
        origin: &Origin<'_>,
        check: &Check,
        approval: &Approval<'_>,
        cancel: Option<&super::registry::Cancel>,
    ) -> Result<ActionReport, ExecError> {
        let ctx = request_context(approval.request);
        let result = self.execute(&ctx, action, origin, check, Some(approval), cancel);
        if let (Err(ExecError::System(_)), Some(me)) = (&result, approval.claimant) {
            let id = &approval.request.id;
            let _ = self.store.transaction(|tx| tx.release(id, me));
        }
        result
    }

    /// Closes the requests whose claim is held by a process of this
    /// machine that is gone: their effect may or may not have finished,
    /// and the agent is told exactly that.
    pub fn settle_interrupted(&self) -> Result<Vec<ActionReport>, ExecError> {
        let running = self.store.read(|tx| tx.running())?;
        let mut reports = Vec::new();
        for request in running {
            let Some(claim) = request.claimed_by.clone() else {
                continue;
            };
            if alive(&claim) != Some(false) {
                continue;
            }
            let by = request
                .decided_by
                .clone()
                .unwrap_or_else(|| "partner".into());
            let kind = request
                .decision
                .as_deref()
                .and_then(DecisionKind::parse)
                .unwrap_or(DecisionKind::ApproveOnce);
            let closing = Closing {
                status: RequestStatus::Approved,
                outcome: TraceOutcome::Failed,
                report_status: ActionStatus::Failed,
                kind,
                by: &by,
                claimant: Some(&claim),
                step: format!("{} by {by}; partner stopped while it ran", kind.as_str()),
                text: format!(
                    "partner stopped while request {} ran (approved by {by}): whether it finished is not known",
                    request.id
                ),
            };
            reports.extend(self.close_unrun(&request, &closing)?);
        }
        Ok(reports)
    }

    /// Closes `request` as `closing` says, with its trace record and what
    /// its agent hears, in one transaction; `None` when it was decided
    /// meanwhile (then nothing changes).
    pub(super) fn close_unrun(
        &self,
        request: &PendingRequest,
        closing: &Closing<'_>,
    ) -> Result<Option<ActionReport>, ExecError> {
        let ctx = request_context(request);
        let origin = Origin::whole(&request.raw_text, TraceSource::Agent);
        let now: Millis = self.now();
        let info = ActionInfo::of_request(request);
        let check = Check {
            verdict: Verdict::Ask {
                authorities: request.authorities.clone(),
                reason: request.reason.clone(),
            },
            path: vec![request.reason.clone(), closing.step.clone()],
            charge: None,
        };
        let mut record = self.build_record(
            &ctx,
            &info,
            &origin,
            &check,
            None,
            closing.outcome,
            &Effect::text(closing.text.clone()),
            Instant::now(),
            now,
            false,
        );
        record.decision.request = Some(request.id.clone());
        record.decision.decided_by = Some(closing.by.to_string());
        record.decision.decision = Some(closing.kind.as_str().to_string());
        record.decision.decided_at = Some(now);
        record.decision.requested_at = Some(request.created_at);
        let report = self.store.transaction(|tx| -> Result<_, MemoryError> {
            let decided = Decided {
                status: closing.status,
                decision: closing.kind.as_str(),
                by: closing.by,
                note: None,
                claimant: closing.claimant,
            };
            match tx.decide(&request.id, &decided, now) {
                Ok(_) => {}
                Err(DecideError::Store(e)) => return Err(e),
                Err(_) => return Ok(None),
            }
            let record = self.finalize(tx, record, None, now)?;
            let mut report = ActionReport::new(
                &ctx.agent,
                &info,
                closing.report_status,
                record.result.clone(),
            );
            report.trace_id = Some(record.id.clone());
            let settled = Settled {
                decision: closing.kind,
                by: closing.by.to_string(),
                report: report.clone(),
            };
            let json = serde_json::to_string(&settled).unwrap_or_default();
            tx.keep_result(&request.id, &json)?;
            Ok(Some(report))
        })?;
        Ok(report)
    }
}

/// The decision a claim records for `decision` (edited or not).
pub(super) fn kind_of(decision: &Decision, edited: bool) -> DecisionKind {
    if edited {
        DecisionKind::ApproveEdited
    } else {
        decision.kind()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_gone_one_is_not() {
        assert_eq!(alive(claimant()), Some(true));
        let gone = format!("{}:999999999:1", host());
        assert_eq!(alive(&gone), Some(false));
        assert_eq!(alive("elsewhere:1:1"), None);
    }
}
