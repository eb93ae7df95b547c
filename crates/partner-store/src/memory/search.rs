//! Full-text search over blocks, archival entries and conversations with
//! FTS5 (`porter unicode61`), ranked by bm25, with highlighted snippets.
//! User text is turned into quoted terms, so no query can be an FTS syntax
//! error.

use rusqlite::{Connection, params};
use serde::Serialize;

pub use partner_protocol::memory::{MARK_END, MARK_START, SearchDomain, SearchHit, marked};

use super::error::MemoryResult;
use partner_core::clock::Millis;

/// How far a search by one agent may read into other agents' memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reach {
    /// Its own memory, and what other agents told it.
    #[default]
    Own,
    /// Also the blocks other agents marked shared.
    Shared,
    /// All of every agent's memory.
    All,
}

impl Reach {
    /// The reach as the search queries number it (own 0, shared 1, all 2).
    pub fn code(self) -> i64 {
        match self {
            Reach::Own => 0,
            Reach::Shared => 1,
            Reach::All => 2,
        }
    }
}

/// A search request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    /// The user's words.
    pub text: String,
    /// The agent searching: its own memory, plus what `reach` lets it read
    /// of others'. `None` is the partner, who reads the whole constellation.
    pub agent: Option<String>,
    /// How far into other agents' memory the search reads.
    pub reach: Reach,
    /// Domains to search.
    pub domains: Vec<SearchDomain>,
    /// Only items at or after this time.
    pub since: Option<Millis>,
    /// Only items before this time.
    pub until: Option<Millis>,
    /// Only messages of this role (conversations).
    pub role: Option<String>,
    /// Most hits per domain.
    pub limit: usize,
    /// When fewer items hold every word than the limit, fill it with
    /// items holding some of the telling words (ranked after).
    pub partial: bool,
    /// Distinct words of the text past [`MAX_QUERY_WORDS`], not searched.
    pub left_out: usize,
}

/// Most distinct words a search reads: the cost of a full-text query
/// grows with its words, so a longer text is cut to its first telling
/// words and the search says how many it left out.
pub const MAX_QUERY_WORDS: usize = 32;

/// The words of `text` a search reads, and how many distinct words it
/// leaves out. Text within the bound is kept as written.
pub fn bounded_words(text: &str) -> (String, usize) {
    let mut seen = std::collections::HashSet::new();
    let mut telling = Vec::new();
    let mut common = Vec::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '_')
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
    {
        let lower = w.to_lowercase();
        if seen.insert(lower.clone()) {
            if COMMON.contains(&lower.as_str()) {
                common.push(w);
            } else {
                telling.push(w);
            }
        }
    }
    if seen.len() <= MAX_QUERY_WORDS {
        return (text.to_string(), 0);
    }
    let chosen: Vec<&str> = if telling.is_empty() {
        common.into_iter().take(MAX_QUERY_WORDS).collect()
    } else {
        telling.into_iter().take(MAX_QUERY_WORDS).collect()
    };
    (chosen.join(" "), seen.len() - chosen.len())
}

impl SearchQuery {
    /// A query of `text` over every domain of one agent, ten hits each.
    pub fn new(text: &str, agent: Option<&str>) -> Self {
        let (text, left_out) = bounded_words(text);
        SearchQuery {
            text,
            left_out,
            agent: agent.map(str::to_string),
            domains: vec![
                SearchDomain::Blocks,
                SearchDomain::Archival,
                SearchDomain::Conversations,
            ],
            reach: Reach::Own,
            since: None,
            until: None,
            role: None,
            limit: 10,
            partial: true,
        }
    }
}

/// Turns user text into an FTS5 query: every word quoted (quotes doubled),
/// all required. `None` when the text has no words.
pub fn fts_query(text: &str) -> Option<String> {
    let terms: Vec<String> = words(text, false)
        .into_iter()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

/// Words too common to say what a memory is about: left out when hits
/// may match only some of the words.
const COMMON: &[&str] = &[
    "a", "about", "after", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has",
    "have", "how", "i", "if", "in", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "our", "say", "said", "should", "so", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "to", "us", "was", "we", "were", "what", "when", "where", "which", "who",
    "why", "will", "with", "would", "you", "your",
];

/// The FTS5 query that matches any of the text's telling words (common
/// words left out), each quoted. `None` when none is left.
pub fn fts_any_query(text: &str) -> Option<String> {
    let terms: Vec<String> = words(text, true)
        .into_iter()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

/// Searches: in each domain, the items with every word, best first, then
/// (when fewer than the limit) those with some of its telling words, best
/// first (ranked after every item with all of them). Hits are grouped by
/// domain, in the order asked.
pub(crate) fn search(conn: &Connection, query: &SearchQuery) -> MemoryResult<Vec<SearchHit>> {
    let Some(all) = fts_query(&query.text) else {
        return Ok(Vec::new());
    };
    let any = fts_any_query(&query.text).filter(|any| query.partial && *any != all);
    search_by(query, &all, any.as_deref(), |domain, terms| {
        let partial = terms != all;
        let words = words(&query.text, partial);
        if let Some(hits) = super::keywords::search(conn, query, domain, &words, partial)? {
            return Ok(hits);
        }
        search_domain(conn, query, domain, terms)
    })
}

/// [`search`] by FTS5 alone, never from the keyword index (to compare the
/// two).
#[doc(hidden)]
pub fn search_fts(conn: &Connection, query: &SearchQuery) -> MemoryResult<Vec<SearchHit>> {
    let Some(all) = fts_query(&query.text) else {
        return Ok(Vec::new());
    };
    let any = fts_any_query(&query.text).filter(|any| query.partial && *any != all);
    search_by(query, &all, any.as_deref(), |domain, terms| {
        search_domain(conn, query, domain, terms)
    })
}

/// The search of every back end: in each domain of `query`, the items
/// `domain_hits` finds for `all` (every word), best first, then — when
/// fewer than the limit — those it finds for `any` (some telling words),
/// ranked after every whole match. `domain_hits` ranks as bm25 does: at
/// most 0, lower is better.
pub(crate) fn search_by<E>(
    query: &SearchQuery,
    all: &str,
    any: Option<&str>,
    mut domain_hits: impl FnMut(SearchDomain, &str) -> Result<Vec<SearchHit>, E>,
) -> Result<Vec<SearchHit>, E> {
    let mut hits = Vec::new();
    for domain in &query.domains {
        let mut found = domain_hits(*domain, all)?;
        if found.len() < query.limit.max(1)
            && let Some(any) = any
        {
            for mut hit in domain_hits(*domain, any)? {
                if found.len() >= query.limit.max(1) {
                    break;
                }
                if !found.iter().any(|h| h.id == hit.id) {
                    // A partial match ranks above 0, after every whole one.
                    hit.rank = 1.0 / (1.0 - hit.rank.min(0.0));
                    found.push(hit);
                }
            }
        }
        hits.extend(found);
    }
    Ok(hits)
}

/// The words of a search's text, as its back ends read them: letters,
/// digits, `'` and `_`; with `telling`, the common words left out.
pub fn words(text: &str, telling: bool) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '_')
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .filter(|w| !telling || !COMMON.contains(&w.to_lowercase().as_str()))
        .collect()
}

