//! The memory operations on PostgreSQL: each write one transaction that
//! locks the block's row (`FOR UPDATE`), so daemons writing at once take
//! turns and a write at a stale version is refused, as on SQLite.

use postgres::{GenericClient, Row, Transaction};

use super::{PgTx, failed};
use crate::memory::backend::{BlockWrite, Memory, NewMessage, stale};
use crate::memory::blocks::{
    Block, BlockKind, BlockVersion, MemoryChange, NewBlock, check_limit, check_new,
};
use crate::memory::records::Message;
use crate::memory::search::{SearchHit, SearchQuery};
use crate::memory::{MemoryError, MemoryResult};
use partner_core::clock::Millis;

const COLUMNS: &str = "id, agent, label, kind, description, value, char_limit, permission, pinned, shared, version, created_at, updated_at";

const MESSAGE_COLUMNS: &str = "id, agent, thread, role, content, created_at, lineage";

/// A message from a row of [`MESSAGE_COLUMNS`].
fn message_of(r: &Row) -> Message {
    Message {
        id: r.get(0),
        agent: r.get(1),
        thread: r.get(2),
        role: r.get(3),
        content: r.get(4),
        created_at: r.get(5),
        lineage: serde_json::from_str(r.get::<_, &str>(6)).unwrap_or_default(),
    }
}

fn block_of(row: &Row) -> MemoryResult<Block> {
    Ok(Block {
        id: row.get(0),
        agent: row.get(1),
        label: row.get(2),
        kind: row.get::<_, String>(3).parse()?,
        description: row.get(4),
        value: row.get(5),
        char_limit: usize::try_from(row.get::<_, i64>(6)).unwrap_or(usize::MAX),
        permission: row.get::<_, String>(7).parse()?,
        pinned: row.get(8),
        shared: row.get(9),
        version: row.get(10),
        created_at: row.get(11),
        updated_at: row.get(12),
    })
}

/// The live block, locked for this transaction when `lock`.
fn live(
    tx: &mut impl GenericClient,
    agent: &str,
    label: &str,
    lock: bool,
) -> MemoryResult<Option<Block>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM blocks WHERE agent = $1 AND label = $2 AND deleted_at IS NULL{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let row = tx.query_opt(&sql, &[&agent, &label]).map_err(failed)?;
    row.as_ref().map(block_of).transpose()
}

fn require(tx: &mut impl GenericClient, agent: &str, label: &str) -> MemoryResult<Block> {
    live(tx, agent, label, true)?.ok_or_else(|| MemoryError::NoBlock {
        agent: agent.to_string(),
        label: label.to_string(),
    })
}

fn record_version(
    tx: &mut Transaction<'_>,
    id: i64,
    version: i64,
    (value, deleted): (&str, bool),
    by: &str,
    now: Millis,
) -> MemoryResult<()> {
    tx.execute(
        "INSERT INTO block_history (block_id, version, value, deleted, changed_at, changed_by)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[&id, &version, &value, &deleted, &now, &by],
    )
    .map_err(failed)?;
    Ok(())
}

fn change(agent: &str, label: &str, before: Option<i64>, after: i64) -> MemoryChange {
    MemoryChange {
        agent: agent.to_string(),
        label: label.to_string(),
        version_before: before,
        version_after: after,
    }
}

fn create(
    tx: &mut Transaction<'_>,
    new: &NewBlock,
    by: &str,
    now: Millis,
) -> MemoryResult<(Block, MemoryChange)> {
    check_new(new)?;
    let exists = || MemoryError::BlockExists {
        agent: new.agent.clone(),
        label: new.label.clone(),
    };
    let any = tx
        .query_opt(
            "SELECT id, version, deleted_at IS NULL FROM blocks WHERE agent = $1 AND label = $2 FOR UPDATE",
            &[&new.agent, &new.label],
        )
        .map_err(failed)?;
    let limit = new.char_limit as i64;
    let kind = new.kind.as_str();
    let permission = new.permission.as_str();
    let (id, version, before) = match any {
        Some(row) if row.get::<_, bool>(2) => return Err(exists()),
        Some(row) => {
            let (id, version): (i64, i64) = (row.get(0), row.get(1));
            tx.execute(
                "UPDATE blocks SET kind = $2, description = $3, value = $4, char_limit = $5, permission = $6,
                 pinned = $7, version = $8, updated_at = $9, deleted_at = NULL, shared = $10 WHERE id = $1",
                &[&id, &kind, &new.description, &new.value, &limit, &permission, &new.pinned, &(version + 1), &now, &new.shared],
            )
            .map_err(failed)?;
            (id, version + 1, Some(version))
        }
        None => {
            let row = tx
                .query_one(
                    "INSERT INTO blocks (agent, label, kind, description, value, char_limit, permission, pinned, version, created_at, updated_at, shared)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $9, $10) RETURNING id",
                    &[&new.agent, &new.label, &kind, &new.description, &new.value, &limit, &permission, &new.pinned, &now, &new.shared],
                )
                // Another daemon created it in the meantime.
                .map_err(|e| match e.code() {
                    Some(&postgres::error::SqlState::UNIQUE_VIOLATION) => exists(),
                    _ => failed(e),
                })?;
            (row.get(0), 1, None)
        }
    };
    record_version(tx, id, version, (&new.value, false), by, now)?;
    let block = require(tx, &new.agent, &new.label)?;
    Ok((block, change(&new.agent, &new.label, before, version)))
}

