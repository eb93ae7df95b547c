//! The trace and the runtime's records (roster, intentions, outbox) on
//! both back ends.

use super::*;

#[test]
fn the_trace_numbers_every_record_once_and_pages_alike_on_both() {
    use crate::support::console::record;
    use partner::store::trace::TraceOutcome;
    use partner::store::trace::query::TraceFilter;
    let (pairs, _kept) = pairs(|path| Box::new(sqlite(path)), |url| Box::new(pg(url)));
    let mut pages = Vec::new();
    for (on, one, two) in &pairs {
        // Two connections append at once: every number once, none skipped.
        std::thread::scope(|s| {
            for (who, t) in [("ada", one), ("bo", two)] {
                s.spawn(move || {
                    for i in 0..50 {
                        let line = format!("/recall insert \"{who} {i} Friday\"");
                        let r = record(0, who, &line, TraceOutcome::Executed, "stored");
                        t.transaction(|tx| tx.append(r)).unwrap();
                    }
                });
            }
        });
        assert_eq!(one.transaction(|tx| tx.len()).unwrap(), 100, "{on}");
        let (all, restart) = two.transaction(|tx| tx.newest_after(0, 1_000)).unwrap();
        let seqs: Vec<u64> = all.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (1..=100).collect::<Vec<_>>(), "{on}");
        assert!(!restart, "{on}");
        assert!(all.iter().all(|r| r.id == format!("t{}", r.seq)), "{on}");
        let (newest, restart) = one.transaction(|tx| tx.newest_after(0, 10)).unwrap();
        assert_eq!(newest.first().map(|r| r.seq), Some(91), "{on}");
        assert!(restart, "{on}: older ones were left out");
        assert_eq!(
            one.transaction(|tx| tx.newest_after(95, 10))
                .unwrap()
                .0
                .len(),
            5,
            "{on}"
        );
        assert!(
            one.transaction(|tx| tx.record("t7")).unwrap().is_some(),
            "{on}"
        );
        assert!(
            one.transaction(|tx| tx.record("t999")).unwrap().is_none(),
            "{on}"
        );
        // A filtered page of older records, then the next.
        let filter = TraceFilter {
            agent: Some("ada".into()),
            search: Some("FRIDAY".into()),
            ..TraceFilter::default()
        };
        let page = one.transaction(|tx| tx.older(101, &filter, 20)).unwrap();
        assert_eq!(page.records.len(), 20, "{on}");
        assert!(page.records.iter().all(|r| r.agent == "ada"), "{on}");
        assert!(
            page.records.windows(2).all(|w| w[0].seq > w[1].seq),
            "{on}: newest first"
        );
        let rest = one
            .transaction(|tx| tx.older(page.next.unwrap(), &filter, 100))
            .unwrap();
        assert_eq!(
            page.records.len() + rest.records.len(),
            50,
            "{on}: every one of ada's"
        );
        assert_eq!(rest.next, None, "{on}: the trace starts there");
        pages.push(page.records.len());
    }
    assert!(pages.iter().all(|n| *n == 20));
}

