//! [`Roster`]: what the runtime keeps of its agents — the roster and each
//! agent's state (halted, why, its pulse), the intentions agents set
//! themselves, and the outbox — behind one interface with two back ends,
//! the SQLite store and PostgreSQL (`crate::postgres::PgStore`).

use partner_core::clock::Millis;
use rusqlite::Connection;

use super::MemoryResult;
use super::records::{self, AgentState, Intention, IntentionStatus, OutboxItem};

/// An intention to store.
#[derive(Debug, Clone, Copy)]
pub struct NewIntention<'a> {
    /// The agent.
    pub agent: &'a str,
    /// What to do.
    pub what: &'a str,
    /// When, as written.
    pub due_text: &'a str,
    /// When, resolved.
    pub due_at: Option<Millis>,
    /// Due at the start of the next session.
    pub next_session: bool,
}

/// A message to queue.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    /// The sending agent.
    pub agent: &'a str,
    /// `user`, `agent`, `dm`, `reply` or a platform.
    pub channel: &'a str,
    /// Recipient or thread.
    pub target: Option<&'a str>,
    /// The text.
    pub content: &'a str,
    /// A public post.
    pub public: bool,
}

/// The runtime's records of its agents, on whichever database holds them.
/// Every write is committed before it returns.
pub trait Roster {
    /// Puts an agent on the roster (nothing if it is there).
    fn ensure_agent(&self, name: &str, now: Millis) -> MemoryResult<()>;
    /// An agent's state (a fresh one if it was never seen).
    fn agent_state(&self, name: &str) -> MemoryResult<AgentState>;
    /// Halts (or, with `halted` false, resumes) an agent.
    fn set_halted(
        &self,
        name: &str,
        halted: bool,
        reason: Option<&str>,
        now: Millis,
    ) -> MemoryResult<()>;
    /// Sets an agent's pulse, in seconds.
    fn set_pulse(&self, name: &str, secs: i64, now: Millis) -> MemoryResult<()>;
    /// Stores a pending intention; its id.
    fn add_intention(&self, new: &NewIntention<'_>, now: Millis) -> MemoryResult<i64>;
    /// An agent's intentions, open ones first by due time.
    fn intentions(&self, agent: &str, open_only: bool) -> MemoryResult<Vec<Intention>>;
    /// Sets an intention's status; false when the agent has no such one.
    fn set_intention_status(
        &self,
        agent: &str,
        id: i64,
        status: IntentionStatus,
        note: Option<&str>,
        now: Millis,
    ) -> MemoryResult<bool>;
    /// Pending intentions of every agent due at or before `now`.
    fn due_intentions(&self, now: Millis) -> MemoryResult<Vec<(String, i64)>>;
    /// Queues a message; its id.
    fn enqueue(&self, out: &Outgoing<'_>, now: Millis) -> MemoryResult<i64>;
    /// The outbox, oldest first.
    fn outbox(&self) -> MemoryResult<Vec<OutboxItem>>;
    /// Every agent the store knows of: on the roster or owning a block.
    fn agent_names(&self) -> MemoryResult<Vec<String>>;
    /// Starts (`active`) or pauses an agent's watch on a data source.
    fn set_watch(&self, agent: &str, source: &str, active: bool, now: Millis) -> MemoryResult<()>;
    /// One of an agent's intentions, whatever its status.
    fn intention(&self, agent: &str, id: i64) -> MemoryResult<Option<Intention>> {
        Ok(self
            .intentions(agent, false)?
            .into_iter()
            .find(|i| i.id == id))
    }
    /// A setting kept with the constellation (its verbs, its embedder).
    fn meta(&self, key: &str) -> MemoryResult<Option<String>>;
    /// Sets (or, with `None`, removes) a setting.
    fn set_meta(&self, key: &str, value: Option<&str>) -> MemoryResult<()>;
    /// Keeps what an agent wrote that did not parse (for alias
    /// suggestions).
    fn add_parse_failure(
        &self,
        agent: &str,
        text: &str,
        message: &str,
        now: Millis,
    ) -> MemoryResult<()>;
    /// True while `fence` still holds `agent`'s lease: no other daemon has
    /// taken it over; in a transaction, it cannot be taken over until that
    /// commits. A SQLite file is run by one process (its lock): always.
    fn holds(&self, agent: &str, fence: &Fence) -> MemoryResult<bool>;
}

/// Which daemon's lease an action runs under (team mode): its name and
/// the lease's epoch when the turn began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The daemon's `--host-name`.
    pub host: String,
    /// The lease's epoch (it rises whenever the lease changes hands).
    pub epoch: i64,
}

/// The operations on one connection, in whatever transaction it is in.
impl Roster for Connection {
    fn ensure_agent(&self, name: &str, now: Millis) -> MemoryResult<()> {
        records::ensure_agent(self, name, now)
    }

