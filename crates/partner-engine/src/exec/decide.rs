//! Deciding requests: by the partner or an authority, edited and approved,
//! or timed out; and the decisions the runtime still has to route back to
//! the agents that asked.

use super::commit::{Approval, Origin};
use super::context::TurnContext;
use super::executor::{ExecError, Executor};
use super::handlers::Effect;
use super::quorum::Counted;
use super::registry::Cancel;
use super::settled::Settled;
use partner_dialect::ShellPlan;
use partner_policy::{
    Authority, Check, Decision, DecisionKind, PendingRequest, RequestStatus, Verdict,
};
use partner_protocol::report::{ActionInfo, ActionReport, ActionStatus};
use partner_store::memory::MemoryError;
use partner_store::trace::{TraceOutcome, TraceSource};

/// The context a stored request was made in, for running it on decision.
pub(super) fn request_context(request: &PendingRequest) -> TurnContext {
    TurnContext {
        agent: request.agent.clone(),
        thread: request.thread.clone(),
        turn_id: request.turn_id.clone(),
        private: request.thread.starts_with("dm:"),
        on_behalf_of: request.on_behalf_of.clone(),
        ..TurnContext::default()
    }
}

/// A request that was decided (or timed out), with the report for the agent
/// that asked. Decisions are kept in the database with the request, by
/// whichever process made them; the runtime takes them from there.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DecidedRequest {
    /// The request, as it stands after the decision.
    pub request: PendingRequest,
    /// How it was decided.
    pub decision: DecisionKind,
    /// Who decided.
    pub by: String,
    /// What the requesting agent should hear.
    pub report: ActionReport,
}

impl Executor {
    /// Waiting requests, oldest first.
    pub fn pending(&self) -> Result<Vec<PendingRequest>, ExecError> {
        Ok(self.store.read(|tx| tx.waiting())?)
    }

    /// Takes the decisions (made by any process) on requests of `agents`
    /// whose results have not reached them yet, oldest first, marking them
    /// routed.
    pub fn take_decided(&self, agents: &[String]) -> Result<Vec<DecidedRequest>, ExecError> {
        self.take_settled(&|r: &PendingRequest| agents.contains(&r.agent))
    }

    /// Takes the decision on request `id` when one was made and nobody
    /// took it yet (an outside asker's, which no runtime routes), marking
    /// it routed.
    pub fn take_decision(&self, id: &str) -> Result<Option<DecidedRequest>, ExecError> {
        Ok(self
            .take_settled(&|r: &PendingRequest| r.id == id)?
            .into_iter()
            .next())
    }

