//! [`Executor`]: runs agents' actions. Each action is resolved, checked by
//! the permission engine, then run, refused, or queued as a durable pending
//! request. A run action's database effects, its approval and its trace
//! index row commit in one transaction; the trace line is appended after.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde_json::json;

use super::config::ExecConfig;
use super::context::{TurnContext, resolve};
use super::handlers::{self, CalcState, Effect, FetchPages};
use super::report::{ActionReport, ActionStatus, TurnReport};
use crate::clock::{Millis, SharedClock, system_clock};
use crate::dialect::{BlockRegistry, DialectParser, Op, ParsedAction, Verb, VerbTable};
use crate::isolate;
use crate::memory::records::{add_parse_failure, agent_state, set_halted};
use crate::memory::{BlockKind, MemoryError, MemoryStore, NewBlock, blocks};
use crate::permission::pending::{self, NewRequest, NewRule};
use crate::permission::{
    Authority, Check, CheckInput, Decision, PendingRequest, PermissionEngine, Policy,
    RequestStatus, Verdict, writes_block,
};
use crate::trace::{
    BlockSpec, DecisionPath, TraceOp, TraceOutcome, TraceRecord, TraceSource, TraceWarning,
    store as trace_store,
};

/// Something the executor could not do for the partner (as opposed to an
/// agent's action failing, which is reported to the agent).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The database failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The trace file could not be opened or written.
    #[error("trace file {path}: {source}")]
    Trace {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// No request with that id.
    #[error("there is no request {0}")]
    NoRequest(String),
    /// The request was already decided.
    #[error("request {id} is already {status}")]
    NotWaiting {
        /// The request.
        id: String,
        /// Its status.
        status: String,
    },
    /// Someone other than the authority it waits on tried to decide it.
    #[error("request {id} waits on {waiting_on}, not {by}")]
    NotYours {
        /// The request.
        id: String,
        /// Who tried.
        by: String,
        /// Who it waits on.
        waiting_on: String,
    },
    /// An agent tried to decide a request it made, or one made on its behalf.
    #[error("{by} may not decide {id}: it made the request or it was made on its behalf")]
    OwnRequest {
        /// The request.
        id: String,
        /// Who tried.
        by: String,
    },
    /// Escalation past the last authority.
    #[error("request {0} already waits on its last authority")]
    LastAuthority(String),
    /// A partner edit was refused (over the limit, no such block…).
    #[error("{0}")]
    Refused(String),
}

impl From<rusqlite::Error> for ExecError {
    fn from(e: rusqlite::Error) -> Self {
        ExecError::Memory(e.into())
    }
}

/// An approval being carried out, recorded in the action's transaction.
struct Approval<'a> {
    request: &'a PendingRequest,
    decision: &'a Decision,
    by: &'a Authority,
}

/// Where an action came from in its turn.
struct Origin<'a> {
    text: &'a str,
    span: (usize, usize),
    source: TraceSource,
    op: TraceOp,
}

impl<'a> Origin<'a> {
    fn of(turn: &'a str, action: &ParsedAction) -> Self {
        Origin {
            text: action.span.slice(turn),
            span: (action.span.start, action.span.end),
            source: TraceSource::Agent,
            op: TraceOp::Action,
        }
    }

    /// An action that is the whole of `text` (a stored request, an edit).
    fn whole(text: &'a str, source: TraceSource) -> Self {
        Origin {
            text,
            span: (0, text.len()),
            source,
            op: TraceOp::Action,
        }
    }
}

/// The context a stored request was made in, for running it on decision.
fn request_context(request: &PendingRequest) -> TurnContext {
    TurnContext {
        agent: request.agent.clone(),
        thread: request.thread.clone(),
        turn_id: request.turn_id.clone(),
        private: request.thread.starts_with("dm:"),
        on_behalf_of: request.on_behalf_of.clone(),
        ..TurnContext::default()
    }
}

