//! [`LocalBackend`]: the console's ops carried out — what the runtime does
//! (decisions, messages, control, actions run as an agent) as the
//! protocol's operations sent to a [`Host`] (the runtime in this process,
//! or a daemon's over its socket: the same operations either way), and
//! reads and the partner's edits through the executor on the blocking
//! pool. Nothing here runs on the console's task.

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};

use partner_core::clock::Clock;
use partner_engine::exec::{ExecError, Executor};
use partner_gate::sandbox::{self, Support};
use partner_gate::{Scene, assess_in};
use partner_protocol::{Connection, Event, Host, Op as HostOp};
use partner_store::memory::{MemoryError, blocks};
use partner_tui::backend::{
    Backend, CommandPreview, Op, OpenedTrace, Previews, Reply, SaveOutcome,
};
use partner_tui::model::MAX_TRACE;

/// Older trace records read in one page.
const OLDER_PAGE: usize = 1_000;
use partner_policy::{PendingRequest, pending};
use partner_store::trace::BlockSpec;
use partner_tui::model::AgentRow;

/// The console's backend: the database read here, the runtime through
/// its host.
#[derive(Clone)]
pub struct LocalBackend {
    host: Arc<dyn Host>,
    executor: Arc<Executor>,
    replies: mpsc::UnboundedSender<Reply>,
}

impl LocalBackend {
    /// A backend over the constellation `host` serves, reading the
    /// database through `executor`, answering on `replies`.
    pub fn new(
        host: Arc<dyn Host>,
        executor: Arc<Executor>,
        replies: mpsc::UnboundedSender<Reply>,
    ) -> Self {
        LocalBackend {
            host,
            executor,
            replies,
        }
    }

    /// Runs `work` on the blocking pool and sends its reply; when it fails
    /// inside partner, the console is told so and stops waiting for it.
    fn blocking(&self, work: BlockingWork, failed: Unanswered) {
        let executor = Arc::clone(&self.executor);
        let replies = self.replies.clone();
        tokio::task::spawn_blocking(move || {
            let reply = partner_core::isolate::contain(|| work(&executor))
                .unwrap_or_else(|panic| failed.reply(panic));
            let _ = replies.send(reply);
        });
    }
}

/// The memory change a request would make, as a diff (memory writes only):
/// the verb registry says which block it writes and what it would leave.
fn preview(executor: &Executor, request: &PendingRequest) -> Option<String> {
    let action = executor.request_action(request)?;
    let handler = executor.registry().handler(&action.verb)?;
    let write = handler.traits(&action).writes_block?;
    let block = blocks::get(&executor.store().read(), &request.agent, &write.label).ok()??;
    let new = handler.preview(&action, &block)?;
    Some(blocks::diff(
        &write.label,
        &block.value,
        &new,
        block.version,
        block.version + 1,
    ))
}

/// Where a request's command would run: the working directory its
/// handler recorded, with this process's home.
fn scene_of(r: &PendingRequest) -> Scene {
    let scene = Scene::current();
    match r.action.workdir.as_deref() {
        Some(dir) => scene.in_dir(std::path::Path::new(dir)),
        None => scene,
    }
}

/// A request's command judged here, where the executor would run it: its
/// risk, and how it would run — as the process that asked said in the
/// request's reason (`sandbox: …` or `NOT SANDBOXED: …`, written before
/// any ` | ` proposal), this process's kernel only for a reason without.
fn judge_command(r: &PendingRequest, line: String) -> CommandPreview {
    let scene = scene_of(r);
    let head = r.reason.split(" | ").next().unwrap_or("");
    let said = |marker: &str| {
        head.rfind(marker)
            .map(|at| head[at + marker.len()..].trim().to_string())
    };
    let sandbox = match (said("NOT SANDBOXED: "), said("sandbox: ")) {
        (Some(why), _) => Err(why),
        (None, Some(plan)) => Ok(plan),
        (None, None) => match sandbox::support() {
            Support::Landlock(_) => Ok(sandbox::Plan::for_command(&line, &scene).summary(&scene)),
            Support::Missing(why) => Err(why),
        },
    };
    CommandPreview {
        assessment: assess_in(&line, &scene),
        line,
        sandbox,
    }
}

