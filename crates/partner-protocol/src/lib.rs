//! The one protocol every client of a running constellation speaks: the
//! operations a client may send and the messages the daemon sends back,
//! as JSON lines over a Unix socket (or loopback TCP with a token).
//!
//! A connection opens with [`Op::Hello`] carrying [`VERSION`]; the daemon
//! answers [`ServerMsg::Welcome`] or refuses a version it does not speak.
//! Each request carries an id its [`ServerMsg::Reply`] repeats. After
//! [`Op::Subscribe`] the client gets a [`Snapshot`] and then every event,
//! each with the next sequence number; a client too slow to keep up is
//! sent a fresh snapshot instead of a stream with holes.
//!
//! The vocabulary lives here, below the runtime: the runtime's [`Event`]s,
//! an agent's [`RunState`], the [`PromptKind`] of a turn and the
//! [`ActionStatus`] of an action are this crate's types, which the engine
//! and the runtime re-export. So are the values the store and the
//! permission engine keep and a console shows (`memory`, `trace`,
//! `request`): those crates build on this one and give them their
//! behaviour. It imports `partner-core` and `partner-dialect` (the
//! language the actions it carries are written in) and nothing that runs,
//! stores or judges.

pub mod client;
pub mod event;
pub mod fit;
pub mod host;
pub mod report;
pub mod state;
pub mod views;

mod authority;
pub mod memory;
pub mod question;
pub mod request;
pub mod trace;

/// The values a console shows, as the store and the permission engine
/// define them, carried in events, replies and snapshots — with the two
/// pure text helpers that read them (a block change as a diff, a search
/// snippet's marks) and a shell command's judgement. A console names
/// these through the protocol and nothing else of those crates: it cannot
/// reach the database or judge a command on its own machine.
pub mod wire {
    pub use crate::memory::{
        Block, BlockKind, BlockPermission, BlockVersion, HybridHit, IndexStatus, LearnedRule, Via,
        diff, marked,
    };
    pub use crate::request::{
        Authority, Decision, DecisionKind, PendingRequest, RequestedAction, StandingRule,
    };
    pub use crate::trace::{Divergence, OlderPage, TraceFilter, TraceRecord, TraceSource};
    pub use partner_core::judged::{Assessment, CommandPlan, Risk};
}

use serde::{Deserialize, Serialize};

pub use event::{Event, TeamNoticeKind};
pub use host::{Answer, Connection, Host, Returned};
use request::{Decision, PendingRequest};
pub use state::{ActionStatus, PromptKind, RunState};
use trace::BlockSpec;

/// The protocol version this build speaks.
pub const VERSION: u32 = 1;

/// Longest line either side accepts, in bytes (a line is one message).
pub const MAX_LINE: usize = 1 << 20;

