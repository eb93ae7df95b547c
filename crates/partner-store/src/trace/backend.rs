//! [`Trace`]: the execution trace's operations — append a record with
//! the next sequence number, read the newest, page through older ones
//! with a filter, find one, count — behind one interface with two back
//! ends, the SQLite store and PostgreSQL (`crate::postgres::PgStore`).
//! Sequence numbers have no gaps and no repeats, whatever writes at once.

use rusqlite::Connection;

use super::query::{self, OlderPage, TraceFilter};
use super::store;
use crate::memory::MemoryResult;
use partner_protocol::trace::TraceRecord;

/// A constellation's trace, on whichever database holds it.
pub trait Trace {
    /// Stores `record` as the next in the trace (its `seq` and `id`, `t`
    /// and the number, set here); the record as stored.
    fn append(&self, record: TraceRecord) -> MemoryResult<TraceRecord>;
    /// The newest records after `after`, at most `limit`, oldest first;
    /// and whether older ones after `after` were left out.
    fn newest_after(&self, after: u64, limit: usize) -> MemoryResult<(Vec<TraceRecord>, bool)>;
    /// At most `limit` records before `before` that `filter` admits,
    /// newest first, and where the next page starts.
    fn older(&self, before: u64, filter: &TraceFilter, limit: usize) -> MemoryResult<OlderPage>;
    /// One record by id (`t12`).
    fn record(&self, id: &str) -> MemoryResult<Option<TraceRecord>>;
    /// The newest record of an action, by the action's id
    /// (`ada-m42:1:1`).
    fn by_action(&self, action_id: &str) -> MemoryResult<Option<TraceRecord>>;
    /// How many records there are.
    fn len(&self) -> MemoryResult<u64>;
    /// True when there is none.
    fn is_empty(&self) -> MemoryResult<bool> {
        Ok(self.len()? == 0)
    }
    /// Every record, oldest first (for replay and export: the whole
    /// trace in memory).
    fn all_records(&self) -> MemoryResult<Vec<TraceRecord>> {
        loop {
            let len = usize::try_from(self.len()?).unwrap_or(usize::MAX);
            let (records, left_out) = self.newest_after(0, len)?;
            // A record appended between the count and the read leaves the
            // oldest out: read again.
            if !left_out {
                return Ok(records);
            }
        }
    }
}

/// The operations on one connection, in whatever transaction it is in:
/// an action's record is appended in the action's transaction.
impl Trace for Connection {
    fn append(&self, mut record: TraceRecord) -> MemoryResult<TraceRecord> {
        record.seq = store::next_seq(self)?;
        record.id = format!("t{}", record.seq);
        store::insert(self, &record)?;
        Ok(record)
    }

    fn newest_after(&self, after: u64, limit: usize) -> MemoryResult<(Vec<TraceRecord>, bool)> {
        query::newest_after(self, after, limit)
    }

    fn older(&self, before: u64, filter: &TraceFilter, limit: usize) -> MemoryResult<OlderPage> {
        query::older(self, before, filter, limit)
    }

    fn record(&self, id: &str) -> MemoryResult<Option<TraceRecord>> {
        store::get(self, id)
    }

    fn by_action(&self, action_id: &str) -> MemoryResult<Option<TraceRecord>> {
        store::by_action(self, action_id)
    }

    fn len(&self) -> MemoryResult<u64> {
        store::count(self)
    }
}
