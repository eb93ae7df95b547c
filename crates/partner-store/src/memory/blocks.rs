//! Memory blocks: labelled, versioned text per agent. Every write appends
//! the new value to `block_history`, so any edit can be shown as a diff and
//! undone; deletes are soft (and undoable) too.

pub use partner_protocol::memory::{
    Block, BlockKind, BlockPermission, BlockVersion, MemoryChange, diff,
};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::error::{MemoryError, MemoryResult};
use partner_core::clock::Millis;

/// The default character limit of a block.
pub const DEFAULT_CHAR_LIMIT: usize = 5000;

/// What to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlock {
    /// Owning agent.
    pub agent: String,
    /// Label.
    pub label: String,
    /// Kind.
    pub kind: BlockKind,
    /// Description.
    pub description: String,
    /// Initial value.
    pub value: String,
    /// Character limit.
    pub char_limit: usize,
    /// Permission.
    pub permission: BlockPermission,
    /// Pinned.
    pub pinned: bool,
    /// Readable by other agents.
    pub shared: bool,
}

impl NewBlock {
    /// A read-write block of `kind` with the default limit.
    pub fn new(agent: &str, label: &str, kind: BlockKind, value: &str) -> Self {
        NewBlock {
            agent: agent.to_string(),
            label: label.to_string(),
            kind,
            description: String::new(),
            value: value.to_string(),
            char_limit: DEFAULT_CHAR_LIMIT,
            permission: BlockPermission::ReadWrite,
            pinned: false,
            shared: false,
        }
    }
}

const COLUMNS: &str = "id, agent, label, kind, description, value, char_limit, permission, pinned, version, created_at, updated_at, shared";

fn block_from_row(row: &Row<'_>) -> rusqlite::Result<(Block, String, String)> {
    Ok((
        Block {
            id: row.get(0)?,
            agent: row.get(1)?,
            label: row.get(2)?,
            kind: BlockKind::Core,
            description: row.get(4)?,
            value: row.get(5)?,
            char_limit: row.get::<_, i64>(6)? as usize,
            permission: BlockPermission::ReadWrite,
            pinned: row.get(8)?,
            shared: row.get(12)?,
            version: row.get(9)?,
            created_at: row.get(10)?,
            updated_at: row.get(11)?,
        },
        row.get(3)?,
        row.get(7)?,
    ))
}

fn finish(raw: (Block, String, String)) -> MemoryResult<Block> {
    let (mut block, kind, permission) = raw;
    block.kind = kind.parse()?;
    block.permission = permission.parse()?;
    Ok(block)
}

/// The live block `label` of `agent`, if any.
pub(crate) fn get(conn: &Connection, agent: &str, label: &str) -> MemoryResult<Option<Block>> {
    let raw = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM blocks WHERE agent = ?1 AND label = ?2 AND deleted_at IS NULL"),
            params![agent, label],
            block_from_row,
        )
        .optional()?;
    raw.map(finish).transpose()
}

/// The live block, or a `NoBlock` error.
pub(crate) fn require(conn: &Connection, agent: &str, label: &str) -> MemoryResult<Block> {
    get(conn, agent, label)?.ok_or_else(|| MemoryError::NoBlock {
        agent: agent.to_string(),
        label: label.to_string(),
    })
}

/// Live blocks of one agent (or of all when `agent` is `None`), pinned
/// first, then by kind and label.
pub(crate) fn list(conn: &Connection, agent: Option<&str>) -> MemoryResult<Vec<Block>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM blocks WHERE deleted_at IS NULL AND (?1 IS NULL OR agent = ?1)
         ORDER BY agent, pinned DESC, CASE kind WHEN 'core' THEN 0 WHEN 'working' THEN 1 ELSE 2 END, label"
    ))?;
    let rows = stmt.query_map(params![agent], block_from_row)?;
    rows.map(|r| finish(r?)).collect()
}

