//! The runtime: one tokio task per constellation that owns every agent's
//! state. It starts turns (several agents at once, one turn per agent at a
//! time), runs the pulse scheduler, fires pulses for due intentions, times
//! out requests, and routes decisions back to the agents that asked.
//! Everything it does is published on the event stream; the console and
//! headless runs talk to it through a [`RuntimeHandle`].
//!
//! It never waits on effects: turns, decisions, database reads and writes
//! all run as tasks of their own (database work on the blocking pool), and
//! their completion is a message to the runtime's loop. So `status()`
//! answers at once whatever a model, a fetch or another process's write
//! lock is doing.
//!
//! Across processes, the database is the source of truth. Decisions made
//! anywhere are kept with their request; requests made anywhere wait there
//! with the authority last told about them. The runtime syncs with it after
//! each turn and decision and at least every [`SWEEP`], so a request decided
//! from a shell reaches the waiting agent within a second.
//!
//! Pulse scheduling: each agent has an idle timer reset by new input and by
//! the end of each turn, paused while it generates or waits on approval.
//! The interval comes from the config, `/pulse` (stored in the database) or
//! the partner.

mod approvals;
mod commands;
mod handle;
mod leases;
mod listen;
mod notices;
mod routing;
mod startup;
mod sync;

pub use partner_protocol::RunState;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, broadcast, mpsc, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

pub use approvals::approval_request_message;
pub use handle::{Receipt, RuntimeHandle};
pub use leases::{Leasing, RENEW as LEASE_RENEW, TTL as LEASE_TTL};

use super::config::ConstellationConfig;
use super::events::Event;
use super::turn::{AgentInfo, Trigger, TurnEnv, TurnOutcome, emit_report, run_turn};
use partner_core::clock::{Millis, SharedClock};
use partner_engine::exec::{ActionInfo, ActionStatus, DecidedRequest, Executor};
use partner_policy::{Authority, Decision, DecisionKind, PendingRequest};
use partner_store::memory::inbox::Delivery;
use startup::{create_blocks, slots, startup};
use sync::{Swept, Synced};

/// How often the runtime sweeps for due intentions and overdue requests,
/// and looks for decisions and requests made by other processes.
pub const SWEEP: Duration = Duration::from_secs(1);

/// A snapshot of one agent, for status lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentStatus {
    /// Name.
    pub name: String,
    /// State.
    pub state: RunState,
    /// Time to the next pulse, when idle with a pulse.
    pub next_pulse: Option<Duration>,
    /// Requests it waits on.
    pub waiting: Vec<String>,
    /// The daemon that runs it, when another does (team mode).
    pub host: Option<String>,
}

/// Where the runtime says a command is done (committed, when it is
/// stored); `None` when nobody waits.
type Ack = Option<oneshot::Sender<Result<(), String>>>;

/// Tells whoever waits how a command ended, and passes the outcome on.
fn acked(ack: Ack, outcome: Result<(), String>) -> Result<(), String> {
    if let Some(ack) = ack {
        let _ = ack.send(outcome.clone());
    }
    outcome
}