#[test]
fn the_roster_intentions_and_outbox_behave_alike_on_both() {
    use partner::store::memory::records::IntentionStatus;
    use partner::store::memory::roster::{NewIntention, Outgoing};
    let (pairs, _kept) = pairs(|path| Box::new(sqlite(path)), |url| Box::new(pg(url)));
    for (on, one, two) in &pairs {
        let fresh = two.transaction(|tx| tx.agent_state("ada")).unwrap();
        assert!(!fresh.halted && fresh.pulse_secs.is_none(), "{on}");
        one.transaction(|tx| tx.ensure_agent("ada", T)).unwrap();
        one.transaction(|tx| tx.ensure_agent("ada", T)).unwrap();
        one.transaction(|tx| tx.set_halted("ada", true, Some("the partner said so"), T))
            .unwrap();
        one.transaction(|tx| tx.set_pulse("ada", 90, T)).unwrap();
        let state = two.transaction(|tx| tx.agent_state("ada")).unwrap();
        assert!(state.halted, "{on}: the other connection sees the halt");
        assert_eq!(
            state.halt_reason.as_deref(),
            Some("the partner said so"),
            "{on}"
        );
        assert_eq!(state.pulse_secs, Some(90), "{on}");
        one.transaction(|tx| tx.set_halted("ada", false, None, T))
            .unwrap();
        assert!(
            !two.transaction(|tx| tx.agent_state("ada")).unwrap().halted,
            "{on}: resumed"
        );

        let intend = |what, due_at| NewIntention {
            agent: "ada",
            what,
            due_text: "later",
            due_at,
            next_session: due_at.is_none(),
        };
        let soon = one
            .transaction(|tx| tx.add_intention(&intend("water the plants", Some(T + 10)), T))
            .unwrap();
        let later = one
            .transaction(|tx| tx.add_intention(&intend("call bo", Some(T + 1_000)), T))
            .unwrap();
        let next = one
            .transaction(|tx| tx.add_intention(&intend("read the notes", None), T))
            .unwrap();
        let order: Vec<i64> = two
            .transaction(|tx| tx.intentions("ada", true))
            .unwrap()
            .into_iter()
            .map(|i| i.id)
            .collect();
        assert_eq!(
            order,
            vec![soon, later, next],
            "{on}: by due time, then undated"
        );
        assert_eq!(
            two.transaction(|tx| tx.due_intentions(T + 10)).unwrap(),
            vec![("ada".to_string(), soon)],
            "{on}"
        );
        assert!(
            one.transaction(|tx| tx.set_intention_status(
                "ada",
                soon,
                IntentionStatus::Completed,
                Some("done"),
                T
            ))
            .unwrap(),
            "{on}"
        );
        assert!(
            !one.transaction(|tx| tx.set_intention_status(
                "bo",
                soon,
                IntentionStatus::Dismissed,
                None,
                T
            ))
            .unwrap(),
            "{on}: not bo's"
        );
        let open: Vec<i64> = two
            .transaction(|tx| tx.intentions("ada", true))
            .unwrap()
            .into_iter()
            .map(|i| i.id)
            .collect();
        assert_eq!(open, vec![later, next], "{on}");
        let all = two.transaction(|tx| tx.intentions("ada", false)).unwrap();
        assert_eq!(
            all.last().map(|i| (i.id, i.note.as_deref())),
            Some((soon, Some("done"))),
            "{on}: closed last"
        );

        let out = |content| Outgoing {
            agent: "ada",
            channel: "bluesky",
            target: None,
            content,
            public: true,
        };
        let first = one.transaction(|tx| tx.enqueue(&out("hello"), T)).unwrap();
        let second = two
            .transaction(|tx| tx.enqueue(&out("again"), T + 1))
            .unwrap();
        let queued: Vec<(i64, String, bool)> = one
            .transaction(|tx| tx.outbox())
            .unwrap()
            .into_iter()
            .map(|o| (o.id, o.content, o.public))
            .collect();
        assert_eq!(
            queued,
            vec![
                (first, "hello".into(), true),
                (second, "again".into(), true)
            ],
            "{on}"
        );
    }
}

#[test]
fn learned_phrasings_are_kept_and_forgotten_alike_on_both() {
    use partner::store::memory::learned::Phrasings;
    let (pairs, _kept) = pairs(
        |path| Box::new(MemoryStore::open(path).unwrap()) as Box<dyn Phrasings>,
        |url| Box::new(PgStore::connect(url).unwrap()) as Box<dyn Phrasings>,
    );
    for (on, one, two) in &pairs {
        assert_eq!(two.signature().unwrap(), (0, 0), "{on}");
        let first = one
            .learn(
                "jot down $(x) -> \"/recall insert\"",
                "jot down milk",
                "/recall insert \"milk\"",
                T,
            )
            .unwrap();
        let second = one
            .learn(
                "note $(x) -> \"/context\"",
                "note it",
                "/context notes + \"it\"",
                T,
            )
            .unwrap();
        let seen: Vec<(i64, String)> = two
            .phrasings()
            .unwrap()
            .into_iter()
            .map(|r| (r.id, r.words))
            .collect();
        assert_eq!(
            seen,
            vec![(first, "jot down milk".into()), (second, "note it".into())],
            "{on}"
        );
        let before = two.signature().unwrap();
        assert!(two.forget(first).unwrap(), "{on}");
        assert!(!one.forget(first).unwrap(), "{on}: once");
        assert_ne!(
            one.signature().unwrap(),
            before,
            "{on}: a reader sees the change"
        );
        assert_eq!(one.phrasings().unwrap().len(), 1, "{on}");
    }
}

