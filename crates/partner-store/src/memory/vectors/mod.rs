//! Vectors for search by meaning, in the same database as the text: what
//! still needs a vector (for the embedder in use), storing one, an index
//! held in memory that catches up with new rows, and hybrid search — the
//! full-text hits and the nearest vectors fused by relative score, with
//! the same filters (agent and reach, time, role) as full-text search.
//!
//! The store never calls an embedder: whoever has one embeds what
//! [`pending`] lists and [`put`]s the vectors, so a write never waits on a
//! model and an embedder that is down delays only the vectors.

mod hybrid;
mod index;

use rusqlite::{Connection, params};

pub use hybrid::{HybridHit, Via, hybrid, nearest_only};
pub use index::VectorIndex;

/// How far the vectors have caught up with memory, for the status line
/// and `partner memory reindex`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexStatus {
    /// The embedder whose vectors count.
    pub embedder: String,
    /// Items with a current vector.
    pub done: usize,
    /// Items waiting for one.
    pub waiting: usize,
    /// Why the last attempt failed (the embedder is down…), if it did.
    pub problem: Option<String>,
}

use super::error::MemoryResult;
use super::search::SearchDomain;
use partner_core::clock::Millis;

/// Something to embed: an item and its text as it is now.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Where it lives.
    pub domain: SearchDomain,
    /// Its row id there.
    pub id: i64,
    /// Its text.
    pub text: String,
    /// Its time (a block's last change).
    pub time: Millis,
}

pub(super) fn domain_name(d: SearchDomain) -> &'static str {
    match d {
        SearchDomain::Blocks => "blocks",
        SearchDomain::Archival => "archival",
        SearchDomain::Conversations => "conversations",
    }
}

pub(super) fn domain_of(name: &str) -> Option<SearchDomain> {
    Some(match name {
        "blocks" => SearchDomain::Blocks,
        "archival" => SearchDomain::Archival,
        "conversations" => SearchDomain::Conversations,
        _ => return None,
    })
}

/// Items whose vector is missing or stale (`?1` the embedder, `?2` the
/// limit).
const PENDING: &str = "
        SELECT 'blocks', b.id, b.value, b.updated_at FROM blocks b
          LEFT JOIN vectors v ON v.domain = 'blocks' AND v.ref_id = b.id AND v.embedder = ?1
          WHERE b.deleted_at IS NULL AND b.value != ''
            AND (v.ref_id IS NULL OR v.item_time < b.updated_at)
        UNION ALL
        SELECT 'archival', a.id, a.content, a.created_at FROM archival a
          LEFT JOIN vectors v ON v.domain = 'archival' AND v.ref_id = a.id AND v.embedder = ?1
          WHERE v.ref_id IS NULL
        UNION ALL
        SELECT 'conversations', m.id, m.content, m.created_at FROM messages m
          LEFT JOIN vectors v ON v.domain = 'conversations' AND v.ref_id = m.id AND v.embedder = ?1
          WHERE v.ref_id IS NULL
        ORDER BY 4 LIMIT ?2";

/// Up to `limit` items without a vector from `embedder` for their current
/// text, oldest first.
pub fn pending(conn: &Connection, embedder: &str, limit: usize) -> MemoryResult<Vec<Item>> {
    let mut stmt = conn.prepare_cached(PENDING)?;
    let rows = stmt.query_map(params![embedder, limit as i64], |r| {
        Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (domain, id, text, time) = row?;
        if let Some(domain) = domain_of(&domain) {
            out.push(Item {
                domain,
                id,
                text,
                time,
            });
        }
    }
    Ok(out)
}

/// How many items have a current vector from `embedder`, and how many
/// are waiting for one (for progress).
pub fn progress(conn: &Connection, embedder: &str) -> MemoryResult<(usize, usize)> {
    let waiting: i64 = conn.query_row(
        &format!("SELECT count(*) FROM ({PENDING})"),
        params![embedder, i64::MAX],
        |r| r.get(0),
    )?;
    let total: i64 = conn.query_row(
        "SELECT (SELECT count(*) FROM blocks WHERE deleted_at IS NULL AND value != '')
              + (SELECT count(*) FROM archival) + (SELECT count(*) FROM messages)",
        [],
        |r| r.get(0),
    )?;
    Ok(((total - waiting).max(0) as usize, waiting.max(0) as usize))
}

/// Stores the vector `embedder` made for `item`.
pub fn put(conn: &Connection, embedder: &str, item: &Item, vector: &[f32]) -> MemoryResult<()> {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    conn.prepare_cached(
        "INSERT OR REPLACE INTO vectors (domain, ref_id, embedder, item_time, dims, vec)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        domain_name(item.domain),
        item.id,
        embedder,
        item.time,
        vector.len() as i64,
        bytes
    ])?;
    Ok(())
}
