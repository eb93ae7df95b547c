//! What the console asks of the constellation, and what comes back: every
//! effect the console has — decisions, edits, messages, typed actions,
//! reads of memory, the queue and the trace — is an [`BackendOp`] sent through a
//! [`Backend`], answered later by a [`Reply`]. The console never touches
//! the executor, the runtime or the database: this crate cannot name
//! them. The `partner` binary's backend carries ops out (what the runtime
//! does goes to a `partner_protocol::Host`, in this process or a
//! daemon's, so an embedded and an attached console run the same code).

use std::path::PathBuf;

use tokio::sync::broadcast;

use super::model::AgentLine;
pub use partner_protocol::views::{CommandPreview, Previews, SaveOutcome};
use partner_protocol::wire::{
    Block, BlockVersion, CommandPlan, Divergence, HybridHit, IndexStatus, OlderPage,
    PendingRequest, StandingRule, TraceFilter, TraceRecord,
};
use partner_protocol::{Connection, Event};

/// One thing the console asks for.
#[derive(Debug, Clone)]
pub enum BackendOp {
    /// Anything of the constellation — its state, the queue, the trace,
    /// memory, decisions, edits, messages, the partner's own commands —
    /// as the protocol's operation, sent to the host (in this process or
    /// a daemon's) as it is.
    Host(partner_protocol::Op),
    /// Open the trace at this path for replay: a database file or a
    /// JSON-lines export, which the backend tells apart and reads (the
    /// console itself opens no file of the store's).
    OpenReplay(std::path::PathBuf),
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

/// A trace opened for replay.
#[derive(Debug, Clone)]
pub struct OpenedTrace {
    /// Where it came from.
    pub path: PathBuf,
    /// Its records.
    pub records: Vec<TraceRecord>,
}

/// An answer to an [`BackendOp`].
#[derive(Debug, Clone)]
pub enum Reply {
    /// Every agent's state.
    Agents(Vec<AgentLine>),
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
    fn send(&self, op: BackendOp);
    /// A new subscription to the constellation's events.
    fn events(&self) -> broadcast::Receiver<Event>;
    /// How the console reaches the runtime now.
    fn connection(&self) -> Connection {
        Connection::Embedded
    }
}
