//! The memory store over a real SQLite file in a temp dir.

use crate::support;
use partner::store::memory::backend::{BlockWrite, Memory, NewMessage};

use partner::store::memory::{
    BlockKind, MemoryError, MemoryStore, NewBlock, SearchDomain, SearchQuery, blocks, search,
};

fn store() -> (tempfile::TempDir, MemoryStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::open(dir.path().join("constellation.db")).unwrap();
    (dir, store)
}

#[test]
fn blocks_are_versioned_with_diffs_and_undo() {
    let (_dir, store) = store();
    let conn = store.conn();
    let (block, change) = conn
        .create_block(
            &NewBlock::new("ada", "notes", BlockKind::Working, "one"),
            "ada",
            1,
        )
        .unwrap();
    assert_eq!(
        (block.version, change.version_before, change.version_after),
        (1, None, 1)
    );
    let value = blocks::appended(&block.value, "two");
    let (block, change) = conn
        .write_block(
            &BlockWrite {
                agent: "ada",
                label: "notes",
                value: &value,
                base: None,
            },
            "ada",
            2,
        )
        .unwrap();
    assert_eq!(block.value, "one\ntwo");
    assert_eq!((change.version_before, change.version_after), (Some(1), 2));
    let history = conn.history("ada", "notes").unwrap();
    assert_eq!(history.len(), 2);
    let diff = blocks::diff("notes", &history[0].value, &history[1].value, 1, 2);
    assert!(diff.contains("+two"), "{diff}");
    assert!(
        diff.contains("notes@1") && diff.contains("notes@2"),
        "{diff}"
    );
}

#[test]
fn patches_apply_and_bad_patches_say_why() {
    let (_dir, store) = store();
    let conn = store.conn();
    conn.create_block(
        &NewBlock::new("ada", "notes", BlockKind::Working, "alpha\nbeta\n"),
        "ada",
        1,
    )
    .unwrap();
    let diff = blocks::diff("notes", "alpha\nbeta\n", "alpha\ngamma\n", 1, 2);
    let new = blocks::patched("notes", "alpha\nbeta\n", &diff).unwrap();
    assert_eq!(new, "alpha\ngamma\n");
    let err = blocks::patched("notes", "something else\n", &diff).unwrap_err();
    assert!(err.to_string().contains("does not apply"), "{err}");
    let fenced = "--- a\n+++ b\n@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta";
    assert_eq!(
        blocks::patched("notes", "alpha\nbeta\ngamma", fenced).unwrap(),
        "ALPHA\nbeta\ngamma",
        "a diff without its final newline still applies"
    );
    let err = blocks::patched("notes", "x", "not a diff at all").unwrap_err();
    assert!(matches!(err, MemoryError::BadPatch { .. }));
}

#[test]
fn char_limits_say_by_how_much() {
    let (_dir, store) = store();
    let conn = store.conn();
    let mut new = NewBlock::new("ada", "tiny", BlockKind::Core, "1234");
    new.char_limit = 5;
    conn.create_block(&new, "ada", 1).unwrap();
    let err = conn
        .write_block(
            &BlockWrite {
                agent: "ada",
                label: "tiny",
                value: "12345678",
                base: None,
            },
            "ada",
            2,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "block 'tiny' would hold 8 characters, 3 over its limit of 5; shorten it or archive something first"
    );
    assert_eq!(
        conn.block("ada", "tiny")
            .map(|b| b.expect("the block"))
            .unwrap()
            .value,
        "1234"
    );
}

#[test]
fn delete_is_undoable_and_undo_is_a_new_version() {
    let (_dir, store) = store();
    let conn = store.conn();
    conn.create_block(
        &NewBlock::new("ada", "plan", BlockKind::Archival, "v1"),
        "ada",
        1,
    )
    .unwrap();
    conn.write_block(
        &BlockWrite {
            agent: "ada",
            label: "plan",
            value: "v2",
            base: None,
        },
        "ada",
        2,
    )
    .unwrap();
    conn.delete_block("ada", "plan", "ada", 3).unwrap();
    assert!(conn.block("ada", "plan").unwrap().is_none());
    conn.undo_block("ada", "plan", "partner", 4).unwrap();
    let back = conn
        .block("ada", "plan")
        .map(|b| b.expect("the block"))
        .unwrap();
    assert_eq!((back.value.as_str(), back.version), ("v2", 4));
    conn.undo_block("ada", "plan", "partner", 5).unwrap();
    assert!(
        conn.block("ada", "plan").unwrap().is_none(),
        "undoing the undo deletes again"
    );
}

#[test]
fn replace_needs_exactly_one_match() {
    assert_eq!(
        blocks::replaced("p", "warm and kind", "warm", "cool").unwrap(),
        "cool and kind"
    );
    assert!(matches!(
        blocks::replaced("p", "a a", "a", "b"),
        Err(MemoryError::TextAmbiguous { count: 2, .. })
    ));
    assert!(matches!(
        blocks::replaced("p", "abc", "x", "b"),
        Err(MemoryError::TextNotFound { .. })
    ));
}

