//! Running a turn: each action resolved against its context, checked by
//! the permission engine, then run, refused or queued as a durable pending
//! request; chains link by link, batches concurrently.

use serde_json::json;

use super::commit::{Origin, crashed};
use super::context::{TurnContext, resolve};
use super::executor::{ExecError, Executor};
use super::handlers::Effect;
use super::registry::ActionTx;
use partner_core::clock::Millis;
use partner_core::isolate;
use partner_dialect::ParsedAction;
use partner_policy::pending::{NewRequest, RequestedAction};
use partner_policy::{Check, CheckInput, Verdict};
use partner_protocol::report::{ActionInfo, ActionReport, ActionStatus, TurnReport};
use partner_store::memory::MemoryError;
use partner_store::trace::TraceOutcome;

/// Most characters of an action a debug log line shows.
const LOGGED_CHARS: usize = 200;

impl Executor {
    /// Checks an action against the policy, with what the verb registry
    /// says about it and the block it would write.
    pub(super) fn check(
        &self,
        store: &dyn ActionTx,
        agent: &str,
        action: &ParsedAction,
        private_context: bool,
        on_behalf_of: &[String],
        now: Millis,
    ) -> Result<Check, MemoryError> {
        let traits = self
            .registry
            .handler(&action.verb)
            .map(|h| h.traits(action))
            .unwrap_or_default();
        let block = match &traits.writes_block {
            Some(write) => store.block(agent, &write.label)?,
            None => None,
        };
        let input = CheckInput {
            agent,
            action,
            traits: &traits,
            private_context,
            block: block.as_ref(),
            on_behalf_of,
        };
        self.engine.check(store, &input, now)
    }

    /// Parses and runs one agent turn: chains link by link (each link's
    /// result is the next one's input), batches concurrently. Parse errors
    /// are recorded for later alias suggestions.
    pub fn run_turn(&self, ctx: &mut TurnContext, text: &str) -> TurnReport {
        let parsed = self.parser_for(&ctx.agent).parse(text);
        self.run_parsed(ctx, text, &parsed)
    }

    /// Runs a turn already parsed (with [`Executor::parser_for`]).
    pub fn run_parsed(
        &self,
        ctx: &mut TurnContext,
        text: &str,
        parsed: &partner_dialect::ParsedTurn,
    ) -> TurnReport {
        if !parsed.errors.is_empty() {
            let now = self.now();
            let _ = self.store.transaction(|tx| -> Result<(), MemoryError> {
                for error in &parsed.errors {
                    tx.add_parse_failure(
                        &ctx.agent,
                        error.span.slice(text),
                        &error.message(),
                        now,
                    )?;
                }
                Ok(())
            });
        }
        let mut reports = Vec::new();
        for action in &parsed.actions {
            let mut head = action.clone();
            let rest = std::mem::take(&mut head.chain);
            let links: Vec<ParsedAction> = std::iter::once(head).chain(rest).collect();
            ctx.chain_input = None;
            for (i, link) in links.iter().enumerate() {
                let report = self.submit(ctx, link, text);
                let stopped = report.status != ActionStatus::Executed;
                if !stopped {
                    ctx.last_output = Some(report.text.clone());
                    ctx.chain_input = Some(report.text.clone());
                }
                let why = format!(
                    "not run: link {} of the chain was {:?}",
                    i + 1,
                    report.status
                )
                .to_lowercase();
                reports.push(report);
                if stopped {
                    for later in &links[i + 1..] {
                        reports.push(ActionReport::new(
                            &ctx.agent,
                            &ActionInfo::of(later, ctx.action_id(later)),
                            ActionStatus::NotRun,
                            why.clone(),
                        ));
                    }
                    break;
                }
            }
            ctx.chain_input = None;
        }
        TurnReport {
            actions: reports,
            errors: parsed.errors.clone(),
        }
    }