enum TxError {
    Agent(String),
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

/// Runs actions against one constellation's database.
#[derive(Debug)]
pub struct Executor {
    store: Arc<MemoryStore>,
    engine: PermissionEngine,
    clock: SharedClock,
    config: ExecConfig,
    table: VerbTable,
    pages: FetchPages,
    calc: CalcState,
    decided: std::sync::Mutex<Vec<DecidedRequest>>,
}

/// A request that was decided (or timed out), with the report for the agent
/// that asked. The runtime drains these to tell the requester.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DecidedRequest {
    /// The request, as it stands after the decision.
    pub request: PendingRequest,
    /// The decision's name (`approve_once`, `deny`, `escalate`, `timeout`…).
    pub decision: String,
    /// Who decided.
    pub by: String,
    /// What the requesting agent should hear.
    pub report: ActionReport,
}

fn status_of(outcome: TraceOutcome) -> ActionStatus {
    match outcome {
        TraceOutcome::Executed => ActionStatus::Executed,
        TraceOutcome::Denied => ActionStatus::Denied,
        TraceOutcome::Failed => ActionStatus::Failed,
        TraceOutcome::Cancelled => ActionStatus::Cancelled,
        TraceOutcome::TimedOut => ActionStatus::TimedOut,
    }
}

fn verdict_name(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Allow => "allow",
        Verdict::Ask { .. } => "ask",
        Verdict::Deny { .. } => "deny",
    }
}

impl Executor {
    /// Opens the database at `db` with a policy (a trace file an older
    /// partner kept beside it is imported into the database first).
    pub fn open(db: &Path, policy: Policy, config: ExecConfig) -> Result<Self, ExecError> {
        let store = open_store(db)?;
        Self::with_parts(Arc::new(store), policy, config, system_clock())
    }

