//! [`Memory`]: the memory operations — versioned blocks, archival
//! entries, conversation messages and search over them — behind one
//! interface with two back ends: SQLite ([`MemoryStore`], the embedded
//! default) and PostgreSQL (`crate::postgres::PgStore`, for a team). The
//! same contract tests run against both. Every write is committed before
//! it returns.

use partner_core::clock::Millis;
use rusqlite::Connection;

use super::blocks::{self, Block, BlockKind, BlockVersion, MemoryChange, NewBlock};
use super::error::{MemoryError, MemoryResult};
use super::search::{self, SearchHit, SearchQuery};
use super::{records, records::Message};

/// A constellation's memory, on whichever database holds it.
pub trait Memory {
    /// Creates a block (bringing back a deleted one of the same label as
    /// its next version).
    fn create_block(
        &self,
        new: &NewBlock,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)>;
    /// The live block `label` of `agent`, if any.
    fn block(&self, agent: &str, label: &str) -> MemoryResult<Option<Block>>;
    /// Live blocks of `agent` (or of every agent), pinned first, then by
    /// kind and label.
    fn blocks(&self, agent: Option<&str>) -> MemoryResult<Vec<Block>>;
    /// Writes a block's next version; with `base`, only if it is still at
    /// that version (else a conflict, and nothing written).
    fn write_block(
        &self,
        write: &BlockWrite<'_>,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)>;
    /// Deletes a block, as a version that undo takes back.
    fn delete_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange>;
    /// Moves a block to another kind (core, working, archival).
    fn set_block_kind(
        &self,
        agent: &str,
        label: &str,
        kind: BlockKind,
        now: Millis,
    ) -> MemoryResult<Block>;
    /// Goes back to a block's previous version, as a new version.
    fn undo_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange>;
    /// A block's versions, oldest first (live or deleted).
    fn history(&self, agent: &str, label: &str) -> MemoryResult<Vec<BlockVersion>>;
    /// Stores an archival entry; its id.
    fn add_archival(&self, agent: &str, content: &str, now: Millis) -> MemoryResult<i64>;
    /// How many archival entries `agent` has.
    fn archival_count(&self, agent: &str) -> MemoryResult<i64>;
    /// Stores a message of a conversation; its id.
    fn add_message(&self, message: &NewMessage<'_>, now: Millis) -> MemoryResult<i64>;
    /// Full-text search, by every word then by some, per domain.
    fn search(&self, query: &SearchQuery) -> MemoryResult<Vec<SearchHit>>;
    /// The schema version the database is at.
    fn schema_version(&self) -> MemoryResult<i64>;
    /// The labels of `agent`'s live blocks, sorted, each with whether it
    /// is working memory (core or working, not archival).
    fn labels(&self, agent: &str) -> MemoryResult<Vec<(String, bool)>> {
        let mut labels: Vec<(String, bool)> = self
            .blocks(Some(agent))?
            .into_iter()
            .map(|b| (b.label, b.kind != BlockKind::Archival))
            .collect();
        labels.sort();
        Ok(labels)
    }
    /// The newest `limit` messages of `agent`'s conversation `thread`,
    /// oldest first.
    fn recent_messages(
        &self,
        agent: &str,
        thread: &str,
        limit: usize,
    ) -> MemoryResult<Vec<Message>>;
    /// How many messages `agent`'s conversation `thread` holds.
    fn count_messages(&self, agent: &str, thread: &str) -> MemoryResult<u64>;
    /// Messages other agents sent `agent` after message `after`, oldest
    /// first.
    fn messages_from_agents(&self, agent: &str, after: i64) -> MemoryResult<Vec<Message>>;
    /// One message, by id.
    fn message(&self, id: i64) -> MemoryResult<Option<Message>>;
}

/// A block's next value, and the version it must still be at.
#[derive(Debug, Clone, Copy)]
pub struct BlockWrite<'a> {
    /// The agent.
    pub agent: &'a str,
    /// The label.
    pub label: &'a str,
    /// The new value.
    pub value: &'a str,
    /// The version the write started from (`None`: whatever it is now).
    pub base: Option<i64>,
}

/// A message to store.
#[derive(Debug, Clone, Copy)]
pub struct NewMessage<'a> {
    /// The agent whose conversation it is.
    pub agent: &'a str,
    /// The thread.
    pub thread: &'a str,
    /// Who spoke (`user`, `assistant`, `agent:NAME`…).
    pub role: &'a str,
    /// The text.
    pub content: &'a str,
    /// The agents a message between agents came through, sender first
    /// (empty for any other message).
    pub lineage: &'a [String],
    /// The turn that stores it (none for a message stored outside one):
    /// a turn cut short and run again takes back what it stored.
    pub turn: Option<&'a str>,
}

