//! Reading part of a long trace: the newest records after a point (what
//! the console holds and follows) and, page by page, the older records a
//! filter admits — so that a reader holds a window, whatever the trace's
//! length, and a filter still searches all of it.

use rusqlite::{Connection, params};

use super::store::decode;
use crate::memory::MemoryResult;
pub use partner_protocol::trace::{OlderPage, TraceFilter, TraceRecord};

/// The records after `after` (a sequence number), oldest first, but only
/// the newest `limit` of them; true when older ones were left out (the
/// reader's window then starts anew).
pub fn newest_after(
    conn: &Connection,
    after: u64,
    limit: usize,
) -> MemoryResult<(Vec<TraceRecord>, bool)> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, record FROM trace WHERE seq > ?1 ORDER BY seq DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after as i64, limit as i64 + 1], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
    })?;
    let mut records = Vec::new();
    let mut read = 0;
    for row in rows {
        let (seq, json) = row?;
        read += 1;
        if read > limit {
            break;
        }
        // A record that does not decode is skipped (`partner trace`
        // reports it).
        if let Ok(record) = decode(seq, json) {
            records.push(record);
        }
    }
    records.reverse();
    Ok((records, read > limit))
}

/// Rows read at most for one page of [`older`]: a filter that admits
/// almost nothing returns what it found so far and where to go on.
pub const SCAN_PER_PAGE: usize = 200_000;

/// At most `limit` records before `before` that `filter` admits, newest
/// first, reading at most [`SCAN_PER_PAGE`] rows.
pub fn older(
    conn: &Connection,
    before: u64,
    filter: &TraceFilter,
    limit: usize,
) -> MemoryResult<OlderPage> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, record FROM trace WHERE seq < ?1
           AND (?2 IS NULL OR agent = ?2) AND (?3 IS NULL OR verb = ?3)
           AND (?4 IS NULL OR outcome = ?4)
         ORDER BY seq DESC LIMIT ?5",
    )?;
    let search = filter.lowered();
    let mut page = OlderPage::default();
    let mut at = before;
    let mut scanned = 0;
    while scanned < SCAN_PER_PAGE {
        let batch = 2_000.min(SCAN_PER_PAGE - scanned);
        let rows = stmt.query_map(
            params![
                at as i64,
                filter.agent,
                filter.verb,
                filter.outcome,
                batch as i64
            ],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?)),
        )?;
        let mut read = 0;
        for row in rows {
            let (seq, json) = row?;
            read += 1;
            at = seq as u64;
            if let Ok(record) = decode(seq, json)
                && filter.admits(&record, search.as_deref())
            {
                page.records.push(record);
                if page.records.len() >= limit {
                    page.next = Some(at);
                    return Ok(page);
                }
            }
        }
        scanned += read;
        if read < batch {
            // The start of the trace.
            return Ok(page);
        }
    }
    page.next = Some(at);
    Ok(page)
}
