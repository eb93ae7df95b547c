//! The runtime commands as scripts use them: `partner exec`, `memory`,
//! `pending`, `trace show` and `replay --verify`, on a real database file.

use crate::support;
use support::partner_output as partner;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", out(o)))
}

#[test]
fn a_session_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let set = partner(
        d,
        &[
            "memory", "--db", "c.db", "set", "ada", "notes", "-", "--kind", "working",
        ],
        "alpha",
    );
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    assert_eq!(out(&set), "notes is now v1 (5 chars)\n");

    let turn = "/recall notes + \"beta\"\n/post bluesky \"hello\" ?public\n/calc 20% of 350";
    let exec = partner(d, &["exec", "--db", "c.db", "--agent", "ada", "-"], turn);
    assert_eq!(exec.status.code(), Some(0), "{}", out(&exec));
    let text = out(&exec);
    assert!(
        text.contains("/recall append notes \"beta\" → executed: appended to notes (working, v2"),
        "{text}"
    );
    assert!(
        text.contains("→ pending: waiting for agent:anchor to approve (r1)"),
        "{text}"
    );
    assert!(text.contains("= 70"), "{text}");

    let listed = json(&partner(
        d,
        &["pending", "--db", "c.db", "list", "--json"],
        "",
    ));
    let first = &listed[0];
    for key in [
        "id",
        "agent",
        "verb",
        "canonical",
        "marker",
        "waiting_on",
        "created_at",
    ] {
        assert!(first.get(key).is_some(), "pending row lacks {key}: {first}");
    }
    assert_eq!(
        (
            first["id"].as_str(),
            first["waiting_on"].as_str(),
            first["marker"].as_str()
        ),
        (Some("r1"), Some("agent:anchor"), Some("?public"))
    );

    let approved = partner(d, &["pending", "--db", "c.db", "approve", "r1"], "");
    assert_eq!(
        out(&approved),
        "/post bluesky \"hello\" ?public → executed: queued a public post to bluesky\n"
    );
    let again = partner(d, &["pending", "--db", "c.db", "approve", "r1"], "");
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&again.stderr),
        "partner: request r1 is already approved by partner\n"
    );

    let memory = json(&partner(
        d,
        &["memory", "--db", "c.db", "list", "--json"],
        "",
    ));
    let row = &memory[0];
    for key in [
        "agent",
        "label",
        "kind",
        "permission",
        "chars",
        "limit",
        "value",
    ] {
        assert!(row.get(key).is_some(), "memory row lacks {key}: {row}");
    }
    assert_eq!(
        (row["value"].as_str(), row["chars"].as_u64()),
        (Some("alpha\nbeta"), Some(10))
    );

    let history = out(&partner(
        d,
        &["memory", "--db", "c.db", "history", "ada", "notes"],
        "",
    ));
    assert!(
        history.contains("v2") && history.contains("+beta"),
        "{history}"
    );
    let found = out(&partner(
        d,
        &["memory", "--db", "c.db", "search", "beta"],
        "",
    ));
    assert!(
        found.contains("blocks  ada/notes  alpha\n[beta]") || found.contains("[beta]"),
        "{found}"
    );

    let trace = json(&partner(
        d,
        &["trace", "show", "--db", "c.db", "--json", "--verb", "post"],
        "",
    ));
    assert_eq!(trace.as_array().unwrap().len(), 1);
    assert_eq!(trace[0]["decision"]["decided_by"], "partner");
    for key in [
        "id",
        "time",
        "agent",
        "turn_id",
        "text",
        "span",
        "canonical",
        "decision",
        "outcome",
        "result",
        "duration_us",
        "memory",
    ] {
        assert!(trace[0].get(key).is_some(), "trace record lacks {key}");
    }

    let verified = partner(d, &["replay", "--db", "c.db", "--verify"], "");
    assert_eq!(verified.status.code(), Some(0));
    assert!(
        out(&verified).starts_with("all 4 steps matched"),
        "{}",
        out(&verified)
    );

    // The trace exports as JSON lines, which read and verify the same.
    let export = partner(d, &["trace", "export", "--db", "c.db"], "");
    assert_eq!(export.status.code(), Some(0));
    assert_eq!(out(&export).lines().count(), 4);
    std::fs::write(d.join("t.jsonl"), &export.stdout).unwrap();
    let shown = json(&partner(d, &["trace", "show", "t.jsonl", "--json"], ""));
    assert_eq!(shown.as_array().unwrap().len(), 4);
    let verified = partner(d, &["replay", "t.jsonl", "--verify"], "");
    assert!(
        out(&verified).starts_with("all 4 steps matched"),
        "{}",
        out(&verified)
    );
}

