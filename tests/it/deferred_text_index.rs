//! The text index of a store's shared commits (a group of transactions,
//! replay's batches) is written once per commit, not once per transaction:
//! it answers every search as one kept at once does — after additions,
//! edits, deletions and transactions undone — other connections never see
//! it behind, and writers outside partner's commits index at once.

use partner::store::memory::blocks::NewBlock;
use partner::store::memory::search::{Reach, SearchDomain, SearchHit, SearchQuery};
use partner::store::memory::{BlockKind, MemoryError, MemoryStore};
use rusqlite::Connection;

use crate::support::Rng;
use partner::store::memory::backend::{BlockWrite, Memory, NewMessage};

const WORDS: &[&str] = &[
    "launch", "launched", "contract", "deadline", "Friday", "budget", "café", "review", "garden",
    "the", "server", "backup", "moved",
];

/// How a step is committed: a transaction of the store's (a member of its
/// batch), or a savepoint of a plain connection's, whose text index the
/// schema's triggers keep at once.
#[derive(Clone, Copy)]
enum Via<'a> {
    Store(&'a MemoryStore),
    Plain(&'a MemoryStore),
}

impl Via<'_> {
    fn store(self) -> &'static str {
        match self {
            Via::Store(_) => "store",
            Via::Plain(_) => "plain",
        }
    }

    fn run(
        self,
        f: impl FnOnce(&Connection) -> Result<(), MemoryError>,
    ) -> Result<(), MemoryError> {
        match self {
            Via::Store(store) => store.transaction(f),
            Via::Plain(store) => {
                let conn = store.conn();
                conn.execute_batch("SAVEPOINT plain").unwrap();
                let done = f(&conn);
                if done.is_err() {
                    conn.execute_batch("ROLLBACK TO plain").unwrap();
                }
                conn.execute_batch("RELEASE plain").unwrap();
                done
            }
        }
    }

    fn begin(self) {
        match self {
            Via::Store(store) => store.begin_batch().unwrap(),
            Via::Plain(store) => store.conn().execute_batch("BEGIN IMMEDIATE").unwrap(),
        }
    }

    fn end(self, keep: bool) {
        match self {
            Via::Store(store) => store.end_batch(keep).unwrap(),
            Via::Plain(store) => store
                .conn()
                .execute_batch(if keep { "COMMIT" } else { "ROLLBACK" })
                .unwrap(),
        }
    }
}

