//! One contract, two back ends: the memory operations — versioned blocks,
//! archival entries, conversation messages and search — behave the same
//! on SQLite (a file in a temp dir) and on a real PostgreSQL server (a
//! fresh database per test, from `PARTNER_TEST_POSTGRES`); and so does the
//! queue: requests cross connections, and a request is decided once.

use crate::support::postgres;

use partner::memory::backend::{BlockWrite, Memory, NewMessage};
use partner::memory::search::{MARK_END, MARK_START};
use partner::memory::{
    BlockKind, MemoryError, MemoryStore, NewBlock, Reach, SearchDomain, SearchQuery,
};
use partner::permission::pending::{NewRequest, NewRule, RequestedAction};
use partner::permission::requests::{DecideError, Decided, Requests};
use partner::permission::{Authority, RequestStatus};
use partner::postgres::PgStore;

/// A write of ada's `notes` from `base`.
fn write(value: &str, base: Option<i64>) -> BlockWrite<'_> {
    BlockWrite {
        agent: "ada",
        label: "notes",
        value,
        base,
    }
}

/// Runs `check` on a fresh store of each back end; the name says which.
fn on_both(check: impl Fn(&dyn Memory, &str)) {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = MemoryStore::open(dir.path().join("c.db")).unwrap();
    check(&sqlite, "sqlite");
    if let Some(db) = postgres::scratch() {
        let pg = PgStore::connect(&db.url).unwrap();
        check(&pg, "postgres");
    }
}

const T: i64 = 1_795_262_400_000;

#[test]
fn blocks_keep_every_version_refuse_stale_writes_and_undo() {
    on_both(|m, on| {
        let new = NewBlock::new("ada", "notes", BlockKind::Core, "first");
        let (block, change) = m.create_block(&new, "ada", T).unwrap();
        assert_eq!((block.version, change.version_before), (1, None), "{on}");
        assert!(
            matches!(
                m.create_block(&new, "ada", T),
                Err(MemoryError::BlockExists { .. })
            ),
            "{on}: a second create is refused"
        );
        let (block, _) = m
            .write_block(&write("second", Some(1)), "partner", T + 1)
            .unwrap();
        assert_eq!((block.version, block.value.as_str()), (2, "second"), "{on}");
        // Written from version 1 while it is at 2: refused, nothing written.
        let stale = m.write_block(&write("lost", Some(1)), "partner", T + 2);
        assert!(
            matches!(stale, Err(MemoryError::Conflict(_))),
            "{on}: {stale:?}"
        );
        assert_eq!(
            m.block("ada", "notes").unwrap().unwrap().value,
            "second",
            "{on}"
        );
        // Over the limit: refused.
        let long = "x".repeat(6_000);
        let over = m.write_block(&write(&long, None), "ada", T + 3);
        assert!(
            matches!(over, Err(MemoryError::OverLimit { .. })),
            "{on}: {over:?}"
        );
        m.delete_block("ada", "notes", "ada", T + 4).unwrap();
        assert!(m.block("ada", "notes").unwrap().is_none(), "{on}: deleted");
        m.undo_block("ada", "notes", "partner", T + 5).unwrap();
        let back = m.block("ada", "notes").unwrap().unwrap();
        assert_eq!((back.version, back.value.as_str()), (4, "second"), "{on}");
        let history: Vec<(i64, bool, String)> = m
            .history("ada", "notes")
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
        m.create_block(&one, "ada", T).unwrap();
        assert!(
            matches!(
                m.undo_block("ada", "fresh", "ada", T),
                Err(MemoryError::NothingToUndo { .. })
            ),
            "{on}"
        );
        let labels: Vec<String> = m
            .blocks(Some("ada"))
            .unwrap()
            .into_iter()
            .map(|b| b.label)
            .collect();
        assert_eq!(
            labels,
            vec!["notes".to_string(), "fresh".to_string()],
            "{on}: core first"
        );
        assert!(m.blocks(Some("bo")).unwrap().is_empty(), "{on}");
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
            m.add_archival(agent, text, T).unwrap();
        }
        let note = NewBlock::new(
            "ada",
            "deadlines",
            BlockKind::Core,
            "the contract deadline is friday",
        );
        m.create_block(&note, "ada", T).unwrap();
        m.add_message(
            &NewMessage {
                agent: "ada",
                thread: "main",
                role: "user",
                content: "what about the contract deadline?",
            },
            T,
        )
        .unwrap();
        assert_eq!(m.archival_count("ada").unwrap(), 3, "{on}");

        let mut query = SearchQuery::new("contract deadline", Some("ada"));
        query.domains = vec![SearchDomain::Archival];
        let hits = m.search(&query).unwrap();
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
        let hits = m.search(&everything).unwrap();
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
            m.search(&SearchQuery::new("zebra xylophone", Some("ada")))
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
            m.search(&SearchQuery::new(odd, Some("ada")))
                .unwrap_or_else(|e| panic!("{on}: {odd:?}: {e}"));
        }
        assert!(
            m.block("ada", "deadlines").unwrap().is_some(),
            "{on}: still there"
        );
    });
}

