//! The commit protocol: an action's database effects, its approval (and
//! any standing rule the approval makes) and its trace record commit in one
//! transaction; an effect outside the database (a fetch, a calculation) runs
//! first and its result is recorded the same way.

use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::context::TurnContext;
use super::executor::{ExecError, Executor};
use super::handlers::Effect;
use super::registry::{ActionError, Cx, Stage};
use super::report::{ActionReport, ActionStatus};
use crate::clock::Millis;
use crate::dialect::ParsedAction;
use crate::isolate;
use crate::memory::MemoryError;
use crate::permission::pending::{self, NewRule};
use crate::permission::{Authority, Check, Decision, PendingRequest, RequestStatus, Verdict};
use crate::trace::{
    DecisionPath, TraceOp, TraceOutcome, TraceRecord, TraceSource, store as trace_store,
};

/// An approval being carried out, recorded in the action's transaction.
pub(super) struct Approval<'a> {
    pub(super) request: &'a PendingRequest,
    pub(super) decision: &'a Decision,
    pub(super) by: &'a Authority,
}

/// Where an action came from in its turn.
pub(super) struct Origin<'a> {
    pub(super) text: &'a str,
    pub(super) span: (usize, usize),
    pub(super) source: TraceSource,
    pub(super) op: TraceOp,
}

impl<'a> Origin<'a> {
    pub(super) fn of(turn: &'a str, action: &ParsedAction) -> Self {
        Origin {
            text: action.span.slice(turn),
            span: (action.span.start, action.span.end),
            source: TraceSource::Agent,
            op: TraceOp::Action,
        }
    }

    /// An action that is the whole of `text` (a stored request, an edit).
    pub(super) fn whole(text: &'a str, source: TraceSource) -> Self {
        Origin {
            text,
            span: (0, text.len()),
            source,
            op: TraceOp::Action,
        }
    }
}

/// Why an action's transaction rolled back.
pub(super) enum TxError {
    /// The handler refused or failed.
    Action(ActionError),
    /// The database failed.
    Db(MemoryError),
}

impl From<rusqlite::Error> for TxError {
    fn from(e: rusqlite::Error) -> Self {
        TxError::Db(e.into())
    }
}

impl From<MemoryError> for TxError {
    fn from(e: MemoryError) -> Self {
        TxError::Db(e)
    }
}

pub(super) fn status_of(outcome: TraceOutcome) -> ActionStatus {
    match outcome {
        TraceOutcome::Executed => ActionStatus::Executed,
        TraceOutcome::Denied => ActionStatus::Denied,
        TraceOutcome::Failed => ActionStatus::Failed,
        TraceOutcome::Cancelled => ActionStatus::Cancelled,
        TraceOutcome::TimedOut => ActionStatus::TimedOut,
    }
}

pub(super) fn verdict_name(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Allow => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    }
}

/// What the agent hears when handling its action hit a bug in partner.
pub(super) fn crashed(panic: &str) -> String {
    format!(
        "partner failed while handling this action, so nothing was changed (internal error: {panic}); this is not your mistake"
    )
}

/// True for a system error worth retrying: the database was busy.
fn transient(message: &str) -> bool {
    message.contains("database is locked") || message.contains("busy")
}