#[test]
fn approve_all_and_deny_all_decide_as_the_partner() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let approved = partner(
        d,
        &[
            "exec",
            "--db",
            "c.db",
            "--agent",
            "ada",
            "--approve-all",
            "/post bluesky \"hi\"",
        ],
        "",
    );
    assert!(
        out(&approved).contains("→ executed: queued a public post"),
        "{}",
        out(&approved)
    );
    let denied = partner(
        d,
        &[
            "exec",
            "--db",
            "c.db",
            "--agent",
            "ada",
            "--deny-all",
            "--json",
            "/post bluesky \"again\"",
        ],
        "",
    );
    assert_eq!(denied.status.code(), Some(1));
    let report = json(&denied);
    assert_eq!(report["actions"][0]["status"], "denied");
    assert_eq!(
        report["actions"][0]["text"],
        "partner said no: denied from the command line"
    );
}

#[test]
fn bad_input_gets_a_clear_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("policy.toml"),
        "default = \"ask\"\n[[rules]]\ndecide = \"sometimes\"\n",
    )
    .unwrap();
    let bad = partner(
        d,
        &[
            "exec",
            "--db",
            "c.db",
            "--agent",
            "ada",
            "--policy",
            "policy.toml",
            "/reply x",
        ],
        "",
    );
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.starts_with(
            "partner: in policy file policy.toml: line 3, column 10: unknown variant `sometimes`"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    // A database that does not exist is said to be missing; in one that
    // does, a block that does not.
    let missing = partner(d, &["memory", "--db", "c.db", "show", "ada", "ghost"], "");
    assert!(
        String::from_utf8_lossy(&missing.stderr).starts_with("partner: no database at c.db"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    support::made_database(d);
    let missing = partner(d, &["memory", "--db", "c.db", "show", "ada", "ghost"], "");
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        "partner: no block 'ghost' for agent ada\n"
    );
    let parse_error = partner(
        d,
        &["exec", "--db", "c.db", "--agent", "ada", "/aprove r1"],
        "",
    );
    assert_eq!(parse_error.status.code(), Some(1));
    assert!(
        out(&parse_error).contains("did you mean /approve?"),
        "{}",
        out(&parse_error)
    );
}

/// Runs partner with no input; returns what it printed and the largest
/// resident memory it reached, in KB. `wait4` reports this child alone
/// (the tests share one process, so the peak of all its children would
/// count theirs too).
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, not Child::wait"
)]
fn partner_with_peak(dir: &Path, args: &[&str]) -> (String, i64) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 writes a status and a whole rusage into the pointers
    // it is given; the child is ours and not waited for elsewhere.
    let (waited, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let waited = libc::wait4(pid, &mut status, 0, &mut usage);
        (waited, usage)
    };
    assert_eq!(waited, pid, "wait4 failed");
    (reader.join().unwrap(), usage.ru_maxrss)
}