/// Opens a new connection to one store.
type Opener = Box<dyn Fn() -> Box<dyn Memory>>;

#[test]
fn what_a_store_acknowledged_is_there_for_the_next_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let scratch = postgres::scratch();
    let open: Vec<(&str, Opener)> = {
        let mut open: Vec<(&str, Opener)> = vec![(
            "sqlite",
            Box::new(move || Box::new(MemoryStore::open(&path).unwrap()) as Box<dyn Memory>),
        )];
        if let Some(db) = &scratch {
            let url = db.url.clone();
            open.push((
                "postgres",
                Box::new(move || Box::new(PgStore::connect(&url).unwrap()) as Box<dyn Memory>),
            ));
        }
        open
    };
    for (on, open) in &open {
        let first = open();
        let id = first
            .add_archival("ada", "kept across connections", T)
            .unwrap();
        first
            .create_block(
                &NewBlock::new("ada", "kept", BlockKind::Core, "v1"),
                "ada",
                T,
            )
            .unwrap();
        drop(first);
        let second = open();
        assert_eq!(second.archival_count("ada").unwrap(), 1, "{on}");
        assert_eq!(
            second.block("ada", "kept").unwrap().unwrap().value,
            "v1",
            "{on}"
        );
        let hits = second
            .search(&SearchQuery::new("connections", Some("ada")))
            .unwrap();
        assert_eq!(hits.first().map(|h| h.id), Some(id), "{on}");
        assert!(second.schema_version().unwrap() >= 1, "{on}");
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
            std::thread::spawn(move || PgStore::connect(&url).map(|s| s.schema_version().unwrap()))
        })
        .collect();
    let versions: Vec<i64> = starts
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    let known = partner::postgres::MIGRATIONS.len() as i64;
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
        started.elapsed() < partner::postgres::CONNECT_TIMEOUT * 2,
        "{err}"
    );
    assert!(err.to_string().contains("cannot reach"), "{err}");
    let bad = PgStore::connect("not a url at all").unwrap_err();
    assert!(bad.to_string().contains("not a PostgreSQL URL"), "{bad}");
}

/// Two handles on one store of each back end (two connections, as two
/// daemons would have), and what the store is called.
fn two_handles_on_both(check: impl Fn(&dyn Requests, &dyn Requests, &str)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let (one, two) = (
        MemoryStore::open(&path).unwrap(),
        MemoryStore::open(&path).unwrap(),
    );
    check(&one, &two, "sqlite");
    if let Some(db) = postgres::scratch() {
        let (one, two) = (
            PgStore::connect(&db.url).unwrap(),
            PgStore::connect(&db.url).unwrap(),
        );
        check(&one, &two, "postgres");
    }
}

