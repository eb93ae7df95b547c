//! Learned phrasings on PostgreSQL: the same [`Phrasings`] as on SQLite.

use super::{PgStore, failed};
use crate::memory::MemoryResult;
use crate::memory::learned::{LearnedRule, MAX_LEARNED, Phrasings};
use partner_core::clock::Millis;

impl Phrasings for PgStore {
    fn learn(&self, rule: &str, words: &str, action: &str, now: Millis) -> MemoryResult<i64> {
        let row = self.transaction(|tx| {
            tx.conn()
                .query_one(
                    "INSERT INTO learned_rules (rule, words, action, created_at)
                 VALUES ($1, $2, $3, $4) RETURNING id",
                    &[&rule, &words, &action, &now],
                )
                .map_err(failed)
        })?;
        Ok(row.get(0))
    }

    fn forget(&self, id: i64) -> MemoryResult<bool> {
        let gone = self.transaction(|tx| {
            tx.conn()
                .execute("DELETE FROM learned_rules WHERE id = $1", &[&id])
                .map_err(failed)
        })?;
        Ok(gone > 0)
    }

    fn phrasings(&self) -> MemoryResult<Vec<LearnedRule>> {
        let rows = self.transaction(|tx| tx.conn().query(
                "SELECT id, rule, words, action, created_at FROM learned_rules ORDER BY id LIMIT $1",
                &[&(MAX_LEARNED as i64)],
            ).map_err(failed))?;
        Ok(rows
            .iter()
            .map(|r| LearnedRule {
                id: r.get(0),
                rule: r.get(1),
                words: r.get(2),
                action: r.get(3),
                created_at: r.get(4),
            })
            .collect())
    }

    fn signature(&self) -> MemoryResult<(i64, i64)> {
        let row = self.transaction(|tx| {
            tx.conn()
                .query_one(
                    "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM learned_rules",
                    &[],
                )
                .map_err(failed)
        })?;
        Ok((row.get(0), row.get(1)))
    }

    fn forget_all(&self) -> MemoryResult<usize> {
        let gone = self.transaction(|tx| {
            tx.conn()
                .execute("DELETE FROM learned_rules", &[])
                .map_err(failed)
        })?;
        Ok(gone as usize)
    }
}
