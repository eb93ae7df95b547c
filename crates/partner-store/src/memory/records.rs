//! The other kinds of memory: archival entries, conversation history,
//! intentions, the outbox, and each agent's runtime state.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::error::{MemoryError, MemoryResult};
use partner_core::clock::Millis;

/// Stores an archival entry (a memory without a label); returns its id.
pub(crate) fn add_archival(
    conn: &Connection,
    agent: &str,
    content: &str,
    now: Millis,
) -> MemoryResult<i64> {
    conn.prepare_cached("INSERT INTO archival (agent, content, created_at) VALUES (?1, ?2, ?3)")?
        .execute(params![agent, content, now])?;
    Ok(conn.last_insert_rowid())
}

/// Number of archival entries of an agent.
pub(crate) fn archival_count(conn: &Connection, agent: &str) -> MemoryResult<i64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM archival WHERE agent = ?1",
        [agent],
        |r| r.get(0),
    )?)
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    /// Row id.
    pub id: i64,
    /// The agent whose conversation it is.
    pub agent: String,
    /// Thread (conversation) id.
    pub thread: String,
    /// `user`, `assistant`, `system` or `agent:NAME`.
    pub role: String,
    /// The text.
    pub content: String,
    /// When.
    pub created_at: Millis,
    /// For a message from another agent: that agent and the agents whose
    /// messages led to it, nearest first. None of them may decide a request
    /// the reader makes in answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lineage: Vec<String>,
}

/// The columns [`Message::from_row`] reads, in order.
const MESSAGE_COLUMNS: &str = "id, agent, thread, role, content, created_at, lineage";

/// Most agents a lineage keeps (the nearest ones).
pub const MAX_LINEAGE: usize = 16;

impl Message {
    /// Reads [`MESSAGE_COLUMNS`], in that order.
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        let lineage: String = r.get(6)?;
        Ok(Message {
            id: r.get(0)?,
            agent: r.get(1)?,
            thread: r.get(2)?,
            role: r.get(3)?,
            content: r.get(4)?,
            created_at: r.get(5)?,
            lineage: serde_json::from_str(&lineage).unwrap_or_default(),
        })
    }
}

/// The last `limit` messages of a thread, oldest first.
pub(crate) fn recent_messages(
    conn: &Connection,
    agent: &str,
    thread: &str,
    limit: usize,
) -> MemoryResult<Vec<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM
           (SELECT * FROM messages WHERE agent = ?1 AND thread = ?2 ORDER BY id DESC LIMIT ?3)
         ORDER BY id"
    ))?;
    let rows = stmt.query_map(params![agent, thread, limit as i64], Message::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One message, by id.
pub(crate) fn message(conn: &Connection, id: i64) -> MemoryResult<Option<Message>> {
    Ok(conn
        .query_row(
            &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1"),
            [id],
            Message::from_row,
        )
        .optional()?)
}

/// How many messages `agent`'s conversation `thread` holds.
pub(crate) fn count_messages(conn: &Connection, agent: &str, thread: &str) -> MemoryResult<u64> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM messages WHERE agent = ?1 AND thread = ?2",
        params![agent, thread],
        |row| row.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Messages other agents left (`role` `agent:NAME`) in `agent`'s
/// conversations with an id above `after`, oldest first.
pub(crate) fn messages_from_agents(
    conn: &Connection,
    agent: &str,
    after: i64,
) -> MemoryResult<Vec<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages
         WHERE agent = ?1 AND role LIKE 'agent:%' AND id > ?2 ORDER BY id"
    ))?;
    let rows = stmt.query_map(params![agent, after], Message::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Status of an intention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IntentionStatus {
    /// Waiting for its time.
    Pending,
    /// Its time came; the agent was told.
    Triggered,
    /// Done.
    Completed,
    /// Dropped.
    Dismissed,
}

impl IntentionStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            IntentionStatus::Pending => "pending",
            IntentionStatus::Triggered => "triggered",
            IntentionStatus::Completed => "completed",
            IntentionStatus::Dismissed => "dismissed",
        }
    }

    pub(crate) fn parse(s: &str) -> MemoryResult<Self> {
        Ok(match s {
            "pending" => IntentionStatus::Pending,
            "triggered" => IntentionStatus::Triggered,
            "completed" => IntentionStatus::Completed,
            "dismissed" => IntentionStatus::Dismissed,
            other => {
                return Err(MemoryError::Corrupt {
                    what: "intention status",
                    value: other.to_string(),
                });
            }
        })
    }
}

