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
    /// What the operation returns ([`crate::Status`] for a status).
    pub data: Option<serde_json::Value>,
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