#[test]
fn search_ranks_filters_and_survives_any_query() {
    let (_dir, store) = store();
    let conn = store.conn();
    conn.create_block(
        &NewBlock::new(
            "ada",
            "project_notes",
            BlockKind::Archival,
            "The launch moved to May.",
        ),
        "ada",
        10,
    )
    .unwrap();
    conn.add_archival("ada", "Dana prefers email for contract questions", 20)
        .unwrap();
    conn.add_archival("bob", "Launching rockets is fun", 30)
        .unwrap();
    conn.add_message(
        &NewMessage {
            agent: "ada",
            thread: "t1",
            role: "user",
            content: "when is the launch again?",
            lineage: &[],
            turn: None,
        },
        40,
    )
    .unwrap();
    conn.add_message(
        &NewMessage {
            agent: "ada",
            thread: "t1",
            role: "assistant",
            content: "The launch is in May.",
            lineage: &[],
            turn: None,
        },
        50,
    )
    .unwrap();

    let hits = conn
        .search(&SearchQuery::new("launch", Some("ada")))
        .unwrap();
    let domains: Vec<SearchDomain> = hits.iter().map(|h| h.domain).collect();
    assert_eq!(
        domains,
        vec![
            SearchDomain::Blocks,
            SearchDomain::Conversations,
            SearchDomain::Conversations
        ]
    );
    // The matched term is marked, and the marks are not characters the
    // text could hold; written out for an agent, they are brackets.
    assert!(
        hits[0].snippet.contains("\u{2}launch\u{3}"),
        "{:?}",
        hits[0].snippet
    );
    assert!(search::bracketed(&hits[0].snippet).contains("[launch]"));
    assert_eq!(
        search::marked("a \u{2}b\u{3} [c]"),
        vec![
            ("a ".to_string(), false),
            ("b".to_string(), true),
            (" [c]".to_string(), false)
        ]
    );

    let mut everyone = SearchQuery::new("launching", None);
    everyone.domains = vec![SearchDomain::Archival];
    let hits = conn.search(&everyone).unwrap();
    assert_eq!(hits.len(), 1, "porter stemming finds rockets for everyone");
    assert_eq!(hits[0].agent, "bob");

    let mut role = SearchQuery::new("launch", Some("ada"));
    role.role = Some("assistant".into());
    let hits = conn.search(&role).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].role.as_deref(), Some("assistant"));

    let mut window = SearchQuery::new("launch", Some("ada"));
    window.since = Some(45);
    assert_eq!(conn.search(&window).unwrap().len(), 1);

    for hostile in [
        "\"",
        "NEAR(",
        "a OR",
        "*",
        "col:x",
        "^",
        "(((",
        "'); DROP TABLE blocks; --",
    ] {
        conn.search(&SearchQuery::new(hostile, None)).unwrap();
    }
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    drop(MemoryStore::open(&path).unwrap());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let err = MemoryStore::open(&path).unwrap_err();
    assert!(
        err.to_string().contains("schema is version 99, newer than"),
        "{err}"
    );
    let store = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(
            None,
            "user_version",
            partner::store::memory::schema_version(),
        )
        .unwrap();
        MemoryStore::open(&path).unwrap()
    };
    assert_eq!(
        store.schema_version().unwrap(),
        partner::store::memory::schema_version()
    );
}

#[test]
fn messages_from_other_agents_arrive_once_in_order() {
    let (_dir, store) = store();
    let conn = store.conn();
    conn.add_message(
        &NewMessage {
            agent: "ada",
            thread: "t1",
            role: "user",
            content: "hello",
            lineage: &[],
            turn: None,
        },
        10,
    )
    .unwrap();
    let first = conn
        .add_message(
            &NewMessage {
                agent: "ada",
                thread: "t1",
                role: "agent:bo",
                content: "first note",
                lineage: &[],
                turn: None,
            },
            20,
        )
        .unwrap();
    conn.add_message(
        &NewMessage {
            agent: "ada",
            thread: "t1",
            role: "assistant",
            content: "thanks",
            lineage: &[],
            turn: None,
        },
        30,
    )
    .unwrap();
    conn.add_message(
        &NewMessage {
            agent: "cy",
            thread: "t1",
            role: "agent:bo",
            content: "for someone else",
            lineage: &[],
            turn: None,
        },
        35,
    )
    .unwrap();
    conn.add_message(
        &NewMessage {
            agent: "ada",
            thread: "t2",
            role: "agent:cy",
            content: "second note",
            lineage: &[],
            turn: None,
        },
        40,
    )
    .unwrap();
    let all = conn.messages_from_agents("ada", 0).unwrap();
    let texts: Vec<&str> = all.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["first note", "second note"]);
    assert_eq!(all[1].role, "agent:cy");
    let later = conn.messages_from_agents("ada", first).unwrap();
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].content, "second note");
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Issue 28: the database and its WAL and shared-memory files are the
/// user's alone (0600), whatever the umask of the process that made them.
#[test]
fn the_database_and_its_companions_are_private() {
    let (dir, store) = store();
    let conn = store.conn();
    conn.add_archival("ada", "a private note", 1).unwrap();
    for name in [
        "constellation.db",
        "constellation.db-wal",
        "constellation.db-shm",
    ] {
        assert_eq!(mode(&dir.path().join(name)), 0o600, "{name}");
    }
}

