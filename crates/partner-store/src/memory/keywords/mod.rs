//! Keyword search from memory: the archival entries and messages of a
//! database file held as postings, so that a search reads only the
//! documents holding its words and stops at the top hits, where FTS5 ranks
//! every match (and counts every row holding each word) on every query.
//!
//! The index answers for the two domains whose rows are only ever added.
//! It holds committed rows (up to the highest id it has read); rows past
//! it are read from the searching connection on each search — kept when
//! that connection sees only committed data, scored and let go when it is
//! inside a write (which may be undone). Its terms come from FTS5's own
//! tokenizer and its ranks are FTS5's bm25, computed the same way; every
//! hit is read back on the searching connection under the search's own
//! conditions and its text tokenized again (it must hold the words), so a
//! hit the database no longer holds, or that the searching connection
//! cannot see, is never shown; its snippet is made as FTS5's `snippet()`
//! makes it (`snippet`).
//!
//! It is built on a thread of its own the first time a domain with at
//! least [`BUILD_FROM`] rows is searched; FTS5 answers until it is ready,
//! and for databases in memory, blocks, and words FTS5 reads as more than
//! one token.

mod index;
mod snippet;
mod tokenizer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionState, params};

use self::index::{Doc, DomainIndex, Names, Scope, Scored};
use self::tokenizer::Tokenizer;
use super::error::MemoryResult;
use super::search::{Reach, SearchDomain, SearchHit, SearchQuery, hit_of};

/// Fewest rows of a domain for which an index is built (below it, FTS5
/// ranks every match in well under a millisecond).
pub const BUILD_FROM: i64 = 2_000;

/// Most documents an index holds (about 100 bytes each); a database with
/// more is searched by FTS5 alone.
pub const MAX_DOCS: usize = 5_000_000;

/// Most database files indexed at once in one process (the least recently
/// searched is let go).
const MAX_FILES: usize = 4;

/// One file's index, once built.
struct KeywordIndex {
    tokenizer: Tokenizer,
    names: Names,
    archival: DomainIndex,
    messages: DomainIndex,
}

/// A database file's slot: its index, and whether one is being built.
#[derive(Default)]
struct Slot {
    index: Mutex<Option<KeywordIndex>>,
    building: AtomicBool,
}

/// Which file: its path, device and inode (a file made anew at the same
/// path is another).
type FileKey = (PathBuf, u64, u64);

/// Searches the index has answered in this process.
static ANSWERED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many searches of a domain the index has answered in this process
/// (FTS5 answered the rest).
pub fn answered() -> u64 {
    ANSWERED.load(Ordering::Relaxed)
}

/// The files indexed, least recently searched first.
type Files = Vec<(FileKey, Arc<Slot>)>;

static FILES: LazyLock<Mutex<Files>> = LazyLock::new(Mutex::default);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The key of the file `conn` has open, if it is a file.
fn file_key(conn: &Connection) -> Option<FileKey> {
    use std::os::unix::fs::MetadataExt;
    let path = conn.path().filter(|p| !p.is_empty())?;
    let meta = std::fs::metadata(path).ok()?;
    Some((PathBuf::from(path), meta.dev(), meta.ino()))
}

/// The slot of `key`, most recently used last.
fn slot(key: FileKey) -> Arc<Slot> {
    let mut files = lock(&FILES);
    if let Some(i) = files.iter().position(|(k, _)| *k == key) {
        let entry = files.remove(i);
        let slot = entry.1.clone();
        files.push(entry);
        return slot;
    }
    if files.len() >= MAX_FILES {
        files.remove(0);
    }
    let slot = Arc::new(Slot::default());
    files.push((key, slot.clone()));
    slot
}

/// The table a domain's rows are in, and the columns its index reads.
fn rows_sql(domain: SearchDomain) -> &'static str {
    match domain {
        SearchDomain::Conversations => {
            "SELECT id, agent, role, created_at, content FROM messages WHERE id > ?1 ORDER BY id"
        }
        _ => "SELECT id, agent, NULL, created_at, content FROM archival WHERE id > ?1 ORDER BY id",
    }
}

impl KeywordIndex {
    fn domain(&mut self, domain: SearchDomain) -> (&mut DomainIndex, &mut Names, &mut Tokenizer) {
        let index = match domain {
            SearchDomain::Conversations => &mut self.messages,
            _ => &mut self.archival,
        };
        (index, &mut self.names, &mut self.tokenizer)
    }
}

/// Reads the rows of `domain` past `after` from `conn` into `into`.
fn read_rows(
    conn: &Connection,
    domain: SearchDomain,
    after: i64,
    into: &mut DomainIndex,
    names: &mut Names,
    tokenizer: &mut Tokenizer,
) -> MemoryResult<()> {
    let mut stmt = conn.prepare_cached(rows_sql(domain))?;
    let mut rows = stmt.query(params![after])?;
    while let Some(r) = rows.next()? {
        let agent: String = r.get(1)?;
        let role: Option<String> = r.get(2)?;
        let doc = Doc {
            id: r.get(0)?,
            agent: names.intern(&agent),
            role: role.map_or(u32::MAX, |role| names.intern(&role)),
            time: r.get(3)?,
            len: 0,
        };
        let text: String = r.get(4)?;
        into.add(tokenizer, doc, &text);
    }
    Ok(())
}