    fn agent_state(&self, name: &str) -> MemoryResult<AgentState> {
        records::agent_state(self, name)
    }

    fn set_halted(
        &self,
        name: &str,
        halted: bool,
        reason: Option<&str>,
        now: Millis,
    ) -> MemoryResult<()> {
        records::set_halted(self, name, halted, reason, now)
    }

    fn set_pulse(&self, name: &str, secs: i64, now: Millis) -> MemoryResult<()> {
        records::set_pulse(self, name, secs, now)
    }

    fn add_intention(&self, n: &NewIntention<'_>, now: Millis) -> MemoryResult<i64> {
        records::add_intention(
            self,
            n.agent,
            n.what,
            n.due_text,
            n.due_at,
            n.next_session,
            now,
        )
    }

    fn intentions(&self, agent: &str, open_only: bool) -> MemoryResult<Vec<Intention>> {
        records::list_intentions(self, agent, open_only)
    }

    fn set_intention_status(
        &self,
        agent: &str,
        id: i64,
        status: IntentionStatus,
        note: Option<&str>,
        now: Millis,
    ) -> MemoryResult<bool> {
        records::set_intention_status(self, agent, id, status, note, now)
    }

    fn due_intentions(&self, now: Millis) -> MemoryResult<Vec<(String, i64)>> {
        records::due_intentions(self, now)
    }

    fn enqueue(&self, o: &Outgoing<'_>, now: Millis) -> MemoryResult<i64> {
        records::enqueue(self, o.agent, o.channel, o.target, o.content, o.public, now)
    }

    fn outbox(&self) -> MemoryResult<Vec<OutboxItem>> {
        records::outbox(self)
    }

    fn agent_names(&self) -> MemoryResult<Vec<String>> {
        let mut stmt =
            self.prepare_cached("SELECT agent FROM blocks UNION SELECT name FROM agents")?;
        let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(names.collect::<Result<_, _>>()?)
    }

    fn set_watch(&self, agent: &str, source: &str, active: bool, now: Millis) -> MemoryResult<()> {
        self.execute(
            "INSERT INTO data_watches (agent, source, active, changed_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(agent, source) DO UPDATE SET active = ?3, changed_at = ?4",
            rusqlite::params![agent, source, active, now],
        )?;
        Ok(())
    }

    fn meta(&self, key: &str) -> MemoryResult<Option<String>> {
        records::meta(self, key)
    }

    fn set_meta(&self, key: &str, value: Option<&str>) -> MemoryResult<()> {
        records::set_meta(self, key, value)
    }

    fn add_parse_failure(
        &self,
        agent: &str,
        text: &str,
        message: &str,
        now: Millis,
    ) -> MemoryResult<()> {
        records::add_parse_failure(self, agent, text, message, now)
    }

    fn holds(&self, _agent: &str, _fence: &Fence) -> MemoryResult<bool> {
        Ok(true)
    }
}