fn history_of(
    tx: &mut impl GenericClient,
    agent: &str,
    label: &str,
) -> MemoryResult<Vec<BlockVersion>> {
    let id = tx
        .query_opt(
            "SELECT id FROM blocks WHERE agent = $1 AND label = $2",
            &[&agent, &label],
        )
        .map_err(failed)?
        .map(|r| r.get::<_, i64>(0))
        .ok_or_else(|| MemoryError::NoBlock {
            agent: agent.to_string(),
            label: label.to_string(),
        })?;
    let rows = tx
        .query(
            "SELECT version, value, deleted, changed_at, changed_by FROM block_history
             WHERE block_id = $1 ORDER BY version",
            &[&id],
        )
        .map_err(failed)?;
    Ok(rows
        .iter()
        .map(|r| BlockVersion {
            version: r.get(0),
            value: r.get(1),
            deleted: r.get(2),
            changed_at: r.get(3),
            changed_by: r.get(4),
        })
        .collect())
}

fn undo(
    tx: &mut Transaction<'_>,
    agent: &str,
    label: &str,
    by: &str,
    now: Millis,
) -> MemoryResult<MemoryChange> {
    let id: i64 = tx
        .query_opt(
            "SELECT id FROM blocks WHERE agent = $1 AND label = $2 FOR UPDATE",
            &[&agent, &label],
        )
        .map_err(failed)?
        .map(|r| r.get(0))
        .ok_or_else(|| MemoryError::NoBlock {
            agent: agent.to_string(),
            label: label.to_string(),
        })?;
    let history = history_of(tx, agent, label)?;
    let [.., previous, latest] = history.as_slice() else {
        return Err(MemoryError::NothingToUndo {
            label: label.to_string(),
        });
    };
    let version = latest.version + 1;
    let deleted_at = previous.deleted.then_some(now);
    tx.execute(
        "UPDATE blocks SET value = $2, version = $3, updated_at = $4, deleted_at = $5 WHERE id = $1",
        &[&id, &previous.value, &version, &now, &deleted_at],
    )
    .map_err(failed)?;
    record_version(
        tx,
        id,
        version,
        (&previous.value, previous.deleted),
        by,
        now,
    )?;
    Ok(change(agent, label, Some(latest.version), version))
}