/// Builds the index of the file at `path` (read on a connection of its
/// own) and puts it in `slot`.
fn build(path: &Path, slot: &Slot) -> Result<(), String> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| e.to_string())?;
    conn.execute_batch("BEGIN").map_err(|e| e.to_string())?;
    let mut index = KeywordIndex {
        tokenizer: Tokenizer::porter()?,
        names: Names::default(),
        archival: DomainIndex::default(),
        messages: DomainIndex::default(),
    };
    for domain in [SearchDomain::Archival, SearchDomain::Conversations] {
        let (into, names, tokenizer) = index.domain(domain);
        read_rows(&conn, domain, 0, into, names, tokenizer).map_err(|e| e.to_string())?;
    }
    let mut held = lock(&slot.index);
    if held.is_none() {
        *held = Some(index);
    }
    Ok(())
}

/// Starts building the index of the file `conn` has open, if `domain`
/// holds enough rows for one to pay and none is built or being built.
fn start_building(conn: &Connection, domain: SearchDomain, key: FileKey, slot: Arc<Slot>) {
    let table = match domain {
        SearchDomain::Conversations => "messages",
        _ => "archival",
    };
    // Rows are only added, so the highest id counts them (at no cost).
    let rows: i64 = conn
        .query_row(
            &format!("SELECT coalesce(max(id), 0) FROM {table}"),
            [],
            |r| r.get(0),
        )
        .unwrap_or(0);
    if rows < BUILD_FROM || rows > MAX_DOCS as i64 || slot.building.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("keyword-index".into())
        .spawn(move || {
            // A failed build leaves FTS5 answering; the next search past
            // the threshold tries again.
            let _ = build(&key.0, &slot);
            slot.building.store(false, Ordering::Release);
        });
    drop(spawned);
}

/// Builds the index of the file `conn` has open now, on this thread (for
/// benches and tests that measure or check the index itself).
pub fn build_now(conn: &Connection) -> Result<bool, String> {
    let Some(key) = file_key(conn) else {
        return Ok(false);
    };
    let slot = slot(key.clone());
    build(&key.0, &slot)?;
    Ok(true)
}

/// The one token FTS5 reads each word as; `None` when a word is read as
/// none or several (a phrase: FTS5 answers).
fn phrases(tokenizer: &mut Tokenizer, words: &[&str]) -> Option<Vec<Box<[u8]>>> {
    let mut out = Vec::with_capacity(words.len());
    for word in words {
        let mut tokens: Vec<Box<[u8]>> = Vec::new();
        tokenizer.tokens(word, true, &mut |t, _| tokens.push(t.into()));
        if tokens.len() != 1 {
            return None;
        }
        out.extend(tokens);
    }
    (!out.is_empty()).then_some(out)
}

/// The scope of `query` in the index's names.
fn scope(names: &Names, query: &SearchQuery) -> Scope {
    // A name never seen matches nothing.
    let unseen = u32::MAX - 1;
    let agent = match (&query.agent, query.reach) {
        (Some(a), Reach::Own | Reach::Shared) => Some(names.get(a).unwrap_or(unseen)),
        _ => None,
    };
    Scope {
        agent,
        told: query
            .agent
            .as_ref()
            .map(|a| names.get(&format!("agent:{a}")).unwrap_or(unseen)),
        role: query.role.as_ref().map(|r| names.get(r).unwrap_or(unseen)),
        since: query.since.unwrap_or(i64::MIN),
        until: query.until.unwrap_or(i64::MAX),
    }
}

/// The hits of `domain` for `words` (all of them; `any`: some), best
/// first, from the keyword index; `None` when the index cannot answer and
/// FTS5 must (see the module's documentation).
pub(crate) fn search(
    conn: &Connection,
    query: &SearchQuery,
    domain: SearchDomain,
    words: &[&str],
    any: bool,
) -> MemoryResult<Option<Vec<SearchHit>>> {
    if !index::indexed(domain) || (domain == SearchDomain::Archival && query.role.is_some()) {
        return Ok(None);
    }
    let Some(key) = file_key(conn) else {
        return Ok(None);
    };
    let slot = slot(key.clone());
    let mut held = lock(&slot.index);
    let Some(index) = held.as_mut() else {
        drop(held);
        start_building(conn, domain, key, slot);
        return Ok(None);
    };
    let Some(phrases) = phrases(&mut index.tokenizer, words) else {
        return Ok(None);
    };
    let writing = conn.transaction_state(Some("main"))? == TransactionState::Write;
    let (part, names, tokenizer) = index.domain(domain);
    if !same_rows(conn, domain, part)? {
        // Another database is at this path: build again.
        *held = None;
        return Ok(None);
    }
    let after = part.last().map_or(0, |(d, _)| d.id);
    let mut tail = DomainIndex::default();
    if writing {
        // What this connection sees past the index may be undone.
        read_rows(conn, domain, after, &mut tail, names, tokenizer)?;
    } else {
        read_rows(conn, domain, after, part, names, tokenizer)?;
    }
    if part.len() + tail.len() > MAX_DOCS {
        // Grown past what an index may hold: FTS5 answers from now on.
        *held = None;
        return Ok(None);
    }
    let scope = scope(names, query);
    let found = index::scored(&[&*part, &tail], &phrases, any, &scope);
    ANSWERED.fetch_add(1, Ordering::Relaxed);
    let mut confirm = Confirm {
        conn,
        query,
        domain,
        tokenizer,
        phrases: &phrases,
        any,
    };
    confirm.best(found).map(Some)
}

