//! Where two processes meet one database: trace ids, rate limits and
//! schema migrations are taken inside the database, so a `partner exec` in
//! another shell, or many processes opening a new database at once, never
//! collide; and a database from before the trace moved inside imports its
//! trace file.

use crate::support;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use support::output_text as text;

use partner::engine::exec::{ActionStatus, ExecConfig, Executor, TurnContext};
use partner::policy::Policy;
use partner::store::memory::MemoryStore;

fn partner(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn executor(db: &Path, policy: Policy) -> Executor {
    let store = Arc::new(partner::engine::exec::open_store(db).unwrap().into());
    Executor::with_parts(
        store,
        policy,
        ExecConfig::default(),
        partner::core::clock::system_clock(),
    )
    .unwrap()
}

fn run(exec: &Executor, text: &str) -> partner::engine::exec::ActionReport {
    let mut ctx = TurnContext::new("ada", "main", "t");
    exec.run_turn(&mut ctx, text).actions.remove(0)
}

#[test]
fn trace_ids_do_not_collide_with_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    // The long-running process (a runtime) writes, then another shell
    // writes to the same database, then the first writes again.
    let exec = executor(&db, Policy::permissive());
    assert_eq!(
        run(&exec, "/recall insert \"one\"").status,
        ActionStatus::Executed
    );
    for i in 0..3 {
        let out = partner(
            dir.path(),
            &[
                "exec",
                "--db",
                "c.db",
                "--agent",
                "ada",
                &format!("/recall insert \"shell {i}\""),
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let again = run(&exec, "/recall insert \"two\"");
    assert_eq!(again.status, ActionStatus::Executed, "{}", again.text);
    let (records, warnings) = exec.trace().unwrap();
    assert!(warnings.is_empty());
    let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["t1", "t2", "t3", "t4", "t5"]);
}

#[test]
fn rate_limits_are_shared_by_every_process() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    std::fs::write(
        dir.path().join("p.toml"),
        "[rate_limits]\ndefault = { burst = 3, per_minute = 0.001 }\n",
    )
    .unwrap();
    let policy =
        Policy::from_toml("[rate_limits]\ndefault = { burst = 3, per_minute = 0.001 }\n").unwrap();
    let exec = executor(&db, policy);
    assert_eq!(
        run(&exec, "/recall insert \"a\"").status,
        ActionStatus::Executed
    );
    for _ in 0..2 {
        let out = partner(
            dir.path(),
            &[
                "exec",
                "--db",
                "c.db",
                "--policy",
                "p.toml",
                "--agent",
                "ada",
                "/recall insert \"b\"",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    // The bucket of three is empty now, whichever process asks.
    let refused = run(&exec, "/recall insert \"c\"");
    assert_eq!(refused.status, ActionStatus::Denied, "{}", refused.text);
    assert!(refused.text.contains("rate limit"), "{}", refused.text);
    let out = partner(
        dir.path(),
        &[
            "exec",
            "--db",
            "c.db",
            "--policy",
            "p.toml",
            "--agent",
            "ada",
            "/recall insert \"d\"",
        ],
    );
    assert!(text(&out).contains("rate limit"), "{}", text(&out));
}

#[test]
fn many_processes_may_open_a_new_database_at_once() {
    for round in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        let children: Vec<_> = (0..8)
            .map(|i| {
                // Commands that create the database when it is missing
                // (reads refuse a database that does not exist).
                let args: Vec<String> = if i % 2 == 0 {
                    vec![
                        "memory".into(),
                        "--db".into(),
                        "new.db".into(),
                        "set".into(),
                        "ada".into(),
                        format!("notes{i}"),
                        format!("value {i}"),
                    ]
                } else {
                    vec![
                        "exec".into(),
                        "--db".into(),
                        "new.db".into(),
                        "--agent".into(),
                        "ada".into(),
                        "/recall insert \"x\"".into(),
                    ]
                };
                Command::new(env!("CARGO_BIN_EXE_partner"))
                    .current_dir(dir.path())
                    .args(&args)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let store = MemoryStore::open(dir.path().join("new.db")).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            partner::store::memory::schema_version()
        );
    }
}

#[test]
fn a_database_from_before_imports_its_trace_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    // A schema-2 database with two indexed records, and the trace file an
    // older partner kept beside it (its last line torn by a crash).
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        for sql in &partner::store::memory::schema::MIGRATIONS[..2] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 2).unwrap();
        for (seq, verb) in [(1, "recall"), (2, "reply")] {
            conn.execute(
                "INSERT INTO trace_index (id, seq, time, agent, verb, canonical, outcome, duration_us)
                 VALUES (?1, ?2, 0, 'ada', ?3, ?4, 'executed', 5)",
                rusqlite::params![format!("t{seq}"), seq, verb, format!("/{verb} x")],
            )
            .unwrap();
        }
    }
    let exec = executor(&dir.path().join("scratch.db"), Policy::permissive());
    run(&exec, "/recall insert \"x\"");
    let mut bytes = Vec::new();
    partner::store::trace::store::export_jsonl(&exec.store().sqlite().unwrap().conn(), &mut bytes)
        .unwrap();
    let lines = String::from_utf8(bytes).unwrap();
    let record = lines.lines().next().unwrap().to_string();
    let second = record
        .replace("\"seq\":1", "\"seq\":2")
        .replace("\"t1\"", "\"t2\"");
    std::fs::write(
        dir.path().join("old.trace.jsonl"),
        format!("{record}\n{second}\n{{\"id\":\"t3\",\"se"),
    )
    .unwrap();

    let out = partner(dir.path(), &["trace", "show", "--db", "old.db", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown.as_array().unwrap().len(), 2, "{shown}");
    assert!(dir.path().join("old.trace.jsonl.imported").exists());
    assert!(!dir.path().join("old.trace.jsonl").exists());
    // Imported once: a new action continues the sequence.
    let out = partner(
        dir.path(),
        &[
            "exec",
            "--db",
            "old.db",
            "--agent",
            "ada",
            "/recall insert \"y\"",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = partner(dir.path(), &["trace", "show", "--db", "old.db", "--json"]);
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = shown
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["t1", "t2", "t3"]);
}