/// What a client asks of the daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Opens the connection: the client's protocol version, what it is
    /// (`console`, `cli`), and the token a TCP connection needs.
    Hello {
        /// [`VERSION`] of the client.
        version: u32,
        /// What the client is, for the daemon's log.
        client: String,
        /// A partner's token: needed over TCP; on the Unix socket it
        /// names the partner the connection acts as.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        /// The daemon's cookie (`partner_core::doorman`): on the Unix
        /// socket, a client without a token is the partner only with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cookie: Option<String>,
    },
    /// A snapshot now, then every event.
    Subscribe,
    /// The daemon and every agent's state.
    Status,
    /// Decides a waiting request as the partner.
    Decide {
        /// The request (`r12`).
        request: String,
        /// How.
        decision: Decision,
    },
    /// The partner's message to an agent.
    Message {
        /// The agent.
        agent: String,
        /// The text.
        text: String,
    },
    /// Pulses an agent now.
    Pulse {
        /// The agent.
        agent: String,
    },
    /// Sets an agent's pulse interval (0 turns it off).
    SetPulse {
        /// The agent.
        agent: String,
        /// Seconds between pulses (at most ten years).
        seconds: partner_core::clock::TimeSpan,
    },
    /// Halts an agent.
    Halt {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
    /// Lets a halted agent run again.
    Resume {
        /// The agent.
        agent: String,
    },
    /// Creates a block or writes its next version, as the partner.
    SetBlock {
        /// The block.
        block: BlockSpec,
    },
    /// Takes a block back to its previous version.
    UndoBlock {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
    },
    /// Looks at the database now for requests and decisions made by other
    /// processes (a `partner exec`), instead of at the next sweep.
    Sync,
    /// A piece of one recent event, whole (its texts uncut), as JSON:
    /// for what a snapshot or the stream cut to fit a line.
    Event {
        /// The event's sequence number.
        seq: u64,
        /// Where in the event's JSON the piece starts (0 first; then the
        /// reply's `next`).
        #[serde(default)]
        offset: usize,
    },
    /// Runs a dialect line as an agent (its requests wait like any).
    Run {
        /// The agent it runs as.
        agent: String,
        /// The line.
        text: String,
    },
    /// The waiting requests, with what each would change or run
    /// ([`views::Queue`]).
    Queue,
    /// The newest trace records after `after` ([`views::TracePage`]).
    Trace {
        /// The last record the client holds (0: none).
        after: u64,
    },
    /// A page of trace records older than `before` that `filter` admits
    /// (`wire::OlderPage`).
    OlderTrace {
        /// What the client shows.
        filter: wire::TraceFilter,
        /// The page starts below this sequence number.
        before: u64,
    },
    /// An agent's blocks ([`views::Listed`] of `wire::Block`).
    Blocks {
        /// The agent.
        agent: String,
    },
    /// A block's versions, newest first ([`views::Listed`] of
    /// `wire::BlockVersion`).
    History {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
    },
    /// A search of memory, by meaning too where an embedder is configured
    /// ([`views::Found`]).
    Search {
        /// The words.
        query: String,
    },
    /// How far search by meaning has caught up with memory
    /// (`wire::IndexStatus`, or nothing without an embedder).
    Index,
    /// The standing rules in force ([`views::Listed`] of
    /// `wire::StandingRule`).
    Rules,
    /// Revokes a standing rule.
    RevokeRule {
        /// Its id.
        id: i64,
    },
    /// The learned phrasings ([`views::Listed`] of `wire::LearnedRule`).
    Learned,
    /// Learns that plain words stand for a dialect action.
    Learn {
        /// The words.
        words: String,
        /// The action.
        action: String,
    },
    /// Forgets a learned phrasing.
    Forget {
        /// Its id.
        id: i64,
    },
    /// Evaluates Pattern Lisp against an agent's state, or dry-runs a tool
    /// (`tool NAME ARGS`); nothing is written ([`views::Evaluated`]).
    Lisp {
        /// The agent whose state it reads.
        agent: String,
        /// The expression.
        text: String,
    },
    /// Writes a block's value as the partner if it is still at
    /// `base_version` ([`views::SaveOutcome`]).
    SaveBlock {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
        /// The new value.
        value: String,
        /// The version the edit started from.
        base_version: i64,
    },
    /// Judges the partner's own command (or a request in words) where it
    /// would run: what would run, its risk and how (`wire::CommandPlan`).
    /// Nothing runs.
    PlanCommand {
        /// What the partner typed after `!`.
        text: String,
    },
    /// Runs the partner's own command, its plan confirmed
    /// (`report::ActionReport`); [`Op::StopCommand`] with the same `run`
    /// stops it.
    RunCommand {
        /// The command.
        command: String,
        /// The client's number for this run (random, so clients do not
        /// collide).
        run: u64,
    },
    /// Stops a command [`Op::RunCommand`] started.
    StopCommand {
        /// Its run number.
        run: u64,
    },
    /// The verbs the constellation knows beyond the built-in ones, as a
    /// verb file (a JSON string; empty when none), for completion and
    /// replays in an attached console.
    Verbs,
}

impl Op {
    /// True for the ops whose answer carries data (a [`Returned`] other
    /// than nothing); the others are answered in words alone.
    pub fn returns_data(&self) -> bool {
        matches!(
            self,
            Op::Status
                | Op::Event { .. }
                | Op::Queue
                | Op::Trace { .. }
                | Op::OlderTrace { .. }
                | Op::Blocks { .. }
                | Op::History { .. }
                | Op::Search { .. }
                | Op::Index
                | Op::Rules
                | Op::Learned
                | Op::Lisp { .. }
                | Op::SaveBlock { .. }
                | Op::Verbs
                | Op::PlanCommand { .. }
                | Op::RunCommand { .. }
        )
    }

    /// The agent the op acts on or for, when it names one (the daemon
    /// runs it only for an agent of the constellation).
    pub fn agent(&self) -> Option<&str> {
        match self {
            Op::Message { agent, .. }
            | Op::Pulse { agent }
            | Op::SetPulse { agent, .. }
            | Op::Halt { agent, .. }
            | Op::Resume { agent }
            | Op::Run { agent, .. } => Some(agent),
            _ => None,
        }
    }
}

/// One request: an id the reply repeats, and the operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Chosen by the client; repeated in the reply.
    pub id: u64,
    /// What it asks.
    #[serde(flatten)]
    pub op: Op,
}