/// What a handle asks of the runtime.
enum Command {
    /// The partner's message to an agent: kept in its inbox, then
    /// answered by whoever runs it.
    Message {
        agent: String,
        text: String,
        ack: Ack,
    },
    Decide {
        id: String,
        decision: Decision,
        by: partner_policy::Authority,
        reply: oneshot::Sender<Result<partner_protocol::report::ActionReport, String>>,
    },
    SetPulse {
        agent: String,
        interval: Duration,
        ack: Ack,
    },
    PulseNow {
        agent: String,
        ack: Ack,
    },
    Halt {
        agent: String,
        reason: String,
        ack: Ack,
    },
    Resume {
        agent: String,
        ack: Ack,
    },
    Status {
        reply: oneshot::Sender<Vec<AgentStatus>>,
    },
    Sync,
    Shutdown,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

/// A background task's completion.
enum Done {
    Synced(Synced),
    /// A message was kept in this agent's inbox.
    Delivered(String),
    /// A round of leases, and when it was asked for.
    Leased(leases::Round, Instant),
    Swept(Swept),
    Decided,
    /// The team was told of a failure (or could not be: logged).
    Told,
    /// A write ended: what follows from it, or why it failed.
    Wrote(Result<Option<Box<Done>>, String>),
    /// A task of this kind stopped on an internal error (a panic).
    Failed(Work, String),
}

/// The kinds of background work, so one that failed can be cleared.
#[derive(Debug, Clone, Copy)]
enum Work {
    Lease,
    Sync,
    Sweep,
    Write,
    Tell,
}

/// Runs background work of `kind`, a panic in it contained: the loop is
/// told it failed and clears what was waiting on it.
fn contained(kind: Work, work: impl FnOnce() -> Done) -> Done {
    partner_core::isolate::contain(work).unwrap_or_else(|panic| Done::Failed(kind, panic))
}

struct Slot {
    info: Arc<AgentInfo>,
    state: RunState,
    mailbox: VecDeque<Trigger>,
    idle_since: Instant,
    pulse: Duration,
    waiting: HashSet<String>,
    cancel: Option<watch::Sender<bool>>,
    turns: u64,
    /// The inbox's messages in its mailbox or being answered: a sync
    /// that reads them again does not queue them twice.
    queued: HashSet<i64>,
    /// The inbox message its running turn answers.
    answering: Option<i64>,
    /// The daemon that runs it, when another does (team mode).
    host: Option<String>,
}

/// Per agent, what cancels the effects of its decided requests still
/// running (a fetch the partner approved): halting the agent sends it.
type Effects = Arc<std::sync::Mutex<std::collections::HashMap<String, watch::Sender<bool>>>>;

struct Runtime {
    env: Arc<TurnEnv>,
    slots: BTreeMap<String, Slot>,
    effects: Effects,
    rx: mpsc::UnboundedReceiver<Command>,
    turns: JoinSet<(String, TurnOutcome)>,
    /// Whose turn each running turn task is (a turn that panics returns
    /// nothing to say so).
    turn_of: std::collections::HashMap<tokio::task::Id, String>,
    work: JoinSet<Done>,
    /// The runtime's own writes (halt, resume, pulse), applied one at a
    /// time in the order asked, so a quick halt-then-resume ends resumed.
    writes: VecDeque<Write>,
    writing: bool,
    /// Counts writes asked for: a sync that read the database while one
    /// was on its way does not apply the halts and pulses it read.
    writes_asked: u64,
    sync_started_at: u64,
    syncing: bool,
    sync_again: bool,
    sweeping: bool,
    next_sweep: Instant,
    /// Team mode: this daemon's name and its lease connection.
    leasing: Option<Leasing>,
    /// A round of leases is on its way.
    leasing_busy: bool,
    /// The leases this runtime holds, by agent.
    held: std::collections::HashMap<String, leases::Held>,
    next_lease: Instant,
    /// Team mode: the newest notice from the other daemons read.
    notices_seen: i64,
    /// The learned phrasings the proposer was built from (their
    /// signature): a sync that finds others rebuilds it.
    learned_seen: Option<(i64, i64)>,
}

/// Starts a constellation: creates its agents' initial memory blocks (those
/// missing), then runs until shut down. `clock` is what the executor uses;
/// pass a [`partner_core::clock::TokioClock`] so stored times follow tokio time.
pub fn start(
    config: &ConstellationConfig,
    executor: Arc<Executor>,
    clock: SharedClock,
) -> (RuntimeHandle, tokio::task::JoinHandle<()>) {
    start_leased(config, executor, clock, None)
}

/// [`start`], in team mode when `leasing` is given: only the agents whose
/// lease this runtime holds run here (see `leases`).
pub fn start_leased(
    config: &ConstellationConfig,
    executor: Arc<Executor>,
    clock: SharedClock,
    leasing: Option<Leasing>,
) -> (RuntimeHandle, tokio::task::JoinHandle<()>) {
    let (handle, task, _) = start_watched(config, executor, clock, leasing);
    (handle, task)
}

/// [`start_leased`], with a subscription to its events made before it
/// does anything: a console in this process shows everything from the
/// first event (a greeting's turn included), however long it takes to
/// open.
pub fn start_watched(
    config: &ConstellationConfig,
    executor: Arc<Executor>,
    clock: SharedClock,
    leasing: Option<Leasing>,
) -> (
    RuntimeHandle,
    tokio::task::JoinHandle<()>,
    broadcast::Receiver<Event>,
) {
    let (events, first) = broadcast::channel(4096);
    let (tx, rx) = mpsc::unbounded_channel();
    let first_proposer = startup(|| sync::proposer(&executor));
    let env = Arc::new(TurnEnv {
        executor: Arc::clone(&executor),
        events: events.clone(),
        partner: config.partner.clone(),
        max_passes: config.max_passes,
        history: config.history,
        max_tokens: config.max_tokens,
        max_reply_bytes: config.max_reply_bytes,
        session_start: clock.now_ms(),
        clock,
        requests: Arc::new(Notify::new()),
        proposer: super::proposals::CurrentProposer::new(first_proposer),
    });
    // Startup reads and creates what the agents start with, before the loop
    // (the only database work not on the blocking pool).
    let (learned_seen, notices_seen, mut slots) = startup(|| {
        if let Some(store) = executor.store().postgres() {
            listen::listen(store, Arc::downgrade(&env.requests));
        }
        let learned_seen = executor.store().phrasings().signature().ok();
        create_blocks(config, &executor, &env);
        // Before any message a run starts with: a greeting comes first.
        startup::greet_all(config, &executor, &env);
        let notices_seen = if leasing.is_some() {
            notices::start(&executor)
        } else {
            0
        };
        (learned_seen, notices_seen, slots(config, &executor))
    });
    // What memory holds and gains is embedded beside the turns, for
    // search by meaning (nothing to do without an embedder).
    executor.index_in_background();
    if leasing.is_some() {
        // Nothing runs here before its lease is.
        for slot in slots.values_mut() {
            slot.state = RunState::Elsewhere;
        }
    }
    let handle = RuntimeHandle {
        tx,
        events,
        executor,
    };
    let effects: Effects = Arc::new(std::sync::Mutex::new(
        slots
            .keys()
            .map(|name| (name.clone(), watch::channel(false).0))
            .collect(),
    ));
    let runtime = Runtime {
        env,
        slots,
        effects,
        rx,
        turns: JoinSet::new(),
        turn_of: std::collections::HashMap::new(),
        work: JoinSet::new(),
        writes: VecDeque::new(),
        writing: false,
        writes_asked: 0,
        sync_started_at: 0,
        syncing: false,
        learned_seen,
        sync_again: false,
        sweeping: false,
        next_sweep: Instant::now(),
        leasing,
        leasing_busy: false,
        held: std::collections::HashMap::new(),
        next_lease: Instant::now(),
        notices_seen,
    };
    let task = tokio::spawn(runtime.run());
    (handle, task, first)
}

impl Runtime {
    pub(super) fn emit(&self, event: Event) {
        self.env.emit(event);
    }

