//! Memory on both back ends: versioned blocks, search, what was
//! acknowledged, migrations, and a server that is down or drops us.

use super::*;

#[test]
fn blocks_keep_every_version_refuse_stale_writes_and_undo() {
    on_both(|m, on| {
        let new = NewBlock::new("ada", "notes", BlockKind::Core, "first");
        let (block, change) = m.transaction(|tx| tx.create_block(&new, "ada", T)).unwrap();
        assert_eq!((block.version, change.version_before), (1, None), "{on}");
        assert!(
            matches!(
                m.transaction(|tx| tx.create_block(&new, "ada", T)),
                Err(MemoryError::BlockExists { .. })
            ),
            "{on}: a second create is refused"
        );
        let (block, _) = m
            .transaction(|tx| tx.write_block(&write("second", Some(1)), "partner", T + 1))
            .unwrap();
        assert_eq!((block.version, block.value.as_str()), (2, "second"), "{on}");
        // Written from version 1 while it is at 2: refused, nothing written.
        let stale = m.transaction(|tx| tx.write_block(&write("lost", Some(1)), "partner", T + 2));
        assert!(
            matches!(stale, Err(MemoryError::Conflict(_))),
            "{on}: {stale:?}"
        );
        assert_eq!(
            m.transaction(|tx| tx.block("ada", "notes"))
                .unwrap()
                .unwrap()
                .value,
            "second",
            "{on}"
        );
        // Over the limit: refused.
        let long = "x".repeat(6_000);
        let over = m.transaction(|tx| tx.write_block(&write(&long, None), "ada", T + 3));
        assert!(
            matches!(over, Err(MemoryError::OverLimit { .. })),
            "{on}: {over:?}"
        );
        m.transaction(|tx| tx.delete_block("ada", "notes", "ada", T + 4))
            .unwrap();
        assert!(
            m.transaction(|tx| tx.block("ada", "notes"))
                .unwrap()
                .is_none(),
            "{on}: deleted"
        );
        m.transaction(|tx| tx.undo_block("ada", "notes", "partner", T + 5))
            .unwrap();
        let back = m
            .transaction(|tx| tx.block("ada", "notes"))
            .unwrap()
            .unwrap();
        assert_eq!((back.version, back.value.as_str()), (4, "second"), "{on}");
        let history: Vec<(i64, bool, String)> = m
            .transaction(|tx| tx.history("ada", "notes"))
            .unwrap()
            .into_iter()
            .map(|v| (v.version, v.deleted, v.changed_by))
            .collect();
        assert_eq!(
            history,
            vec![
                (1, false, "ada".into()),
                (2, false, "partner".into()),
                (3, true, "ada".into()),
                (4, false, "partner".into()),
            ],
            "{on}"
        );
        let one = NewBlock::new("ada", "fresh", BlockKind::Working, "only");
        m.transaction(|tx| tx.create_block(&one, "ada", T)).unwrap();
        assert!(
            matches!(
                m.transaction(|tx| tx.undo_block("ada", "fresh", "ada", T)),
                Err(MemoryError::NothingToUndo { .. })
            ),
            "{on}"
        );
        let labels: Vec<String> = m
            .transaction(|tx| tx.blocks(Some("ada")))
            .unwrap()
            .into_iter()
            .map(|b| b.label)
            .collect();
        assert_eq!(
            labels,
            vec!["notes".to_string(), "fresh".to_string()],
            "{on}: core first"
        );
        assert!(
            m.transaction(|tx| tx.blocks(Some("bo")))
                .unwrap()
                .is_empty(),
            "{on}"
        );
    });
}

#[test]
fn search_finds_every_word_first_then_some_within_reach() {
    on_both(|m, on| {
        for (agent, text) in [
            ("ada", "The contract deadline moved to friday"),
            ("ada", "A contract with the printer"),
            ("ada", "Lunch with the printer on monday"),
            ("bo", "Another contract deadline, for bo alone"),
        ] {
            m.transaction(|tx| tx.add_archival(agent, text, T)).unwrap();
        }
        let note = NewBlock::new(
            "ada",
            "deadlines",
            BlockKind::Core,
            "the contract deadline is friday",
        );
        m.transaction(|tx| tx.create_block(&note, "ada", T))
            .unwrap();
        m.transaction(|tx| {
            tx.add_message(
                &NewMessage {
                    agent: "ada",
                    thread: "main",
                    role: "user",
                    content: "what about the contract deadline?",
                    lineage: &[],
                    turn: None,
                },
                T,
            )
        })
        .unwrap();
        assert_eq!(
            m.transaction(|tx| tx.archival_count("ada")).unwrap(),
            3,
            "{on}"
        );

        let mut query = SearchQuery::new("contract deadline", Some("ada"));
        query.domains = vec![SearchDomain::Archival];
        let hits = m.transaction(|tx| tx.search(&query)).unwrap();
        let texts: Vec<String> = hits
            .iter()
            .map(|h| h.snippet.replace([MARK_START, MARK_END], ""))
            .collect();
        assert!(
            texts[0].contains("contract deadline moved"),
            "{on}: {texts:?}"
        );
        assert!(
            hits.iter().all(|h| h.agent == "ada"),
            "{on}: its own memory only"
        );
        // Then the entry holding only one of the words, ranked after.
        assert_eq!(hits.len(), 2, "{on}: {texts:?}");
        assert!(texts[1].contains("printer"), "{on}: {texts:?}");
        assert!(hits[0].rank < hits[1].rank, "{on}: whole matches first");
        assert!(
            hits[0].snippet.contains(MARK_START) && hits[0].snippet.contains(MARK_END),
            "{on}: the matched words are marked: {:?}",
            hits[0].snippet
        );
        // Every domain, and the partner reads every agent.
        let mut everything = SearchQuery::new("contract deadline", None);
        everything.reach = Reach::All;
        everything.partial = false;
        let hits = m.transaction(|tx| tx.search(&everything)).unwrap();
        let domains: Vec<(SearchDomain, &str)> =
            hits.iter().map(|h| (h.domain, h.agent.as_str())).collect();
        assert!(
            domains.contains(&(SearchDomain::Blocks, "ada")),
            "{on}: {domains:?}"
        );
        assert!(
            domains.contains(&(SearchDomain::Archival, "bo")),
            "{on}: {domains:?}"
        );
        assert!(
            domains.contains(&(SearchDomain::Conversations, "ada")),
            "{on}: {domains:?}"
        );
        // Words nothing holds find nothing, and odd input is no error.
        assert!(
            m.transaction(|tx| tx.search(&SearchQuery::new("zebra xylophone", Some("ada"))))
                .unwrap()
                .is_empty(),
            "{on}"
        );
        for odd in [
            "",
            "\"",
            "-",
            "or or",
            "a & b | !c",
            "'; DROP TABLE blocks; --",
        ] {
            m.transaction(|tx| tx.search(&SearchQuery::new(odd, Some("ada"))))
                .unwrap_or_else(|e| panic!("{on}: {odd:?}: {e}"));
        }
        assert!(
            m.transaction(|tx| tx.block("ada", "deadlines"))
                .unwrap()
                .is_some(),
            "{on}: still there"
        );
    });
}