    /// Submits one action (a single link; a batch runs its members
    /// concurrently). `turn` is the text it was parsed from.
    pub fn submit(&self, ctx: &TurnContext, action: &ParsedAction, turn: &str) -> ActionReport {
        let mut report = self.submit_one(ctx, action, turn);
        if report.status == ActionStatus::Executed
            && let Some(handler) = self.registry.handler(&action.verb)
        {
            // What the action asks for next (a tool's memory writes), each
            // checked and run or queued as the agent's own action.
            for follow in handler.follow_ups(action, &report.data) {
                let child = self.submit_one(ctx, &follow, turn);
                let label = follow.target.as_deref().unwrap_or("?");
                report
                    .text
                    .push_str(&format!("\n- {label}: {} {}", child.status, child.text));
                report.children.push(child);
            }
        }
        report
    }

    fn submit_one(&self, ctx: &TurnContext, action: &ParsedAction, turn: &str) -> ActionReport {
        let info = ActionInfo::of(action, ctx.action_id(action));
        let span = tracing::debug_span!(
            "action",
            agent = %ctx.agent,
            verb = action.verb.name(),
            id = info.action_id.as_deref().unwrap_or("-"),
        );
        let _entered = span.enter();
        let report = self.contained_submit(ctx, action, turn, &info);
        if tracing::enabled!(tracing::Level::DEBUG) {
            // The agent's words, cut to a line's worth and with control
            // characters escaped (`{:?}`), so a log stays readable.
            let words: String = info.canonical.chars().take(LOGGED_CHARS).collect();
            tracing::debug!(status = %report.status, "{words:?}");
        }
        report
    }

    /// [`Self::try_submit`] with a database failure or a panic turned into
    /// one failed action.
    fn contained_submit(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
        turn: &str,
        info: &ActionInfo,
    ) -> ActionReport {
        match isolate::contain(|| self.try_submit(ctx, action, turn)) {
            Ok(Ok(report)) => report,
            Ok(Err(e)) => {
                // The database could not even record it: not the agent's doing.
                let mut report = ActionReport::new(
                    &ctx.agent,
                    info,
                    ActionStatus::Failed,
                    format!(
                        "partner could not run or record this right now because of a problem on its side, not yours ({e}); nothing was changed, and you may try again later"
                    ),
                );
                report.system_error = true;
                report
            }
            Err(panic) => {
                // A bug, not the agent's doing: one failed action, traced.
                let text = crashed(&panic);
                let origin = Origin::of(turn, action);
                let check = Check {
                    verdict: Verdict::Allow,
                    path: Vec::new(),
                    charge: None,
                };
                self.record(
                    ctx,
                    info,
                    &origin,
                    &check,
                    None,
                    TraceOutcome::Failed,
                    Effect::text(text.clone()),
                )
                .map(|mut report| {
                    report.system_error = true;
                    report
                })
                .unwrap_or_else(|_| {
                    let mut report =
                        ActionReport::new(&ctx.agent, info, ActionStatus::Failed, text);
                    report.system_error = true;
                    report
                })
            }
        }
    }

    pub(super) fn try_submit(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
        turn: &str,
    ) -> Result<ActionReport, ExecError> {
        if self.registry().holds_actions(action) {
            return Ok(self.run_batch(ctx, action, turn));
        }
        let origin = Origin::of(turn, action);
        let info = ActionInfo::of(action, ctx.action_id(action));
        if let Some(earlier) = self.earlier(ctx, &info)? {
            return Ok(earlier);
        }
        if action.cancelled {
            let text = "cancelled in the turn's own text, so it was not run";
            return self.unchecked(ctx, &info, &origin, TraceOutcome::Cancelled, text.into());
        }
        // A failure before any check: told to the agent, traced.
        let action = match self.prepared(action) {
            Ok(action) => action,
            Err(message) => {
                return self.unchecked(ctx, &info, &origin, TraceOutcome::Failed, message);
            }
        };
        let now = self.now();
        let (resolved, check) = match self.resolve_and_check(ctx, &action, now)? {
            Ok(checked) => checked,
            Err(message) => {
                return self.unchecked(ctx, &info, &origin, TraceOutcome::Failed, message);
            }
        };
        let info = ActionInfo::of(&resolved, ctx.action_id(&action));
        match &check.verdict {
            Verdict::Allow => {
                self.execute(ctx, &resolved, &origin, &check, None, ctx.cancel.as_ref())
            }
            Verdict::Deny { reason } => self.record(
                ctx,
                &info,
                &origin,
                &check,
                None,
                TraceOutcome::Denied,
                Effect::text(reason.clone()),
            ),
            Verdict::Ask {
                authorities,
                reason,
            } => self.ask(
                ctx,
                Asked {
                    resolved: &resolved,
                    info: &info,
                    origin: &origin,
                    check: &check,
                },
                authorities,
                reason,
                now,
            ),
        }
    }