    /// When an idle agent pulses next, as wall time.
    fn next_pulse_at(&self, slot: &Slot) -> Option<Millis> {
        (slot.state == RunState::Idle && !slot.pulse.is_zero()).then(|| {
            let left = (slot.idle_since + slot.pulse).saturating_duration_since(Instant::now());
            partner_core::clock::after(self.env.clock.now_ms(), left)
        })
    }

    /// Publishes an agent's state and when it pulses next.
    pub(super) fn announce_state(&self, agent: &str) {
        if let Some(slot) = self.slots.get(agent) {
            self.emit(Event::AgentState {
                agent: agent.to_string(),
                state: slot.state,
                next_pulse_at: self.next_pulse_at(slot),
                host: slot.host.clone(),
            });
        }
    }

    pub(super) fn set_state(&mut self, agent: &str, state: RunState) {
        // An agent another daemon runs changes only with its lease.
        if let Some(slot) = self.slots.get_mut(agent)
            && slot.state != state
            && slot.state != RunState::Elsewhere
        {
            slot.state = state;
            if state == RunState::Idle {
                slot.idle_since = Instant::now();
            }
            self.announce_state(agent);
        }
    }

    /// One step of the loop, a panic in it contained and reported: the
    /// runtime goes on with every agent.
    fn step(&mut self, work: impl FnOnce(&mut Self)) {
        if let Err(panic) = partner_core::isolate::contain(|| work(self)) {
            tracing::error!(%panic, "the runtime met an internal error");
            self.emit(Event::Error {
                agent: None,
                message: format!("the runtime met an internal error and goes on: {panic}"),
            });
        }
    }