/// Opens a new connection to one store.
type Opener = Box<dyn Fn() -> Store>;

#[test]
fn what_a_store_acknowledged_is_there_for_the_next_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let scratch = postgres::scratch();
    let open: Vec<(&str, Opener)> = {
        let mut open: Vec<(&str, Opener)> = vec![("sqlite", Box::new(move || sqlite(&path)))];
        if let Some(db) = &scratch {
            let url = db.url.clone();
            open.push(("postgres", Box::new(move || pg(&url))));
        }
        open
    };
    for (on, open) in &open {
        let first = open();
        let id = first
            .transaction(|tx| tx.add_archival("ada", "kept across connections", T))
            .unwrap();
        first
            .transaction(|tx| {
                tx.create_block(
                    &NewBlock::new("ada", "kept", BlockKind::Core, "v1"),
                    "ada",
                    T,
                )
            })
            .unwrap();
        drop(first);
        let second = open();
        assert_eq!(
            second.transaction(|tx| tx.archival_count("ada")).unwrap(),
            1,
            "{on}"
        );
        assert_eq!(
            second
                .transaction(|tx| tx.block("ada", "kept"))
                .unwrap()
                .unwrap()
                .value,
            "v1",
            "{on}"
        );
        let hits = second
            .transaction(|tx| tx.search(&SearchQuery::new("connections", Some("ada"))))
            .unwrap();
        assert_eq!(hits.first().map(|h| h.id), Some(id), "{on}");
        assert!(
            second.transaction(|tx| tx.schema_version()).unwrap() >= 1,
            "{on}"
        );
    }
}

#[test]
fn daemons_starting_at_once_migrate_once_and_a_newer_schema_is_refused() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || {
                PgStore::connect(&url).map(|s| s.transaction(|tx| tx.schema_version()).unwrap())
            })
        })
        .collect();
    let versions: Vec<i64> = starts
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    let known = partner::store::postgres::MIGRATIONS.len() as i64;
    assert_eq!(versions, vec![known; 4]);
    let mut admin = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    let applied: i64 = admin
        .query_one("SELECT COUNT(*) FROM partner_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(applied, known, "each migration recorded once");
    admin
        .execute(
            "INSERT INTO partner_schema (version) VALUES ($1)",
            &[&(known as i32 + 5)],
        )
        .unwrap();
    let newer = PgStore::connect(&db.url).unwrap_err();
    assert!(matches!(newer, MemoryError::NewerSchema { .. }), "{newer}");
}

#[test]
fn a_server_that_does_not_answer_is_an_error_within_the_deadline() {
    // A port nothing listens on: refused at once, never a hang.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let started = std::time::Instant::now();
    let err = PgStore::connect(&format!("postgres://root@127.0.0.1:{port}/test")).unwrap_err();
    assert!(
        started.elapsed() < partner::store::postgres::CONNECT_TIMEOUT * 2,
        "{err}"
    );
    assert!(err.to_string().contains("cannot reach"), "{err}");
    let bad = PgStore::connect("not a url at all").unwrap_err();
    assert!(bad.to_string().contains("not a PostgreSQL URL"), "{bad}");
}

#[test]
fn a_connection_the_server_dropped_is_opened_again() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let store = PgStore::connect(&db.url).unwrap();
    store
        .transaction(|tx| tx.add_archival("ada", "before the drop", T))
        .unwrap();
    let mut admin = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    let dropped: i64 = admin
        .query_one(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'partner'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(dropped >= 1);
    // The first use may meet the closed connection (an error, not a panic);
    // the next opens it again.
    let _ = store.transaction(|tx| tx.archival_count("ada"));
    assert_eq!(store.transaction(|tx| tx.archival_count("ada")).unwrap(), 1);
    store
        .transaction(|tx| tx.add_archival("ada", "after the drop", T))
        .unwrap();
    assert_eq!(store.transaction(|tx| tx.archival_count("ada")).unwrap(), 2);
}
