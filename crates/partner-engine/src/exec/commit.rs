//! The commit protocol: an action's database effects, its approval (and
//! any standing rule the approval makes) and its trace record commit in one
//! transaction; an effect outside the database (a fetch, a calculation) runs
//! first and its result is recorded the same way.

use std::time::{Duration, Instant};

use super::context::TurnContext;
use super::executor::{ExecError, Executor};
use super::handlers::Effect;
use super::registry::{ActionError, Cancel, Cx, Stage};
use partner_core::clock::Millis;
use partner_core::isolate;
use partner_dialect::ParsedAction;
use partner_policy::{Authority, Check, Decision, DecisionKind, PendingRequest, Verdict};
use partner_protocol::report::{ActionInfo, ActionReport, ActionStatus};
use partner_store::memory::MemoryError;
use partner_store::trace::{DecisionPath, TraceOp, TraceOutcome, TraceRecord, TraceSource};

/// An approval being carried out, recorded in the action's transaction.
pub(super) struct Approval<'a> {
    pub(super) request: &'a PendingRequest,
    pub(super) decision: &'a Decision,
    pub(super) by: &'a Authority,
    /// The partner edited the action before approving it.
    pub(super) edited: bool,
    /// The claim this process holds on the request while running it (an
    /// effect outside the database), which its decision completes.
    pub(super) claimant: Option<&'a str>,
}

