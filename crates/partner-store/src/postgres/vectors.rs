//! Vectors for search by meaning on PostgreSQL: the same [`Vectors`] as
//! on SQLite, per embedder, each row numbered (`seq`) as it is written or
//! replaced so an index in memory reads only what is new. Scanned in
//! memory as on SQLite (no vector extension needed).

use super::{PgTx, failed};
use crate::memory::MemoryResult;
use crate::memory::search::{SearchDomain, SearchHit, SearchQuery};
use crate::memory::vectors::{Item, Signature, VectorRow, Vectors, domain_name, domain_of};

/// Items whose vector is missing or stale (`$1` the embedder, `$2` the
/// limit).
const PENDING: &str = "
        SELECT 'blocks', b.id, b.value, b.updated_at FROM blocks b
          LEFT JOIN vectors v ON v.domain = 'blocks' AND v.ref_id = b.id AND v.embedder = $1
          WHERE b.deleted_at IS NULL AND b.value <> ''
            AND (v.ref_id IS NULL OR v.item_time < b.updated_at)
        UNION ALL
        SELECT 'archival', a.id, a.content, a.created_at FROM archival a
          LEFT JOIN vectors v ON v.domain = 'archival' AND v.ref_id = a.id AND v.embedder = $1
          WHERE v.ref_id IS NULL
        UNION ALL
        SELECT 'conversations', m.id, m.content, m.created_at FROM messages m
          LEFT JOIN vectors v ON v.domain = 'conversations' AND v.ref_id = m.id AND v.embedder = $1
          WHERE v.ref_id IS NULL
        ORDER BY 4 LIMIT $2";

/// Items to embed, in all.
const EMBEDDABLE: &str =
    "SELECT (SELECT count(*) FROM blocks WHERE deleted_at IS NULL AND value <> '')
              + (SELECT count(*) FROM archival) + (SELECT count(*) FROM messages)";