/// An agent's live block labels, each with whether it is in working
/// memory (core or working), in label order: what a turn's parser needs,
/// without reading the blocks' text.
pub(crate) fn labels(conn: &Connection, agent: &str) -> MemoryResult<Vec<(String, bool)>> {
    // Ordered here: with an ORDER BY, SQLite prepares a statement again
    // on every run after another connection has written.
    let mut stmt = conn.prepare_cached(
        "SELECT label, kind != 'archival' FROM blocks WHERE agent = ?1 AND deleted_at IS NULL",
    )?;
    let rows = stmt.query_map(params![agent], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let mut labels: Vec<(String, bool)> = rows.collect::<Result<_, _>>()?;
    labels.sort();
    Ok(labels)
}

pub(crate) fn check_limit(label: &str, value: &str, limit: usize) -> MemoryResult<()> {
    let chars = value.chars().count();
    if chars > limit {
        return Err(MemoryError::OverLimit {
            label: label.to_string(),
            chars,
            limit,
            over: chars - limit,
        });
    }
    Ok(())
}

fn record_version(
    conn: &Connection,
    block_id: i64,
    version: i64,
    value: &str,
    deleted: bool,
    by: &str,
    now: Millis,
) -> MemoryResult<()> {
    conn.execute(
        "INSERT INTO block_history (block_id, version, value, deleted, changed_at, changed_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![block_id, version, value, deleted, now, by],
    )?;
    Ok(())
}

/// Whether a new block may be made as asked: its character limit within
/// bounds, its value within the limit (every back end checks the same).
pub(crate) fn check_new(new: &NewBlock) -> MemoryResult<()> {
    partner_core::bounds::CharLimit::new(new.char_limit as u64).map_err(|e| {
        MemoryError::Conflict(format!("block '{}': its character limit {e}", new.label))
    })?;
    check_limit(&new.label, &new.value, new.char_limit)
}

/// Creates a block. A soft-deleted block of the same label is brought back
/// with the new value as its next version.
pub(crate) fn create(
    conn: &Connection,
    new: &NewBlock,
    by: &str,
    now: Millis,
) -> MemoryResult<(Block, MemoryChange)> {
    check_new(new)?;
    if get(conn, &new.agent, &new.label)?.is_some() {
        return Err(MemoryError::BlockExists {
            agent: new.agent.clone(),
            label: new.label.clone(),
        });
    }
    let deleted: Option<(i64, i64)> = conn
        .query_row(
            "SELECT id, version FROM blocks WHERE agent = ?1 AND label = ?2",
            params![new.agent, new.label],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (id, version, before) = match deleted {
        Some((id, version)) => {
            conn.execute(
                "UPDATE blocks SET kind = ?2, description = ?3, value = ?4, char_limit = ?5, permission = ?6,
                 pinned = ?7, version = ?8, updated_at = ?9, deleted_at = NULL, shared = ?10 WHERE id = ?1",
                params![
                    id,
                    new.kind.as_str(),
                    new.description,
                    new.value,
                    new.char_limit as i64,
                    new.permission.as_str(),
                    new.pinned,
                    version + 1,
                    now,
                    new.shared
                ],
            )?;
            (id, version + 1, Some(version))
        }
        None => {
            conn.execute(
                "INSERT INTO blocks (agent, label, kind, description, value, char_limit, permission, pinned, version, created_at, updated_at, shared)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?9, ?10)",
                params![
                    new.agent,
                    new.label,
                    new.kind.as_str(),
                    new.description,
                    new.value,
                    new.char_limit as i64,
                    new.permission.as_str(),
                    new.pinned,
                    now,
                    new.shared
                ],
            )?;
            (conn.last_insert_rowid(), 1, None)
        }
    };
    record_version(conn, id, version, &new.value, false, by, now)?;
    let block = require(conn, &new.agent, &new.label)?;
    Ok((
        block,
        MemoryChange {
            agent: new.agent.clone(),
            label: new.label.clone(),
            version_before: before,
            version_after: version,
        },
    ))
}

/// Sets a block's value as a new version, within its character limit.
pub(crate) fn write(
    conn: &Connection,
    agent: &str,
    label: &str,
    value: &str,
    by: &str,
    now: Millis,
) -> MemoryResult<(Block, MemoryChange)> {
    let block = require(conn, agent, label)?;
    check_limit(label, value, block.char_limit)?;
    let version = block.version + 1;
    conn.execute(
        "UPDATE blocks SET value = ?2, version = ?3, updated_at = ?4 WHERE id = ?1",
        params![block.id, value, version, now],
    )?;
    record_version(conn, block.id, version, value, false, by, now)?;
    let updated = require(conn, agent, label)?;
    Ok((
        updated,
        MemoryChange {
            agent: agent.to_string(),
            label: label.to_string(),
            version_before: Some(block.version),
            version_after: version,
        },
    ))
}

/// The value with `text` appended on a new line.
pub fn appended(value: &str, text: &str) -> String {
    if value.is_empty() {
        text.to_string()
    } else if value.ends_with('\n') {
        format!("{value}{text}")
    } else {
        format!("{value}\n{text}")
    }
}

/// The value with the one occurrence of `old` replaced by `new`.
pub fn replaced(label: &str, value: &str, old: &str, new: &str) -> MemoryResult<String> {
    let count = if old.is_empty() {
        0
    } else {
        value.matches(old).count()
    };
    match count {
        0 => Err(MemoryError::TextNotFound {
            label: label.to_string(),
            old: old.to_string(),
        }),
        1 => Ok(value.replacen(old, new, 1)),
        count => Err(MemoryError::TextAmbiguous {
            label: label.to_string(),
            old: old.to_string(),
            count,
        }),
    }
}

/// The value with a unified diff applied.
pub fn patched(label: &str, value: &str, diff: &str) -> MemoryResult<String> {
    let bad = |reason: String| MemoryError::BadPatch {
        label: label.to_string(),
        reason,
    };
    let parse = |text: &str| -> MemoryResult<String> {
        let patch = diffy::Patch::from_str(text).map_err(|e| bad(e.to_string()))?;
        if patch.hunks().is_empty() {
            return Err(bad(
                "it has no hunks; write a unified diff with @@ lines".to_string()
            ));
        }
        diffy::apply(value, &patch).map_err(|e| bad(e.to_string()))
    };
    match parse(diff) {
        // A diff written inside a code fence loses its final newline, which
        // then reads as "no newline at end of file"; try it with one.
        Err(_) if !diff.ends_with('\n') => parse(&format!("{diff}\n")).or_else(|_| parse(diff)),
        result => result,
    }
}

/// Soft-deletes a block (undoable).
pub(crate) fn delete(
    conn: &Connection,
    agent: &str,
    label: &str,
    by: &str,
    now: Millis,
) -> MemoryResult<MemoryChange> {
    let block = require(conn, agent, label)?;
    let version = block.version + 1;
    conn.execute(
        "UPDATE blocks SET version = ?2, updated_at = ?3, deleted_at = ?3 WHERE id = ?1",
        params![block.id, version, now],
    )?;
    record_version(conn, block.id, version, &block.value, true, by, now)?;
    Ok(MemoryChange {
        agent: agent.to_string(),
        label: label.to_string(),
        version_before: Some(block.version),
        version_after: version,
    })
}

/// Changes a block's kind (archive, load, swap).
pub(crate) fn set_kind(
    conn: &Connection,
    agent: &str,
    label: &str,
    kind: BlockKind,
    now: Millis,
) -> MemoryResult<Block> {
    let block = require(conn, agent, label)?;
    conn.execute(
        "UPDATE blocks SET kind = ?2, updated_at = ?3 WHERE id = ?1",
        params![block.id, kind.as_str(), now],
    )?;
    require(conn, agent, label)
}

/// The history of a block (live or deleted), oldest first.
pub(crate) fn history(
    conn: &Connection,
    agent: &str,
    label: &str,
) -> MemoryResult<Vec<BlockVersion>> {
    let id: Option<i64> = conn
        .query_row(
            "SELECT id FROM blocks WHERE agent = ?1 AND label = ?2",
            params![agent, label],
            |r| r.get(0),
        )
        .optional()?;
    let Some(id) = id else {
        return Err(MemoryError::NoBlock {
            agent: agent.to_string(),
            label: label.to_string(),
        });
    };
    let mut stmt = conn.prepare_cached(
        "SELECT version, value, deleted, changed_at, changed_by FROM block_history WHERE block_id = ?1 ORDER BY version",
    )?;
    let rows = stmt.query_map([id], |r| {
        Ok(BlockVersion {
            version: r.get(0)?,
            value: r.get(1)?,
            deleted: r.get(2)?,
            changed_at: r.get(3)?,
            changed_by: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Goes back to the version before the latest one, as a new version (so
/// the undo itself can be undone). Undoing a delete brings the block back.
pub(crate) fn undo(
    conn: &Connection,
    agent: &str,
    label: &str,
    by: &str,
    now: Millis,
) -> MemoryResult<MemoryChange> {
    let history = history(conn, agent, label)?;
    let [.., previous, latest] = history.as_slice() else {
        return Err(MemoryError::NothingToUndo {
            label: label.to_string(),
        });
    };
    let id: i64 = conn.query_row(
        "SELECT id FROM blocks WHERE agent = ?1 AND label = ?2",
        params![agent, label],
        |r| r.get(0),
    )?;
    let version = latest.version + 1;
    let deleted_at = previous.deleted.then_some(now);
    conn.execute(
        "UPDATE blocks SET value = ?2, version = ?3, updated_at = ?4, deleted_at = ?5 WHERE id = ?1",
        params![id, previous.value, version, now, deleted_at],
    )?;
    record_version(
        conn,
        id,
        version,
        &previous.value,
        previous.deleted,
        by,
        now,
    )?;
    Ok(MemoryChange {
        agent: agent.to_string(),
        label: label.to_string(),
        version_before: Some(latest.version),
        version_after: version,
    })
}