    /// What the agent wrote, made what the partner would be asked about
    /// (a shell request in words: the command proposed for it); an error
    /// is told to the agent and nothing is asked.
    fn prepared<'a>(
        &self,
        action: &'a ParsedAction,
    ) -> Result<std::borrow::Cow<'a, ParsedAction>, String> {
        match self.registry.handler(&action.verb) {
            Some(handler) => {
                let mut copy = action.clone();
                handler.prepare(self, &mut copy)?;
                Ok(std::borrow::Cow::Owned(copy))
            }
            None => Ok(std::borrow::Cow::Borrowed(action)),
        }
    }

    /// Traces an action that ended before any permission check (cancelled
    /// in its turn, or failed to prepare or resolve), telling the agent.
    fn unchecked(
        &self,
        ctx: &TurnContext,
        info: &ActionInfo,
        origin: &Origin<'_>,
        outcome: TraceOutcome,
        text: String,
    ) -> Result<ActionReport, ExecError> {
        let check = Check {
            verdict: Verdict::Allow,
            path: Vec::new(),
            charge: None,
        };
        self.record(ctx, info, origin, &check, None, outcome, Effect::text(text))
    }

    /// The action with its references resolved and the permission check's
    /// verdict, read beside the writer (committed state: the writer stays
    /// free for the transactions that share its commits); or what to tell
    /// the agent instead (it is halted; a reference does not resolve).
    fn resolve_and_check(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
        now: Millis,
    ) -> Result<Result<(ParsedAction, Check), String>, ExecError> {
        let needs_content = self
            .registry
            .handler(&action.verb)
            .is_some_and(|h| h.needs_content());
        self.store
            .read(|tx| {
                let state = tx.agent_state(&ctx.agent)?;
                if state.halted {
                    let why = state.halt_reason.unwrap_or_default();
                    return Ok(Err(format!(
                        "you are halted ({why}); nothing runs until the partner resumes you"
                    )));
                }
                let resolved = match resolve(tx, ctx, action, needs_content) {
                    Ok(resolved) => resolved,
                    Err(message) => return Ok(Err(message)),
                };
                let check = self.check(
                    tx,
                    &ctx.agent,
                    &resolved,
                    ctx.private,
                    &ctx.on_behalf_of,
                    now,
                )?;
                Ok(Ok((resolved, check)))
            })
            .map_err(ExecError::from)
    }

    /// A request for the action, made for `authorities` to decide; it takes
    /// the rate-limit token as it is made.
    fn ask(
        &self,
        ctx: &TurnContext,
        asked: Asked<'_>,
        authorities: &[partner_policy::Authority],
        reason: &str,
        now: Millis,
    ) -> Result<ActionReport, ExecError> {
        let Asked {
            resolved,
            info,
            origin,
            check,
        } = asked;
        let asked = RequestedAction::of(resolved);
        let expires_at = self
            .engine
            .policy()
            .request_timeout
            .map(|t| now + t.as_millis() as Millis);
        let marker = resolved.marker.map(|m| match &resolved.marker_note {
            Some(note) => format!("?{note}"),
            None => m.sigil().to_string(),
        });
        let quorum = self.quorum(&ctx.agent, resolved, authorities);
        let made = self.store.transaction(|tx| {
            super::context::fenced(tx, ctx)?;
            if let Some(charge) = &check.charge
                && let Some(reason) = charge.take(tx, now)?
            {
                return Ok(Err(reason));
            }
            tx.ask(
                &NewRequest {
                    agent: &ctx.agent,
                    canonical: &info.canonical,
                    action: &asked,
                    verb: resolved.verb.name(),
                    marker: marker.as_deref(),
                    reason,
                    authorities,
                    turn_id: &ctx.turn_id,
                    thread: &ctx.thread,
                    raw_text: origin.text,
                    action_id: info.action_id.as_deref(),
                    on_behalf_of: &ctx.on_behalf_of,
                    span: origin.span,
                    expires_at,
                    deciders: &quorum.partners,
                    approvals_needed: quorum.approvals,
                },
                now,
            )
            .map(Ok)
        })?;
        let request = match made {
            Ok(request) => request,
            Err(reason) => return self.refuse_limited(ctx, info, origin, check, reason),
        };
        let mut report = ActionReport::new(
            &ctx.agent,
            info,
            ActionStatus::Pending,
            format!(
                "waiting for {} to approve ({}): {reason}",
                request.waiting_on(),
                request.id
            ),
        );
        report.data = json!({ "request": request.id });
        report.path = check.path.clone();
        report
            .path
            .extend(Some(quorum.describe()).filter(|n| !n.is_empty()));
        report.request = Some(request);
        Ok(report)
    }

    /// Which partners decide a request and how many must approve it: when
    /// agents are asked, the partners' say does not apply (the policy
    /// refuses a rule that mixes them).
    fn quorum(
        &self,
        agent: &str,
        action: &ParsedAction,
        authorities: &[partner_policy::Authority],
    ) -> partner_policy::Quorum {
        if authorities.iter().all(|a| a.is_partner()) {
            self.engine.policy().quorum_for(agent, action)
        } else {
            partner_policy::Quorum::default()
        }
    }

    pub(super) fn run_batch(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
        turn: &str,
    ) -> ActionReport {
        let children: Vec<ActionReport> = std::thread::scope(|scope| {
            let handles: Vec<_> = action
                .batch
                .iter()
                .map(|inner| {
                    let mut inner = inner.clone();
                    inner.cancelled |= action.cancelled;
                    scope.spawn(move || self.submit(ctx, &inner, turn))
                })
                .collect();
            handles
                .into_iter()
                .zip(&action.batch)
                .map(|(h, inner)| {
                    h.join().unwrap_or_else(|_| {
                        ActionReport::new(
                            &ctx.agent,
                            &ActionInfo::of(inner, ctx.action_id(inner)),
                            ActionStatus::Failed,
                            "this action crashed",
                        )
                    })
                })
                .collect()
        });
        let status = if children.iter().all(|c| c.status == ActionStatus::Executed) {
            ActionStatus::Executed
        } else if children.iter().any(|c| c.status == ActionStatus::Pending) {
            ActionStatus::Pending
        } else if children.iter().any(|c| c.status == ActionStatus::Executed) {
            ActionStatus::Executed
        } else {
            children.first().map_or(ActionStatus::Failed, |c| c.status)
        };
        let text = children
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {}", i + 1, c.summary()))
            .collect::<Vec<_>>()
            .join("\n");
        let info = ActionInfo::of(action, ctx.action_id(action));
        let mut report = ActionReport::new(&ctx.agent, &info, status, text);
        report.needs_continuation = children.iter().any(|c| c.needs_continuation);
        report.children = children;
        report
    }
}

/// An action about to be asked for: resolved, described, where it came
/// from, and how it was checked.
struct Asked<'a> {
    resolved: &'a ParsedAction,
    info: &'a ActionInfo,
    origin: &'a Origin<'a>,
    check: &'a Check,
}
