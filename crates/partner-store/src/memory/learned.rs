//! The learned-rule store: phrasings the partner taught, as action grammar
//! rules beside the words they came from and the action they stand for.
//! Kept in the database, so they survive restarts and every process sees
//! them.

use rusqlite::{Connection, params};

pub use partner_protocol::memory::LearnedRule;

use super::MemoryResult;
use partner_core::clock::Millis;

/// Most learned rules kept (the oldest beyond it are not read).
pub const MAX_LEARNED: usize = 10_000;

/// Stores a rule; returns its id.
pub(crate) fn add(
    conn: &Connection,
    rule: &str,
    words: &str,
    action: &str,
    now: Millis,
) -> MemoryResult<i64> {
    conn.execute(
        "INSERT INTO learned_rules (rule, words, action, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![rule, words, action, now],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Removes a rule; true when there was one.
pub(crate) fn remove(conn: &Connection, id: i64) -> MemoryResult<bool> {
    Ok(conn.execute("DELETE FROM learned_rules WHERE id = ?1", [id])? > 0)
}

/// Removes every rule; how many there were.
pub(crate) fn reset(conn: &Connection) -> MemoryResult<usize> {
    Ok(conn.execute("DELETE FROM learned_rules", [])?)
}

/// What changes whenever a rule is added or removed (how many there are,
/// and the newest id): lets a reader rebuild only when something changed.
pub(crate) fn signature(conn: &Connection) -> MemoryResult<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT count(*), coalesce(max(id), 0) FROM learned_rules",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// Every rule, oldest first.
pub(crate) fn list(conn: &Connection) -> MemoryResult<Vec<LearnedRule>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, rule, words, action, created_at FROM learned_rules ORDER BY id LIMIT ?1",
    )?;
    let rows = stmt.query_map([MAX_LEARNED as i64], |r| {
        Ok(LearnedRule {
            id: r.get(0)?,
            rule: r.get(1)?,
            words: r.get(2)?,
            action: r.get(3)?,
            created_at: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The learned phrasings on whichever database holds them.
pub trait Phrasings: Send + Sync {
    /// Stores a rule (the words, the action, the grammar alternative); its id.
    fn learn(&self, rule: &str, words: &str, action: &str, now: Millis) -> MemoryResult<i64>;
    /// Forgets one; false when there was none.
    fn forget(&self, id: i64) -> MemoryResult<bool>;
    /// Every rule, oldest first (at most [`MAX_LEARNED`]).
    fn phrasings(&self) -> MemoryResult<Vec<LearnedRule>>;
    /// How many there are and the newest id: changes whenever one is
    /// learned or forgotten.
    fn signature(&self) -> MemoryResult<(i64, i64)>;
    /// Forgets every one; how many.
    fn forget_all(&self) -> MemoryResult<usize>;
}

impl Phrasings for super::MemoryStore {
    fn learn(&self, rule: &str, words: &str, action: &str, now: Millis) -> MemoryResult<i64> {
        self.transaction(|tx| add(tx, rule, words, action, now))
    }

    fn forget(&self, id: i64) -> MemoryResult<bool> {
        self.transaction(|tx| remove(tx, id))
    }

    fn phrasings(&self) -> MemoryResult<Vec<LearnedRule>> {
        list(&self.read())
    }

    fn signature(&self) -> MemoryResult<(i64, i64)> {
        signature(&self.read())
    }

    fn forget_all(&self) -> MemoryResult<usize> {
        self.transaction(reset)
    }
}