impl Vectors for PgTx<'_> {
    fn vectors_pending(&self, embedder: &str, limit: usize) -> MemoryResult<Vec<Item>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn()
            .query(PENDING, &[&embedder, &limit])
            .map_err(failed)?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(Item {
                    domain: domain_of(r.get::<_, &str>(0))?,
                    id: r.get(1),
                    text: r.get(2),
                    time: r.get(3),
                })
            })
            .collect())
    }

    fn vectors_progress(&self, embedder: &str) -> MemoryResult<(usize, usize)> {
        let mut client = self.conn();
        let waiting: i64 = client
            .query_one(
                &format!("SELECT count(*) FROM ({PENDING}) waiting"),
                &[&embedder, &i64::MAX],
            )
            .map_err(failed)?
            .get(0);
        let total: i64 = client.query_one(EMBEDDABLE, &[]).map_err(failed)?.get(0);
        Ok(((total - waiting).max(0) as usize, waiting.max(0) as usize))
    }

    fn put_vector(&self, embedder: &str, item: &Item, vector: &[f32]) -> MemoryResult<()> {
        let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.conn()
            .execute(
                "INSERT INTO vectors (domain, ref_id, embedder, item_time, dims, vec)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (domain, ref_id, embedder) DO UPDATE SET
                     item_time = EXCLUDED.item_time, dims = EXCLUDED.dims, vec = EXCLUDED.vec,
                     seq = nextval('vectors_seq')",
                &[
                    &domain_name(item.domain),
                    &item.id,
                    &embedder,
                    &item.time,
                    &(vector.len() as i64),
                    &bytes,
                ],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn forget_vectors(&self, embedder: &str) -> MemoryResult<usize> {
        let gone = self
            .conn()
            .execute("DELETE FROM vectors WHERE embedder = $1", &[&embedder])
            .map_err(failed)?;
        Ok(gone as usize)
    }

    fn vectors_since(&self, after: i64, embedder: &str) -> MemoryResult<Vec<VectorRow>> {
        let rows = self
            .conn()
            .query(
                "SELECT v.seq, v.domain, v.ref_id, v.dims, v.vec, v.item_time,
                        CASE v.domain
                          WHEN 'blocks' THEN (SELECT agent FROM blocks WHERE id = v.ref_id)
                          WHEN 'archival' THEN (SELECT agent FROM archival WHERE id = v.ref_id)
                          ELSE (SELECT agent FROM messages WHERE id = v.ref_id) END,
                        CASE v.domain WHEN 'conversations'
                          THEN (SELECT role FROM messages WHERE id = v.ref_id) END
                   FROM vectors v
                  WHERE v.seq > $1 AND v.embedder = $2 ORDER BY v.seq",
                &[&after, &embedder],
            )
            .map_err(failed)?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get(0),
                    r.get(1),
                    r.get(2),
                    r.get(3),
                    r.get(4),
                    r.get(5),
                    r.get(6),
                    r.get(7),
                )
            })
            .collect())
    }

    fn item_hit(
        &self,
        query: &SearchQuery,
        domain: SearchDomain,
        id: i64,
    ) -> MemoryResult<Option<SearchHit>> {
        if !query.domains.contains(&domain) {
            return Ok(None);
        }
        let since = query.since.unwrap_or(i64::MIN);
        let until = query.until.unwrap_or(i64::MAX);
        let sql = match domain {
            SearchDomain::Blocks => {
                "SELECT b.agent, b.id, b.label, NULL::text, substr(b.value, 1, 160), 0.0::float8, b.updated_at
                   FROM blocks b
                  WHERE b.id = $1 AND b.deleted_at IS NULL
                    AND ($2::text IS NULL OR b.agent = $2 OR $6 = 2 OR ($6 = 1 AND b.shared))
                    AND b.updated_at >= $3 AND b.updated_at < $4 AND $5::text IS NULL"
            }
            SearchDomain::Archival => {
                "SELECT a.agent, a.id, NULL::text, NULL::text, substr(a.content, 1, 160), 0.0::float8, a.created_at
                   FROM archival a
                  WHERE a.id = $1 AND ($2::text IS NULL OR a.agent = $2 OR $6 = 2)
                    AND a.created_at >= $3 AND a.created_at < $4 AND $5::text IS NULL"
            }
            SearchDomain::Conversations => {
                "SELECT m.agent, m.id, m.thread, m.role, substr(m.content, 1, 160), 0.0::float8, m.created_at
                   FROM messages m
                  WHERE m.id = $1
                    AND ($2::text IS NULL OR m.agent = $2 OR m.role = 'agent:' || $2 OR $6 = 2)
                    AND m.created_at >= $3 AND m.created_at < $4 AND ($5::text IS NULL OR m.role = $5)"
            }
        };
        let row = self
            .conn()
            .query_opt(
                sql,
                &[
                    &id,
                    &query.agent,
                    &since,
                    &until,
                    &query.role,
                    &(query.reach.code() as i32),
                ],
            )
            .map_err(failed)?;
        Ok(row.map(|r| super::search::hit_of(domain, &r)))
    }

    fn embeddable(&self) -> MemoryResult<i64> {
        Ok(self
            .conn()
            .query_one(EMBEDDABLE, &[])
            .map_err(failed)?
            .get(0))
    }

    fn embed_signature(&self) -> MemoryResult<Signature> {
        let r = self
            .conn()
            .query_one(
                "SELECT (SELECT coalesce(max(id), 0) FROM archival),
                        (SELECT coalesce(max(id), 0) FROM messages),
                        (SELECT coalesce(max(updated_at), 0) FROM blocks),
                        (SELECT count(*) FROM blocks WHERE deleted_at IS NULL)",
                &[],
            )
            .map_err(failed)?;
        Ok((r.get(0), r.get(1), r.get(2), r.get(3)))
    }
}