/// Whether the last row the index holds is still the row the database
/// holds under its id (a row this connection cannot see yet counts as
/// the same).
fn same_rows(conn: &Connection, domain: SearchDomain, part: &DomainIndex) -> MemoryResult<bool> {
    let Some((last, hash)) = part.last() else {
        return Ok(true);
    };
    let sql = match domain {
        SearchDomain::Conversations => "SELECT created_at, content FROM messages WHERE id = ?1",
        _ => "SELECT created_at, content FROM archival WHERE id = ?1",
    };
    let row: Option<(i64, String)> = conn
        .prepare_cached(sql)?
        .query_row(params![last.id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(row.is_none_or(|(time, text)| time == last.time && index::text_hash(&text) == hash))
}

/// What reads candidates back from the database: the searching
/// connection, the search, and the terms to mark in snippets.
struct Confirm<'a> {
    conn: &'a Connection,
    query: &'a SearchQuery,
    domain: SearchDomain,
    tokenizer: &'a mut Tokenizer,
    phrases: &'a [Box<[u8]>],
    any: bool,
}

impl Confirm<'_> {
    /// The best of `found` that the searching connection still holds
    /// under the search's own conditions, with their snippets, up to the
    /// search's limit.
    fn best(&mut self, mut found: Vec<Scored>) -> MemoryResult<Vec<SearchHit>> {
        let limit = self.query.limit.max(1);
        let by_rank = |a: &Scored, b: &Scored| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        let first = (limit * 2).min(found.len());
        if first < found.len() {
            found.select_nth_unstable_by(first, by_rank);
        }
        found[..first].sort_unstable_by(by_rank);
        let mut hits = Vec::with_capacity(limit);
        for i in 0..found.len() {
            if hits.len() >= limit {
                break;
            }
            if i == first {
                // Some were not confirmed: order the rest too.
                found[first..].sort_unstable_by(by_rank);
            }
            let (rank, id) = found[i];
            if let Some(hit) = self.hit(rank, id)? {
                hits.push(hit);
            }
        }
        Ok(hits)
    }

    /// Row `id` as a hit of rank `rank`, when the searching connection
    /// holds it under the search's conditions and its text holds the
    /// words.
    fn hit(&mut self, rank: f64, id: i64) -> MemoryResult<Option<SearchHit>> {
        let sql = match self.domain {
            SearchDomain::Conversations => {
                "SELECT m.agent, m.id, m.thread, m.role, m.content, ?6, m.created_at FROM messages m
                 WHERE m.id = ?1
                   AND (?2 IS NULL OR m.agent = ?2 OR m.role = 'agent:' || ?2 OR ?7 = 2)
                   AND m.created_at >= ?3 AND m.created_at < ?4 AND (?5 IS NULL OR m.role = ?5)"
            }
            _ => {
                "SELECT a.agent, a.id, NULL, NULL, a.content, ?6, a.created_at FROM archival a
                 WHERE a.id = ?1 AND (?2 IS NULL OR a.agent = ?2 OR ?7 = 2)
                   AND a.created_at >= ?3 AND a.created_at < ?4 AND ?5 IS NULL"
            }
        };
        let q = self.query;
        let row = self
            .conn
            .prepare_cached(sql)?
            .query_row(
                params![
                    id,
                    q.agent,
                    q.since.unwrap_or(i64::MIN),
                    q.until.unwrap_or(i64::MAX),
                    q.role,
                    rank,
                    q.reach.code()
                ],
                |r| hit_of(self.domain, r),
            )
            .optional()?;
        Ok(row.and_then(|mut hit| {
            hit.snippet = snippet::snippet(self.tokenizer, &hit.snippet, self.phrases, self.any)?;
            Some(hit)
        }))
    }
}

/// Documents the index of the file `conn` has open holds in `domain`
/// (`None`: no index is built for it).
pub fn indexed_docs(conn: &Connection, domain: SearchDomain) -> Option<usize> {
    let slot = slot(file_key(conn)?);
    let mut held = lock(&slot.index);
    let index = held.as_mut()?;
    Some(index.domain(domain).0.len())
}

#[doc(hidden)]
/// Whether an index is being built for the file `conn` has open.
pub fn building(conn: &Connection) -> bool {
    file_key(conn).is_some_and(|key| slot(key).building.load(Ordering::Acquire))
}
