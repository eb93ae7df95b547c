//! kill -9 on both back ends: a child writes until killed; everything it
//! acknowledged is there, and nothing is torn.

use super::*;

/// Where the crash child writes: `sqlite:PATH` or `postgres:URL`.
const CHILD_ENV: &str = "PARTNER_CONTRACT_CHILD";

/// The store a crash child is told to write to.
fn open_named(at: &str) -> Store {
    match at.split_once(':') {
        Some(("sqlite", path)) => sqlite(std::path::Path::new(path)),
        Some(("postgres", url)) => pg(url),
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
    m.transaction(|tx| tx.create_block(&new, "ada", T)).unwrap();
    println!("ready");
    for i in 0.. {
        let block = m
            .transaction(|tx| tx.block("ada", "notes"))
            .unwrap()
            .unwrap();
        let value = format!("{}write {i}\n", block.value);
        m.transaction(|tx| tx.write_block(&write(&value, Some(block.version)), "ada", T + i))
            .unwrap();
        println!("ack write {i}");
        m.transaction(|tx| tx.add_archival("ada", &format!("entry number {i}"), T + i))
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
            "store_contract::crash::crash_writer_child",
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
        let notes = m
            .transaction(|tx| tx.block("ada", "notes"))
            .unwrap()
            .unwrap();
        for i in &writes {
            assert!(
                notes.value.lines().any(|l| l == format!("write {i}")),
                "{at}: acknowledged write {i} is missing"
            );
        }
        // No torn write: the value is its latest version's, one line a version.
        let history = m.transaction(|tx| tx.history("ada", "notes")).unwrap();
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
            m.transaction(|tx| tx.archival_count("ada")).unwrap() >= entries.len() as i64,
            "{at}"
        );
        for i in [entries[0], *entries.last().unwrap()] {
            let mut q = SearchQuery::new(&format!("entry number {i}"), Some("ada"));
            q.domains = vec![SearchDomain::Archival];
            q.partial = false;
            let found = m.transaction(|tx| tx.search(&q)).unwrap();
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
