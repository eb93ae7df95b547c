//! Vectors for search by meaning, in the same database as the text: what
//! still needs a vector (for the embedder in use), storing one, an index
//! held in memory that catches up with new rows, and hybrid search — the
//! full-text hits and the nearest vectors fused by reciprocal rank, with
//! the same filters (agent and reach, time, role) as full-text search.
//!
//! The store never calls an embedder: whoever has one embeds what
//! [`pending`] lists and [`put`]s the vectors, so a write never waits on a
//! model and an embedder that is down delays only the vectors.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::error::MemoryResult;
use super::search::{SearchDomain, SearchHit, SearchQuery, hit_of, search};
use crate::clock::Millis;

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

fn domain_name(d: SearchDomain) -> &'static str {
    match d {
        SearchDomain::Blocks => "blocks",
        SearchDomain::Archival => "archival",
        SearchDomain::Conversations => "conversations",
    }
}

fn domain_of(name: &str) -> Option<SearchDomain> {
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
          LEFT JOIN vectors v ON v.domain = 'blocks' AND v.ref_id = b.id
          WHERE b.deleted_at IS NULL AND b.value != ''
            AND (v.ref_id IS NULL OR v.embedder != ?1 OR v.item_time < b.updated_at)
        UNION ALL
        SELECT 'archival', a.id, a.content, a.created_at FROM archival a
          LEFT JOIN vectors v ON v.domain = 'archival' AND v.ref_id = a.id
          WHERE v.ref_id IS NULL OR v.embedder != ?1
        UNION ALL
        SELECT 'conversations', m.id, m.content, m.created_at FROM messages m
          LEFT JOIN vectors v ON v.domain = 'conversations' AND v.ref_id = m.id
          WHERE v.ref_id IS NULL OR v.embedder != ?1
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

/// The vectors of one embedder, normalized and quantized to 8 bits (a
/// quarter of the memory to scan; cosine within about 1%), held in
/// memory; catches up with rows written since (by any process) on
/// [`VectorIndex::refresh`].
#[derive(Debug, Default)]
pub struct VectorIndex {
    embedder: String,
    last_rowid: i64,
    dims: usize,
    keys: Vec<(SearchDomain, i64)>,
    at: HashMap<(SearchDomain, i64), usize>,
    data: Vec<i8>,
}

/// A normalized vector's components as 8-bit integers (`x * 127`).
fn quantized(v: &[f32]) -> Vec<i8> {
    v.iter()
        .map(|x| (x * 127.0).round().clamp(-127.0, 127.0) as i8)
        .collect()
}

/// Rows from which a scan is split over two threads.
const PARALLEL_ROWS: usize = 20_000;

/// The best `k` of `rows` (`dims` wide, the first numbered `first`) for
/// `q`: (score, row), unordered.
fn best_of(rows: &[i8], dims: usize, first: usize, q: &[i8], k: usize) -> Vec<(i32, usize)> {
    let mut best: std::collections::BinaryHeap<std::cmp::Reverse<(i32, usize)>> =
        std::collections::BinaryHeap::with_capacity(k + 1);
    for (i, row) in rows.chunks_exact(dims).enumerate() {
        let score = dot(row, q);
        if best.len() < k {
            best.push(std::cmp::Reverse((score, first + i)));
        } else if best.peek().is_some_and(|w| score > w.0.0) {
            best.pop();
            best.push(std::cmp::Reverse((score, first + i)));
        }
    }
    best.into_iter().map(|r| r.0).collect()
}

/// The dot product of two quantized vectors (in lanes the compiler turns
/// into vector instructions).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let (ac, ar) = a.as_chunks::<16>();
    let (bc, br) = b.as_chunks::<16>();
    for (x, y) in ac.iter().zip(bc) {
        for k in 0..16 {
            lanes[k] += i32::from(x[k]) * i32::from(y[k]);
        }
    }
    let tail: i32 = ar
        .iter()
        .zip(br)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    lanes.iter().sum::<i32>() + tail
}

impl VectorIndex {
    /// An empty index of `embedder`'s vectors.
    pub fn new(embedder: &str) -> Self {
        VectorIndex {
            embedder: embedder.to_string(),
            ..VectorIndex::default()
        }
    }