/// The conflict a write meets when `block` is no longer at `base`.
pub fn stale(block: &Block, base: Option<i64>) -> MemoryResult<()> {
    match base {
        Some(base) if base != block.version => Err(MemoryError::Conflict(format!(
            "block '{}' changed since version {base}: it is at version {} now; nothing was written",
            block.label, block.version
        ))),
        _ => Ok(()),
    }
}

/// The operations on one connection, in whatever transaction it is in: the
/// executor runs them inside an action's transaction.
impl Memory for Connection {
    fn create_block(
        &self,
        new: &NewBlock,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)> {
        blocks::create(self, new, by, now)
    }

    fn block(&self, agent: &str, label: &str) -> MemoryResult<Option<Block>> {
        blocks::get(self, agent, label)
    }

    fn blocks(&self, agent: Option<&str>) -> MemoryResult<Vec<Block>> {
        blocks::list(self, agent)
    }

    fn write_block(
        &self,
        write: &BlockWrite<'_>,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)> {
        stale(
            &blocks::require(self, write.agent, write.label)?,
            write.base,
        )?;
        blocks::write(self, write.agent, write.label, write.value, by, now)
    }

    fn delete_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange> {
        blocks::delete(self, agent, label, by, now)
    }

    fn set_block_kind(
        &self,
        agent: &str,
        label: &str,
        kind: BlockKind,
        now: Millis,
    ) -> MemoryResult<Block> {
        blocks::set_kind(self, agent, label, kind, now)
    }

    fn undo_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange> {
        blocks::undo(self, agent, label, by, now)
    }

    fn history(&self, agent: &str, label: &str) -> MemoryResult<Vec<BlockVersion>> {
        blocks::history(self, agent, label)
    }

    fn add_archival(&self, agent: &str, content: &str, now: Millis) -> MemoryResult<i64> {
        records::add_archival(self, agent, content, now)
    }

    fn archival_count(&self, agent: &str) -> MemoryResult<i64> {
        records::archival_count(self, agent)
    }

    fn add_message(&self, m: &NewMessage<'_>, now: Millis) -> MemoryResult<i64> {
        self.execute(
            "INSERT INTO messages (agent, thread, role, content, created_at, lineage, turn)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            rusqlite::params![
                m.agent,
                m.thread,
                m.role,
                m.content,
                now,
                super::inbox::lineage_text(m.lineage),
                m.turn
            ],
        )?;
        Ok(self.last_insert_rowid())
    }

    fn search(&self, query: &SearchQuery) -> MemoryResult<Vec<SearchHit>> {
        search::search(self, query)
    }

    fn schema_version(&self) -> MemoryResult<i64> {
        Ok(self.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    fn labels(&self, agent: &str) -> MemoryResult<Vec<(String, bool)>> {
        blocks::labels(self, agent)
    }

    fn recent_messages(
        &self,
        agent: &str,
        thread: &str,
        limit: usize,
    ) -> MemoryResult<Vec<Message>> {
        records::recent_messages(self, agent, thread, limit)
    }

    fn count_messages(&self, agent: &str, thread: &str) -> MemoryResult<u64> {
        records::count_messages(self, agent, thread)
    }

    fn messages_from_agents(&self, agent: &str, after: i64) -> MemoryResult<Vec<Message>> {
        records::messages_from_agents(self, agent, after)
    }

    fn message(&self, id: i64) -> MemoryResult<Option<Message>> {
        records::message(self, id)
    }
}
