//! A text index that follows its tables in batches (replay's scratch
//! store, `MemoryStore::defer_text_index`) answers every search as one kept
//! at once does — after additions, edits, deletions and steps undone — and
//! is written once per batch, not once per step.

use partner::memory::blocks::{self, NewBlock};
use partner::memory::records::{add_archival, add_message};
use partner::memory::search::{Reach, SearchDomain, SearchHit, SearchQuery, search};
use partner::memory::{BlockKind, MemoryError, MemoryStore};

use crate::support::Rng;

const WORDS: &[&str] = &[
    "launch", "launched", "contract", "deadline", "Friday", "budget", "café", "review", "garden",
    "the", "server", "backup", "moved",
];

/// One step: a change of some table (`kind` picks which), undone when
/// `fails`.
fn step(store: &MemoryStore, rng: &mut Rng, n: i64, fails: bool) {
    let kind = rng.next(6);
    let text = rng.text(WORDS, 8);
    let label = format!("b{}", rng.next(12));
    let other = rng.next(n.max(1) as usize) as i64 + 1;
    let done = store.transaction(|tx| -> Result<(), MemoryError> {
        match kind {
            0 | 1 => {
                add_archival(tx, "ada", &text, n)?;
            }
            2 => {
                add_message(tx, "ada", "main", "user", &text, n)?;
            }
            3 => {
                if blocks::get(tx, "ada", &label)?.is_some() {
                    blocks::write(tx, "ada", &label, &text, "ada", n)?;
                } else {
                    let new = NewBlock::new("ada", &label, BlockKind::Core, &text);
                    blocks::create(tx, &new, "ada", n)?;
                }
            }
            4 => {
                tx.execute("DELETE FROM archival WHERE id = ?1", [other])?;
            }
            _ => {
                tx.execute("DELETE FROM messages WHERE id = ?1", [other])?;
            }
        }
        if fails {
            return Err(MemoryError::Conflict(
                "the step failed after writing".into(),
            ));
        }
        Ok(())
    });
    assert_eq!(done.is_err(), fails, "{done:?}");
}

fn searched(store: &MemoryStore, text: &str) -> Vec<SearchHit> {
    let mut query = SearchQuery::new(text, None);
    query.domains = vec![
        SearchDomain::Blocks,
        SearchDomain::Archival,
        SearchDomain::Conversations,
    ];
    query.reach = Reach::All;
    query.limit = 1_000;
    query.partial = true;
    search(&store.conn(), &query).unwrap()
}

fn same(a: &[SearchHit], b: &[SearchHit], what: &str) {
    let key = |h: &SearchHit| (h.domain, h.id, h.snippet.clone(), h.rank.to_bits());
    assert_eq!(
        a.iter().map(key).collect::<Vec<_>>(),
        b.iter().map(key).collect::<Vec<_>>(),
        "{what}"
    );
}

fn integrity(store: &MemoryStore) {
    let conn = store.conn();
    for table in ["blocks_fts", "archival_fts", "messages_fts"] {
        conn.execute(
            &format!("INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"),
            [],
        )
        .unwrap_or_else(|e| panic!("{table} does not match its table: {e}"));
    }
}

#[test]
fn a_deferred_text_index_answers_as_one_kept_at_once() {
    let kept = MemoryStore::open_in_memory().unwrap();
    let deferred = MemoryStore::open_in_memory().unwrap();
    deferred.defer_text_index().unwrap();
    let (mut a, mut b) = (Rng(11), Rng(11));
    let mut n = 0;
    for batch in 0..6 {
        kept.begin_batch().unwrap();
        deferred.begin_batch().unwrap();
        for i in 0..150 {
            n += 1;
            let fails = i % 7 == 3;
            step(&kept, &mut a, n, fails);
            step(&deferred, &mut b, n, fails);
            if i % 37 == 0 {
                let words = format!(
                    "{} {}",
                    WORDS[i % WORDS.len()],
                    WORDS[(i / 3) % WORDS.len()]
                );
                let what = format!("batch {batch}, step {i}: {words}");
                same(
                    &searched(&deferred, &words),
                    &searched(&kept, &words),
                    &what,
                );
            }
        }
        // The last batch is undone whole.
        let keep = batch < 5;
        kept.end_batch(keep).unwrap();
        deferred.end_batch(keep).unwrap();
        integrity(&deferred);
        for word in WORDS {
            let what = format!("after batch {batch}: {word}");
            same(&searched(&deferred, word), &searched(&kept, word), &what);
        }
    }
    assert!(
        !searched(&kept, "launch").is_empty(),
        "the searches found nothing to compare"
    );
}

/// Segments of `table`'s text index.
fn segments(store: &MemoryStore, table: &str) -> i64 {
    store
        .conn()
        .query_row(
            &format!("SELECT count(DISTINCT segid) FROM {table}_idx"),
            [],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_deferred_text_index_is_written_once_per_batch() {
    let kept = MemoryStore::open_in_memory().unwrap();
    let deferred = MemoryStore::open_in_memory().unwrap();
    deferred.defer_text_index().unwrap();
    for store in [&kept, &deferred] {
        store.begin_batch().unwrap();
        for i in 0..1_000 {
            store
                .transaction(|tx| add_archival(tx, "ada", &format!("note {i} launch"), i))
                .unwrap();
        }
        store.end_batch(true).unwrap();
    }
    assert_eq!(
        segments(&deferred, "archival_fts"),
        1,
        "one segment for the batch"
    );
    assert!(
        segments(&kept, "archival_fts") > 1,
        "kept at once, each step writes a segment (and the test means something)"
    );
}

#[test]
fn only_an_in_memory_store_defers_its_text_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::open(dir.path().join("m.db")).unwrap();
    assert!(store.defer_text_index().is_err());
    // Its triggers are untouched: an entry is found at once.
    store
        .transaction(|tx| add_archival(tx, "ada", "the launch moved", 1))
        .unwrap();
    assert_eq!(searched(&store, "launch").len(), 1);
}