    /// An agent's turn stopped on an internal error: it is reported, and
    /// the agent is ready again (the others never stopped).
    fn turn_failed(&mut self, agent: Option<String>, error: tokio::task::JoinError) {
        let why = if error.is_panic() {
            partner_core::isolate::panic_message(error.into_panic().as_ref())
        } else {
            error.to_string()
        };
        let Some(agent) = agent else {
            self.emit(Event::Error {
                agent: None,
                message: format!("a turn stopped on an internal error: {why}"),
            });
            return;
        };
        self.report(
            &agent,
            notices::Failure {
                kind: partner_protocol::TeamNoticeKind::TurnFailed,
                cause: format!("an internal error: {why}"),
                provider: None,
            },
        );
        self.emit(Event::Error {
            agent: Some(agent.clone()),
            message: format!(
                "{agent}'s turn stopped on an internal error ({why}); nothing more of it runs, and {agent} is ready again"
            ),
        });
        let halted = self
            .slots
            .get(&agent)
            .is_some_and(|s| s.state == RunState::Halted);
        if let Some(slot) = self.slots.get_mut(&agent) {
            slot.cancel = None;
            slot.answering = None;
        }
        if !halted {
            self.set_state(&agent, RunState::Idle);
        }
        self.request_sync();
    }

    async fn run(mut self) {
        let names: Vec<String> = self.slots.keys().cloned().collect();
        for name in &names {
            self.announce_state(name);
        }
        self.request_sync();
        loop {
            self.start_ready();
            let now = Instant::now();
            let next_pulse = self
                .slots
                .values()
                .filter(|s| s.state == RunState::Idle && !s.pulse.is_zero())
                .map(|s| s.idle_since + s.pulse)
                .min();
            let mut wake = next_pulse.map_or(self.next_sweep, |p| p.min(self.next_sweep));
            if self.leasing.is_some() {
                wake = wake.min(self.next_lease);
            }
            let wake = wake.max(now);
            let requests = Arc::clone(&self.env.requests);
            tokio::select! {
                command = self.rx.recv() => match command {
                    None | Some(Command::Shutdown) => break,
                    Some(command) => self.step(|me| me.command(command)),
                },
                Some(joined) = self.turns.join_next_with_id(), if !self.turns.is_empty() => {
                    match joined {
                        Ok((id, (agent, outcome))) => {
                            self.turn_of.remove(&id);
                            self.step(|me| me.turn_done(&agent, outcome));
                        }
                        Err(e) => {
                            let agent = self.turn_of.remove(&e.id());
                            self.turn_failed(agent, e);
                        }
                    }
                }
                Some(done) = self.work.join_next(), if !self.work.is_empty() => match done {
                    Ok(done) => self.step(|me| me.work_done(done)),
                    Err(e) => self.emit(Event::Error {
                        agent: None,
                        message: format!("a background task of the runtime failed: {e}"),
                    }),
                },
                _ = requests.notified() => self.step(Runtime::request_sync),
                _ = tokio::time::sleep_until(wake) => self.step(Runtime::tick),
            }
        }
        for slot in self.slots.values() {
            if let Some(cancel) = &slot.cancel {
                let _ = cancel.send(true);
            }
        }
        for effects in self
            .effects
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            let _ = effects.send(true);
        }
        self.turns.shutdown().await;
        self.work.shutdown().await;
        if let Some(leasing) = self.leasing.take() {
            let held = std::mem::take(&mut self.held);
            let _ = tokio::task::spawn_blocking(move || leases::release(&leasing, held)).await;
        }
    }