fn load_pending(executor: &Executor) -> Reply {
    match executor.pending() {
        Ok(pending) => {
            let previews = Previews {
                diffs: pending
                    .iter()
                    .filter_map(|r| preview(executor, r).map(|d| (r.id.clone(), d)))
                    .collect(),
                commands: pending
                    .iter()
                    .filter_map(|r| {
                        let line = executor.request_command(r)?;
                        Some((r.id.clone(), judge_command(r, line)))
                    })
                    .collect(),
            };
            Reply::Pending(pending, previews)
        }
        Err(e) => Reply::Failed(format!("could not read the queue: {e}")),
    }
}

fn save_block(
    executor: &Executor,
    agent: &str,
    label: &str,
    value: String,
    base: i64,
) -> SaveOutcome {
    let current = match blocks::get(&executor.store().read(), agent, label) {
        Ok(Some(block)) => block,
        Ok(None) => return SaveOutcome::Failed(format!("block {label} no longer exists")),
        Err(e) => return SaveOutcome::Failed(e.to_string()),
    };
    let spec = BlockSpec {
        agent: agent.to_string(),
        label: label.to_string(),
        kind: current.kind,
        permission: current.permission,
        char_limit: current.char_limit,
        description: current.description.clone(),
        value,
        shared: current.shared,
    };
    match executor.partner_write_block(spec, base) {
        Ok(report) => SaveOutcome::Saved(report.text),
        Err(ExecError::Memory(MemoryError::Conflict(_))) => {
            match blocks::get(&executor.store().read(), agent, label) {
                Ok(Some(theirs)) => SaveOutcome::Conflict(theirs),
                _ => SaveOutcome::Failed(format!("block {label} changed and could not be read")),
            }
        }
        Err(e) => SaveOutcome::Failed(e.to_string()),
    }
}

impl Backend for LocalBackend {
    fn events(&self) -> broadcast::Receiver<Event> {
        self.host.events()
    }

    fn connection(&self) -> Connection {
        self.host.connection()
    }

    fn send(&self, op: Op) {
        let failed = Unanswered::of(&op);
        match self.work(op) {
            Work::Blocking(work) => self.blocking(work, failed),
            Work::Async(work) => self.spawn(work, failed),
        }
    }
}

impl LocalBackend {
    /// How `op` is carried out: on the blocking pool, or as a task.
    fn work(&self, op: Op) -> Work {
        match op {
            Op::Status => Work::Async(Box::pin(self.status())),
            Op::Runtime(op) => Work::Async(Box::pin(self.runtime(op))),
            Op::LoadPending => Work::blocking(load_pending),
            Op::LoadTrace { after } => Work::blocking(move |ex| load_trace(ex, after)),
            Op::LoadOlderTrace { filter, before } => {
                Work::blocking(move |ex| load_older_trace(ex, filter, before))
            }
            Op::LoadMemory { agent } => Work::blocking(move |ex| load_memory(ex, agent)),
            Op::LoadHistory { agent, label } => {
                Work::blocking(move |ex| load_history(ex, agent, label))
            }
            Op::Search { query } => Work::blocking(move |ex| search(ex, query)),
            Op::LoadIndex => {
                Work::blocking(|ex| Reply::Index(ex.recall().map(|recall| recall.status())))
            }
            Op::LoadRules => Work::blocking(load_rules),
            Op::RevokeRule { id } => {
                let replies = self.replies.clone();
                Work::blocking(move |ex| revoke_rule(ex, id, &replies))
            }
            Op::Lisp { agent, text } => Work::blocking(move |ex| lisp(ex, &agent, &text)),
            Op::LoadLearned => Work::blocking(load_learned),
            Op::Forget { id } => {
                let replies = self.replies.clone();
                Work::blocking(move |ex| forget(ex, id, &replies))
            }
            Op::Learn { words, action } => Work::blocking(move |ex| learn(ex, &words, &action)),
            Op::SaveBlock {
                agent,
                label,
                value,
                base_version,
            } => Work::blocking(move |ex| {
                let outcome = save_block(ex, &agent, &label, value, base_version);
                Reply::Saved {
                    agent,
                    label,
                    outcome,
                }
            }),
            Op::UndoBlock { agent, label } => {
                let replies = self.replies.clone();
                Work::blocking(move |ex| undo_block(ex, agent, label, &replies))
            }
            Op::PlanCommand { text } => {
                Work::blocking(move |ex| Reply::CommandPlan(ex.plan_command(&text)))
            }
            Op::RunCommand { command, stop } => Work::blocking(move |ex| {
                let ran = ex.run_partner_command(&command, Some(&stop));
                let report = ran.as_ref().map_err(|e| format!("not run: {e}"));
                Reply::CommandRan(partner_tui::panes::OutputView::ended(&command, report))
            }),
            Op::OpenReplay(input) => Work::blocking(move |_| open_replay(input)),
            Op::VerifyReplay(records) => Work::blocking(move |ex| verify_replay(ex, &records)),
            Op::ReplayMemory {
                records,
                step,
                agent,
            } => Work::blocking(move |ex| replay_memory(ex, &records, step, &agent)),
        }
    }
}

