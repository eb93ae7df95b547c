//! [`Inbox`]: every message sent to an agent — by the partner, by another
//! agent (`/tell`), its greeting — kept from the moment it is sent until
//! a turn has answered it. Whoever runs the agent (this process, or the
//! daemon of a team holding its lease) answers what waits there, so a
//! message survives a crash, a restart and a takeover: delivery is at
//! least once. The turn that answers a message stores it in the
//! conversation as it was sent, with the turn's id; a turn cut short (its
//! daemon died or lost the lease) is run again from its start, after
//! what it had stored is taken back.

use partner_core::clock::Millis;
use rusqlite::{Connection, OptionalExtension, params};

use super::MemoryResult;

/// How many times a message is begun before it is given up (a message
/// whose turn kills its daemon every time must not do so forever).
pub const MAX_ATTEMPTS: i64 = 3;

/// Most messages read from an agent's inbox at once.
pub const READ_AT_ONCE: usize = 64;

/// A message waiting for an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Its id (the turn that answers it is named after it).
    pub id: i64,
    /// The agent it is for.
    pub agent: String,
    /// The conversation it belongs to (`main`, `agent:anchor`).
    pub thread: String,
    /// Who sent it, as a conversation stores it (`user`, `agent:anchor`).
    pub from: String,
    /// The text.
    pub content: String,
    /// For a message from another agent: the agents it came through,
    /// sender first.
    pub lineage: Vec<String>,
    /// When it was sent.
    pub created_at: Millis,
    /// How many turns have begun answering it.
    pub attempts: i64,
}

/// A message to deliver.
#[derive(Debug, Clone, Copy)]
pub struct NewDelivery<'a> {
    /// The agent it is for.
    pub agent: &'a str,
    /// The conversation.
    pub thread: &'a str,
    /// Who sends it (`user`, `agent:NAME`).
    pub from: &'a str,
    /// The text.
    pub content: &'a str,
    /// The agents it came through, sender first.
    pub lineage: &'a [String],
}

/// How a delivered message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// A turn answered it (or tried, and the partner was told why not).
    Answered,
    /// The agent was halted before answering it.
    Halted,
    /// Turns began it [`MAX_ATTEMPTS`] times and none finished.
    GaveUp,
}

impl Settled {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Settled::Answered => "answered",
            Settled::Halted => "halted",
            Settled::GaveUp => "gave_up",
        }
    }
}

/// What waits for each agent, on whichever database holds it.
pub trait Inbox {
    /// Keeps a message for an agent until a turn answers it; its id.
    fn deliver(&self, new: &NewDelivery<'_>, now: Millis) -> MemoryResult<i64>;
    /// Up to `limit` of the messages waiting for `agent`, oldest first.
    fn waiting_for(&self, agent: &str, limit: usize) -> MemoryResult<Vec<Delivery>>;
    /// How many messages wait for each agent that has any.
    fn waiting_counts(&self) -> MemoryResult<Vec<(String, u64)>>;
    /// Delivers `new` as its agent's first message — only if the agent
    /// was never spoken to (nothing in its inbox ever, nothing in its
    /// conversations), decided once however many daemons start at once.
    /// True when delivered.
    fn greet(&self, new: &NewDelivery<'_>, now: Millis) -> MemoryResult<bool>;
    /// A turn begins answering message `id`: how many turns have begun
    /// it, this one included (`None`: it no longer waits).
    fn begin(&self, id: i64) -> MemoryResult<Option<i64>>;
    /// Message `id` no longer waits; false when it already did not.
    fn settle(&self, id: i64, how: Settled, now: Millis) -> MemoryResult<bool>;
    /// Takes back what turn `turn` of `agent` stored in its conversations
    /// (it was cut short and runs again); how many messages.
    fn forget_turn(&self, agent: &str, turn: &str) -> MemoryResult<u64>;
}

/// The columns [`delivery_of`] reads, in order.
const COLUMNS: &str = "id, agent, thread, sender, content, lineage, created_at, attempts";

fn delivery_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Delivery> {
    let lineage: String = r.get(5)?;
    Ok(Delivery {
        id: r.get(0)?,
        agent: r.get(1)?,
        thread: r.get(2)?,
        from: r.get(3)?,
        content: r.get(4)?,
        lineage: serde_json::from_str(&lineage).unwrap_or_default(),
        created_at: r.get(6)?,
        attempts: r.get(7)?,
    })
}

/// The lineage as stored: at most [`super::records::MAX_LINEAGE`] names.
pub fn lineage_text(lineage: &[String]) -> String {
    let kept = &lineage[..lineage.len().min(super::records::MAX_LINEAGE)];
    serde_json::to_string(kept).unwrap_or_else(|_| "[]".into())
}

/// The operations on one connection, in whatever transaction it is in.
impl Inbox for Connection {
    fn deliver(&self, new: &NewDelivery<'_>, now: Millis) -> MemoryResult<i64> {
        self.execute(
            "INSERT INTO inbox (agent, thread, sender, content, lineage, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                new.agent,
                new.thread,
                new.from,
                new.content,
                lineage_text(new.lineage),
                now
            ],
        )?;
        Ok(self.last_insert_rowid())
    }

    fn waiting_for(&self, agent: &str, limit: usize) -> MemoryResult<Vec<Delivery>> {
        let mut stmt = self.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM inbox WHERE agent = ?1 AND answered_at IS NULL
             ORDER BY id LIMIT ?2"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![agent, limit], delivery_of)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn waiting_counts(&self) -> MemoryResult<Vec<(String, u64)>> {
        let mut stmt = self.prepare_cached(
            "SELECT agent, count(*) FROM inbox WHERE answered_at IS NULL GROUP BY agent ORDER BY agent",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn greet(&self, new: &NewDelivery<'_>, now: Millis) -> MemoryResult<bool> {
        // One writer at a time on SQLite: the check and the write are one.
        let spoken = self
            .query_row(
                "SELECT 1 FROM inbox WHERE agent = ?1
                 UNION ALL SELECT 1 FROM messages WHERE agent = ?1 LIMIT 1",
                [new.agent],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if spoken {
            return Ok(false);
        }
        self.deliver(new, now)?;
        Ok(true)
    }

    fn begin(&self, id: i64) -> MemoryResult<Option<i64>> {
        Ok(self
            .query_row(
                "UPDATE inbox SET attempts = attempts + 1
                 WHERE id = ?1 AND answered_at IS NULL RETURNING attempts",
                [id],
                |r| r.get(0),
            )
            .optional()?)
    }

    fn settle(&self, id: i64, how: Settled, now: Millis) -> MemoryResult<bool> {
        let changed = self.execute(
            "UPDATE inbox SET answered_at = ?2, outcome = ?3 WHERE id = ?1 AND answered_at IS NULL",
            params![id, now, how.as_str()],
        )?;
        Ok(changed > 0)
    }

    fn forget_turn(&self, agent: &str, turn: &str) -> MemoryResult<u64> {
        let gone = self.execute(
            "DELETE FROM messages WHERE agent = ?1 AND turn = ?2",
            params![agent, turn],
        )?;
        Ok(gone as u64)
    }
}