#[test]
fn kinds_and_agents_behave_alike_on_both() {
    let (pairs, _kept) = pairs(|path| Box::new(sqlite(path)), |url| Box::new(pg(url)));
    for (on, one, two) in &pairs {
        let notes = NewBlock::new("ada", "notes", BlockKind::Working, "friday");
        one.transaction(|tx| tx.create_block(&notes, "ada", T))
            .unwrap();
        let moved = two
            .transaction(|tx| tx.set_block_kind("ada", "notes", BlockKind::Archival, T + 1))
            .unwrap();
        assert_eq!(moved.kind, BlockKind::Archival, "{on}");
        assert_eq!(
            one.transaction(|tx| tx.block("ada", "notes"))
                .unwrap()
                .unwrap()
                .kind,
            BlockKind::Archival,
            "{on}"
        );
        assert!(
            two.transaction(|tx| tx.set_block_kind("ada", "nothing", BlockKind::Core, T))
                .is_err(),
            "{on}"
        );
        // Agents: on the roster, or owning a block.
        two.transaction(|tx| tx.ensure_agent("eve", T)).unwrap();
        let mut names = one.transaction(|tx| tx.agent_names()).unwrap();
        names.sort();
        assert_eq!(names, ["ada", "eve"], "{on}");
    }
}

/// What the rows hold, read with each back end's own driver: a message's
/// lineage and the data watches, after a watch was started, paused and
/// started again.
#[test]
fn a_messages_lineage_and_a_watch_are_kept_alike_on_both() {
    let write = |store: &Store| {
        let lineage = ["bo".to_string(), "cy".to_string()];
        let told = NewMessage {
            agent: "ada",
            thread: "agent:bo",
            role: "agent:bo",
            content: "the launch moved",
            lineage: &lineage,
            turn: None,
        };
        store.transaction(|tx| tx.add_message(&told, T)).unwrap();
        store
            .transaction(|tx| tx.set_watch("ada", "notes-dir", true, T))
            .unwrap();
        store
            .transaction(|tx| tx.set_watch("ada", "notes-dir", false, T + 1))
            .unwrap();
        store
            .transaction(|tx| tx.set_watch("ada", "notes-dir", true, T + 2))
            .unwrap();
        store
            .transaction(|tx| tx.set_watch("ada", "inbox", false, T + 3))
            .unwrap();
    };
    let expected = (
        "[\"bo\",\"cy\"]".to_string(),
        vec![
            ("inbox".to_string(), false, T + 3),
            ("notes-dir".to_string(), true, T + 2),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    write(&sqlite(&path));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let lineage: String = conn
        .query_row("SELECT lineage FROM messages", [], |r| r.get(0))
        .unwrap();
    let mut stmt = conn
        .prepare("SELECT source, active, changed_at FROM data_watches ORDER BY source")
        .unwrap();
    let watches: Vec<(String, bool, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!((lineage, watches), expected, "sqlite");
    if let Some(db) = postgres::scratch() {
        write(&pg(&db.url));
        let mut client = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
        let lineage: String = client
            .query_one("SELECT lineage FROM messages", &[])
            .unwrap()
            .get(0);
        let watches: Vec<(String, bool, i64)> = client
            .query(
                "SELECT source, active, changed_at FROM data_watches ORDER BY source",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        assert_eq!((lineage, watches), expected, "postgres");
    }
}