/// A database whose trace holds `steps` calculations, one turn each.
fn calculations(path: &Path, steps: usize) {
    use partner::engine::exec::{ExecConfig, Executor, TurnContext};
    let policy = partner::policy::Policy::permissive();
    let exec = Executor::open(path, policy, ExecConfig::default()).unwrap();
    exec.store()
        .sqlite()
        .unwrap()
        .conn()
        .pragma_update(None, "synchronous", "OFF")
        .unwrap();
    for i in 0..steps {
        let mut ctx = TurnContext::new("ada", "main", &format!("turn-{i}"));
        let report = exec.run_turn(&mut ctx, &format!("/calc {i} + 1"));
        assert_eq!(report.actions.len(), 1);
    }
}

/// Replay reads the trace a page at a time and keeps no copy of what it
/// redid: ten times the steps take no more memory.
#[test]
fn replay_holds_a_page_of_the_trace_whatever_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    calculations(&d.join("small.db"), 1_000);
    calculations(&d.join("large.db"), 10_000);
    let (small, peak_small) = partner_with_peak(d, &["replay", "--db", "small.db", "--verify"]);
    assert!(small.starts_with("all 1000 steps matched"), "{small}");
    let (large, peak_large) = partner_with_peak(d, &["replay", "--db", "large.db", "--verify"]);
    assert!(large.starts_with("all 10000 steps matched"), "{large}");
    println!("replay peak: 1,000 steps {peak_small} KB, 10,000 steps {peak_large} KB");
    assert!(
        peak_large < peak_small + 8_000,
        "1,000 steps peaked at {peak_small} KB, 10,000 at {peak_large} KB"
    );
}

/// What `--help` says of `--db` is what the command does: a command that
/// only reads refuses a missing database, and its help says so.
#[test]
fn help_says_what_a_missing_database_does() {
    let dir = tempfile::tempdir().unwrap();
    let help = support::output_text(&partner(dir.path(), &["replay", "--help"], ""));
    assert!(!help.contains("created if missing"), "{help}");
    assert!(help.contains("refuses a missing one"), "{help}");
    let (code, _, err) = crate::support::partner_in(dir.path(), &["replay", "--db", "gone.db"], "");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no database at"), "{err}");
    assert!(!dir.path().join("gone.db").exists());
}

/// `pending edit` approves a request as the partner rewrote it, through
/// the same door as every decision: a line that does not parse, or is
/// more than one action, is refused and the request keeps waiting; a good
/// one runs instead of what the agent asked, once.
#[test]
fn pending_edit_runs_the_partners_line_instead() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let exec = partner(
        d,
        &["exec", "--db", "c.db", "--agent", "ada", "-"],
        "/post bluesky \"hello\" ?public",
    );
    assert!(out(&exec).contains("(r1)"), "{}", out(&exec));
    let bad = partner(d, &["pending", "--db", "c.db", "edit", "r1", "/post"], "");
    assert_ne!(bad.status.code(), Some(0), "{}", out(&bad));
    let two = partner(
        d,
        &[
            "pending",
            "--db",
            "c.db",
            "edit",
            "r1",
            "/post bluesky \"a\"\n/post bluesky \"b\"",
        ],
        "",
    );
    assert_ne!(two.status.code(), Some(0), "{}", out(&two));
    let still = json(&partner(
        d,
        &["pending", "--db", "c.db", "list", "--json"],
        "",
    ));
    assert_eq!(still[0]["id"], "r1", "still waiting: {still}");
    let edited = partner(
        d,
        &[
            "pending",
            "--db",
            "c.db",
            "edit",
            "r1",
            "/post bluesky \"We ship Monday\" ?public",
        ],
        "",
    );
    assert_eq!(
        edited.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&edited.stderr)
    );
    assert!(out(&edited).contains("executed"), "{}", out(&edited));
    let trace = out(&partner(d, &["trace", "show", "--db", "c.db"], ""));
    assert!(trace.contains("We ship Monday"), "{trace}");
    assert!(!trace.contains("\"hello\" ?public → executed"), "{trace}");
    let again = partner(d, &["pending", "--db", "c.db", "approve", "r1"], "");
    assert_eq!(again.status.code(), Some(2), "{}", out(&again));
}