/// The binary makes what it creates private too: a new database and the
/// data directory it makes for the default database (0700).
#[test]
fn the_binary_creates_private_files_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["exec", "--db"])
        .arg(&db)
        .args(["--agent", "ada", "/recall insert \"private\""])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&db), 0o600);
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    // A command that creates the default database in the data directory.
    let (code, _, err) = support::partner_env(
        dir.path(),
        &["exec", "--agent", "ada", "-"],
        "/recall insert \"x\"",
        &[("HOME", Some(&home)), ("XDG_DATA_HOME", None)],
    );
    assert_eq!(code, Some(0), "{err}");
    let data = home.join(".local/share/partner");
    assert_eq!(mode(&data), 0o700, "{}", data.display());
    for entry in std::fs::read_dir(&data).unwrap().flatten() {
        if entry.path().is_file() {
            assert_eq!(mode(&entry.path()), 0o600, "{}", entry.path().display());
        }
    }
}

/// Transactions from several threads at once share commits (group
/// commit), each is committed — readable from another connection — when
/// it returns `Ok`, and one that fails is undone alone.
#[test]
fn concurrent_transactions_share_commits_and_each_ok_is_committed() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("group.db");
    let store = Arc::new(partner::store::memory::MemoryStore::open(&path).unwrap());
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let store = store.clone();
            let path = path.clone();
            std::thread::spawn(move || {
                let other = rusqlite::Connection::open(&path).unwrap();
                for i in 0..60 {
                    let text = format!("entry {w}-{i}");
                    let fails = i % 10 == 9;
                    let result = store.transaction(
                        |tx| -> Result<(), partner::store::memory::MemoryError> {
                            tx.add_archival("ada", &text, i)?;
                            if fails {
                                return Err(partner::store::memory::MemoryError::Corrupt {
                                    what: "test",
                                    value: "a failing transaction".into(),
                                });
                            }
                            Ok(())
                        },
                    );
                    let seen: i64 = other
                        .query_row(
                            "SELECT count(*) FROM archival WHERE content = ?1",
                            [&text],
                            |r| r.get(0),
                        )
                        .unwrap();
                    assert_eq!(result.is_ok(), !fails, "{text}");
                    assert_eq!(
                        seen,
                        i64::from(!fails),
                        "{text}: committed when Ok, undone when not"
                    );
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let (commits, held) = store.commits();
    println!("{held} transactions in {commits} commits");
    assert_eq!(held, 8 * 60);
    assert!(commits < held, "{held} transactions took {commits} commits");
    let rows: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM archival", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 8 * 54);
}

/// A transaction that panics while another waits to share its commit
/// undoes only its own work and still commits the other's: the waiter is
/// told `Ok` at once, not after the commit deadline, and nothing it was
/// told failed commits later.
#[test]
fn a_transaction_that_panics_in_a_group_still_commits_the_others() {
    use partner::store::memory::{MemoryError, MemoryStore};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("group.db");
    let store = Arc::new(MemoryStore::open(&path).unwrap());
    let (holding, held) = std::sync::mpsc::channel::<()>();
    let first = {
        let store = store.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let done = store.transaction(|tx| -> Result<(), MemoryError> {
                tx.add_archival("ada", "kept", 1)?;
                holding.send(()).unwrap();
                // The second queues meanwhile: this one leaves the commit
                // to it.
                std::thread::sleep(Duration::from_millis(400));
                Ok(())
            });
            (done, started.elapsed())
        })
    };
    held.recv().unwrap();
    let second = {
        let store = store.clone();
        std::thread::spawn(move || {
            store.transaction(|tx| -> Result<(), MemoryError> {
                tx.add_archival("ada", "undone", 2)?;
                panic!("a bug while holding the connection");
            })
        })
    };
    assert!(second.join().is_err(), "the panic reaches its caller");
    let (done, took) = first.join().unwrap();
    assert!(done.is_ok(), "{done:?}");
    assert!(took < Duration::from_secs(10), "the first waited {took:?}");
    let other = rusqlite::Connection::open(&path).unwrap();
    let rows: Vec<String> = other
        .prepare("SELECT content FROM archival ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, ["kept"]);
    // The store goes on: the next transaction commits on its own.
    store
        .transaction(|tx| tx.add_archival("ada", "after", 3).map(drop))
        .unwrap();
    let after: i64 = other
        .query_row("SELECT count(*) FROM archival", [], |r| r.get(0))
        .unwrap();
    assert_eq!(after, 2);
}