impl Executor {
    /// Runs an allowed (or approved) action and records it. The verb's
    /// handler says where its work happens: in the action's transaction, or
    /// before it (a calculation, a fetch, a decision on another request).
    /// A failure is the agent's (recorded as failed, told to the model) or
    /// the system's: retried while the database is busy, then recorded as a
    /// system failure — or, for an approval, left undone so the request
    /// stays pending and the partner sees the error.
    pub(super) fn execute(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
        origin: &Origin<'_>,
        check: &Check,
        approval: Option<&Approval<'_>>,
    ) -> Result<ActionReport, ExecError> {
        let Some(handler) = self.registry.handler(&action.verb) else {
            return Err(ExecError::System(format!(
                "/{} has no handler in this constellation",
                action.verb
            )));
        };
        let canonical = action.canonical();
        let verb = action.verb.name();
        let started = Instant::now();
        let external = !handler.reproducible(action);
        let mut attempt = 0;
        let result = loop {
            let now = self.now();
            let result = match handler.stage(action) {
                Stage::Store => {
                    let outcome = self.store.transaction(
                        |tx| -> Result<(ActionReport, TraceRecord), TxError> {
                            let cx = Cx {
                                exec: self,
                                ctx,
                                conn: Some(tx),
                                now,
                            };
                            let effect = isolate::contain(|| handler.run(&cx, action))
                                .unwrap_or_else(|panic| Err(ActionError::System(crashed(&panic))))
                                .map_err(TxError::Action)?;
                            let mut record = self.build_record(
                                ctx,
                                &canonical,
                                verb,
                                origin,
                                check,
                                approval,
                                TraceOutcome::Executed,
                                &effect,
                                started,
                                now,
                                external,
                            );
                            self.finalize(tx, &mut record, approval, now)?;
                            Ok((self.report_of(ctx, &record, &effect, check), record))
                        },
                    );
                    match outcome {
                        Ok((report, _)) => return Ok(report),
                        Err(TxError::Action(e)) => Err(e),
                        Err(TxError::Db(e)) => Err(ActionError::from(e)),
                    }
                }
                _ => {
                    let cx = Cx {
                        exec: self,
                        ctx,
                        conn: None,
                        now,
                    };
                    isolate::contain(|| handler.run(&cx, action))
                        .unwrap_or_else(|panic| Err(ActionError::System(crashed(&panic))))
                }
            };
            match result {
                Err(ActionError::System(message)) if attempt < 2 && transient(&message) => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(50 * 4u64.pow(attempt - 1)));
                }
                other => break other,
            }
        };
        let now = self.now();
        let (outcome, effect, system) = match result {
            Ok(effect) => (TraceOutcome::Executed, effect, false),
            Err(ActionError::Agent(message)) => {
                (TraceOutcome::Failed, Effect::text(message), false)
            }
            Err(ActionError::System(message)) => {
                if approval.is_some() {
                    // Not the decision's fault: the request stays pending.
                    return Err(ExecError::System(message));
                }
                let text = format!(
                    "partner could not do this right now because of a problem on its side, not yours ({message}); nothing was changed"
                );
                (TraceOutcome::Failed, Effect::text(text), true)
            }
        };
        let mut record = self.build_record(
            ctx, &canonical, verb, origin, check, approval, outcome, &effect, started, now,
            external,
        );
        record.system_error = system;
        let mut report = self.commit(ctx, record, approval, &effect, check, now)?;
        report.system_error = system;
        Ok(report)
    }

    /// Commits a record that carries no database effect of its own (and the
    /// approval it completes) and reports it.
    pub(super) fn commit(
        &self,
        ctx: &TurnContext,
        mut record: TraceRecord,
        approval: Option<&Approval<'_>>,
        effect: &Effect,
        check: &Check,
        now: Millis,
    ) -> Result<ActionReport, ExecError> {
        self.store
            .transaction(|tx| self.finalize(tx, &mut record, approval, now))?;
        Ok(self.report_of(ctx, &record, effect, check))
    }

    /// Records an action that did not run (denied, failed before running,
    /// cancelled, timed out).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record(
        &self,
        ctx: &TurnContext,
        canonical: &str,
        verb: &str,
        origin: &Origin<'_>,
        check: &Check,
        approval: Option<&Approval<'_>>,
        outcome: TraceOutcome,
        effect: Effect,
    ) -> Result<ActionReport, ExecError> {
        let now = self.now();
        let record = self.build_record(
            ctx,
            canonical,
            verb,
            origin,
            check,
            approval,
            outcome,
            &effect,
            Instant::now(),
            now,
            false,
        );
        self.commit(ctx, record, approval, &effect, check, now)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_record(
        &self,
        ctx: &TurnContext,
        canonical: &str,
        verb: &str,
        origin: &Origin<'_>,
        check: &Check,
        approval: Option<&Approval<'_>>,
        outcome: TraceOutcome,
        effect: &Effect,
        started: Instant,
        now: Millis,
        external: bool,
    ) -> TraceRecord {
        let mut decision = DecisionPath {
            verdict: verdict_name(&check.verdict).to_string(),
            steps: check.path.clone(),
            ..DecisionPath::default()
        };
        if let Some(approval) = approval {
            decision.request = Some(approval.request.id.clone());
            decision.decided_by = Some(approval.by.to_string());
            decision.decision = Some(approval.decision.name().to_string());
            decision.decided_at = Some(now);
            decision.requested_at = Some(approval.request.created_at);
        }
        TraceRecord {
            // Allocated in the action's transaction (`finalize`).
            id: String::new(),
            seq: 0,
            action_id: None,
            time: now,
            agent: ctx.agent.clone(),
            turn_id: ctx.turn_id.clone(),
            source: origin.source,
            text: origin.text.to_string(),
            span: origin.span,
            canonical: canonical.to_string(),
            verb: verb.to_string(),
            op: origin.op.clone(),
            decision,
            outcome,
            result: effect.text.clone(),
            data: effect.data.clone(),
            duration_us: started.elapsed().as_micros() as u64,
            memory: effect.memory.clone(),
            external,
            system_error: false,
        }
    }

    /// In the action's transaction: the approval (and any standing rule it
    /// creates) and the trace record, whose sequence number is allocated
    /// here, under the transaction's write lock.
    pub(super) fn finalize(
        &self,
        tx: &Connection,
        record: &mut TraceRecord,
        approval: Option<&Approval<'_>>,
        now: Millis,
    ) -> Result<(), MemoryError> {
        if let Some(approval) = approval {
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
            pending::finish(
                tx,
                &request.id,
                status,
                approval.decision.name(),
                &by,
                note,
                now,
            )?;
            // A standing rule covers exactly this verb, op and target, and an
            // allowing one is made only when the approved action really ran.
            let ran = record.outcome == TraceOutcome::Executed;
            let standing = match approval.decision {
                Decision::ApproveAlways if ran => Some((true, None, None)),
                Decision::ApproveFor(d) if ran => {
                    Some((true, None, Some(crate::clock::after(now, *d))))
                }
                Decision::DenyAlways(reason) => Some((false, reason.as_deref(), None)),
                _ => None,
            };
            if let Some((allow, reason, expires_at)) = standing {
                let rule = NewRule {
                    agent: &request.agent,
                    verb: &request.verb,
                    op: request.action["op"].as_str(),
                    target: request.action["target"].as_str(),
                    allow,
                    reason,
                    by: &by,
                    expires_at,
                };
                pending::add_rule(tx, &rule, now)?;
            }
        }
        record.seq = trace_store::next_seq(tx)?;
        record.id = format!("t{}", record.seq);
        trace_store::insert(tx, record)
    }

    pub(super) fn report_of(
        &self,
        ctx: &TurnContext,
        record: &TraceRecord,
        effect: &Effect,
        check: &Check,
    ) -> ActionReport {
        let mut report = ActionReport::new(
            &ctx.agent,
            record.canonical.clone(),
            status_of(record.outcome),
            record.result.clone(),
        );
        report.data = effect.data.clone();
        report.trace_id = Some(record.id.clone());
        report.memory = effect.memory.clone();
        report.path = check.path.clone();
        report.needs_continuation =
            effect.needs_continuation && record.outcome == TraceOutcome::Executed;
        report
    }
}