/// One step: a change of some table (`kind` picks which), undone when
/// `fails`.
fn step(via: Via<'_>, rng: &mut Rng, n: i64, fails: bool) {
    let kind = rng.next(6);
    let text = rng.text(WORDS, 8);
    let label = format!("b{}", rng.next(12));
    let other = rng.next(n.max(1) as usize) as i64 + 1;
    let done = via.run(|tx| -> Result<(), MemoryError> {
        match kind {
            0 | 1 => {
                tx.add_archival("ada", &text, n)?;
            }
            2 => {
                tx.add_message(
                    &NewMessage {
                        agent: "ada",
                        thread: "main",
                        role: "user",
                        content: &text,
                        lineage: &[],
                        turn: None,
                    },
                    n,
                )?;
            }
            3 => {
                if tx.block("ada", &label)?.is_some() {
                    tx.write_block(
                        &BlockWrite {
                            agent: "ada",
                            label: &label,
                            value: &text,
                            base: None,
                        },
                        "ada",
                        n,
                    )?;
                } else {
                    let new = NewBlock::new("ada", &label, BlockKind::Core, &text);
                    tx.create_block(&new, "ada", n)?;
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
    assert_eq!(done.is_err(), fails, "{} {done:?}", via.store());
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
    store.conn().search(&query).unwrap()
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
    let (plain, batched) = (Via::Plain(&kept), Via::Store(&deferred));
    let (mut a, mut b) = (Rng(11), Rng(11));
    let mut n = 0;
    for batch in 0..6 {
        plain.begin();
        batched.begin();
        for i in 0..150 {
            n += 1;
            let fails = i % 7 == 3;
            step(plain, &mut a, n, fails);
            step(batched, &mut b, n, fails);
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
        plain.end(keep);
        batched.end(keep);
        integrity(&deferred);
        assert_eq!(notes(&deferred.conn()), (0, 0), "notes left after a batch");
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
fn segments(conn: &Connection, table: &str) -> i64 {
    conn.query_row(
        &format!("SELECT count(DISTINCT segid) FROM {table}_idx"),
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// The deferral flags and the changes noted that `conn` sees.
fn notes(conn: &Connection) -> (i64, i64) {
    conn.query_row(
        "SELECT (SELECT count(*) FROM text_index_deferral), (SELECT count(*) FROM text_index_pending)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

#[test]
fn a_batch_writes_its_text_index_once() {
    let kept = MemoryStore::open_in_memory().unwrap();
    let deferred = MemoryStore::open_in_memory().unwrap();
    for via in [Via::Plain(&kept), Via::Store(&deferred)] {
        via.begin();
        for i in 0..1_000 {
            via.run(|tx| {
                tx.add_archival("ada", &format!("note {i} launch"), i)
                    .map(drop)
            })
            .unwrap();
        }
        via.end(true);
    }
    assert_eq!(
        segments(&deferred.conn(), "archival_fts"),
        1,
        "one segment for the batch"
    );
    assert!(
        segments(&kept.conn(), "archival_fts") > 1,
        "kept at once, each step writes a segment (and the test means something)"
    );
}

/// A word of each writer's own.
const NAMES: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
];

#[test]
fn a_group_commit_writes_its_text_index_once_for_those_who_joined_and_others_see_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    let store = std::sync::Arc::new(MemoryStore::open(&path).unwrap());
    let before = store.commits();
    // The first writer holds the connection until the others wait for it:
    // all eight share one commit.
    // The others start once the first holds the connection.
    let inside = std::sync::Arc::new(std::sync::Barrier::new(8));
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let store = store.clone();
            let inside = inside.clone();
            std::thread::spawn(move || {
                if w > 0 {
                    inside.wait();
                }
                let word = NAMES[w as usize];
                store.transaction(|tx| -> Result<(), MemoryError> {
                    tx.add_archival("ada", &format!("{word} moved the launch"), w)?;
                    if w == 0 {
                        inside.wait();
                        std::thread::sleep(std::time::Duration::from_millis(500));
                    }
                    Ok(())
                })
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap().unwrap();
    }
    let (commits, held) = store.commits();
    assert_eq!(held - before.1, 8);
    assert_eq!(commits - before.0, 1, "the eight did not share a commit");
    let other = Connection::open(&path).unwrap();
    // The first transaction writes its entry at once, the seven that
    // joined it theirs together before the commit.
    assert_eq!(
        segments(&other, "archival_fts"),
        2,
        "two segments for the eight transactions of one commit"
    );
    assert_eq!(notes(&other), (0, 0), "another connection sees notes");
    let found: i64 = other
        .query_row(
            "SELECT count(*) FROM archival_fts WHERE archival_fts MATCH 'launch'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(found, 8, "another connection finds every entry committed");
}

#[test]
fn writers_outside_partners_commits_index_at_once_and_nothing_is_left_noted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    {
        let store = MemoryStore::open(&path).unwrap();
        store
            .transaction(|tx| tx.add_archival("ada", "the launch moved", 1).map(drop))
            .unwrap();
        // A batch never ended: the connection closes with it open.
        store.begin_batch().unwrap();
        store
            .transaction(|tx| tx.add_archival("ada", "the garden grew", 2).map(drop))
            .unwrap();
    }
    let other = Connection::open(&path).unwrap();
    assert_eq!(notes(&other), (0, 0), "a batch left open left notes");
    // A writer that is not partner's (the sqlite3 shell) is indexed at once.
    other
        .execute(
            "INSERT INTO archival (agent, content, created_at) VALUES ('ada', 'the budget grew', 3)",
            [],
        )
        .unwrap();
    let store = MemoryStore::open(&path).unwrap();
    assert_eq!(searched(&store, "budget").len(), 1);
    assert_eq!(searched(&store, "launch").len(), 1);
    assert!(
        searched(&store, "garden").is_empty(),
        "a batch never ended was kept"
    );
    integrity(&store);
}

/// Two `partner` processes and four writers of this one write the same
/// database at once: the text index they leave is whole (FTS5's own
/// integrity check), finds every entry, and holds no notes.
#[test]
fn processes_writing_at_once_leave_one_whole_text_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let store = std::sync::Arc::new(MemoryStore::open(&path).unwrap());
    let processes: Vec<_> = ["bob", "cy"]
        .into_iter()
        .map(|agent| {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || {
                let turn: String = (0..20)
                    .map(|i| format!("/recall insert \"{agent} note {i}: the garden grew\"\n"))
                    .collect();
                crate::support::partner_in(
                    &dir,
                    &["--db", "c.db", "exec", "--agent", agent, "-"],
                    &turn,
                )
            })
        })
        .collect();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..30 {
                    store
                        .transaction(|tx| {
                            tx.add_archival(
                                "ada",
                                &format!("writer {w} note {i}: the launch moved"),
                                i,
                            )
                            .map(drop)
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    for process in processes {
        let (code, out, err) = process.join().unwrap();
        assert_eq!(code, Some(0), "{out}\n{err}");
    }
    integrity(&store);
    let other = Connection::open(&path).unwrap();
    assert_eq!(notes(&other), (0, 0));
    let count = |word: &str| -> i64 {
        other
            .query_row(
                "SELECT count(*) FROM archival_fts WHERE archival_fts MATCH ?1",
                [word],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(count("launch"), 120, "this process's entries");
    assert_eq!(count("garden"), 40, "the other processes' entries");
}
