//! The keyword index (`memory::keywords`) answers exactly as FTS5 does —
//! the same hits, in the same order, with the same snippets and ranks — on
//! a real database file, including rows written after it was built, rows
//! of a write not yet committed (and undone), and a database made anew at
//! the same path.

use partner::store::memory::keywords::{answered, build_now, indexed_docs};
use partner::store::memory::search::{Reach, SearchDomain, SearchHit, SearchQuery, search_fts};
use partner::store::memory::{MemoryError, MemoryStore};

use crate::support::Rng;
use partner::store::memory::backend::{Memory, NewMessage};

const WORDS: &[&str] = &[
    "launch",
    "launched",
    "launching",
    "contract",
    "contracts",
    "deadline",
    "Friday",
    "budget",
    "café",
    "review",
    "garden",
    "the",
    "and",
    "server",
    "backup",
    "moved",
    "rarely",
    "done.",
    "note:",
    "Friday.\n",
    "e-mail",
];

/// A store with `n` archival entries and `n` messages from three agents.
fn filled(path: &std::path::Path, n: usize, seed: u64) -> MemoryStore {
    let store = MemoryStore::open(path).unwrap();
    let mut rng = Rng(seed);
    store
        .transaction(|tx| -> Result<(), MemoryError> {
            for i in 0..n {
                let agent = ["ada", "bob", "cy"][rng.next(3)];
                tx.add_archival(agent, &rng.text(WORDS, 30), i as i64)?;
                let role = ["user", "assistant", "agent:ada", "agent:bob"][rng.next(4)];
                tx.add_message(
                    &NewMessage {
                        agent,
                        thread: "main",
                        role,
                        content: &rng.text(WORDS, 30),
                        lineage: &[],
                        turn: None,
                    },
                    i as i64,
                )?;
            }
            Ok(())
        })
        .unwrap();
    store
}

fn assert_same(index: &[SearchHit], fts: &[SearchHit], what: &str) {
    let ids = |h: &[SearchHit]| h.iter().map(|h| (h.domain, h.id)).collect::<Vec<_>>();
    assert_eq!(ids(index), ids(fts), "{what}: different hits or order");
    for (a, b) in index.iter().zip(fts) {
        assert_eq!(a.snippet, b.snippet, "{what}: snippet of {}", a.id);
        assert_eq!(
            (a.agent.as_str(), &a.label, &a.role, a.time),
            (b.agent.as_str(), &b.label, &b.role, b.time)
        );
        assert!(
            (a.rank - b.rank).abs() <= 1e-12 * b.rank.abs().max(1.0),
            "{what}: rank of {}: {} against FTS5's {}",
            a.id,
            a.rank,
            b.rank
        );
    }
}

#[test]
fn the_keyword_index_answers_as_fts5_does() {
    let dir = tempfile::tempdir().unwrap();
    let store = filled(&dir.path().join("m.db"), 3_000, 7);
    let conn = store.conn();
    assert!(build_now(&conn).unwrap());
    assert_eq!(indexed_docs(&conn, SearchDomain::Archival), Some(3_000));
    assert_eq!(
        indexed_docs(&conn, SearchDomain::Conversations),
        Some(3_000)
    );
    let mut rng = Rng(99);
    let before = answered();
    for round in 0..200 {
        let words: Vec<&str> = (0..1 + rng.next(3))
            .map(|_| WORDS[rng.next(WORDS.len())])
            .collect();
        let mut query = SearchQuery::new(&words.join(" "), None);
        query.domains = vec![SearchDomain::Archival, SearchDomain::Conversations];
        query.agent = [None, Some("ada"), Some("bob"), Some("nobody")][rng.next(4)].map(Into::into);
        query.reach = [Reach::Own, Reach::Shared, Reach::All][rng.next(3)];
        query.limit = [1, 10, 50, 5_000][rng.next(4)];
        query.partial = rng.next(2) == 0;
        if rng.next(3) == 0 {
            query.since = Some(rng.next(3_000) as i64);
            query.until = Some(query.since.unwrap() + rng.next(1_500) as i64);
        }
        if rng.next(4) == 0 {
            query.role = Some(["user", "agent:ada", "assistant"][rng.next(3)].into());
        }
        let what = format!("round {round}: {query:?}");
        assert_same(
            &conn.search(&query).unwrap(),
            &search_fts(&conn, &query).unwrap(),
            &what,
        );
    }
    assert!(
        answered() - before >= 200,
        "the index answered {} of at least 200 searches",
        answered() - before
    );
}

fn archival_query(text: &str) -> SearchQuery {
    let mut query = SearchQuery::new(text, None);
    query.domains = vec![SearchDomain::Archival];
    query
}

#[test]
fn rows_written_after_the_index_was_built_are_found_and_undone_ones_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = filled(&dir.path().join("m.db"), 2_500, 3);
    assert!(build_now(&store.conn()).unwrap());
    // Committed after the build: read from the database on the next search.
    store
        .transaction(|tx| {
            tx.add_archival("ada", "the zeppelin launch", 9_000)
                .map(drop)
        })
        .unwrap();
    let before = answered();
    let found = store.read().search(&archival_query("zeppelin")).unwrap();
    assert_eq!(answered(), before + 1, "the index answered");
    assert_eq!(found.len(), 1);
    assert_eq!(
        indexed_docs(&store.conn(), SearchDomain::Archival),
        Some(2_501)
    );
    // Written in a transaction not yet committed: found by that
    // transaction's own search, and gone once it is undone.
    let conn = store.conn();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn.add_archival("ada", "a dirigible in the garden", 9_001)
        .unwrap();
    let inside = conn.search(&archival_query("dirigible")).unwrap();
    assert_eq!(inside.len(), 1, "a search sees its own transaction's rows");
    assert_same(
        &inside,
        &search_fts(&conn, &archival_query("dirigible")).unwrap(),
        "in a write",
    );
    conn.execute_batch("ROLLBACK").unwrap();
    assert!(
        conn.search(&archival_query("dirigible"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(indexed_docs(&conn, SearchDomain::Archival), Some(2_501));
    // The undone row's id is given to another row: the index reads it as
    // what it now holds.
    conn.add_archival("bob", "a blimp over the server", 9_002)
        .unwrap();
    assert!(
        conn.search(&archival_query("dirigible"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(conn.search(&archival_query("blimp")).unwrap().len(), 1);
    let query = archival_query("launch garden");
    assert_same(
        &conn.search(&query).unwrap(),
        &search_fts(&conn, &query).unwrap(),
        "after",
    );
}

#[test]
fn a_database_made_anew_at_the_same_path_is_not_answered_from_the_old_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    let store = filled(&path, 2_500, 11);
    assert!(build_now(&store.conn()).unwrap());
    let query = archival_query("contract deadline");
    assert!(!store.conn().search(&query).unwrap().is_empty());
    drop(store);
    for f in ["m.db", "m.db-wal", "m.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(f));
    }
    let store = filled(&path, 2_500, 12);
    let conn = store.conn();
    assert_same(
        &conn.search(&query).unwrap(),
        &search_fts(&conn, &query).unwrap(),
        "a new database",
    );
    // Indexed again, it answers for the new one.
    assert!(build_now(&conn).unwrap());
    let before = answered();
    assert_same(
        &conn.search(&query).unwrap(),
        &search_fts(&conn, &query).unwrap(),
        "the new database, indexed",
    );
    assert!(answered() > before);
}