/// A request of ada's to post, waiting on the partner.
fn ask(q: &dyn Requests, n: usize) -> partner::permission::PendingRequest {
    let action = RequestedAction {
        target: Some("bluesky".into()),
        ..RequestedAction::default()
    };
    let canonical = format!("/post bluesky \"note {n}\" ?ask");
    q.ask(
        &NewRequest {
            agent: "ada",
            canonical: &canonical,
            action: &action,
            verb: "post",
            marker: Some("?ask"),
            reason: "asks the partner",
            authorities: &[Authority::Partner],
            turn_id: "t1",
            thread: "main",
            raw_text: &canonical,
            action_id: Some("t1:1:1"),
            on_behalf_of: &[],
            span: (0, canonical.len()),
            expires_at: None,
        },
        T,
    )
    .unwrap()
}

#[test]
fn a_request_crosses_connections_and_is_decided_once() {
    two_handles_on_both(|one, two, on| {
        let asked = ask(one, 0);
        assert_eq!(asked.status, RequestStatus::Waiting, "{on}");
        let seen = two.waiting().unwrap();
        assert_eq!(seen.len(), 1, "{on}: the other connection sees it");
        assert_eq!(seen[0].canonical, asked.canonical, "{on}");
        assert_eq!(
            seen[0].action.target.as_deref(),
            Some("bluesky"),
            "{on}: typed, as asked"
        );
        let approve = |by| Decided {
            status: RequestStatus::Approved,
            decision: "approve_once",
            by,
            note: None,
        };
        let decided = two
            .decide(&asked.id, &approve("partner:ana"), T + 1)
            .unwrap();
        assert_eq!(decided.decided_by.as_deref(), Some("partner:ana"), "{on}");
        assert!(one.waiting().unwrap().is_empty(), "{on}");
        let again = one
            .decide(&asked.id, &approve("partner:ben"), T + 2)
            .unwrap_err();
        assert!(
            again.to_string().contains("already decided by partner:ana"),
            "{on}: {again}"
        );
        assert!(
            matches!(
                one.decide("r999", &approve("partner:ben"), T),
                Err(DecideError::NoRequest(_))
            ),
            "{on}"
        );
        // Decided at once from two connections, many times: one winner each.
        for n in 1..=20 {
            let id = ask(one, n).id;
            let (a, b) = std::thread::scope(|s| {
                let a = s.spawn(|| one.decide(&id, &approve("partner:ana"), T + 3));
                let b = s.spawn(|| two.decide(&id, &approve("partner:ben"), T + 3));
                (a.join().unwrap(), b.join().unwrap())
            });
            let (won, lost) = match (a, b) {
                (Ok(w), Err(l)) | (Err(l), Ok(w)) => (w, l),
                (a, b) => panic!("{on}: exactly one decision is recorded: {a:?} {b:?}"),
            };
            let winner = won.decided_by.unwrap();
            assert!(
                lost.to_string()
                    .contains(&format!("already decided by {winner}")),
                "{on}: {lost}"
            );
        }
    });
}

#[test]
fn standing_rules_are_added_listed_and_revoked_on_both() {
    two_handles_on_both(|one, two, on| {
        let rule = NewRule {
            agent: "ada",
            verb: "post",
            op: None,
            target: Some("bluesky"),
            allow: true,
            reason: Some("fine"),
            by: "partner:ana",
            expires_at: Some(T + 1_000),
        };
        let id = one.add_rule(&rule, T).unwrap();
        let rules = two.rules(T).unwrap();
        assert_eq!(rules.len(), 1, "{on}");
        assert_eq!(
            (rules[0].id, rules[0].created_by.as_str()),
            (id, "partner:ana"),
            "{on}"
        );
        assert!(two.rules(T + 1_000).unwrap().is_empty(), "{on}: lapsed");
        assert!(two.revoke_rule(id, T).unwrap(), "{on}");
        assert!(
            !one.revoke_rule(id, T).unwrap(),
            "{on}: not in force any more"
        );
        assert!(one.rules(T).unwrap().is_empty(), "{on}");
    });
}

