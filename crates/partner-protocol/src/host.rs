//! [`Host`]: where a client's [`Op`]s go. A console speaks to a host, never
//! to the runtime: the host in the console's own process and a daemon
//! reached over its socket answer the same operations with the same
//! words, so the embedded console and `partner attach` are one code path.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::broadcast;

use crate::{Event, Op};

/// A boxed future, for a host's answers.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a host answered to an operation it carried out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// What happened, in words.
    pub message: String,
    /// What the operation returns: one type per kind of answer, the same
    /// in process and on the wire.
    pub data: Returned,
}

impl Answer {
    /// Words alone.
    pub fn said(message: impl Into<String>) -> Self {
        Answer {
            message: message.into(),
            data: Returned::Nothing,
        }
    }
}

/// What an operation returns beside its words. On the wire it is
/// `{"kind": "queue", "value": {…}}` (`nothing` is left out).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Returned {
    /// Words alone (a decision, a message, a halt…).
    #[default]
    Nothing,
    /// `status`: the daemon and its agents.
    Status(crate::Status),
    /// `queue`: the waiting requests with their previews.
    Queue(crate::views::Queue),
    /// `trace`: the newest records.
    Trace(crate::views::TracePage),
    /// `older_trace`: a page before a record.
    OlderTrace(crate::wire::OlderPage),
    /// `blocks`: an agent's blocks.
    Blocks(crate::views::Listed<crate::wire::Block>),
    /// `history`: a block's versions.
    History(crate::views::Listed<crate::wire::BlockVersion>),
    /// `search`: the hits.
    Found(crate::views::Found),
    /// `index`: how far search by meaning has caught up (none without an
    /// embedder).
    Index(Option<crate::wire::IndexStatus>),
    /// `rules`: the standing rules in force.
    Rules(crate::views::Listed<crate::wire::StandingRule>),
    /// `learned`: the learned phrasings.
    Learned(crate::views::Listed<crate::wire::LearnedRule>),
    /// `lisp`: what an evaluation gave.
    Evaluated(crate::views::Evaluated),
    /// `save_block`: how a save went.
    Saved(crate::views::SaveOutcome),
    /// `verbs`: the verbs beyond the built-in ones, as TOML.
    Verbs(String),
    /// `plan_command`: what the partner's command would run.
    Plan(Box<crate::wire::CommandPlan>),
    /// `run_command`: the command's report.
    Report(Box<crate::report::ActionReport>),
    /// `event`: a piece of a recent event's JSON.
    EventPiece {
        /// The piece.
        json: String,
        /// Where the next piece starts (none: this was the last).
        next: Option<usize>,
        /// The event's whole length in bytes.
        total: usize,
    },
}

impl Returned {
    /// True for words alone.
    pub fn is_nothing(&self) -> bool {
        matches!(self, Returned::Nothing)
    }

    /// Its kind, as the wire names it (`queue`, `status`…).
    pub fn kind(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
            .unwrap_or_else(|| "an answer".into())
    }
}

/// A constellation a client can reach: it carries out operations and
/// passes on the runtime's events.
pub trait Host: Send + Sync {
    /// A new subscription to the constellation's events.
    fn events(&self) -> broadcast::Receiver<Event>;
    /// Carries out `op`: its answer, or why it was not done.
    fn call(&self, op: Op) -> Pending<'_, Result<Answer, String>>;
    /// Whether the host runs in this process, answers over its socket, or
    /// went away.
    fn connection(&self) -> Connection;
}

/// How a client reaches the constellation it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Connection {
    /// The constellation runs in the client's own process.
    #[default]
    Embedded,
    /// It is attached to a daemon that answers.
    Attached,
    /// The daemon went away at this time; the client tries again every
    /// second.
    Gone {
        /// When it went away.
        since: partner_core::clock::Millis,
    },
    /// The daemon answers but refuses this client (its partner's token
    /// was revoked, or is not known there); the client asks again every
    /// second.
    Refused {
        /// When it was first refused.
        since: partner_core::clock::Millis,
    },
}

impl Connection {
    /// True when decisions and commands reach a runtime.
    pub fn reaches(self) -> bool {
        matches!(self, Connection::Embedded | Connection::Attached)
    }

    /// Why a decision or command did not reach a runtime, as a clause
    /// (`the daemon has been gone since 10:42:07`).
    pub fn why_not(self) -> String {
        match self {
            Connection::Gone { since } => {
                format!("the daemon has been gone since {}", clock_time(since))
            }
            Connection::Refused { since } => format!(
                "the daemon has refused this console since {} (N says why)",
                clock_time(since)
            ),
            Connection::Embedded | Connection::Attached => "it was not sent".into(),
        }
    }

    /// The words for the status line.
    pub fn label(self) -> String {
        match self {
            Connection::Embedded => "embedded".into(),
            Connection::Attached => "attached".into(),
            Connection::Gone { since } => {
                format!("daemon gone since {} · reconnecting…", clock_time(since))
            }
            Connection::Refused { since } => format!(
                "refused by the daemon since {} · N says why",
                clock_time(since)
            ),
        }
    }
}

/// `HH:MM:SS` of a time (UTC).
fn clock_time(at: partner_core::clock::Millis) -> String {
    partner_core::clock::format_time(at)
        .get(11..19)
        .unwrap_or("?")
        .to_string()
}