/// A reminder an agent set for itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Intention {
    /// Id (what `/complete` and `/dismiss` name).
    pub id: i64,
    /// Owning agent.
    pub agent: String,
    /// What to do.
    pub what: String,
    /// When, as the agent wrote it.
    pub due_text: String,
    /// When, resolved (absent for "next session" or not yet resolved).
    pub due_at: Option<Millis>,
    /// Due at the start of the next session.
    pub next_session: bool,
    /// Status.
    pub status: IntentionStatus,
    /// Completion or dismissal note.
    pub note: Option<String>,
    /// Created.
    pub created_at: Millis,
}

/// Stores a new pending intention; returns its id.
pub(crate) fn add_intention(
    conn: &Connection,
    agent: &str,
    what: &str,
    due_text: &str,
    due_at: Option<Millis>,
    next_session: bool,
    now: Millis,
) -> MemoryResult<i64> {
    conn.execute(
        "INSERT INTO intentions (agent, what, due_text, due_at, next_session, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
        params![agent, what, due_text, due_at, next_session, now],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Intentions of an agent, open ones (pending, triggered) first by due time.
pub(crate) fn list_intentions(
    conn: &Connection,
    agent: &str,
    open_only: bool,
) -> MemoryResult<Vec<Intention>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent, what, due_text, due_at, next_session, status, note, created_at FROM intentions
         WHERE agent = ?1 AND (?2 = 0 OR status IN ('pending', 'triggered'))
         ORDER BY status IN ('completed', 'dismissed'), due_at IS NULL, due_at, id",
    )?;
    let rows = stmt.query_map(params![agent, open_only], |r| {
        Ok((
            Intention {
                id: r.get(0)?,
                agent: r.get(1)?,
                what: r.get(2)?,
                due_text: r.get(3)?,
                due_at: r.get(4)?,
                next_session: r.get(5)?,
                status: IntentionStatus::Pending,
                note: r.get(7)?,
                created_at: r.get(8)?,
            },
            r.get::<_, String>(6)?,
        ))
    })?;
    rows.map(|row| {
        let (mut intention, status) = row?;
        intention.status = IntentionStatus::parse(&status)?;
        Ok(intention)
    })
    .collect()
}

/// Sets an intention's status (and note); false when the agent has no such intention.
pub(crate) fn set_intention_status(
    conn: &Connection,
    agent: &str,
    id: i64,
    status: IntentionStatus,
    note: Option<&str>,
    now: Millis,
) -> MemoryResult<bool> {
    let changed = conn.execute(
        "UPDATE intentions SET status = ?3, note = coalesce(?4, note), updated_at = ?5 WHERE agent = ?1 AND id = ?2",
        params![agent, id, status.as_str(), note, now],
    )?;
    Ok(changed > 0)
}

