//! [`Memory`]: the memory operations — versioned blocks, archival
//! entries, conversation messages and search over them — behind one
//! interface with two back ends: SQLite ([`MemoryStore`], the embedded
//! default) and PostgreSQL (`crate::postgres::PgStore`, for a team). The
//! same contract tests run against both. Every write is committed before
//! it returns.

use partner_core::clock::Millis;

use super::blocks::{self, Block, BlockVersion, MemoryChange, NewBlock};
use super::error::{MemoryError, MemoryResult};
use super::search::{self, SearchHit, SearchQuery};
use super::{MemoryStore, records};

/// A constellation's memory, on whichever database holds it.
pub trait Memory: Send + Sync {
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

impl Memory for MemoryStore {
    fn create_block(
        &self,
        new: &NewBlock,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)> {
        self.transaction(|tx| blocks::create(tx, new, by, now))
    }

    fn block(&self, agent: &str, label: &str) -> MemoryResult<Option<Block>> {
        blocks::get(&self.read(), agent, label)
    }

    fn blocks(&self, agent: Option<&str>) -> MemoryResult<Vec<Block>> {
        blocks::list(&self.read(), agent)
    }

    fn write_block(
        &self,
        write: &BlockWrite<'_>,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)> {
        self.transaction(|tx| {
            stale(&blocks::require(tx, write.agent, write.label)?, write.base)?;
            blocks::write(tx, write.agent, write.label, write.value, by, now)
        })
    }

    fn delete_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange> {
        self.transaction(|tx| blocks::delete(tx, agent, label, by, now))
    }

    fn undo_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange> {
        self.transaction(|tx| blocks::undo(tx, agent, label, by, now))
    }

    fn history(&self, agent: &str, label: &str) -> MemoryResult<Vec<BlockVersion>> {
        blocks::history(&self.read(), agent, label)
    }

    fn add_archival(&self, agent: &str, content: &str, now: Millis) -> MemoryResult<i64> {
        self.transaction(|tx| records::add_archival(tx, agent, content, now))
    }

    fn archival_count(&self, agent: &str) -> MemoryResult<i64> {
        records::archival_count(&self.read(), agent)
    }

    fn add_message(&self, m: &NewMessage<'_>, now: Millis) -> MemoryResult<i64> {
        self.transaction(|tx| records::add_message(tx, m.agent, m.thread, m.role, m.content, now))
    }

    fn search(&self, query: &SearchQuery) -> MemoryResult<Vec<SearchHit>> {
        search::search(&self.read(), query)
    }

    fn schema_version(&self) -> MemoryResult<i64> {
        MemoryStore::schema_version(self)
    }
}