    fn start_ready(&mut self) {
        let ready: Vec<String> = self
            .slots
            .iter()
            .filter(|(_, s)| s.state == RunState::Idle && !s.mailbox.is_empty())
            .map(|(n, _)| n.clone())
            .collect();
        for name in ready {
            let Some(slot) = self.slots.get_mut(&name) else {
                continue;
            };
            let Some(trigger) = slot.mailbox.pop_front() else {
                continue;
            };
            slot.answering = match &trigger {
                Trigger::Message { delivery, .. } => *delivery,
                _ => None,
            };
            let (cancel_tx, cancel_rx) = watch::channel(false);
            slot.cancel = Some(cancel_tx);
            slot.turns += 1;
            let (info, pulse, turns) = (Arc::clone(&slot.info), slot.pulse, slot.turns);
            let env = Arc::clone(&self.env);
            self.set_state(&name, RunState::Generating);
            let agent = name.clone();
            let task = self.turns.spawn(async move {
                let outcome = run_turn(env, info, trigger, pulse, turns, cancel_rx).await;
                (agent, outcome)
            });
            self.turn_of.insert(task.id(), name);
        }
    }

    pub(super) fn push(&mut self, agent: &str, trigger: Trigger) {
        if let Some(slot) = self.slots.get_mut(agent) {
            slot.mailbox.push_back(trigger);
            slot.idle_since = Instant::now();
        }
    }

    /// Runs database work on the blocking pool, after the writes asked for
    /// before it; its result comes back to the loop as a message.
    pub(super) fn write(
        &mut self,
        work: impl FnOnce(&Executor) -> Result<(), String> + Send + 'static,
    ) {
        self.write_then(move |ex| work(ex).map(|()| None));
    }

    /// [`Runtime::write`] whose success the loop acts on (`Done`).
    pub(super) fn write_then(
        &mut self,
        work: impl FnOnce(&Executor) -> Result<Option<Done>, String> + Send + 'static,
    ) {
        self.writes_asked += 1;
        self.writes.push_back(Box::new(work));
        self.next_write();
    }

    /// Starts the next write, unless one is running.
    pub(super) fn next_write(&mut self) {
        if self.writing {
            return;
        }
        if let Some(work) = self.writes.pop_front() {
            self.writing = true;
            let executor = Arc::clone(&self.env.executor);
            self.work.spawn_blocking(move || {
                contained(Work::Write, || {
                    Done::Wrote(work(&executor).map(|d| d.map(Box::new)))
                })
            });
        }
    }

    /// True when a write was asked for since the running sync began, or is
    /// still on its way: what that sync read of halts and pulses may be old.
    pub(super) fn writes_since_sync(&self) -> bool {
        self.writing || !self.writes.is_empty() || self.writes_asked != self.sync_started_at
    }
}

/// A write the runtime asked for, and what follows when it succeeds.
type Write = Box<dyn FnOnce(&Executor) -> Result<Option<Done>, String> + Send>;