/// An agent as the daemon sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRow {
    /// Name.
    pub name: String,
    /// State.
    pub state: RunState,
    /// Seconds to its next pulse, when idle with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_pulse_secs: Option<u64>,
    /// Requests it waits on.
    #[serde(default)]
    pub waiting: Vec<String>,
    /// The daemon that runs it (team mode; none: this one, or unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// The daemon and its agents, for `partner status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    /// The daemon's process id.
    pub pid: u32,
    /// The constellation's name.
    pub name: String,
    /// The database.
    pub db: String,
    /// The socket clients connect to.
    pub socket: String,
    /// Seconds since it started.
    pub uptime_secs: u64,
    /// Every agent.
    pub agents: Vec<AgentRow>,
    /// Requests waiting for a decision.
    pub pending: usize,
    /// Clients connected now, the one asking included.
    pub clients: usize,
}

/// What a client needs to draw everything before the next event: the
/// agents, the queue, and the recent events (so turns, one still
/// streaming included, can be rebuilt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The daemon and its agents.
    pub status: Status,
    /// The waiting requests.
    pub pending: Vec<PendingRequest>,
    /// The most recent events, oldest first (at most
    /// [`RECENT_EVENTS`]); the next event's sequence number follows the
    /// last of these.
    pub recent: Vec<Sequenced>,
    /// Older events left out so the snapshot fits a line.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: usize,
    /// Waiting requests left out so the snapshot fits a line.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pending_left_out: usize,
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// Most events a snapshot carries.
pub const RECENT_EVENTS: usize = 2_000;

/// An event and its place in the daemon's stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sequenced {
    /// 1 for the daemon's first event, then one more each.
    pub seq: u64,
    /// The event.
    pub event: Event,
    /// Bytes of its texts cut to fit a line (0: it is whole); fetch it
    /// whole with [`Op::Event`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut: u64,
}

/// What the daemon sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg {
    /// The answer to [`Op::Hello`].
    Welcome {
        /// [`VERSION`] of the daemon.
        version: u32,
        /// Its process id.
        pid: u32,
        /// The constellation's name.
        name: String,
        /// The partner this connection acts as (`partner:alice`, or
        /// `partner` without a token).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partner: Option<String>,
    },
    /// The answer to a request.
    Reply {
        /// The request's id.
        id: u64,
        /// True when it was done.
        ok: bool,
        /// What happened, in words (or why not).
        #[serde(default)]
        message: String,
        /// What the operation returns beside its words.
        #[serde(default, skip_serializing_if = "Returned::is_nothing")]
        data: Returned,
    },
    /// Everything now (after `subscribe`, and when the client fell behind).
    Snapshot {
        /// The snapshot.
        snapshot: Box<Snapshot>,
    },
    /// One event.
    Event(Sequenced),
    /// Something the connection did wrong; the daemon closes it after.
    Error {
        /// What.
        message: String,
    },
}

/// A line of JSON for a message (no newline inside: serde_json escapes
/// them).
pub fn line<T: Serialize>(message: &T) -> String {
    let mut text = serde_json::to_string(message).unwrap_or_else(|e| {
        serde_json::json!({"type": "error", "message": format!("unserializable: {e}")}).to_string()
    });
    text.push('\n');
    text
}

/// Reads one line as `T`: an error in words when it is too long or not
/// the expected JSON.
pub fn parse<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    if text.len() > MAX_LINE {
        return Err(format!(
            "a line of {} bytes; at most {MAX_LINE}",
            text.len()
        ));
    }
    serde_json::from_str(text.trim_end()).map_err(|e| {
        // Serde quotes the value it refused: a line's worth, at worst.
        let mut said = e.to_string();
        if said.len() > 300 {
            let mut end = 240;
            while !said.is_char_boundary(end) {
                end -= 1;
            }
            said = format!(
                "{}… (at line {}, column {})",
                &said[..end],
                e.line(),
                e.column()
            );
        }
        format!("not a message of this protocol: {said}")
    })
}

/// Reads one line, at most [`MAX_LINE`] bytes: `None` at the end, an error
/// for a line too long or not UTF-8.
pub async fn read_line<R: tokio::io::AsyncRead + Unpin>(
    reader: &mut tokio::io::BufReader<R>,
) -> Result<Option<String>, String> {
    let mut buf = Vec::new();
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let n = (&mut *reader)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut buf)
        .await
        .map_err(|e| e.to_string())?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE {
        return Err(format!("a line over {MAX_LINE} bytes"));
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| "a line that is not UTF-8".into())
}

/// Where a database's daemon listens: `FILE.sock` beside it.
pub fn socket_for(db: &std::path::Path) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".sock");
    std::path::PathBuf::from(name)
}