    /// The embedder whose vectors it holds.
    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when it holds none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Reads the rows written since the last refresh.
    pub fn refresh(&mut self, conn: &Connection) -> MemoryResult<()> {
        let mut stmt = conn.prepare_cached(
            "SELECT rowid, domain, ref_id, dims, vec FROM vectors
             WHERE rowid > ?1 AND embedder = ?2 ORDER BY rowid",
        )?;
        let rows = stmt.query_map(params![self.last_rowid, self.embedder], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Vec<u8>>(4)?,
            ))
        })?;
        for row in rows {
            let (rowid, domain, id, dims, bytes) = row?;
            self.last_rowid = self.last_rowid.max(rowid);
            let Some(domain) = domain_of(&domain) else {
                continue;
            };
            let dims = dims.max(0) as usize;
            if bytes.len() != dims * 4 || dims == 0 || (self.dims != 0 && dims != self.dims) {
                continue;
            }
            self.dims = dims;
            let mut v: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm.is_finite() && norm > 0.0 {
                v.iter_mut().for_each(|x| *x /= norm);
            } else {
                v.iter_mut().for_each(|x| *x = 0.0);
            }
            let v = quantized(&v);
            match self.at.get(&(domain, id)) {
                Some(&i) => self.data[i * dims..(i + 1) * dims].copy_from_slice(&v),
                None => {
                    self.at.insert((domain, id), self.keys.len());
                    self.keys.push((domain, id));
                    self.data.extend_from_slice(&v);
                }
            }
        }
        Ok(())
    }

    /// The `k` items nearest `query` (by cosine), best first.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<((SearchDomain, i64), f32)> {
        if query.len() != self.dims || self.dims == 0 || k == 0 {
            return Vec::new();
        }
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return Vec::new();
        }
        let q = quantized(&query.iter().map(|x| x / norm).collect::<Vec<f32>>());
        // A large index is scanned in two halves at once (the machine has
        // two cores); each keeps its best k.
        let rows = self.keys.len();
        let half = if rows >= PARALLEL_ROWS {
            rows.div_ceil(2)
        } else {
            rows
        };
        let scan = |from: usize, to: usize| {
            best_of(
                &self.data[from * self.dims..to * self.dims],
                self.dims,
                from,
                &q,
                k,
            )
        };
        let mut all = if half < rows {
            std::thread::scope(|s| {
                match std::thread::Builder::new().spawn_scoped(s, || scan(half, rows)) {
                    Ok(second) => {
                        let mut first = scan(0, half);
                        first.extend(second.join().unwrap_or_default());
                        first
                    }
                    // No thread to be had: one scan.
                    Err(_) => scan(0, rows),
                }
            })
        } else {
            scan(0, rows)
        };
        all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        all.truncate(k);
        let scale = 127.0f32 * 127.0;
        all.into_iter()
            .map(|(s, i)| (self.keys[i], s as f32 / scale))
            .collect()
    }
}

/// Which side of a hybrid search found a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// Full-text search only.
    Fts,
    /// Meaning only.
    Vector,
    /// Both.
    Both,
}

/// A hit of a hybrid search: the item, its fused score (higher is better)
/// and which side found it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybridHit {
    /// The item, as full-text search shows it (a hit found by meaning only
    /// shows the start of its text).
    #[serde(flatten)]
    pub hit: SearchHit,
    /// Reciprocal-rank score.
    pub score: f64,
    /// Which side found it.
    pub via: Via,
}

/// How similar to the query, relative to the most similar item, an item
/// must be for the vector side to offer it.
const MIN_RELATIVE: f32 = 0.5;

/// The constant of reciprocal rank fusion (the usual 60).
const RRF_K: f64 = 60.0;

