//! Full-text search on PostgreSQL: `tsvector` columns the server keeps,
//! GIN indexes, `websearch_to_tsquery` with each word quoted, ranked by
//! `ts_rank_cd`, snippets from `ts_headline` for the hits kept.

use postgres::GenericClient;

use super::{PgTx, failed};
use crate::memory::MemoryResult;
use crate::memory::search::{MARK_END, MARK_START};
use crate::memory::search::{SearchDomain, SearchHit, SearchQuery, search_by, words};

/// A `websearch_to_tsquery` text: every word quoted (so none is read as
/// an operator), joined by `joiner`.
fn websearch(words: &[&str], joiner: &str) -> Option<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    (!quoted.is_empty()).then(|| quoted.join(joiner))
}

/// Search by every word, then by some telling words, per domain; ranks
/// are `-ts_rank_cd` (at most 0, lower is better, as bm25's).
pub(super) fn search(store: &PgTx<'_>, query: &SearchQuery) -> MemoryResult<Vec<SearchHit>> {
    let Some(all) = websearch(&words(&query.text, false), " ") else {
        return Ok(Vec::new());
    };
    let any =
        websearch(&words(&query.text, true), " or ").filter(|any| query.partial && *any != all);
    let mut client = store.conn();
    search_by(query, &all, any.as_deref(), |domain, terms| {
        domain_hits(&mut *client, query, domain, terms)
    })
}

/// One domain's hits for `terms`, best first; snippets made for the hits
/// kept, not for every match.
fn domain_hits(
    client: &mut impl GenericClient,
    query: &SearchQuery,
    domain: SearchDomain,
    terms: &str,
) -> MemoryResult<Vec<SearchHit>> {
    let inner = match domain {
        SearchDomain::Blocks if query.role.is_none() => {
            "SELECT agent, id, label, NULL::TEXT AS role, value AS text, search, updated_at AS time
             FROM blocks WHERE deleted_at IS NULL
               AND ($2::TEXT IS NULL OR agent = $2 OR $6 = 2 OR ($6 = 1 AND shared))
               AND updated_at >= $3 AND updated_at < $4 AND $7::TEXT IS NULL"
        }
        SearchDomain::Archival if query.role.is_none() => {
            "SELECT agent, id, NULL::TEXT AS label, NULL::TEXT AS role, content AS text, search, created_at AS time
             FROM archival WHERE ($2::TEXT IS NULL OR agent = $2 OR $6 = 2)
               AND created_at >= $3 AND created_at < $4 AND $7::TEXT IS NULL"
        }
        SearchDomain::Conversations => {
            "SELECT agent, id, thread AS label, role, content AS text, search, created_at AS time
             FROM messages WHERE ($2::TEXT IS NULL OR agent = $2 OR role = 'agent:' || $2 OR $6 = 2)
               AND created_at >= $3 AND created_at < $4 AND ($7::TEXT IS NULL OR role = $7)"
        }
        _ => return Ok(Vec::new()),
    };
    let options = format!(
        "StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=12, MinWords=4, MaxFragments=1, FragmentDelimiter=…"
    );
    let sql = format!(
        "SELECT hit.agent, hit.id, hit.label, hit.role,
                ts_headline('english', hit.text, q, $8), hit.rank, hit.time
         FROM (SELECT m.*, -ts_rank_cd(m.search, q)::FLOAT8 AS rank
               FROM ({inner}) m, websearch_to_tsquery('english', $1) q
               WHERE m.search @@ q ORDER BY rank, m.id LIMIT $5) hit,
              websearch_to_tsquery('english', $1) q
         ORDER BY hit.rank, hit.id"
    );
    let since = query.since.unwrap_or(i64::MIN);
    let until = query.until.unwrap_or(i64::MAX);
    let limit = query.limit.max(1) as i64;
    let reach = query.reach.code() as i32;
    let rows = client
        .query(
            &sql,
            &[
                &terms,
                &query.agent,
                &since,
                &until,
                &limit,
                &reach,
                &query.role,
                &options,
            ],
        )
        .map_err(failed)?;
    Ok(rows.iter().map(|r| hit_of(domain, r)).collect())
}

/// A hit of `domain` from a row of agent, id, label, role, snippet, rank
/// and time, in that order.
pub(super) fn hit_of(domain: SearchDomain, r: &postgres::Row) -> SearchHit {
    SearchHit {
        domain,
        agent: r.get(0),
        id: r.get(1),
        label: r.get(2),
        role: r.get(3),
        snippet: r.get(4),
        rank: r.get(5),
        time: r.get(6),
    }
}
