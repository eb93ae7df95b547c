//! Hybrid search: the full-text hits and the nearest vectors — found
//! among what the search may read, so that no other agent's items crowd
//! its own out — fused by relative score (scaled similarity plus a weight
//! for a word match), each hit read back through the same filters as
//! full-text search.

use std::collections::HashMap;

pub use partner_protocol::memory::{HybridHit, Via};
use rusqlite::{Connection, OptionalExtension, params};

use super::{Searchable, VectorIndex};
use crate::memory::error::MemoryResult;
use crate::memory::search::{SearchDomain, SearchHit, SearchQuery, hit_of};

/// What a partial word match counts for against one holding every word,
/// when meaning is searched too.
const PARTIAL_WEIGHT: f64 = 0.5;

/// What a word match adds to an item's similarity to the query, that
/// similarity being scaled so that the nearest candidate is 1 and the
/// last is 0 (relative score fusion). Calibrated with the real model on
/// `data/relevance.json`: 0.1–0.4 (and partial weights 0.3–0.7) all keep
/// hybrid recall@1 and @5 at or above meaning alone; reciprocal rank
/// fusion, the old way, fell below it at @1 and dropped keyword answers.
const KEYWORD_WEIGHT: f64 = 0.2;

/// How similar to the query, relative to the most similar item, an item
/// must be for the vector side to offer it: what has almost nothing in
/// common with the query is no hit. Calibrated with the real model on
/// `data/relevance.json`: the least similar right answer meaning alone
/// ranks in its top five is 0.39 of the best (0.5, an old value, dropped
/// "Winter tires go on in November" for "car maintenance" at 0.44).
const MIN_RELATIVE: f32 = 0.3;

/// How many of the nearest items the vector side offers (and scales
/// similarity over), at least.
const CANDIDATES: usize = 50;