/// A candidate found by meaning, read with the search's filters: `None`
/// when the filters leave it out (another agent's, too old, deleted…).
fn filtered(
    conn: &Connection,
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
            "SELECT b.agent, b.id, b.label, NULL, substr(b.value, 1, 160), 0.0, b.updated_at FROM blocks b
             WHERE b.id = ?1 AND b.deleted_at IS NULL
               AND (?2 IS NULL OR b.agent = ?2 OR ?6 = 2 OR (?6 = 1 AND b.shared = 1))
               AND b.updated_at >= ?3 AND b.updated_at < ?4 AND ?5 IS NULL"
        }
        SearchDomain::Archival => {
            "SELECT a.agent, a.id, NULL, NULL, substr(a.content, 1, 160), 0.0, a.created_at FROM archival a
             WHERE a.id = ?1 AND (?2 IS NULL OR a.agent = ?2 OR ?6 = 2)
               AND a.created_at >= ?3 AND a.created_at < ?4 AND ?5 IS NULL"
        }
        SearchDomain::Conversations => {
            "SELECT m.agent, m.id, m.thread, m.role, substr(m.content, 1, 160), 0.0, m.created_at FROM messages m
             WHERE m.id = ?1 AND (?2 IS NULL OR m.agent = ?2 OR m.role = 'agent:' || ?2 OR ?6 = 2)
               AND m.created_at >= ?3 AND m.created_at < ?4 AND (?5 IS NULL OR m.role = ?5)"
        }
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row(
            params![
                id,
                query.agent,
                since,
                until,
                query.role,
                query.reach.code()
            ],
            |r| hit_of(domain, r),
        )
        .optional()?)
}

/// Full-text hits and, when `vector` is given, the nearest items in
/// `index`, fused by reciprocal rank: at most `query.limit` hits from each
/// domain, best first, each saying which side found it.
pub fn hybrid(
    conn: &Connection,
    query: &SearchQuery,
    vector: Option<&[f32]>,
    index: &VectorIndex,
) -> MemoryResult<Vec<HybridHit>> {
    // With meaning to find the rest, the words side keeps to items that
    // hold every word: precise, and a partial-word search over a large
    // memory costs more than the whole vector scan.
    let mut text_hits = if vector.is_some() && query.partial {
        search(
            conn,
            &SearchQuery {
                partial: false,
                ..query.clone()
            },
        )?
    } else {
        search(conn, query)?
    };
    text_hits.sort_by(|a, b| a.rank.total_cmp(&b.rank));
    let mut fused: Vec<HybridHit> = Vec::new();
    let mut at: HashMap<(SearchDomain, i64), usize> = HashMap::new();
    for (rank, hit) in text_hits.into_iter().enumerate() {
        at.insert((hit.domain, hit.id), fused.len());
        fused.push(HybridHit {
            hit,
            score: 1.0 / (RRF_K + rank as f64 + 1.0),
            via: Via::Fts,
        });
    }
    if let Some(vector) = vector {
        let wanted = query.limit.max(1) * query.domains.len().max(1);
        let mut rank = 0usize;
        let nearest = index.nearest(vector, (wanted * 8).max(64));
        // Nearest is not near: items less than half as similar as the best
        // one (and those with nothing in common) are left out, so a small
        // memory does not answer every question with everything it holds.
        let floor = nearest.first().map_or(0.0, |(_, best)| best * MIN_RELATIVE);
        for ((domain, id), similarity) in nearest {
            if rank >= wanted || similarity <= 0.0 || similarity < floor {
                break;
            }
            let score = |rank: usize| 1.0 / (RRF_K + rank as f64 + 1.0);
            match at.get(&(domain, id)) {
                Some(&i) => {
                    fused[i].score += score(rank);
                    fused[i].via = Via::Both;
                    rank += 1;
                }
                None => {
                    if let Some(hit) = filtered(conn, query, domain, id)? {
                        at.insert((domain, id), fused.len());
                        fused.push(HybridHit {
                            hit,
                            score: score(rank),
                            via: Via::Vector,
                        });
                        rank += 1;
                    }
                }
            }
        }
    }
    // Best first, at most `limit` from each domain (as full-text search
    // gives), so one busy domain does not crowd out the others.
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut taken: HashMap<SearchDomain, usize> = HashMap::new();
    fused.retain(|h| {
        let n = taken.entry(h.hit.domain).or_default();
        *n += 1;
        *n <= query.limit.max(1)
    });
    Ok(fused)
}