/// A hit of `domain` from a row of agent, id, label, role, snippet, rank
/// and time (every search of memory selects these, in this order).
pub(super) fn hit_of(domain: SearchDomain, r: &rusqlite::Row<'_>) -> rusqlite::Result<SearchHit> {
    Ok(SearchHit {
        domain,
        agent: r.get(0)?,
        id: r.get(1)?,
        label: r.get(2)?,
        role: r.get(3)?,
        snippet: r.get(4)?,
        rank: r.get(5)?,
        time: r.get(6)?,
    })
}

/// One domain's hits for the FTS5 query `fts`, best first.
fn search_domain(
    conn: &Connection,
    query: &SearchQuery,
    domain: SearchDomain,
    fts: &str,
) -> MemoryResult<Vec<SearchHit>> {
    // A store whose text index follows in batches brings it up to date.
    super::deferred::catch_up(conn)?;
    let since = query.since.unwrap_or(i64::MIN);
    let until = query.until.unwrap_or(i64::MAX);
    let limit = query.limit.max(1) as i64;
    let mut hits = Vec::new();
    {
        let sql = match domain {
            SearchDomain::Blocks => {
                if query.role.is_some() {
                    return Ok(hits);
                }
                "SELECT b.agent, b.id, b.label, NULL, snippet(blocks_fts, 1, char(2), char(3), '…', 12), bm25(blocks_fts), b.updated_at
                 FROM blocks_fts JOIN blocks b ON b.id = blocks_fts.rowid
                 WHERE blocks_fts MATCH ?1 AND b.deleted_at IS NULL
                   AND (?2 IS NULL OR b.agent = ?2 OR ?7 = 2 OR (?7 = 1 AND b.shared = 1))
                   AND b.updated_at >= ?3 AND b.updated_at < ?4 AND ?5 IS NULL
                 ORDER BY bm25(blocks_fts) LIMIT ?6"
            }
            SearchDomain::Archival => {
                if query.role.is_some() {
                    return Ok(hits);
                }
                "SELECT a.agent, a.id, NULL, NULL, snippet(archival_fts, 0, char(2), char(3), '…', 12), bm25(archival_fts), a.created_at
                 FROM archival_fts JOIN archival a ON a.id = archival_fts.rowid
                 WHERE archival_fts MATCH ?1 AND (?2 IS NULL OR a.agent = ?2 OR ?7 = 2)
                   AND a.created_at >= ?3 AND a.created_at < ?4 AND ?5 IS NULL
                 ORDER BY bm25(archival_fts) LIMIT ?6"
            }
            SearchDomain::Conversations => {
                "SELECT m.agent, m.id, m.thread, m.role, snippet(messages_fts, 0, char(2), char(3), '…', 12), bm25(messages_fts), m.created_at
                 FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
                 WHERE messages_fts MATCH ?1
                   AND (?2 IS NULL OR m.agent = ?2 OR m.role = 'agent:' || ?2 OR ?7 = 2)
                   AND m.created_at >= ?3 AND m.created_at < ?4 AND (?5 IS NULL OR m.role = ?5)
                 ORDER BY bm25(messages_fts) LIMIT ?6"
            }
        };
        let mut stmt = conn.prepare_cached(sql)?;
        let rows = stmt.query_map(
            params![
                fts,
                query.agent,
                since,
                until,
                query.role,
                limit,
                query.reach.code()
            ],
            |r| hit_of(domain, r),
        )?;
        for hit in rows {
            hits.push(hit?);
        }
    }
    Ok(hits)
}

/// A snippet as plain text, its matched terms in `[` `]`, on one line:
/// for agents and the command line.
pub fn bracketed(snippet: &str) -> String {
    snippet
        .replace(MARK_START, "[")
        .replace(MARK_END, "]")
        .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::fts_query;

    #[test]
    fn fts_queries_quote_every_term() {
        assert_eq!(
            fts_query("launch date").as_deref(),
            Some("\"launch\" \"date\"")
        );
        assert_eq!(
            fts_query("NEAR(a b) OR \"x").as_deref(),
            Some("\"NEAR\" \"a\" \"b\" \"OR\" \"x\"")
        );
        assert_eq!(fts_query("*** ---"), None);
    }
}