/// A candidate found by meaning, read with the search's filters: `None`
/// when the filters leave it out (another agent's, too old, deleted…).
pub(super) fn filtered(
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
/// `index`, fused: at most `query.limit` hits from each domain, best
/// first, each saying which side found it. With meaning, an item's score
/// is its scaled similarity plus [`KEYWORD_WEIGHT`] for a word match; the
/// best word match of each domain always keeps a place, so hybrid search
/// never loses the first answer keyword search gives.
pub fn hybrid(
    store: &dyn Searchable,
    query: &SearchQuery,
    vector: Option<&[f32]>,
    index: &VectorIndex,
) -> MemoryResult<Vec<HybridHit>> {
    // The words side searches as the query asks (partial matches
    // included): an item that only some of the words find is still a hit
    // keyword search alone would give, and hybrid must not lose it.
    let mut text_hits = store.search(query)?;
    text_hits.sort_by(|a, b| a.rank.total_cmp(&b.rank));
    let mut fused: Vec<Candidate> = Vec::new();
    let mut at: HashMap<(SearchDomain, i64), usize> = HashMap::new();
    for (rank, hit) in text_hits.into_iter().enumerate() {
        let score = match vector {
            // A partial match (some of the words: its rank is above 0)
            // counts for less than one holding every word.
            Some(_) if hit.rank > 0.0 => KEYWORD_WEIGHT * PARTIAL_WEIGHT,
            Some(_) => KEYWORD_WEIGHT,
            // Words alone: their order.
            None => 1.0 / (rank as f64 + 1.0),
        };
        at.insert((hit.domain, hit.id), fused.len());
        fused.push(Candidate {
            key: (hit.domain, hit.id),
            hit: Some(hit),
            score,
            via: Via::Fts,
        });
    }
    // The best hit of each domain holding every word (a partial match on
    // common words is no answer worth a place of its own).
    let mut best_words: Vec<(SearchDomain, i64)> = Vec::new();
    for c in &fused {
        let whole = c.hit.as_ref().is_some_and(|h| h.rank <= 0.0);
        if whole && !best_words.iter().any(|(d, _)| *d == c.key.0) {
            best_words.push(c.key);
        }
    }
    if let Some(vector) = vector {
        // Every candidate is one the search may read (the scan is scoped),
        // so an agent's own items are never crowded out by others'.
        let wanted = query.limit.max(1) * query.domains.len().max(1);
        let mut nearest = index.nearest_for(vector, (wanted * 4).max(CANDIDATES), query);
        let best = nearest.first().map_or(0.0, |n| n.1);
        nearest.retain(|n| n.1 > 0.0 && n.1 >= best * MIN_RELATIVE);
        let last = nearest.last().map_or(0.0, |n| n.1);
        let spread = f64::from(best - last);
        for (key, similarity) in nearest {
            // From 0.01 for the last candidate (a hit found by meaning
            // always scores above nothing) to 1 for the nearest.
            let scaled = if spread > 0.0 {
                0.01 + 0.99 * f64::from(similarity - last) / spread
            } else {
                1.0
            };
            match at.get(&key) {
                Some(&i) => {
                    fused[i].score += scaled;
                    fused[i].via = Via::Both;
                }
                None => {
                    at.insert(key, fused.len());
                    fused.push(Candidate {
                        key,
                        hit: None,
                        score: scaled,
                        via: Via::Vector,
                    });
                }
            }
        }
    }
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    keep_best_words(&mut fused, &best_words, query.limit.max(1));
    best_of_each_domain(store, query, fused)
}

/// A hit in the making: found by words (read already) or by meaning
/// (read when it is among the best).
struct Candidate {
    key: (SearchDomain, i64),
    hit: Option<SearchHit>,
    score: f64,
    via: Via,
}

/// The best `query.limit` candidates of each domain, read through the
/// search's filters (one that they leave out is skipped), best first;
/// `fused` comes sorted.
fn best_of_each_domain(
    store: &dyn Searchable,
    query: &SearchQuery,
    fused: Vec<Candidate>,
) -> MemoryResult<Vec<HybridHit>> {
    let mut taken: HashMap<SearchDomain, usize> = HashMap::new();
    let mut hits = Vec::new();
    for c in fused {
        let n = taken.entry(c.key.0).or_default();
        if *n >= query.limit.max(1) {
            continue;
        }
        let hit = match c.hit {
            Some(hit) => hit,
            None => match store.item_hit(query, c.key.0, c.key.1)? {
                Some(hit) => hit,
                None => continue,
            },
        };
        *n += 1;
        hits.push(HybridHit {
            hit,
            score: c.score,
            via: c.via,
        });
    }
    Ok(hits)
}

/// Puts back the best word match of each domain where meaning pushed it
/// out of that domain's first `limit`: it takes the last place, with a
/// score just above the candidate that held it. `fused` comes sorted and
/// stays so.
fn keep_best_words(fused: &mut Vec<Candidate>, best: &[(SearchDomain, i64)], limit: usize) {
    for &key in best {
        let mut in_domain = fused.iter().enumerate().filter(|(_, c)| c.key.0 == key.0);
        let Some((last_place, _)) = in_domain.nth(limit - 1) else {
            continue;
        };
        let Some(at) = fused.iter().position(|c| c.key == key) else {
            continue;
        };
        if at > last_place {
            let mut moved = fused.remove(at);
            moved.score =
                fused[last_place].score + f64::EPSILON.max(fused[last_place].score * 1e-9);
            fused.insert(last_place, moved);
        }
    }
}

/// The nearest items by meaning alone, read through the search's filters:
/// at most `query.limit` from each domain, best first (for measuring
/// hybrid search against pure vector search).
pub fn nearest_only(
    store: &dyn Searchable,
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
        if let Some(hit) = store.item_hit(query, domain, id)? {
            hits.push(HybridHit {
                hit,
                score: f64::from(similarity),
                via: Via::Vector,
            });
        }
    }
    Ok(hits)
}
