//! What the console asks of the constellation, and what comes back: every
//! effect the console has — decisions, edits, messages, typed actions,
//! reads of memory, the queue and the trace — is an [`Op`] sent through a
//! [`Backend`], answered later by a [`Reply`]. The console never touches
//! the executor, the runtime or the database: this crate cannot name
//! them. The `partner` binary's backend carries ops out (what the runtime
//! does goes to a `partner_protocol::Host`, in this process or a
//! daemon's, so an embedded and an attached console run the same code).

use std::collections::HashMap;
use std::path::PathBuf;

use tokio::sync::broadcast;

use super::model::AgentRow;
use partner_protocol::wire::{
    Assessment, Block, BlockVersion, CommandPlan, Divergence, HybridHit, IndexStatus, OlderPage,
    PendingRequest, StandingRule, TraceFilter, TraceInput, TraceRecord,
};
use partner_protocol::{Connection, Event};

/// One thing the console asks for.
#[derive(Debug, Clone)]
pub enum Op {
    /// Every agent's state now (changes then arrive as events).
    Status,
    /// What the runtime does — a decision, a message, a pulse, a halt or
    /// resume, a line run as an agent — as the protocol's operation, sent
    /// to the host (in this process or a daemon's) as it is.
    Runtime(partner_protocol::Op),
    /// The waiting requests, with the memory diff each would make.
    LoadPending,
    /// Trace records after `seq` (the newest `MAX_TRACE` of them).
    LoadTrace {
        /// The last record already shown.
        after: u64,
    },
    /// A page of trace records older than `before` that `filter` admits.
    LoadOlderTrace {
        /// What the trace pane shows.
        filter: TraceFilter,
        /// The page starts below this sequence number.
        before: u64,
    },
    /// An agent's blocks.
    LoadMemory {
        /// Agent.
        agent: String,
    },
    /// A block's versions.
    LoadHistory {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
    },
    /// A memory search (by meaning too, when an embedder is configured).
    Search {
        /// The words.
        query: String,
    },
    /// How far search by meaning has caught up with memory.
    LoadIndex,
    /// The standing rules in force.
    LoadRules,
    /// Read the learned phrasings.
    LoadLearned,
    /// Evaluate Pattern Lisp against an agent's state (nothing written).
    Lisp {
        /// The agent whose state it reads.
        agent: String,
        /// An expression, or `tool NAME ARGS`.
        text: String,
    },
    /// Forget a learned phrasing.
    Forget {
        /// Its id.
        id: i64,
    },
    /// Learn that plain words stand for a dialect action (for proposals).
    Learn {
        /// The words.
        words: String,
        /// The action.
        action: String,
    },
    /// Write a block as the partner, if it is still at `base_version`.
    SaveBlock {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
        /// The new value.
        value: String,
        /// The version the edit started from.
        base_version: i64,
    },
    /// Undo a block's last change as the partner.
    UndoBlock {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
    },
    /// Revoke a standing rule.
    RevokeRule {
        /// Its id.
        id: i64,
    },
    /// Judge the partner's own command (or request in words): what would
    /// run, its risk and how. Nothing runs.
    PlanCommand {
        /// What the partner typed after `!`.
        text: String,
    },
    /// Run the partner's own command, its plan confirmed.
    RunCommand {
        /// The command.
        command: String,
        /// Set to stop it.
        stop: partner_core::cancel::Cancel,
    },
    /// Open a trace (a database or a JSON-lines file) for replay.
    OpenReplay(TraceInput),
    /// Re-execute a replayed trace and find where it diverges.
    VerifyReplay(Vec<TraceRecord>),
    /// An agent's memory as at a replay's step.
    ReplayMemory {
        /// The trace.
        records: Vec<TraceRecord>,
        /// The step.
        step: usize,
        /// The agent.
        agent: String,
    },
}

/// What the console shows with each waiting request, read through the
/// verb registry, by request id.
#[derive(Debug, Clone, Default)]
pub struct Previews {
    /// The memory change a request would make, as a diff.
    pub diffs: HashMap<String, String>,
    /// The command a request would run, judged where it would run.
    pub commands: HashMap<String, CommandPreview>,
}