    fn take_settled(
        &self,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<DecidedRequest>, ExecError> {
        let now = self.now();
        let rows = self.store.transaction(|tx| tx.take_unrouted(now, ours))?;
        Ok(rows
            .into_iter()
            .filter_map(|(request, json)| {
                let settled: Settled = serde_json::from_str(&json).ok()?;
                Some(DecidedRequest {
                    request,
                    decision: settled.decision,
                    by: settled.by,
                    report: settled.report,
                })
            })
            .collect())
    }

    /// Takes the waiting requests whose current authority has not been told
    /// yet (made by any process, or escalated), marking them told.
    pub fn take_unannounced(
        &self,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<PendingRequest>, ExecError> {
        Ok(self
            .store
            .transaction(|tx| -> Result<_, MemoryError> { tx.take_unannounced(ours) })?)
    }

    /// Decides a waiting request — the one door every decision goes
    /// through: the console's, the CLI's, a daemon client's, a team
    /// partner's, a supervising agent's, an edit approved. `by` must be the
    /// partner or the authority it waits on. `cancel` stops an effect of
    /// the approved action still running (a fetch) when the requester is
    /// halted. Returns the report for the agent that asked: the action's
    /// result when approved, the refusal otherwise. The decision and that
    /// report are kept with the request in the same transaction; the
    /// runtime routes them to the agent (see [`Executor::take_decided`]).
    pub fn decide(
        &self,
        id: &str,
        decision: Decision,
        by: &Authority,
        cancel: Option<Cancel>,
    ) -> Result<ActionReport, ExecError> {
        if let Decision::ApproveEdited(text) = &decision {
            return self.approve_edited(id, text, by);
        }
        self.decide_inner(id, decision, by, cancel.as_ref())
            .map_err(|e| match e {
                // Someone decided it meanwhile (perhaps in another process):
                // say who, as the request now records it.
                ExecError::Memory(MemoryError::Conflict(_)) => {
                    match self.store.read(|tx| tx.request(id)) {
                        Ok(Some(request)) => not_waiting(&request),
                        _ => ExecError::NotWaiting {
                            id: id.to_string(),
                            status: "decided".into(),
                        },
                    }
                }
                other => other,
            })
    }

    /// The agent that made request `id`, if it exists.
    pub fn requester_of(&self, id: &str) -> Option<String> {
        self.store
            .read(|tx| tx.request(id))
            .ok()
            .flatten()
            .map(|r| r.agent)
    }

    pub(super) fn decide_inner(
        &self,
        id: &str,
        decision: Decision,
        by: &Authority,
        cancel: Option<&Cancel>,
    ) -> Result<ActionReport, ExecError> {
        let request = self
            .store
            .read(|tx| tx.request(id))?
            .ok_or_else(|| ExecError::NoRequest(id.to_string()))?;
        may_decide(&request, &decision, by)?;
        let path = match self.decision_path(&request, &decision, by)? {
            Ok(path) => path,
            Err(waits) => return Ok(*waits),
        };
        let ctx = request_context(&request);
        let origin = Origin::whole(&request.raw_text, TraceSource::Agent);
        let check = Check {
            verdict: Verdict::Ask {
                authorities: request.authorities.clone(),
                reason: request.reason.clone(),
            },
            path,
            charge: None,
        };
        let approval = Approval {
            request: &request,
            decision: &decision,
            by,
            edited: false,
            claimant: None,
        };
        let refused = |outcome: TraceOutcome, text: String| {
            self.record(
                &ctx,
                &ActionInfo::of_request(&request),
                &origin,
                &check,
                Some(&approval),
                outcome,
                Effect::text(text),
            )
        };
        match &decision {
            Decision::ApproveOnce | Decision::ApproveAlways | Decision::ApproveFor(_) => {
                // With the constellation's verbs (its own verbs included),
                // and the requester's blocks.
                let parsed = self.parser_for(&request.agent).parse(&request.canonical);
                let Some(mut action) = parsed.actions.into_iter().next() else {
                    let text = format!("the stored action no longer parses: {}", request.canonical);
                    return refused(TraceOutcome::Failed, text);
                };
                as_queued(&mut action, &request);
                self.approvable(&action, &decision)?;
                let by_name = by.to_string();
                let claimant = self.claim_for(&request, &action, decision.kind(), &by_name)?;
                let approval = Approval {
                    claimant,
                    ..approval
                };
                self.run_claimed(&action, &origin, &check, &approval, cancel)
            }
            Decision::Deny(reason) | Decision::DenyAlways(reason) => {
                let text = match reason {
                    Some(reason) => format!("{by} said no: {reason}"),
                    None => format!("{by} said no"),
                };
                refused(TraceOutcome::Denied, text)
            }
            Decision::Cancel => {
                let text = format!("request {} was cancelled", request.id);
                refused(TraceOutcome::Cancelled, text)
            }
            Decision::Escalate(reason) => self.escalate(&request, reason.as_deref(), by),
            // Taken by `decide` before it comes here.
            Decision::ApproveEdited(text) => self.approve_edited(id, text, by),
        }
    }

    /// How `decision` by `by` on `request` is recorded (the request's
    /// reason, the decision, the partners who approved it), once every
    /// approval it needs is counted; the report of a request that still
    /// waits for more.
    fn decision_path(
        &self,
        request: &PendingRequest,
        decision: &Decision,
        by: &Authority,
    ) -> Result<Result<Vec<String>, Box<ActionReport>>, ExecError> {
        let mut path = vec![
            request.reason.clone(),
            format!("{} by {by}", decision.name()),
        ];
        if decision.approves() {
            match self.count_approval(request, decision, by)? {
                Counted::Waits(report) => return Ok(Err(report)),
                Counted::Complete(approvers) if !approvers.is_empty() => path.push(format!(
                    "approved by partner {}",
                    approvers.join(" and partner ")
                )),
                Counted::Complete(_) => {}
            }
        }
        Ok(Ok(path))
    }

    /// Whether the handler lets `decision` approve `action`: a blocked
    /// command stays blocked; what only the partner may allow is allowed
    /// once at a time.
    fn approvable(
        &self,
        action: &partner_dialect::ParsedAction,
        decision: &Decision,
    ) -> Result<(), ExecError> {
        let Some(handler) = self.registry.handler(&action.verb) else {
            return Ok(());
        };
        handler.approvable(action).map_err(ExecError::Refused)?;
        if handler.traits(action).partner_only.is_some() && *decision != Decision::ApproveOnce {
            return Err(ExecError::Refused(format!(
                "/{} is approved one request at a time, not always",
                action.verb.name()
            )));
        }
        Ok(())
    }

    /// Hands `request` to its next authority.
    fn escalate(
        &self,
        request: &PendingRequest,
        reason: Option<&str>,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        let next = self
            .store
            .transaction(|tx| -> Result<_, MemoryError> { tx.escalate(request) })?
            .ok_or_else(|| ExecError::LastAuthority(request.id.clone()))?;
        let updated = self
            .store
            .read(|tx| tx.request(&request.id))?
            .unwrap_or(request.clone());
        let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
        let mut report = ActionReport::new(
            &request.agent,
            &ActionInfo::of_request(request),
            ActionStatus::Pending,
            format!("{by} passed {} on to {next}{why}", request.id),
        );
        report.request = Some(updated);
        Ok(report)
    }

    /// Approves a request with its action replaced by `text`, written by
    /// `by` (the partner's "edit, then approve"). The new action is parsed
    /// and checked against policy for the requesting agent first: a refusal
    /// leaves the request waiting and is returned as an error.
    fn approve_edited(
        &self,
        id: &str,
        text: &str,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        let request = self
            .store
            .read(|tx| tx.request(id))?
            .ok_or_else(|| ExecError::NoRequest(id.to_string()))?;
        may_decide(&request, &Decision::ApproveOnce, by)?;
        if request.approvals_needed > 1 {
            return Err(ExecError::Refused(format!(
                "{} needs {} partners to approve it, and an edit would be approved by one: approve it as it is, or deny it",
                request.id, request.approvals_needed
            )));
        }
        let parsed = self.parser_for(&request.agent).parse(text);
        if let Some(error) = parsed.errors.first() {
            return Err(ExecError::Refused(format!(
                "the edited action does not parse: {}",
                error.message()
            )));
        }
        let [action] = parsed.actions.as_slice() else {
            return Err(ExecError::Refused(format!(
                "write exactly one action, not {}",
                parsed.actions.len()
            )));
        };
        let mut action = action.clone();
        as_queued(&mut action, &request);
        let action = &action;
        if !action.chain.is_empty() || self.registry().holds_actions(action) {
            return Err(ExecError::Refused(
                "write one action, not a chain or a batch".into(),
            ));
        }
        let check = self.store.read(|tx| {
            self.check(
                tx,
                &request.agent,
                action,
                request.thread.starts_with("dm:"),
                &request.on_behalf_of,
                self.now(),
            )
        })?;
        if let Verdict::Deny { reason } = &check.verdict {
            return Err(ExecError::Refused(format!(
                "the edited action is refused: {reason}"
            )));
        }
        if let Some(handler) = self.registry.handler(&action.verb) {
            handler.approvable(action).map_err(|why| {
                ExecError::Refused(format!("the edited action is refused: {why}"))
            })?;
        }
        let origin = Origin::whole(text, TraceSource::Partner);
        let mut path = check.path.clone();
        path.insert(0, format!("edited by {by} from {}", request.canonical));
        let check = Check {
            verdict: check.verdict,
            path,
            charge: None,
        };
        let decision = Decision::ApproveOnce;
        let by_name = by.to_string();
        let kind = super::claim::kind_of(&decision, true);
        let claimant = self.claim_for(&request, action, kind, &by_name)?;
        let approval = Approval {
            request: &request,
            decision: &decision,
            by,
            edited: true,
            claimant,
        };
        self.run_claimed(action, &origin, &check, &approval, None)
    }

    /// Denies every waiting request whose time is up.
    pub fn expire_overdue(&self) -> Result<Vec<ActionReport>, ExecError> {
        let overdue = self.store.read(|tx| tx.overdue(self.now()))?;
        let mut reports = Vec::new();
        for request in overdue {
            let closing = super::claim::Closing {
                status: RequestStatus::TimedOut,
                outcome: TraceOutcome::TimedOut,
                report_status: ActionStatus::TimedOut,
                kind: DecisionKind::Timeout,
                by: "timeout",
                claimant: None,
                step: "nobody decided in time".into(),
                text: format!(
                    "request {} timed out: nobody decided in time, so it is denied",
                    request.id
                ),
            };
            reports.extend(self.close_unrun(&request, &closing)?);
        }
        Ok(reports)
    }
}

/// What the queue showed of `request` that its canonical text does not
/// carry, given back to the action parsed from it: a shell command runs
/// in the directory the queue named, not wherever the deciding process
/// happens to be.
fn as_queued(action: &mut partner_dialect::ParsedAction, request: &PendingRequest) {
    if request.action.workdir.is_some() && action.args.get::<ShellPlan>().is_none() {
        action.args.set(ShellPlan {
            proposal: request.action.proposal.clone(),
            workdir: request.action.workdir.clone(),
            protected: request.action.protected.clone(),
            kept: request.action.kept.clone(),
        });
    }
}

/// Whether `by` may make `decision` on `request`: it must still wait, an
/// agent never decides its own request (but may withdraw it), and only
/// the authority it waits on decides it.
fn may_decide(
    request: &PendingRequest,
    decision: &Decision,
    by: &Authority,
) -> Result<(), ExecError> {
    if request.status != RequestStatus::Waiting {
        return Err(not_waiting(request));
    }
    if by.is_partner()
        && let Err(why) = request.partner_may_decide(by)
    {
        return Err(ExecError::NotDecider {
            id: request.id.clone(),
            by: by.to_string(),
            why: why.to_string(),
        });
    }
    let own_cancel =
        *decision == Decision::Cancel && *by == Authority::Agent(request.agent.clone());
    if let Authority::Agent(name) = by
        && request.made_by(name)
        && !own_cancel
    {
        return Err(ExecError::OwnRequest {
            id: request.id.clone(),
            by: by.to_string(),
        });
    }
    if !(request.decidable_by(by) || own_cancel) {
        return Err(ExecError::NotYours {
            id: request.id.clone(),
            by: by.to_string(),
            waiting_on: request.waiting_on().to_string(),
        });
    }
    Ok(())
}

/// What deciding a request that no longer waits is told: how it was
/// decided, and by whom.
pub(super) fn not_waiting(request: &PendingRequest) -> ExecError {
    let status = request.status.as_str().replace('_', " ");
    ExecError::NotWaiting {
        id: request.id.clone(),
        status: match (&request.decided_by, request.status) {
            (Some(by), RequestStatus::Running) => format!("running: approved by {by}"),
            (Some(by), _) => format!("{status} by {by}"),
            (None, _) => status,
        },
    }
}