impl Approval<'_> {
    /// How the request was decided.
    pub(super) fn kind(&self) -> DecisionKind {
        if self.edited {
            DecisionKind::ApproveEdited
        } else {
            self.decision.kind()
        }
    }
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
    /// The rate-limit token the check saw was taken meanwhile (by another
    /// process): the action is refused.
    Limited(String),
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
        cancel: Option<&Cancel>,
    ) -> Result<ActionReport, ExecError> {
        let Some(handler) = self.registry.handler(&action.verb) else {
            return Err(ExecError::System(format!(
                "/{} has no handler in this constellation",
                action.verb
            )));
        };
        // A decided request keeps the id its action had in its turn.
        let id = match approval {
            Some(approval) => approval.request.action_id.clone(),
            None => ctx.action_id(action),
        };
        let info = ActionInfo::of(action, id);
        let started = Instant::now();
        let external = !handler.reproducible(action);
        // The rate-limit token: an approved request took it when it was
        // made; otherwise it is taken in the action's own transaction, or,
        // for work done before that transaction, just before the work.
        let charge = check.charge.as_ref().filter(|_| approval.is_none());
        let stage = handler.stage(action);
        if stage != Stage::Store
            && let Some(charge) = charge
            && let Some(reason) = self.store.transaction(|tx| charge.take(tx, self.now()))?
        {
            return self.refuse_limited(ctx, &info, origin, check, reason);
        }
        let run = Run {
            ctx,
            action,
            info: &info,
            origin,
            check,
            approval,
            handler,
            charge,
            cancel,
            started,
            external,
        };
        // The time the handler was given is the record's time: replay gives
        // it the same.
        let (result, now) = match self.attempt(&run, stage) {
            Attempt::Reported(report) => return *report,
            Attempt::Ran(result, now) => (result, now),
        };
        let (outcome, effect, system) = outcome_of(result, approval.is_some())?;
        let mut record = self.build_record(
            ctx, &info, origin, check, approval, outcome, &effect, started, now, external,
        );
        record.system_error = system;
        let mut report = self.commit(ctx, &info, record, approval, &effect, check, now)?;
        report.system_error = system;
        Ok(report)
    }

    /// Runs an action's work, again (after 50 then 200 ms) while the
    /// database is busy: a stored action ends with its own committed
    /// report; other work's result is returned with the time it ran at.
    fn attempt(&self, run: &Run<'_>, stage: Stage) -> Attempt {
        let mut attempt = 0;
        loop {
            let now = self.now();
            let result = match stage {
                Stage::Store => match self.run_stored(run, now) {
                    Ok(report) => return Attempt::Reported(Box::new(Ok(report))),
                    Err(TxError::Action(e)) => Err(e),
                    Err(TxError::Limited(reason)) => {
                        let refused =
                            self.refuse_limited(run.ctx, run.info, run.origin, run.check, reason);
                        return Attempt::Reported(Box::new(refused));
                    }
                    Err(TxError::Db(e)) => Err(ActionError::from(e)),
                },
                _ => {
                    let cx = Cx {
                        exec: self,
                        ctx: run.ctx,
                        tx: None,
                        now,
                        cancel: run.cancel,
                    };
                    isolate::contain(|| run.handler.run(&cx, run.action))
                        .unwrap_or_else(|panic| Err(ActionError::System(crashed(&panic))))
                }
            };
            match result {
                Err(ActionError::System(message)) if attempt < 2 && transient(&message) => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(50 * 4u64.pow(attempt - 1)));
                }
                other => return Attempt::Ran(other, now),
            }
        }
    }

    /// A stage-store action in its own transaction: the rate-limit token
    /// taken, the handler run, its trace record finalized and the request
    /// it settles settled, all or nothing.
    fn run_stored(&self, run: &Run<'_>, now: Millis) -> Result<ActionReport, TxError> {
        self.store
            .transaction(|tx| -> Result<ActionReport, TxError> {
                super::context::fenced(tx, run.ctx)?;
                if let Some(charge) = run.charge
                    && let Some(reason) = charge.take(tx, now)?
                {
                    return Err(TxError::Limited(reason));
                }
                let cx = Cx {
                    exec: self,
                    ctx: run.ctx,
                    tx: Some(tx),
                    now,
                    cancel: run.cancel,
                };
                let effect = isolate::contain(|| run.handler.run(&cx, run.action))
                    .unwrap_or_else(|panic| Err(ActionError::System(crashed(&panic))))
                    .map_err(TxError::Action)?;
                let record = self.build_record(
                    run.ctx,
                    run.info,
                    run.origin,
                    run.check,
                    run.approval,
                    TraceOutcome::Executed,
                    &effect,
                    run.started,
                    now,
                    run.external,
                );
                let record = self.finalize(tx, record, run.approval, now)?;
                let report = self.report_of(run.ctx, run.info, &record, &effect, run.check);
                self.settle(tx, run.approval, &report)?;
                Ok(report)
            })
    }

    /// Records an action refused because its rate-limit token went to
    /// another process between the check and the commit.
    pub(super) fn refuse_limited(
        &self,
        ctx: &TurnContext,
        info: &ActionInfo,
        origin: &Origin<'_>,
        check: &Check,
        reason: String,
    ) -> Result<ActionReport, ExecError> {
        let mut path = check.path.clone();
        path.push(reason.clone());
        let check = Check::new(
            Verdict::Deny {
                reason: reason.clone(),
            },
            path,
        );
        self.record(
            ctx,
            info,
            origin,
            &check,
            None,
            TraceOutcome::Denied,
            Effect::text(reason),
        )
    }

    /// Commits a record that carries no database effect of its own (and the
    /// approval it completes) and reports it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn commit(
        &self,
        ctx: &TurnContext,
        info: &ActionInfo,
        record: TraceRecord,
        approval: Option<&Approval<'_>>,
        effect: &Effect,
        check: &Check,
        now: Millis,
    ) -> Result<ActionReport, ExecError> {
        self.store
            .transaction(|tx| -> Result<ActionReport, MemoryError> {
                super::context::fenced(tx, ctx)?;
                let record = self.finalize(tx, record, approval, now)?;
                let report = self.report_of(ctx, info, &record, effect, check);
                self.settle(tx, approval, &report)?;
                Ok(report)
            })
            .map_err(ExecError::from)
    }

    /// Records an action that did not run (denied, failed before running,
    /// cancelled, timed out).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record(
        &self,
        ctx: &TurnContext,
        info: &ActionInfo,
        origin: &Origin<'_>,
        check: &Check,
        approval: Option<&Approval<'_>>,
        outcome: TraceOutcome,
        effect: Effect,
    ) -> Result<ActionReport, ExecError> {
        let now = self.now();
        let record = self.build_record(
            ctx,
            info,
            origin,
            check,
            approval,
            outcome,
            &effect,
            Instant::now(),
            now,
            false,
        );
        self.commit(ctx, info, record, approval, &effect, check, now)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_record(
        &self,
        ctx: &TurnContext,
        info: &ActionInfo,
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
            decision.decision = Some(approval.kind().as_str().to_string());
            decision.decided_at = Some(now);
            decision.requested_at = Some(approval.request.created_at);
        }
        TraceRecord {
            // Allocated in the action's transaction (`finalize`).
            id: String::new(),
            seq: 0,
            action_id: info.action_id.clone(),
            time: now,
            agent: ctx.agent.clone(),
            turn_id: ctx.turn_id.clone(),
            source: origin.source,
            text: origin.text.to_string(),
            span: origin.span,
            canonical: info.canonical.clone(),
            verb: info.verb.name().to_string(),
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

    pub(super) fn report_of(
        &self,
        ctx: &TurnContext,
        info: &ActionInfo,
        record: &TraceRecord,
        effect: &Effect,
        check: &Check,
    ) -> ActionReport {
        let mut report = ActionReport::new(
            &ctx.agent,
            info,
            status_of(record.outcome),
            record.result.clone(),
        );
        report.data = effect.data.clone();
        report.trace_id = Some(record.id.clone());
        report.memory = effect.memory.clone();
        report.path = check.path.clone();
        report.needs_continuation =
            effect.needs_continuation && record.outcome == TraceOutcome::Executed;
        report.flagged = record.outcome == TraceOutcome::Executed
            && self
                .registry()
                .handler(&info.verb)
                .is_some_and(|h| h.flags_for_review());
        report
    }
}

/// What running an action's work gave.
enum Attempt {
    /// It ended with its report (a stored action commits its own record).
    Reported(Box<Result<ActionReport, ExecError>>),
    /// The work ran at this time with this result, to be recorded.
    Ran(Result<Effect, ActionError>, Millis),
}

/// One action being executed: what it is, where it came from, how it was
/// checked and decided, and its handler.
struct Run<'a> {
    ctx: &'a TurnContext,
    action: &'a ParsedAction,
    info: &'a ActionInfo,
    origin: &'a Origin<'a>,
    check: &'a Check,
    approval: Option<&'a Approval<'a>>,
    handler: &'a dyn super::registry::VerbHandler,
    charge: Option<&'a partner_policy::rate::RateCharge>,
    cancel: Option<&'a Cancel>,
    started: Instant,
    external: bool,
}

/// What a run outside the store stage (or a failed one) comes to: its
/// outcome, its effect, and whether it failed because of partner. A
/// system error in an approved request is the error itself: the request
/// stays pending, since the decision was not at fault.
fn outcome_of(
    result: Result<Effect, ActionError>,
    approved: bool,
) -> Result<(TraceOutcome, Effect, bool), ExecError> {
    Ok(match result {
        Ok(effect) => (TraceOutcome::Executed, effect, false),
        Err(ActionError::Agent(message)) => (TraceOutcome::Failed, Effect::text(message), false),
        Err(ActionError::AgentWith(message, data)) => (
            TraceOutcome::Failed,
            Effect::text(message).with_data(data),
            false,
        ),
        Err(ActionError::System(message)) => {
            if approved {
                return Err(ExecError::System(message));
            }
            let text = format!(
                "partner could not do this right now because of a problem on its side, not yours ({message}); nothing was changed"
            );
            (TraceOutcome::Failed, Effect::text(text), true)
        }
    })
}
