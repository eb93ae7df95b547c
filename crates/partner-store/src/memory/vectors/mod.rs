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

pub use partner_protocol::memory::IndexStatus;

pub use hybrid::{HybridHit, Via, hybrid, nearest_only};
pub use index::{VectorIndex, VectorRow};

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

/// A domain's name as the vectors table keeps it.
pub fn domain_name(d: SearchDomain) -> &'static str {
    match d {
        SearchDomain::Blocks => "blocks",
        SearchDomain::Archival => "archival",
        SearchDomain::Conversations => "conversations",
    }
}

/// The domain a vectors row names.
pub fn domain_of(name: &str) -> Option<SearchDomain> {
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
    let total: i64 = conn.query_row(EMBEDDABLE, [], |r| r.get(0))?;
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

/// A fingerprint of what there is to embed (newest archival entry and
/// message, newest block change, live blocks): when it has not changed
/// since nothing was waiting, there is still nothing to do.
pub type Signature = (i64, i64, i64, i64);

/// The vectors of a constellation, on whichever database holds them:
/// what waits for one, storing them, reading them into an index, and
/// reading one item through a search's filters.
pub trait Vectors {
    /// Up to `limit` items without a vector from `embedder` for their
    /// current text, oldest first.
    fn vectors_pending(&self, embedder: &str, limit: usize) -> MemoryResult<Vec<Item>>;
    /// How many items have a current vector from `embedder`, and how many
    /// wait for one.
    fn vectors_progress(&self, embedder: &str) -> MemoryResult<(usize, usize)>;
    /// Stores the vector `embedder` made for `item`.
    fn put_vector(&self, embedder: &str, item: &Item, vector: &[f32]) -> MemoryResult<()>;
    /// Forgets every vector of `embedder`; how many.
    fn forget_vectors(&self, embedder: &str) -> MemoryResult<usize>;
    /// `embedder`'s vectors written after position `after` (in the order
    /// they were written), with their owners.
    fn vectors_since(&self, after: i64, embedder: &str) -> MemoryResult<Vec<VectorRow>>;
    /// One item as a search shows it, if the query's filters admit it
    /// (the start of its text as the snippet).
    fn item_hit(
        &self,
        query: &super::search::SearchQuery,
        domain: SearchDomain,
        id: i64,
    ) -> MemoryResult<Option<super::search::SearchHit>>;
    /// How many items there are to embed.
    fn embeddable(&self) -> MemoryResult<i64>;
    /// What there is to embed, as a fingerprint.
    fn embed_signature(&self) -> MemoryResult<Signature>;
}

/// What a search by meaning reads: memory's full-text search and the
/// vectors.
pub trait Searchable: super::backend::Memory + Vectors {}

impl<T: super::backend::Memory + Vectors + ?Sized> Searchable for T {}

/// Items to embed, in all.
const EMBEDDABLE: &str =
    "SELECT (SELECT count(*) FROM blocks WHERE deleted_at IS NULL AND value != '')
              + (SELECT count(*) FROM archival) + (SELECT count(*) FROM messages)";

/// The operations on one SQLite connection.
impl Vectors for Connection {
    fn vectors_pending(&self, embedder: &str, limit: usize) -> MemoryResult<Vec<Item>> {
        pending(self, embedder, limit)
    }

    fn vectors_progress(&self, embedder: &str) -> MemoryResult<(usize, usize)> {
        progress(self, embedder)
    }

    fn put_vector(&self, embedder: &str, item: &Item, vector: &[f32]) -> MemoryResult<()> {
        put(self, embedder, item, vector)
    }

    fn forget_vectors(&self, embedder: &str) -> MemoryResult<usize> {
        Ok(self.execute("DELETE FROM vectors WHERE embedder = ?1", [embedder])?)
    }

    fn vectors_since(&self, after: i64, embedder: &str) -> MemoryResult<Vec<VectorRow>> {
        index::since(self, after, embedder)
    }

    fn item_hit(
        &self,
        query: &super::search::SearchQuery,
        domain: SearchDomain,
        id: i64,
    ) -> MemoryResult<Option<super::search::SearchHit>> {
        hybrid::filtered(self, query, domain, id)
    }

    fn embeddable(&self) -> MemoryResult<i64> {
        Ok(self.query_row(EMBEDDABLE, [], |r| r.get(0))?)
    }

    fn embed_signature(&self) -> MemoryResult<Signature> {
        Ok(self.query_row(
            "SELECT (SELECT coalesce(max(rowid), 0) FROM archival),
                    (SELECT coalesce(max(rowid), 0) FROM messages),
                    (SELECT coalesce(max(updated_at), 0) FROM blocks),
                    (SELECT count(*) FROM blocks WHERE deleted_at IS NULL)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?)
    }
}