/// A command a waiting request would run, as the process that would run
/// it judges it (its risk and reasons, and how it would be sandboxed):
/// the console shows and refuses by this, never by its own machine.
#[derive(Debug, Clone)]
pub struct CommandPreview {
    /// The command line.
    pub line: String,
    /// Its risk and why.
    pub assessment: Assessment,
    /// How it would run (`landlock: …`), or why it could not be sandboxed.
    pub sandbox: Result<String, String>,
}

/// How a save went.
#[derive(Debug, Clone)]
pub enum SaveOutcome {
    /// Saved: what the executor said.
    Saved(String),
    /// The block changed since the edit began: its value now.
    Conflict(Block),
    /// It could not be saved (the draft is kept).
    Failed(String),
}

/// A trace opened for replay.
#[derive(Debug, Clone)]
pub struct OpenedTrace {
    /// Where it came from.
    pub path: PathBuf,
    /// Its records.
    pub records: Vec<TraceRecord>,
}

/// An answer to an [`Op`].
#[derive(Debug, Clone)]
pub enum Reply {
    /// Every agent's state.
    Agents(Vec<AgentRow>),
    /// The waiting requests, the diffs of those that write memory and
    /// the command lines of those that run one.
    Pending(Vec<PendingRequest>, Previews),
    /// Trace records, the last seq read, and whether older new ones were
    /// left out (what is held starts anew).
    Trace(Vec<TraceRecord>, u64, bool),
    /// A page of older trace records for a filter, read from `before`.
    OlderTrace(TraceFilter, u64, OlderPage),
    /// That page could not be read, and why.
    OlderTraceFailed(TraceFilter, u64, String),
    /// An agent's blocks.
    Blocks(String, Vec<Block>),
    /// A block's versions.
    History(String, String, Vec<BlockVersion>),
    /// A memory search's answer.
    Hits {
        /// The words it answers.
        query: String,
        /// The hits, best first, and how the search went when it could not
        /// use meaning; or why it could not search.
        found: Result<(Vec<HybridHit>, Option<String>), String>,
    },
    /// How far search by meaning has caught up (none without an embedder).
    Index(Option<IndexStatus>),
    /// The standing rules.
    Rules(Vec<StandingRule>),
    /// How learning (or forgetting) a phrasing went.
    Learned(Result<String, String>),
    /// The learned phrasings.
    LearnedRules(Vec<partner_protocol::wire::LearnedRule>),
    /// What a `:lisp` evaluation gave.
    Lisp(crate::panes::LispView),
    /// How a decision went: what happened, or why it could not be made.
    Decided {
        /// Request id.
        id: String,
        /// The outcome in words.
        outcome: Result<String, String>,
    },
    /// How a save went.
    Saved {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
        /// The outcome.
        outcome: SaveOutcome,
    },
    /// What the partner's own command would do.
    CommandPlan(CommandPlan),
    /// How the partner's own command went.
    CommandRan(crate::panes::OutputView),
    /// A trace opened for replay.
    Replay(OpenedTrace),
    /// Where a re-execution of the replayed trace diverged (none: it matched).
    Verified(Option<Divergence>),
    /// Memory as at a replay step, and the change the step made (a diff).
    ReplayMemory(usize, Vec<Block>, Option<String>),
    /// Something to tell the partner on the status line.
    Notice(String),
    /// Something that went wrong, for the notifications.
    Failed(String),
}

/// Where the console's ops go. Replies come back on the channel the
/// backend was made with, in no particular order.
pub trait Backend: Send + Sync {
    /// Carries out `op` (without waiting for it).
    fn send(&self, op: Op);
    /// A new subscription to the constellation's events.
    fn events(&self) -> broadcast::Receiver<Event>;
    /// How the console reaches the runtime now.
    fn connection(&self) -> Connection {
        Connection::Embedded
    }
}