impl LocalBackend {
    /// Runs `work` as a task and sends what it answers; when it fails
    /// inside partner, the console is told so and stops waiting for it.
    fn spawn(&self, work: AsyncWork, failed: Unanswered) {
        let replies = self.replies.clone();
        tokio::spawn(async move {
            let reply = match tokio::spawn(work).await {
                Ok(reply) => reply,
                Err(e) => failed.reply(e.to_string()),
            };
            let _ = replies.send(reply);
        });
    }

    /// The agents' rows, their next pulse in wall time.
    fn status(&self) -> impl std::future::Future<Output = Reply> + Send + 'static {
        let host = Arc::clone(&self.host);
        async move {
            let wall = partner_core::clock::SystemClock.now_ms();
            let status = match host.call(HostOp::Status).await {
                Ok(answer) => answer
                    .data
                    .and_then(|d| serde_json::from_value::<partner_protocol::Status>(d).ok()),
                Err(_) => None,
            };
            let Some(status) = status else {
                return Reply::Failed("could not read the agents' state".into());
            };
            let rows = status
                .agents
                .into_iter()
                .map(|a| AgentRow {
                    name: a.name,
                    state: a.state,
                    next_pulse_at: a.next_pulse_secs.map(|s| {
                        partner_core::clock::after(wall, std::time::Duration::from_secs(s))
                    }),
                })
                .collect();
            Reply::Agents(rows)
        }
    }

    /// Sends what the runtime does to the host; the console hears how it
    /// went: a decision's outcome, what a line run as an agent did, and
    /// what the host said of the rest (or why it was not done).
    fn runtime(&self, op: HostOp) -> impl std::future::Future<Output = Reply> + Send + 'static {
        let host = Arc::clone(&self.host);
        let answered = Answered::of(&op);
        async move {
            let outcome = host.call(op).await.map(|answer| answer.message);
            answered.reply(outcome)
        }
    }
}

/// What reply an operation on the runtime is answered with.
enum Answered {
    /// A decision of this request.
    Decision(String),
    /// A line run as this agent.
    Run(String),
    /// Anything else: the host's words.
    Words,
}

impl Answered {
    fn of(op: &HostOp) -> Self {
        match op {
            HostOp::Decide { request, .. } => Answered::Decision(request.clone()),
            HostOp::Run { agent, .. } => Answered::Run(agent.clone()),
            _ => Answered::Words,
        }
    }

    fn reply(self, outcome: Result<String, String>) -> Reply {
        match (self, outcome) {
            (Answered::Decision(id), outcome) => Reply::Decided { id, outcome },
            (Answered::Run(agent), Ok(summary)) => {
                Reply::Notice(format!("as {agent}: {}", summary.replace('\n', "; ")))
            }
            (_, Ok(words)) => Reply::Notice(words),
            (_, Err(why)) => Reply::Failed(why),
        }
    }
}

/// Pattern Lisp evaluated against an agent's state (nothing written).
fn lisp(ex: &Executor, agent: &str, text: &str) -> Reply {
    let now = partner_core::clock::SystemClock.now_ms_public();
    Reply::Lisp(super::lisp::evaluate(ex, agent, text, now))
}

/// Learns that `words` mean `action`.
fn learn(ex: &Executor, words: &str, action: &str) -> Reply {
    Reply::Learned(partner_runtime::proposals::learn(
        &ex.store().conn(),
        words,
        action,
        partner_core::clock::SystemClock.now_ms_public(),
    ))
}

/// The newest trace records after `after`.
fn load_trace(ex: &Executor, after: u64) -> Reply {
    let conn = ex.store().read();
    match partner_store::trace::query::newest_after(&conn, after, MAX_TRACE) {
        Ok((records, restart)) => {
            let next = records.last().map_or(after, |r| r.seq);
            Reply::Trace(records, next, restart)
        }
        Err(e) => Reply::Failed(format!("could not read the trace: {e}")),
    }
}

