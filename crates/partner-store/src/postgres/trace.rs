//! The trace on PostgreSQL: the same [`Trace`] as on SQLite. A record's
//! sequence number is taken under a transaction-scoped advisory lock, so
//! daemons appending at once get consecutive numbers, none twice.

use super::{PgTx, failed};
use crate::memory::{MemoryError, MemoryResult};
use crate::trace::TraceRecord;
use crate::trace::backend::Trace;
use crate::trace::query::{OlderPage, TraceFilter};

/// The advisory lock appending to the trace takes ("trace" in ASCII).
const TRACE_LOCK: i64 = 0x0074_7261_6365;

fn decoded(rows: &[postgres::Row]) -> Vec<TraceRecord> {
    // A record that does not decode is skipped, as on SQLite.
    rows.iter()
        .filter_map(|r| serde_json::from_str(r.get::<_, &str>(0)).ok())
        .collect()
}

/// The operations on one transaction.
impl Trace for PgTx<'_> {
    fn append(&self, mut record: TraceRecord) -> MemoryResult<TraceRecord> {
        let mut client = self.conn();
        let mut tx = client.transaction().map_err(failed)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&TRACE_LOCK])
            .map_err(failed)?;
        let last: i64 = tx
            .query_one("SELECT COALESCE(MAX(seq), 0) FROM trace", &[])
            .map_err(failed)?
            .get(0);
        record.seq = last as u64 + 1;
        record.id = format!("t{}", record.seq);
        let json = serde_json::to_string(&record).map_err(|e| MemoryError::Corrupt {
            what: "trace record",
            value: e.to_string(),
        })?;
        tx.execute(
            "INSERT INTO trace (seq, id, time, agent, verb, canonical, outcome, action_id, duration_us, record)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                &(record.seq as i64),
                &record.id,
                &record.time,
                &record.agent,
                &record.verb,
                &record.canonical,
                &record.outcome.as_str(),
                &record.action_id,
                &(record.duration_us as i64),
                &json,
            ],
        )
        .map_err(failed)?;
        tx.commit().map_err(failed)?;
        Ok(record)
    }

    fn newest_after(&self, after: u64, limit: usize) -> MemoryResult<(Vec<TraceRecord>, bool)> {
        let rows = self
            .conn()
            .query(
                "SELECT record FROM (SELECT seq, record FROM trace WHERE seq > $1
                     ORDER BY seq DESC LIMIT $2) newest ORDER BY seq",
                &[&(after as i64), &(limit as i64 + 1)],
            )
            .map_err(failed)?;
        // One more than the limit was read: there were older ones.
        let restart = rows.len() > limit;
        let skip = rows.len().saturating_sub(limit);
        Ok((decoded(&rows[skip..]), restart))
    }

    fn older(&self, before: u64, filter: &TraceFilter, limit: usize) -> MemoryResult<OlderPage> {
        let search = filter.search.as_ref().map(|s| s.to_lowercase());
        let rows = self
            .conn()
            .query(
                "SELECT record, seq FROM trace WHERE seq < $1
                   AND ($2::TEXT IS NULL OR agent = $2) AND ($3::TEXT IS NULL OR verb = $3)
                   AND ($4::TEXT IS NULL OR outcome = $4)
                   AND ($5::TEXT IS NULL OR strpos(lower(canonical), $5) > 0)
                 ORDER BY seq DESC LIMIT $6",
                &[
                    &(before as i64),
                    &filter.agent,
                    &filter.verb,
                    &filter.outcome,
                    &search,
                    &(limit as i64),
                ],
            )
            .map_err(failed)?;
        let next = (rows.len() >= limit)
            .then(|| rows.last().map(|r| r.get::<_, i64>(1) as u64))
            .flatten();
        Ok(OlderPage {
            records: decoded(&rows),
            next,
        })
    }

    fn record(&self, id: &str) -> MemoryResult<Option<TraceRecord>> {
        let row = self
            .conn()
            .query_opt("SELECT record FROM trace WHERE id = $1", &[&id])
            .map_err(failed)?;
        Ok(row.and_then(|r| serde_json::from_str(r.get::<_, &str>(0)).ok()))
    }

    fn by_action(&self, action_id: &str) -> MemoryResult<Option<TraceRecord>> {
        let row = self
            .conn()
            .query_opt(
                "SELECT record FROM trace WHERE action_id = $1 ORDER BY seq DESC LIMIT 1",
                &[&action_id],
            )
            .map_err(failed)?;
        Ok(row.and_then(|r| serde_json::from_str(r.get::<_, &str>(0)).ok()))
    }

    fn len(&self) -> MemoryResult<u64> {
        let n: i64 = self
            .conn()
            .query_one("SELECT COUNT(*) FROM trace", &[])
            .map_err(failed)?
            .get(0);
        Ok(n as u64)
    }
}