    /// An executor from its parts (tests use a manual clock; replay an
    /// in-memory store).
    pub fn with_parts(
        store: Arc<MemoryStore>,
        policy: Policy,
        config: ExecConfig,
        clock: SharedClock,
    ) -> Result<Self, ExecError> {
        Ok(Executor {
            store,
            engine: PermissionEngine::new(policy),
            clock,
            config,
            table: VerbTable::builtin(),
            pages: FetchPages::default(),
            calc: CalcState::default(),
            decided: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// Uses a verb table with extensions when parsing turns.
    pub fn set_verb_table(&mut self, table: VerbTable) {
        self.table = table;
    }

    /// The database.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// The database, shared.
    pub fn shared_store(&self) -> Arc<MemoryStore> {
        Arc::clone(&self.store)
    }

    /// The permission engine.
    pub fn engine(&self) -> &PermissionEngine {
        &self.engine
    }

    /// The configuration.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    /// Every trace record, oldest first, and those that could not be read.
    pub fn trace(&self) -> Result<(Vec<TraceRecord>, Vec<TraceWarning>), ExecError> {
        Ok(trace_store::all(&self.store.read())?)
    }

    pub(crate) fn fetch_pages(&self) -> &FetchPages {
        &self.pages
    }

    pub(crate) fn calc_state(&self) -> &CalcState {
        &self.calc
    }

    fn now(&self) -> Millis {
        self.clock.now_ms()
    }

    /// Every agent of the constellation: configured ones and those the
    /// database knows, sorted.
    pub fn agents(&self, conn: &Connection) -> Vec<String> {
        let mut agents = self.config.agents.clone();
        if let Ok(mut stmt) =
            conn.prepare_cached("SELECT agent FROM blocks UNION SELECT name FROM agents")
            && let Ok(rows) = stmt.query_map([], |r| r.get::<_, String>(0))
        {
            agents.extend(rows.flatten());
        }
        agents.sort();
        agents.dedup();
        agents
    }

    /// A parser that knows `agent`'s block labels (core and working blocks
    /// count as working memory).
    pub fn parser_for(&self, agent: &str) -> DialectParser {
        let mut registry = BlockRegistry::new();
        if let Ok(list) = blocks::list(&self.store.conn(), Some(agent)) {
            for block in list {
                registry.add(block.label, block.kind != BlockKind::Archival);
            }
        }
        DialectParser::new()
            .with_table(self.table.clone())
            .with_blocks(registry)
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
        parsed: &crate::dialect::ParsedTurn,
    ) -> TurnReport {
        if !parsed.errors.is_empty() {
            let conn = self.store.conn();
            for error in &parsed.errors {
                let _ = add_parse_failure(
                    &conn,
                    &ctx.agent,
                    error.span.slice(text),
                    &error.message(),
                    self.now(),
                );
            }
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
                            later.canonical(),
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
        match isolate::contain(|| self.try_submit(ctx, action, turn)) {
            Ok(Ok(report)) => report,
            Ok(Err(e)) => ActionReport::new(
                &ctx.agent,
                action.canonical(),
                ActionStatus::Failed,
                format!("the runtime could not record this action: {e}"),
            ),
            Err(panic) => {
                // A bug, not the agent's doing: one failed action, traced.
                let text = crashed(&panic);
                let origin = Origin::of(turn, action);
                let check = Check {
                    verdict: Verdict::Allow,
                    path: Vec::new(),
                };
                self.record(
                    ctx,
                    &action.canonical(),
                    action.verb.name(),
                    &origin,
                    &check,
                    None,
                    TraceOutcome::Failed,
                    Effect::text(text.clone()),
                )
                .unwrap_or_else(|_| {
                    ActionReport::new(&ctx.agent, action.canonical(), ActionStatus::Failed, text)
                })
            }
        }
    }

    fn try_submit(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
        turn: &str,
    ) -> Result<ActionReport, ExecError> {
        if action.verb == Verb::Batch {
            return Ok(self.run_batch(ctx, action, turn));
        }
        let origin = Origin::of(turn, action);
        let canonical = action.canonical();
        let no_check = || Check {
            verdict: Verdict::Allow,
            path: Vec::new(),
        };
        if action.cancelled {
            let text = "cancelled in the turn's own text, so it was not run";
            return self.record(
                ctx,
                &canonical,
                action.verb.name(),
                &origin,
                &no_check(),
                None,
                TraceOutcome::Cancelled,
                Effect::text(text),
            );
        }
        let now = self.now();
        let (resolved, check) = {
            let conn = self.store.conn();
            let state = agent_state(&conn, &ctx.agent)?;
            if state.halted {
                drop(conn);
                let why = state.halt_reason.unwrap_or_default();
                let text =
                    format!("you are halted ({why}); nothing runs until the partner resumes you");
                return self.record(
                    ctx,
                    &canonical,
                    action.verb.name(),
                    &origin,
                    &no_check(),
                    None,
                    TraceOutcome::Failed,
                    Effect::text(text),
                );
            }
            let resolved = match resolve(&conn, ctx, action) {
                Ok(resolved) => resolved,
                Err(message) => {
                    drop(conn);
                    return self.record(
                        ctx,
                        &canonical,
                        action.verb.name(),
                        &origin,
                        &no_check(),
                        None,
                        TraceOutcome::Failed,
                        Effect::text(message),
                    );
                }
            };
            let block = match (&resolved.target, writes_block(&resolved)) {
                (Some(label), true) => blocks::get(&conn, &ctx.agent, label)?,
                _ => None,
            };
            let input = CheckInput {
                agent: &ctx.agent,
                action: &resolved,
                private_context: ctx.private,
                block: block.as_ref(),
                on_behalf_of: &ctx.on_behalf_of,
            };
            let check = self.engine.check(&conn, &input, now)?;
            (resolved, check)
        };
        let canonical = resolved.canonical();
        match &check.verdict {
            Verdict::Allow => self.execute(ctx, &resolved, &origin, &check, None),
            Verdict::Deny { reason } => {
                let text = reason.clone();
                self.record(
                    ctx,
                    &canonical,
                    resolved.verb.name(),
                    &origin,
                    &check,
                    None,
                    TraceOutcome::Denied,
                    Effect::text(text),
                )
            }
            Verdict::Ask {
                authorities,
                reason,
            } => {
                let action_json = serde_json::to_value(&resolved).unwrap_or_default();
                let expires_at = self
                    .engine
                    .policy()
                    .request_timeout
                    .map(|t| now + t.as_millis() as Millis);
                let marker = resolved.marker.map(|m| match &resolved.marker_note {
                    Some(note) => format!("?{note}"),
                    None => m.sigil().to_string(),
                });
                let request = self.store.transaction(|tx| {
                    pending::create(
                        tx,
                        &NewRequest {
                            agent: &ctx.agent,
                            canonical: &canonical,
                            action: &action_json,
                            verb: resolved.verb.name(),
                            marker: marker.as_deref(),
                            reason,
                            authorities,
                            turn_id: &ctx.turn_id,
                            thread: &ctx.thread,
                            raw_text: origin.text,
                            on_behalf_of: &ctx.on_behalf_of,
                            span: origin.span,
                            expires_at,
                        },
                        now,
                    )
                })?;
                let mut report = ActionReport::new(
                    &ctx.agent,
                    canonical,
                    ActionStatus::Pending,
                    format!(
                        "waiting for {} to approve ({}): {reason}",
                        request.waiting_on(),
                        request.id
                    ),
                );
                report.data = json!({ "request": request.id });
                report.path = check.path.clone();
                report.request = Some(request);
                Ok(report)
            }
        }
    }

    fn run_batch(&self, ctx: &TurnContext, action: &ParsedAction, turn: &str) -> ActionReport {
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
                            inner.canonical(),
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
        let mut report = ActionReport::new(&ctx.agent, action.canonical(), status, text);
        report.needs_continuation = children.iter().any(|c| c.needs_continuation);
        report.children = children;
        report
    }

    /// Runs an allowed (or approved) action and records it.
    fn execute(
        &self,
        ctx: &TurnContext,
        action: &ParsedAction,
        origin: &Origin<'_>,
        check: &Check,
        approval: Option<&Approval<'_>>,
    ) -> Result<ActionReport, ExecError> {
        let canonical = action.canonical();
        let verb = action.verb.name();
        let started = Instant::now();
        let outside = isolate::contain(|| {
            if is_authority(&action.verb) {
                Some(self.authority_action(ctx, action))
            } else {
                handlers::outside(self, ctx, action)
            }
        })
        .unwrap_or_else(|panic| Some(Err(crashed(&panic))));
        // Searches read conversations, which the runtime stores outside the
        // trace; replay takes their results from the record.
        let external = is_authority(&action.verb)
            || handlers::is_external(action)
            || action.verb == Verb::Search;
        let now = self.now();
        let effect = match outside {
            Some(effect) => effect,
            None => {
                let attempt =
                    self.store
                        .transaction(|tx| -> Result<(ActionReport, TraceRecord), TxError> {
                            let effect =
                                isolate::contain(|| handlers::inside(self, tx, ctx, action, now))
                                    .unwrap_or_else(|panic| Err(crashed(&panic)))
                                    .map_err(TxError::Agent)?;
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
                        });
                match attempt {
                    Ok((report, _)) => return Ok(report),
                    Err(TxError::Db(e)) => return Err(e.into()),
                    Err(TxError::Agent(message)) => Err(message),
                }
            }
        };
        let (outcome, effect) = match effect {
            Ok(effect) => (TraceOutcome::Executed, effect),
            Err(message) => (TraceOutcome::Failed, Effect::text(message)),
        };
        let record = self.build_record(
            ctx, &canonical, verb, origin, check, approval, outcome, &effect, started, now,
            external,
        );
        self.commit(ctx, record, approval, &effect, check, now)
    }

    /// Commits a record that carries no database effect of its own (and the
    /// approval it completes) and reports it.
    fn commit(
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
    fn record(
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
    fn build_record(
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
        }
    }

    /// In the action's transaction: the approval (and any standing rule it
    /// creates) and the trace record, whose sequence number is allocated
    /// here, under the transaction's write lock.
    fn finalize(
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

    fn report_of(
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

    /// Waiting requests, oldest first.
    pub fn pending(&self) -> Result<Vec<PendingRequest>, ExecError> {
        Ok(pending::waiting(&self.store.conn())?)
    }

    /// Takes the requests decided since the last call, oldest first.
    pub fn take_decided(&self) -> Vec<DecidedRequest> {
        std::mem::take(&mut *self.decided.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn note_decided(&self, id: &str, decision: &str, by: &str, report: &ActionReport) {
        let request = pending::get(&self.store.conn(), id).ok().flatten();
        if let Some(request) = request {
            self.decided
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(DecidedRequest {
                    request,
                    decision: decision.to_string(),
                    by: by.to_string(),
                    report: report.clone(),
                });
        }
    }

    /// Decides a waiting request. `by` must be the partner or the authority
    /// it waits on. Returns the report for the agent that asked: the
    /// action's result when approved, the refusal otherwise. The decision is
    /// also queued for [`Executor::take_decided`].
    pub fn decide(
        &self,
        id: &str,
        decision: Decision,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        let name = decision.name();
        let report = self.decide_inner(id, decision, by)?;
        self.note_decided(id, name, &by.to_string(), &report);
        Ok(report)
    }

    fn decide_inner(
        &self,
        id: &str,
        decision: Decision,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        let request = pending::get(&self.store.conn(), id)?
            .ok_or_else(|| ExecError::NoRequest(id.to_string()))?;
        if request.status != RequestStatus::Waiting {
            return Err(ExecError::NotWaiting {
                id: request.id.clone(),
                status: request.status.as_str().to_string(),
            });
        }
        let own_cancel =
            decision == Decision::Cancel && *by == Authority::Agent(request.agent.clone());
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
        let ctx = request_context(&request);
        let origin = Origin::whole(&request.raw_text, TraceSource::Agent);
        let check = Check {
            verdict: Verdict::Ask {
                authorities: request.authorities.clone(),
                reason: request.reason.clone(),
            },
            path: vec![
                request.reason.clone(),
                format!("{} by {by}", decision.name()),
            ],
        };
        let approval = Approval {
            request: &request,
            decision: &decision,
            by,
        };
        match &decision {
            Decision::ApproveOnce | Decision::ApproveAlways | Decision::ApproveFor(_) => {
                let parsed = DialectParser::new().parse(&request.canonical);
                let Some(action) = parsed.actions.into_iter().next() else {
                    let text = format!("the stored action no longer parses: {}", request.canonical);
                    return self.record(
                        &ctx,
                        &request.canonical,
                        &request.verb,
                        &origin,
                        &check,
                        Some(&approval),
                        TraceOutcome::Failed,
                        Effect::text(text),
                    );
                };
                self.execute(&ctx, &action, &origin, &check, Some(&approval))
            }
            Decision::Deny(reason) | Decision::DenyAlways(reason) => {
                let text = match reason {
                    Some(reason) => format!("{by} said no: {reason}"),
                    None => format!("{by} said no"),
                };
                self.record(
                    &ctx,
                    &request.canonical,
                    &request.verb,
                    &origin,
                    &check,
                    Some(&approval),
                    TraceOutcome::Denied,
                    Effect::text(text),
                )
            }
            Decision::Cancel => {
                let text = format!("request {} was cancelled", request.id);
                self.record(
                    &ctx,
                    &request.canonical,
                    &request.verb,
                    &origin,
                    &check,
                    Some(&approval),
                    TraceOutcome::Cancelled,
                    Effect::text(text),
                )
            }
            Decision::Escalate(reason) => {
                let next = pending::escalate(&self.store.conn(), &request)?
                    .ok_or_else(|| ExecError::LastAuthority(request.id.clone()))?;
                let updated =
                    pending::get(&self.store.conn(), &request.id)?.unwrap_or(request.clone());
                let why = reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                let mut report = ActionReport::new(
                    &request.agent,
                    request.canonical.clone(),
                    ActionStatus::Pending,
                    format!("{by} passed {} on to {next}{why}", request.id),
                );
                report.request = Some(updated);
                Ok(report)
            }
        }
    }

    /// Approves a request with its action replaced by `text`, written by
    /// `by` (the partner's "edit, then approve"). The new action is parsed
    /// and checked against policy for the requesting agent first: a refusal
    /// leaves the request waiting and is returned as an error.
    pub fn approve_edited(
        &self,
        id: &str,
        text: &str,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        let request = pending::get(&self.store.conn(), id)?
            .ok_or_else(|| ExecError::NoRequest(id.to_string()))?;
        if request.status != RequestStatus::Waiting {
            return Err(ExecError::NotWaiting {
                id: request.id.clone(),
                status: request.status.as_str().to_string(),
            });
        }
        if !request.decidable_by(by) {
            return Err(ExecError::NotYours {
                id: request.id.clone(),
                by: by.to_string(),
                waiting_on: request.waiting_on().to_string(),
            });
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
        if !action.chain.is_empty() || action.verb == Verb::Batch {
            return Err(ExecError::Refused(
                "write one action, not a chain or a batch".into(),
            ));
        }
        let check = {
            let conn = self.store.conn();
            let block = match (&action.target, writes_block(action)) {
                (Some(label), true) => blocks::get(&conn, &request.agent, label)?,
                _ => None,
            };
            let input = CheckInput {
                agent: &request.agent,
                action,
                private_context: request.thread.starts_with("dm:"),
                block: block.as_ref(),
                on_behalf_of: &request.on_behalf_of,
            };
            self.engine.check(&conn, &input, self.now())?
        };
        if let Verdict::Deny { reason } = &check.verdict {
            return Err(ExecError::Refused(format!(
                "the edited action is refused: {reason}"
            )));
        }
        let ctx = request_context(&request);
        let origin = Origin::whole(text, TraceSource::Partner);
        let mut path = check.path.clone();
        path.insert(0, format!("edited by {by} from {}", request.canonical));
        let check = Check {
            verdict: check.verdict,
            path,
        };
        let decision = Decision::ApproveOnce;
        let approval = Approval {
            request: &request,
            decision: &decision,
            by,
        };
        let report = self.execute(&ctx, action, &origin, &check, Some(&approval))?;
        self.note_decided(&request.id, "approve_edited", &by.to_string(), &report);
        Ok(report)
    }

    /// Denies every waiting request whose time is up.
    pub fn expire_overdue(&self) -> Result<Vec<ActionReport>, ExecError> {
        let overdue = pending::overdue(&self.store.conn(), self.now())?;
        let mut reports = Vec::new();
        for request in overdue {
            let ctx = request_context(&request);
            let origin = Origin::whole(&request.raw_text, TraceSource::Agent);
            let now = self.now();
            let mut record = self.build_record(
                &ctx,
                &request.canonical,
                &request.verb,
                &origin,
                &Check {
                    verdict: Verdict::Ask {
                        authorities: request.authorities.clone(),
                        reason: request.reason.clone(),
                    },
                    path: vec![request.reason.clone(), "nobody decided in time".into()],
                },
                None,
                TraceOutcome::TimedOut,
                &Effect::text(format!(
                    "request {} timed out: nobody decided in time, so it is denied",
                    request.id
                )),
                Instant::now(),
                now,
                false,
            );
            record.decision.request = Some(request.id.clone());
            record.decision.decided_by = Some("timeout".into());
            record.decision.decision = Some("timeout".into());
            record.decision.decided_at = Some(now);
            record.decision.requested_at = Some(request.created_at);
            self.store.transaction(|tx| -> Result<(), MemoryError> {
                pending::finish(
                    tx,
                    &request.id,
                    RequestStatus::TimedOut,
                    "timeout",
                    "timeout",
                    None,
                    now,
                )?;
                self.finalize(tx, &mut record, None, now)
            })?;
            let mut report = ActionReport::new(
                &ctx.agent,
                record.canonical.clone(),
                ActionStatus::TimedOut,
                record.result.clone(),
            );
            report.trace_id = Some(record.id);
            self.note_decided(&request.id, "timeout", "timeout", &report);
            reports.push(report);
        }
        Ok(reports)
    }

    /// The authority verbs as an agent's action: `/approve`, `/deny`,
    /// `/escalate`, `/cancel`.
    fn authority_action(&self, ctx: &TurnContext, action: &ParsedAction) -> Result<Effect, String> {
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

    /// Creates or rewrites a block as the partner: the same versioning as
    /// an agent's write, recorded in the trace.
    pub fn partner_set_block(&self, spec: BlockSpec) -> Result<ActionReport, ExecError> {
        let ctx = TurnContext::new(&spec.agent, "", "partner");
        let canonical = format!(
            ":memory set {} {} {}",
            spec.agent,
            spec.label,
            crate::dialect::quote(&spec.value)
        );
        self.partner_op(
            &ctx,
            canonical,
            "set",
            TraceOp::SetBlock {
                block: spec.clone(),
            },
            |tx, now| {
                let existing = blocks::get(tx, &spec.agent, &spec.label)?;
                let (block, change) = match existing {
                    Some(_) => {
                        blocks::write(tx, &spec.agent, &spec.label, &spec.value, "partner", now)?
                    }
                    None => {
                        let new = NewBlock {
                            agent: spec.agent.clone(),
                            label: spec.label.clone(),
                            kind: spec.kind,
                            description: spec.description.clone(),
                            value: spec.value.clone(),
                            char_limit: spec.char_limit,
                            permission: spec.permission,
                            pinned: false,
                            shared: spec.shared,
                        };
                        blocks::create(tx, &new, "partner", now)?
                    }
                };
                Ok(Effect {
                    text: format!(
                        "{} is now v{} ({} chars)",
                        block.label,
                        block.version,
                        block.chars()
                    ),
                    data: json!({ "block": block }),
                    memory: Some(change),
                    needs_continuation: false,
                })
            },
        )
    }

    /// Undoes a block's last change as the partner (recorded in the trace).
    pub fn partner_undo(&self, agent: &str, label: &str) -> Result<ActionReport, ExecError> {
        let ctx = TurnContext::new(agent, "", "partner");
        let op = TraceOp::Undo {
            agent: agent.to_string(),
            label: label.to_string(),
        };
        self.partner_op(
            &ctx,
            format!(":memory undo {agent} {label}"),
            "undo",
            op,
            |tx, now| {
                let change = blocks::undo(tx, agent, label, "partner", now)?;
                Ok(Effect {
                    text: format!(
                        "{label} is back to its previous value (v{})",
                        change.version_after
                    ),
                    data: json!({ "label": label }),
                    memory: Some(change),
                    needs_continuation: false,
                })
            },
        )
    }

    fn partner_op(
        &self,
        ctx: &TurnContext,
        canonical: String,
        verb: &str,
        op: TraceOp,
        apply: impl FnOnce(&Connection, Millis) -> Result<Effect, MemoryError>,
    ) -> Result<ActionReport, ExecError> {
        let origin = Origin {
            text: &canonical,
            span: (0, canonical.len()),
            source: TraceSource::Partner,
            op,
        };
        let check = Check {
            verdict: Verdict::Allow,
            path: vec!["the partner's own edit".into()],
        };
        let started = Instant::now();
        let now = self.now();
        let attempt = self
            .store
            .transaction(|tx| -> Result<(Effect, TraceRecord), TxError> {
                let effect = apply(tx, now).map_err(|e| match e {
                    MemoryError::Sqlite(e) => TxError::Db(MemoryError::Sqlite(e)),
                    other => TxError::Agent(other.to_string()),
                })?;
                let mut record = self.build_record(
                    ctx,
                    &canonical,
                    verb,
                    &origin,
                    &check,
                    None,
                    TraceOutcome::Executed,
                    &effect,
                    started,
                    now,
                    false,
                );
                self.finalize(tx, &mut record, None, now)?;
                Ok((effect, record))
            });
        match attempt {
            Ok((effect, record)) => Ok(self.report_of(ctx, &record, &effect, &check)),
            Err(TxError::Db(e)) => Err(e.into()),
            Err(TxError::Agent(message)) => Err(ExecError::Refused(message)),
        }
    }

    /// Lets a halted agent run again.
    pub fn resume(&self, agent: &str) -> Result<(), ExecError> {
        Ok(set_halted(
            &self.store.conn(),
            agent,
            false,
            None,
            self.now(),
        )?)
    }

    /// Replays one trace record's operation against this executor's store
    /// (used by replay verification). Returns the outcome, result text and
    /// memory change it produced now.
    pub fn redo(
        &self,
        record: &TraceRecord,
    ) -> Result<(TraceOutcome, String, Option<crate::memory::MemoryChange>), ExecError> {
        let ctx = TurnContext::new(&record.agent, "", &record.turn_id);
        let report = match &record.op {
            TraceOp::SetBlock { block } => self.partner_set_block(block.clone()),
            TraceOp::Undo { agent, label } => self.partner_undo(agent, label),
            TraceOp::Action => {
                let parsed = DialectParser::new()
                    .with_table(self.table.clone())
                    .parse(&record.canonical);
                let Some(action) = parsed.actions.into_iter().next() else {
                    return Ok((
                        TraceOutcome::Failed,
                        format!("does not parse: {}", record.canonical),
                        None,
                    ));
                };
                let origin = Origin {
                    text: &record.text,
                    span: record.span,
                    source: record.source,
                    op: TraceOp::Action,
                };
                let check = Check {
                    verdict: Verdict::Allow,
                    path: vec!["replay".into()],
                };
                self.execute(&ctx, &action, &origin, &check, None)
            }
        };
        match report {
            Ok(report) => {
                let outcome = match report.status {
                    ActionStatus::Executed => TraceOutcome::Executed,
                    ActionStatus::Denied => TraceOutcome::Denied,
                    ActionStatus::Cancelled => TraceOutcome::Cancelled,
                    ActionStatus::TimedOut => TraceOutcome::TimedOut,
                    _ => TraceOutcome::Failed,
                };
                Ok((outcome, report.text, report.memory))
            }
            Err(ExecError::Refused(message)) => Ok((TraceOutcome::Failed, message, None)),
            Err(e) => Err(e),
        }
    }
}

/// What the agent hears when handling its action hit a bug in partner.
fn crashed(panic: &str) -> String {
    format!(
        "partner failed while handling this action, so nothing was changed (internal error: {panic}); this is not your mistake"
    )
}

/// True for verbs that decide other requests.
fn is_authority(verb: &Verb) -> bool {
    matches!(
        verb,
        Verb::Approve | Verb::Deny | Verb::Escalate | Verb::Cancel
    )
}

/// Opens a constellation's database, importing the trace file an older
/// partner kept beside it (once).
pub fn open_store(db: &Path) -> Result<MemoryStore, ExecError> {
    let store = MemoryStore::open(db)?;
    trace_store::import_legacy(&mut store.conn(), db)?;
    Ok(store)
}

/// How long to wait between timeout sweeps, for runtimes that poll.
pub const TIMEOUT_SWEEP: Duration = Duration::from_secs(30);
