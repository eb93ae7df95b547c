//! Hearing what other daemons did at once: PostgreSQL's `LISTEN` and
//! `NOTIFY` on a connection of the listener's own. A notice is a hint to
//! read the tables again (the rows are the truth): new requests, decisions
//! and messages reach every daemon without waiting for its next sweep.

use std::time::Duration;

use postgres::{Client, NoTls};

use super::{PgStore, failed};
use crate::memory::{MemoryError, MemoryResult};

/// Channels partner notifies on.
pub mod channel {
    /// A request was made (payload: its id).
    pub const REQUESTS: &str = "partner_requests";
    /// A request was decided (payload: its id).
    pub const DECISIONS: &str = "partner_decisions";
    /// A message waits in an agent's inbox (payload: the agent).
    pub const MESSAGES: &str = "partner_messages";
    /// A daemon told the team about one of its agents (payload: the
    /// notice's number).
    pub const NOTICES: &str = "partner_notices";
}

/// One notice: its channel and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The channel.
    pub channel: String,
    /// What it carried (an id).
    pub payload: String,
}

/// A connection listening on some channels.
pub struct Listener {
    client: Client,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener").finish_non_exhaustive()
    }
}

/// Channel names are fixed words of partner's, never text from outside.
fn checked(channel: &str) -> MemoryResult<&str> {
    if !channel.is_empty()
        && channel.len() <= 63
        && channel.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    {
        Ok(channel)
    } else {
        Err(MemoryError::Postgres(format!(
            "not a channel name: {channel:?}"
        )))
    }
}

impl PgStore {
    /// A listener on `channels`, on a connection of its own.
    pub fn listen(&self, channels: &[&str]) -> MemoryResult<Listener> {
        let mut client = self
            .config
            .connect(NoTls)
            .map_err(|e| MemoryError::Postgres(format!("cannot reach {}: {e}", self.shown)))?;
        for channel in channels {
            client
                .batch_execute(&format!("LISTEN {}", checked(channel)?))
                .map_err(failed)?;
        }
        Ok(Listener { client })
    }
}

impl PgStore {
    /// Sends `payload` on `channel` to every daemon listening (committed
    /// at once: a notice outside a transaction).
    pub fn notify(&self, channel: &str, payload: &str) -> MemoryResult<()> {
        self.client()?
            .execute("SELECT pg_notify($1, $2)", &[&checked(channel)?, &payload])
            .map_err(failed)?;
        Ok(())
    }
}

impl Listener {
    /// The notices that arrive within `wait`: the first to come, then
    /// whatever else is already there (waiting no longer than `wait`).
    pub fn wait(&mut self, wait: Duration) -> MemoryResult<Vec<Notice>> {
        use postgres::fallible_iterator::FallibleIterator;
        let notice = |n: postgres::Notification| Notice {
            channel: n.channel().to_string(),
            payload: n.payload().to_string(),
        };
        let mut notifications = self.client.notifications();
        let Some(first) = notifications.timeout_iter(wait).next().map_err(failed)? else {
            return Ok(Vec::new());
        };
        let mut heard = vec![notice(first)];
        let mut ready = notifications.iter();
        while let Some(n) = ready.next().map_err(failed)? {
            heard.push(notice(n));
        }
        Ok(heard)
    }
}
