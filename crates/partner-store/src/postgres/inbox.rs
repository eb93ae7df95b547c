//! The inbox on PostgreSQL: the same [`Inbox`] as on SQLite.

use super::{PgTx, failed};
use crate::memory::MemoryResult;
use crate::memory::inbox::{Delivery, Inbox, NewDelivery, Settled, lineage_text};
use partner_core::clock::Millis;

/// The advisory lock greeting takes, with the agent's name ("greet").
const GREET_LOCK: i32 = 0x6772_6565;

/// The columns [`delivery_of`] reads, in order.
const COLUMNS: &str = "id, agent, thread, sender, content, lineage, created_at, attempts";

fn delivery_of(r: &postgres::Row) -> Delivery {
    let lineage: String = r.get(5);
    Delivery {
        id: r.get(0),
        agent: r.get(1),
        thread: r.get(2),
        from: r.get(3),
        content: r.get(4),
        lineage: serde_json::from_str(&lineage).unwrap_or_default(),
        created_at: r.get(6),
        attempts: r.get(7),
    }
}

/// The operations on one transaction.
impl Inbox for PgTx<'_> {
    fn deliver(&self, new: &NewDelivery<'_>, now: Millis) -> MemoryResult<i64> {
        let row = self
            .conn()
            .query_one(
                "INSERT INTO inbox (agent, thread, sender, content, lineage, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &[
                    &new.agent,
                    &new.thread,
                    &new.from,
                    &new.content,
                    &lineage_text(new.lineage),
                    &now,
                ],
            )
            .map_err(failed)?;
        Ok(row.get(0))
    }

    fn waiting_for(&self, agent: &str, limit: usize) -> MemoryResult<Vec<Delivery>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn()
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM inbox WHERE agent = $1 AND answered_at IS NULL
                     ORDER BY id LIMIT $2"
                ),
                &[&agent, &limit],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(delivery_of).collect())
    }

    fn waiting_counts(&self) -> MemoryResult<Vec<(String, u64)>> {
        let rows = self
            .conn()
            .query(
                "SELECT agent, count(*) FROM inbox WHERE answered_at IS NULL
                 GROUP BY agent ORDER BY agent",
                &[],
            )
            .map_err(failed)?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1).max(0) as u64))
            .collect())
    }

    fn greet(&self, new: &NewDelivery<'_>, now: Millis) -> MemoryResult<bool> {
        // Daemons starting at once decide one after the other: the lock
        // is held until this transaction ends.
        let spoken = self.with(|tx| {
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[&GREET_LOCK, &new.agent],
            )
            .map_err(failed)?;
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM inbox WHERE agent = $1
                     UNION ALL SELECT 1 FROM messages WHERE agent = $1 LIMIT 1",
                    &[&new.agent],
                )
                .map_err(failed)?
                .is_some())
        })?;
        if spoken {
            return Ok(false);
        }
        self.deliver(new, now)?;
        Ok(true)
    }

    fn begin(&self, id: i64) -> MemoryResult<Option<i64>> {
        Ok(self
            .conn()
            .query_opt(
                "UPDATE inbox SET attempts = attempts + 1
                 WHERE id = $1 AND answered_at IS NULL RETURNING attempts",
                &[&id],
            )
            .map_err(failed)?
            .map(|r| r.get(0)))
    }

    fn settle(&self, id: i64, how: Settled, now: Millis) -> MemoryResult<bool> {
        let changed = self
            .conn()
            .execute(
                "UPDATE inbox SET answered_at = $2, outcome = $3
                 WHERE id = $1 AND answered_at IS NULL",
                &[&id, &now, &how.as_str()],
            )
            .map_err(failed)?;
        Ok(changed > 0)
    }

    fn forget_turn(&self, agent: &str, turn: &str) -> MemoryResult<u64> {
        self.conn()
            .execute(
                "DELETE FROM messages WHERE agent = $1 AND turn = $2",
                &[&agent, &turn],
            )
            .map_err(failed)
    }
}