/// The operations on one transaction.
impl Memory for PgTx<'_> {
    fn create_block(
        &self,
        new: &NewBlock,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)> {
        self.with(|tx| create(tx, new, by, now))
    }

    fn block(&self, agent: &str, label: &str) -> MemoryResult<Option<Block>> {
        live(&mut *self.conn(), agent, label, false)
    }

    fn blocks(&self, agent: Option<&str>) -> MemoryResult<Vec<Block>> {
        let rows = self
            .conn()
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM blocks WHERE deleted_at IS NULL AND ($1::TEXT IS NULL OR agent = $1)
                     ORDER BY agent, pinned DESC,
                       CASE kind WHEN 'core' THEN 0 WHEN 'working' THEN 1 ELSE 2 END, label COLLATE \"C\""
                ),
                &[&agent],
            )
            .map_err(failed)?;
        rows.iter().map(block_of).collect()
    }

    fn write_block(
        &self,
        write: &BlockWrite<'_>,
        by: &str,
        now: Millis,
    ) -> MemoryResult<(Block, MemoryChange)> {
        self.with(|tx| {
            let block = require(tx, write.agent, write.label)?;
            stale(&block, write.base)?;
            check_limit(write.label, write.value, block.char_limit)?;
            let version = block.version + 1;
            tx.execute(
                "UPDATE blocks SET value = $2, version = $3, updated_at = $4 WHERE id = $1",
                &[&block.id, &write.value, &version, &now],
            )
            .map_err(failed)?;
            record_version(tx, block.id, version, (write.value, false), by, now)?;
            let updated = require(tx, write.agent, write.label)?;
            Ok((
                updated,
                change(write.agent, write.label, Some(block.version), version),
            ))
        })
    }

    fn delete_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange> {
        self.with(|tx| {
            let block = require(tx, agent, label)?;
            let version = block.version + 1;
            tx.execute(
                "UPDATE blocks SET version = $2, updated_at = $3, deleted_at = $3 WHERE id = $1",
                &[&block.id, &version, &now],
            )
            .map_err(failed)?;
            record_version(tx, block.id, version, (&block.value, true), by, now)?;
            Ok(change(agent, label, Some(block.version), version))
        })
    }

    fn undo_block(
        &self,
        agent: &str,
        label: &str,
        by: &str,
        now: Millis,
    ) -> MemoryResult<MemoryChange> {
        self.with(|tx| undo(tx, agent, label, by, now))
    }

    fn history(&self, agent: &str, label: &str) -> MemoryResult<Vec<BlockVersion>> {
        history_of(&mut *self.conn(), agent, label)
    }

    fn add_archival(&self, agent: &str, content: &str, now: Millis) -> MemoryResult<i64> {
        let row = self
            .conn()
            .query_one(
                "INSERT INTO archival (agent, content, created_at) VALUES ($1, $2, $3) RETURNING id",
                &[&agent, &content, &now],
            )
            .map_err(failed)?;
        Ok(row.get(0))
    }

    fn archival_count(&self, agent: &str) -> MemoryResult<i64> {
        let row = self
            .conn()
            .query_one("SELECT COUNT(*) FROM archival WHERE agent = $1", &[&agent])
            .map_err(failed)?;
        Ok(row.get(0))
    }

    fn add_message(&self, m: &NewMessage<'_>, now: Millis) -> MemoryResult<i64> {
        let row = self
            .conn()
            .query_one(
                "INSERT INTO messages (agent, thread, role, content, created_at, lineage, turn)
                 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                &[
                    &m.agent,
                    &m.thread,
                    &m.role,
                    &m.content,
                    &now,
                    &crate::memory::inbox::lineage_text(m.lineage),
                    &m.turn,
                ],
            )
            .map_err(failed)?;
        Ok(row.get(0))
    }

    fn set_block_kind(
        &self,
        agent: &str,
        label: &str,
        kind: BlockKind,
        now: Millis,
    ) -> MemoryResult<Block> {
        self.with(|tx| {
            require(tx, agent, label)?;
            let row = tx
                .query_one(
                    &format!(
                        "UPDATE blocks SET kind = $3, updated_at = $4
                         WHERE agent = $1 AND label = $2 AND deleted_at IS NULL RETURNING {COLUMNS}"
                    ),
                    &[&agent, &label, &kind.as_str(), &now],
                )
                .map_err(failed)?;
            block_of(&row)
        })
    }

    fn search(&self, query: &SearchQuery) -> MemoryResult<Vec<SearchHit>> {
        super::search::search(self, query)
    }

    fn schema_version(&self) -> MemoryResult<i64> {
        super::schema::version_in(&mut *self.conn())
    }

    fn recent_messages(
        &self,
        agent: &str,
        thread: &str,
        limit: usize,
    ) -> MemoryResult<Vec<Message>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn()
            .query(
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM
                       (SELECT * FROM messages WHERE agent = $1 AND thread = $2
                        ORDER BY id DESC LIMIT $3) newest
                     ORDER BY id"
                ),
                &[&agent, &thread, &limit],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(message_of).collect())
    }

    fn count_messages(&self, agent: &str, thread: &str) -> MemoryResult<u64> {
        let n: i64 = self
            .conn()
            .query_one(
                "SELECT count(*) FROM messages WHERE agent = $1 AND thread = $2",
                &[&agent, &thread],
            )
            .map_err(failed)?
            .get(0);
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn messages_from_agents(&self, agent: &str, after: i64) -> MemoryResult<Vec<Message>> {
        let rows = self
            .conn()
            .query(
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages
                     WHERE agent = $1 AND role LIKE 'agent:%' AND id > $2 ORDER BY id"
                ),
                &[&agent, &after],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(message_of).collect())
    }

    fn message(&self, id: i64) -> MemoryResult<Option<Message>> {
        let row = self
            .conn()
            .query_opt(
                &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = $1"),
                &[&id],
            )
            .map_err(failed)?;
        Ok(row.as_ref().map(message_of))
    }
}