/// A page of the records before `before` that `filter` keeps.
fn load_older_trace(
    ex: &Executor,
    filter: partner_store::trace::query::TraceFilter,
    before: u64,
) -> Reply {
    let conn = ex.store().read();
    match partner_store::trace::query::older(&conn, before, &filter, OLDER_PAGE) {
        Ok(page) => Reply::OlderTrace(filter, before, page),
        Err(e) => Reply::OlderTraceFailed(filter, before, e.to_string()),
    }
}

/// An agent's blocks.
fn load_memory(ex: &Executor, agent: String) -> Reply {
    match blocks::list(&ex.store().read(), Some(&agent)) {
        Ok(list) => Reply::Blocks(agent, list),
        Err(e) => Reply::Failed(format!("could not read {agent}'s memory: {e}")),
    }
}

/// A block's versions.
fn load_history(ex: &Executor, agent: String, label: String) -> Reply {
    match blocks::history(&ex.store().read(), &agent, &label) {
        Ok(list) => Reply::History(agent, label, list),
        Err(e) => Reply::Failed(format!("could not read {label}'s history: {e}")),
    }
}

/// A memory search, by meaning too where an embedder is configured.
fn search(ex: &Executor, query: String) -> Reply {
    let q = partner_store::memory::SearchQuery::new(&query, None);
    let found = ex
        .search_memory(&q)
        .map(|found| (found.hits, found.note))
        .map_err(|e| format!("search failed: {e}"));
    Reply::Hits { query, found }
}

/// The standing rules in force.
fn load_rules(ex: &Executor) -> Reply {
    let now = partner_core::clock::SystemClock.now_ms();
    match pending::rules(&ex.store().read(), now) {
        Ok(rules) => Reply::Rules(rules),
        Err(e) => Reply::Failed(format!("could not read the standing rules: {e}")),
    }
}

/// Revokes a standing rule; the rules as they are then go out too.
fn revoke_rule(ex: &Executor, id: i64, replies: &mpsc::UnboundedSender<Reply>) -> Reply {
    let now = partner_core::clock::SystemClock.now_ms();
    let notice = match pending::revoke_rule(&ex.store().conn(), id, now) {
        Ok(true) => format!("standing rule #{id} revoked"),
        Ok(false) => format!("standing rule #{id} was not in force"),
        Err(e) => format!("could not revoke rule #{id}: {e}"),
    };
    if let Ok(rules) = pending::rules(&ex.store().read(), now) {
        let _ = replies.send(Reply::Rules(rules));
    }
    Reply::Notice(notice)
}

/// The learned phrasings.
fn load_learned(ex: &Executor) -> Reply {
    match partner_store::memory::learned::list(&ex.store().read()) {
        Ok(rules) => Reply::LearnedRules(rules),
        Err(e) => Reply::Failed(format!("could not read the learned phrasings: {e}")),
    }
}

/// Forgets a learned phrasing; the list as it is then goes out too.
fn forget(ex: &Executor, id: i64, replies: &mpsc::UnboundedSender<Reply>) -> Reply {
    let outcome = match partner_store::memory::learned::remove(&ex.store().conn(), id) {
        Ok(true) => Ok(format!("forgot #{id}")),
        Ok(false) => Err(format!("no learned phrasing #{id}")),
        Err(e) => Err(format!("could not forget #{id}: {e}")),
    };
    if let Ok(rules) = partner_store::memory::learned::list(&ex.store().read()) {
        let _ = replies.send(Reply::LearnedRules(rules));
    }
    Reply::Learned(outcome)
}

/// Undoes a block's last change; its agent's blocks then go out too.
fn undo_block(
    ex: &Executor,
    agent: String,
    label: String,
    replies: &mpsc::UnboundedSender<Reply>,
) -> Reply {
    let notice = match ex.partner_undo(&agent, &label) {
        Ok(report) => report.text,
        Err(e) => format!("not undone: {e}"),
    };
    if let Ok(list) = blocks::list(&ex.store().read(), Some(&agent)) {
        let _ = replies.send(Reply::Blocks(agent, list));
    }
    Reply::Notice(notice)
}

/// A trace opened for replay.
fn open_replay(input: partner_store::trace::TraceInput) -> Reply {
    match input.load() {
        Ok((records, _)) => Reply::Replay(OpenedTrace {
            path: input.path().to_path_buf(),
            records,
        }),
        Err(e) => Reply::Failed(format!("cannot open the trace: {e}")),
    }
}