#[test]
fn an_agents_lease_has_one_holder_and_a_lapsed_one_is_taken_over() {
    use partner::postgres::LeaseError;
    use std::time::{Duration, Instant};
    let Some(db) = postgres::scratch() else {
        return;
    };
    let (h1, h2) = (
        PgStore::connect(&db.url).unwrap(),
        PgStore::connect(&db.url).unwrap(),
    );
    let ttl = Duration::from_millis(1_500);
    let mine = h1.acquire("ada", "h1", ttl).unwrap();
    assert_eq!((mine.host.as_str(), mine.epoch), ("h1", 1));
    match h2.acquire("ada", "h2", ttl) {
        Err(LeaseError::HeldBy { host, .. }) => assert_eq!(host, "h1"),
        other => panic!("h1 holds it: {other:?}"),
    }
    // Asking again, or renewing, keeps it (and its epoch).
    assert_eq!(h1.acquire("ada", "h1", ttl).unwrap().epoch, 1);
    let mine = h1.renew(&mine, ttl).unwrap();
    // h1 stops renewing (it died): h2 has it once it lapses, not before.
    let started = Instant::now();
    let taken = loop {
        match h2.acquire("ada", "h2", ttl) {
            Ok(lease) => break lease,
            Err(LeaseError::HeldBy { .. }) => {
                assert!(started.elapsed() < ttl * 3, "never taken over");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert!(
        started.elapsed() >= ttl - Duration::from_millis(200),
        "not before it lapsed"
    );
    assert_eq!((taken.host.as_str(), taken.epoch), ("h2", 2));
    // The daemon that lost it hears so at its next renewal, and who has it.
    match h1.renew(&mine, ttl) {
        Err(LeaseError::Lost { by, .. }) => assert_eq!(by.as_deref(), Some("h2")),
        other => panic!("h1 lost it: {other:?}"),
    }
    assert!(!h1.release(&mine).unwrap(), "an old lease releases nothing");
    // Many daemons asking at once for a free agent: exactly one has it.
    let won: usize = std::thread::scope(|s| {
        let asks: Vec<_> = (0..4)
            .map(|i| {
                let url = db.url.clone();
                s.spawn(move || {
                    let store = PgStore::connect(&url).unwrap();
                    store.acquire("bo", &format!("d{i}"), ttl).is_ok()
                })
            })
            .collect();
        asks.into_iter()
            .map(|a| usize::from(a.join().unwrap()))
            .sum()
    });
    assert_eq!(won, 1);
    // A clean stop gives the lease up at once.
    assert!(h2.release(&taken).unwrap());
    assert!(!h2.release(&taken).unwrap(), "once");
    assert_eq!(
        h1.acquire("ada", "h1", ttl).unwrap().epoch,
        3,
        "the next holder's epoch is higher"
    );
    let hosts: Vec<(String, String, bool)> = h1
        .leases()
        .unwrap()
        .into_iter()
        .map(|(l, live)| (l.agent, l.host, live))
        .collect();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert_eq!(hosts[0], ("ada".into(), "h1".into(), true));
}

/// Where the crash child writes: `sqlite:PATH` or `postgres:URL`.
const CHILD_ENV: &str = "PARTNER_CONTRACT_CHILD";

/// The store a crash child is told to write to.
fn open_named(at: &str) -> Box<dyn Memory> {
    match at.split_once(':') {
        Some(("sqlite", path)) => Box::new(MemoryStore::open(path).unwrap()),
        Some(("postgres", url)) => Box::new(PgStore::connect(url).unwrap()),
        _ => panic!("not a store: {at}"),
    }
}

/// The child: block writes and archival entries until killed, each
/// acknowledged only once the store returned. Run only by the test below.
#[test]
#[ignore = "run as the child process of acknowledged_writes_survive_kill_9_on_both"]
fn crash_writer_child() {
    let Ok(at) = std::env::var(CHILD_ENV) else {
        return;
    };
    let m = open_named(&at);
    let new = NewBlock {
        char_limit: 1_000_000,
        ..NewBlock::new("ada", "notes", BlockKind::Working, "")
    };
    m.create_block(&new, "ada", T).unwrap();
    println!("ready");
    for i in 0.. {
        let block = m.block("ada", "notes").unwrap().unwrap();
        let value = format!("{}write {i}\n", block.value);
        m.write_block(&write(&value, Some(block.version)), "ada", T + i)
            .unwrap();
        println!("ack write {i}");
        m.add_archival("ada", &format!("entry number {i}"), T + i)
            .unwrap();
        println!("ack entry {i}");
    }
}

/// Starts a crash child on `at`, reads its acknowledgements until it has
/// `enough` writes, kills it with SIGKILL; the writes and entries it acked.
fn write_then_kill(at: &str, enough: usize) -> (Vec<i64>, Vec<i64>) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "store_contract::crash_writer_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, at)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut writes, mut entries) = (Vec::new(), Vec::new());
    let started = std::time::Instant::now();
    while writes.len() < enough && started.elapsed() < std::time::Duration::from_secs(60) {
        let Some(Ok(line)) = lines.next() else { break };
        if let Some(i) = line.strip_prefix("ack write ") {
            writes.push(i.parse().unwrap());
        } else if let Some(i) = line.strip_prefix("ack entry ") {
            entries.push(i.parse().unwrap());
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        writes.len() >= enough,
        "{at}: only {} writes acknowledged",
        writes.len()
    );
    (writes, entries)
}

#[test]
fn acknowledged_writes_survive_kill_9_on_both() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = postgres::scratch();
    let mut stores = vec![format!("sqlite:{}", dir.path().join("c.db").display())];
    if let Some(db) = &scratch {
        stores.push(format!("postgres:{}", db.url));
    }
    for at in &stores {
        let (writes, entries) = write_then_kill(at, 80);
        let m = open_named(at);
        let notes = m.block("ada", "notes").unwrap().unwrap();
        for i in &writes {
            assert!(
                notes.value.lines().any(|l| l == format!("write {i}")),
                "{at}: acknowledged write {i} is missing"
            );
        }
        // No torn write: the value is its latest version's, one line a version.
        let history = m.history("ada", "notes").unwrap();
        let last = history.last().unwrap();
        assert_eq!(
            (last.version, &last.value),
            (notes.version, &notes.value),
            "{at}"
        );
        assert_eq!(
            notes.value.lines().count() as i64,
            notes.version - 1,
            "{at}"
        );
        assert!(
            m.archival_count("ada").unwrap() >= entries.len() as i64,
            "{at}"
        );
        for i in [entries[0], *entries.last().unwrap()] {
            let mut q = SearchQuery::new(&format!("entry number {i}"), Some("ada"));
            q.domains = vec![SearchDomain::Archival];
            q.partial = false;
            let found = m.search(&q).unwrap();
            assert!(
                found.iter().any(|h| h
                    .snippet
                    .replace([MARK_START, MARK_END], "")
                    .contains(&format!("entry number {i}"))),
                "{at}: acknowledged entry {i} is missing"
            );
        }
    }
}

#[test]
fn a_request_and_its_decision_reach_a_listening_daemon_within_a_second() {
    use partner::postgres::channel;
    use std::time::{Duration, Instant};
    let Some(db) = postgres::scratch() else {
        return;
    };
    let here = PgStore::connect(&db.url).unwrap();
    let there = PgStore::connect(&db.url).unwrap();
    let mut listener = here
        .listen(&[channel::REQUESTS, channel::DECISIONS])
        .unwrap();
    assert!(
        listener
            .wait(Duration::from_millis(100))
            .unwrap()
            .is_empty(),
        "nothing yet"
    );
    let started = Instant::now();
    let asked = ask(&there, 1);
    let heard = listener.wait(Duration::from_secs(1)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(
        heard
            .iter()
            .map(|n| (n.channel.as_str(), n.payload.as_str()))
            .collect::<Vec<_>>(),
        vec![(channel::REQUESTS, asked.id.as_str())]
    );
    let approve = |by| Decided {
        status: RequestStatus::Approved,
        decision: "approve_once",
        by,
        note: None,
    };
    let started = Instant::now();
    there.decide(&asked.id, &approve("partner:ana"), T).unwrap();
    let heard = listener.wait(Duration::from_secs(1)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(
        (heard[0].channel.as_str(), heard[0].payload.as_str()),
        (channel::DECISIONS, asked.id.as_str())
    );
    // A decision that came second changes nothing and announces nothing.
    assert!(there.decide(&asked.id, &approve("partner:ben"), T).is_err());
    assert!(
        listener
            .wait(Duration::from_millis(300))
            .unwrap()
            .is_empty()
    );
    assert!(
        here.listen(&["partner; DROP TABLE pending"]).is_err(),
        "channels are partner's own words"
    );
}

/// Two connections to one trace, and which back end it is on.
type TracePair = (
    &'static str,
    Box<dyn partner::trace::backend::Trace>,
    Box<dyn partner::trace::backend::Trace>,
);

#[test]
fn the_trace_numbers_every_record_once_and_pages_alike_on_both() {
    use crate::support::console::record;
    use partner::trace::TraceOutcome;
    use partner::trace::query::TraceFilter;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let mut pairs: Vec<TracePair> = vec![(
        "sqlite",
        Box::new(MemoryStore::open(&path).unwrap()),
        Box::new(MemoryStore::open(&path).unwrap()),
    )];
    let scratch = postgres::scratch();
    if let Some(db) = &scratch {
        pairs.push((
            "postgres",
            Box::new(PgStore::connect(&db.url).unwrap()),
            Box::new(PgStore::connect(&db.url).unwrap()),
        ));
    }
    let mut pages = Vec::new();
    for (on, one, two) in &pairs {
        // Two connections append at once: every number once, none skipped.
        std::thread::scope(|s| {
            for (who, t) in [("ada", one), ("bo", two)] {
                s.spawn(move || {
                    for i in 0..50 {
                        let line = format!("/recall insert \"{who} {i} Friday\"");
                        let r = record(0, who, &line, TraceOutcome::Executed, "stored");
                        t.append(r).unwrap();
                    }
                });
            }
        });
        assert_eq!(one.len().unwrap(), 100, "{on}");
        let (all, restart) = two.newest_after(0, 1_000).unwrap();
        let seqs: Vec<u64> = all.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (1..=100).collect::<Vec<_>>(), "{on}");
        assert!(!restart, "{on}");
        assert!(all.iter().all(|r| r.id == format!("t{}", r.seq)), "{on}");
        let (newest, restart) = one.newest_after(0, 10).unwrap();
        assert_eq!(newest.first().map(|r| r.seq), Some(91), "{on}");
        assert!(restart, "{on}: older ones were left out");
        assert_eq!(one.newest_after(95, 10).unwrap().0.len(), 5, "{on}");
        assert!(one.record("t7").unwrap().is_some(), "{on}");
        assert!(one.record("t999").unwrap().is_none(), "{on}");
        // A filtered page of older records, then the next.
        let filter = TraceFilter {
            agent: Some("ada".into()),
            search: Some("FRIDAY".into()),
            ..TraceFilter::default()
        };
        let page = one.older(101, &filter, 20).unwrap();
        assert_eq!(page.records.len(), 20, "{on}");
        assert!(page.records.iter().all(|r| r.agent == "ada"), "{on}");
        assert!(
            page.records.windows(2).all(|w| w[0].seq > w[1].seq),
            "{on}: newest first"
        );
        let rest = one.older(page.next.unwrap(), &filter, 100).unwrap();
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
fn a_connection_the_server_dropped_is_opened_again() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let store = PgStore::connect(&db.url).unwrap();
    store.add_archival("ada", "before the drop", T).unwrap();
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
    let _ = store.archival_count("ada");
    assert_eq!(store.archival_count("ada").unwrap(), 1);
    store.add_archival("ada", "after the drop", T).unwrap();
    assert_eq!(store.archival_count("ada").unwrap(), 2);
}
