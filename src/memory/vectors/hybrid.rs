//! Hybrid search: the full-text hits and the nearest vectors — found
//! among what the search may read, so that no other agent's items crowd
//! its own out — fused by reciprocal rank, each hit read back through the
//! same filters as full-text search.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::VectorIndex;
use crate::memory::error::MemoryResult;
use crate::memory::search::{SearchDomain, SearchHit, SearchQuery, hit_of, search};

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

/// What a partial word match counts for against one holding every word,
/// when meaning is searched too (calibrated on `data/relevance.json` with
/// the real model: 0.3–0.8 keep hybrid recall@5 at pure vector search's,
/// 1.0 falls below it as partial matches crowd the nearest items out).
const PARTIAL_WEIGHT: f64 = 0.5;

/// The constant of reciprocal rank fusion (the usual 60).
const RRF_K: f64 = 60.0;

/// How similar to the query, relative to the most similar item, an item
/// must be for the vector side to offer it. Calibrated with the real model
/// on `data/relevance.json`: the least similar right answer pure vector
/// search ranks in its top five is 0.39 of the best (0.5, the old value,
/// dropped "Winter tires go on in November" for "car maintenance" at
/// 0.44); 0.3 keeps every one of them.
const MIN_RELATIVE: f32 = 0.3;

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
    // The words side searches as the query asks (partial matches
    // included): an item that only some of the words find is still a hit
    // keyword search alone would give, and hybrid must not lose it.
    let mut text_hits = search(conn, query)?;
    text_hits.sort_by(|a, b| a.rank.total_cmp(&b.rank));
    let mut fused: Vec<HybridHit> = Vec::new();
    let mut at: HashMap<(SearchDomain, i64), usize> = HashMap::new();
    for (rank, hit) in text_hits.into_iter().enumerate() {
        // A partial match (some of the words: its rank is above 0) counts
        // for less than one holding every word, once meaning is there too.
        let weight = if vector.is_some() && hit.rank > 0.0 {
            PARTIAL_WEIGHT
        } else {
            1.0
        };
        at.insert((hit.domain, hit.id), fused.len());
        fused.push(HybridHit {
            hit,
            score: weight / (RRF_K + rank as f64 + 1.0),
            via: Via::Fts,
        });
    }
    if let Some(vector) = vector {
        // Every candidate is one the search may read (the scan is scoped),
        // so the nearest `wanted` are the answer's, down to a floor far
        // below the best: a right answer can be much less similar than
        // it, and only what has almost nothing in common is left out.
        let wanted = query.limit.max(1) * query.domains.len().max(1);
        let mut rank = 0usize;
        let nearest = index.nearest_for(vector, (wanted * 2).max(16), query);
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

/// The nearest items by meaning alone, read through the search's filters:
/// at most `query.limit` from each domain, best first (for measuring
/// hybrid search against pure vector search).
pub fn nearest_only(
    conn: &Connection,
    query: &SearchQuery,
    vector: &[f32],
    index: &VectorIndex,
) -> MemoryResult<Vec<HybridHit>> {
    let wanted = query.limit.max(1) * query.domains.len().max(1);
    let mut hits = Vec::new();
    for ((domain, id), similarity) in index.nearest_for(vector, wanted * 2, query) {
        if hits.len() >= wanted {
            break;
        }
        if let Some(hit) = filtered(conn, query, domain, id)? {
            hits.push(HybridHit {
                hit,
                score: f64::from(similarity),
                via: Via::Vector,
            });
        }
    }
    Ok(hits)
}