/// Where replaying `records` first differs, with this constellation's verbs.
fn verify_replay(ex: &Executor, records: &[partner_store::trace::TraceRecord]) -> Reply {
    match partner_engine::exec::replay::verify_records_with(records, Some(ex.registry().table())) {
        Ok((_, divergence)) => Reply::Verified(divergence),
        Err(e) => Reply::Failed(format!("verification failed: {e}")),
    }
}

/// An agent's memory as at `step` of a replay, and that step's change.
fn replay_memory(
    ex: &Executor,
    records: &[partner_store::trace::TraceRecord],
    step: usize,
    agent: &str,
) -> Reply {
    let verbs = Some(ex.registry().table());
    match partner_engine::exec::replay::memory_and_change_at(records, step, agent, verbs) {
        Ok((list, diff)) => Reply::ReplayMemory(step, list, diff),
        Err(e) => Reply::Failed(format!("cannot rebuild memory at step {step}: {e}")),
    }
}

/// Work on the blocking pool, with the executor.
type BlockingWork = Box<dyn FnOnce(&Executor) -> Reply + Send + 'static>;

/// Work as a task (what goes to the host).
type AsyncWork = std::pin::Pin<Box<dyn std::future::Future<Output = Reply> + Send + 'static>>;

/// How an op is carried out.
enum Work {
    /// On the blocking pool (the database, the executor).
    Blocking(BlockingWork),
    /// As a task.
    Async(AsyncWork),
}

impl Work {
    fn blocking(work: impl FnOnce(&Executor) -> Reply + Send + 'static) -> Self {
        Work::Blocking(Box::new(work))
    }
}

/// The reply that ends the console's wait for an op that failed inside
/// partner (a panic): what the op's own answer would say when it fails,
/// so nothing stays "searching…" or "waiting for the answer…".
enum Unanswered {
    Search(String),
    OlderTrace(partner_store::trace::query::TraceFilter, u64),
    Save { agent: String, label: String },
    Decision(String),
    Lisp(String),
    Command(String),
    Other(&'static str),
}

impl Unanswered {
    fn of(op: &Op) -> Self {
        match op {
            Op::Search { query } => Unanswered::Search(query.clone()),
            Op::LoadOlderTrace { filter, before } => {
                Unanswered::OlderTrace(filter.clone(), *before)
            }
            Op::SaveBlock { agent, label, .. } => Unanswered::Save {
                agent: agent.clone(),
                label: label.clone(),
            },
            Op::Runtime(HostOp::Decide { request, .. }) => Unanswered::Decision(request.clone()),
            Op::Lisp { agent, text } => Unanswered::Lisp(format!("{agent}: {text}")),
            Op::RunCommand { command, .. } => Unanswered::Command(command.clone()),
            Op::Status => Unanswered::Other("reading the agents' state"),
            Op::Runtime(_) => Unanswered::Other("sending that to the runtime"),
            Op::LoadPending => Unanswered::Other("reading the queue"),
            Op::LoadTrace { .. } => Unanswered::Other("reading the trace"),
            Op::LoadMemory { .. } | Op::LoadHistory { .. } => Unanswered::Other("reading memory"),
            Op::OpenReplay(_) | Op::VerifyReplay(_) | Op::ReplayMemory { .. } => {
                Unanswered::Other("replaying the trace")
            }
            _ => Unanswered::Other("doing that"),
        }
    }

    fn reply(self, panic: String) -> Reply {
        let why = format!("partner failed inside ({panic}); please report it");
        match self {
            Unanswered::Search(query) => Reply::Hits {
                query,
                found: Err(why),
            },
            Unanswered::OlderTrace(filter, before) => Reply::OlderTraceFailed(filter, before, why),
            Unanswered::Save { agent, label } => Reply::Saved {
                agent,
                label,
                outcome: SaveOutcome::Failed(why),
            },
            Unanswered::Decision(id) => Reply::Decided {
                id,
                outcome: Err(why),
            },
            Unanswered::Lisp(title) => Reply::Lisp(partner_tui::panes::LispView::error(title, why)),
            Unanswered::Command(command) => {
                Reply::CommandRan(partner_tui::panes::OutputView::ended(&command, Err(why)))
            }
            Unanswered::Other(what) => Reply::Failed(format!("{what}: {why}")),
        }
    }
}