/// Intentions of all agents that are pending and due at or before `now`.
pub(crate) fn due_intentions(conn: &Connection, now: Millis) -> MemoryResult<Vec<(String, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT agent, id FROM intentions WHERE status = 'pending' AND due_at IS NOT NULL AND due_at <= ?1 ORDER BY due_at",
    )?;
    let rows = stmt.query_map([now], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A message waiting to leave the constellation (or to reach an agent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutboxItem {
    /// Id.
    pub id: i64,
    /// Sending agent.
    pub agent: String,
    /// `user`, `agent`, `dm`, `reply`, or a platform name (`bluesky`).
    pub channel: String,
    /// Recipient or thread, where there is one.
    pub target: Option<String>,
    /// The text.
    pub content: String,
    /// True for public posts.
    pub public: bool,
    /// When it was queued.
    pub created_at: Millis,
    /// When a platform adapter delivered it.
    pub delivered_at: Option<Millis>,
}

/// Queues a message; returns its id.
pub(crate) fn enqueue(
    conn: &Connection,
    agent: &str,
    channel: &str,
    target: Option<&str>,
    content: &str,
    public: bool,
    now: Millis,
) -> MemoryResult<i64> {
    conn.execute(
        "INSERT INTO outbox (agent, channel, target, content, public, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![agent, channel, target, content, public, now],
    )?;
    Ok(conn.last_insert_rowid())
}

/// The outbox, oldest first.
pub(crate) fn outbox(conn: &Connection) -> MemoryResult<Vec<OutboxItem>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent, channel, target, content, public, created_at, delivered_at FROM outbox ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(OutboxItem {
            id: r.get(0)?,
            agent: r.get(1)?,
            channel: r.get(2)?,
            target: r.get(3)?,
            content: r.get(4)?,
            public: r.get(5)?,
            created_at: r.get(6)?,
            delivered_at: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// An agent's runtime state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentState {
    /// Name.
    pub name: String,
    /// Stopped by `/halt` (or the partner) until resumed.
    pub halted: bool,
    /// Why it was halted.
    pub halt_reason: Option<String>,
    /// Pulse interval set by the agent or the partner, in seconds.
    pub pulse_secs: Option<i64>,
}

/// The state of an agent (a fresh one if it was never seen).
pub(crate) fn agent_state(conn: &Connection, name: &str) -> MemoryResult<AgentState> {
    // Read before every action: prepared once per connection.
    let state = conn
        .prepare_cached("SELECT name, halted, halt_reason, pulse_secs FROM agents WHERE name = ?1")?
        .query_row([name], |r| {
            Ok(AgentState {
                name: r.get(0)?,
                halted: r.get(1)?,
                halt_reason: r.get(2)?,
                pulse_secs: r.get(3)?,
            })
        })
        .optional()?;
    Ok(state.unwrap_or(AgentState {
        name: name.to_string(),
        halted: false,
        halt_reason: None,
        pulse_secs: None,
    }))
}

/// Records that an agent belongs to the constellation (the database keeps
/// the roster, so every process knows who may be told things).
pub(crate) fn ensure_agent(conn: &Connection, name: &str, now: Millis) -> MemoryResult<()> {
    conn.execute(
        "INSERT INTO agents (name, created_at) VALUES (?1, ?2) ON CONFLICT(name) DO NOTHING",
        params![name, now],
    )?;
    Ok(())
}

/// Halts (or resumes, with `halted = false`) an agent.
pub(crate) fn set_halted(
    conn: &Connection,
    name: &str,
    halted: bool,
    reason: Option<&str>,
    now: Millis,
) -> MemoryResult<()> {
    ensure_agent(conn, name, now)?;
    conn.execute(
        "UPDATE agents SET halted = ?2, halt_reason = ?3 WHERE name = ?1",
        params![name, halted, reason],
    )?;
    Ok(())
}

/// Sets an agent's pulse interval.
pub(crate) fn set_pulse(conn: &Connection, name: &str, secs: i64, now: Millis) -> MemoryResult<()> {
    ensure_agent(conn, name, now)?;
    conn.execute(
        "UPDATE agents SET pulse_secs = ?2 WHERE name = ?1",
        params![name, secs],
    )?;
    Ok(())
}

/// Records text that failed to parse, so recurring phrasings can become aliases.
pub(crate) fn add_parse_failure(
    conn: &Connection,
    agent: &str,
    text: &str,
    message: &str,
    now: Millis,
) -> MemoryResult<()> {
    conn.execute(
        "INSERT INTO parse_failures (agent, text, message, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![agent, text, message, now],
    )?;
    Ok(())
}

/// A value the database keeps about itself (table `meta`), by key.
pub(crate) fn meta(conn: &Connection, key: &str) -> MemoryResult<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

/// Sets (or, with `None`, removes) a value in table `meta`.
pub(crate) fn set_meta(conn: &Connection, key: &str, value: Option<&str>) -> MemoryResult<()> {
    match value {
        Some(value) => conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = ?2",
            params![key, value],
        )?,
        None => conn.execute("DELETE FROM meta WHERE key = ?1", [key])?,
    };
    Ok(())
}
