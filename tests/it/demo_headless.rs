//! `partner run --headless --demo --for 60s --approve-all` exits 0 and its
//! JSON lines show every verb of the dialect going through the executor;
//! and `partner replay --verify` passes on the trace of every run.
//! (The demo halts itself after about half a minute, which ends the run.)

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

const VERBS: &[&str] = &[
    "recall",
    "context",
    "search",
    "send",
    "reply",
    "post",
    "dm",
    "tell",
    "fetch",
    "web",
    "calc",
    "data",
    "approve",
    "deny",
    "escalate",
    "cancel",
    "halt",
    "batch",
    "summarize",
    "uncertain",
    "remind",
    "complete",
    "dismiss",
    "intentions",
    "pulse",
    "tool",
    "checklist",
];

/// Verbs the demo runs offline on purpose and that fail cleanly there.
const FAIL_OFFLINE: &[&str] = &["fetch", "web"];

/// Runs the demo headless over `db`: its output.
fn demo(db: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_partner"))
        .args([
            "run",
            "--headless",
            "--demo",
            "--for",
            "60s",
            "--approve-all",
            "--db",
        ])
        .arg(db)
        .output()
        .unwrap()
}

#[test]
fn the_demo_exercises_every_verb_and_every_run_replays() {
    let dir = tempfile::tempdir().unwrap();
    // Three runs at once: timings differ between them, the replays must
    // not.
    let dbs: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("demo{i}.db")))
        .collect();
    let outs: Vec<_> = std::thread::scope(|scope| {
        let runs: Vec<_> = dbs.iter().map(|db| scope.spawn(|| demo(db))).collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (db, out) in dbs.iter().zip(&outs) {
        assert_eq!(
            out.status.code(),
            Some(0),
            "stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let replay = Command::new(env!("CARGO_BIN_EXE_partner"))
            .args(["replay", "--verify", "--db"])
            .arg(db)
            .output()
            .unwrap();
        assert_eq!(
            replay.status.code(),
            Some(0),
            "replay --verify of {}: {}{}",
            db.display(),
            String::from_utf8_lossy(&replay.stdout),
            String::from_utf8_lossy(&replay.stderr)
        );
    }
    let out = &outs[0];
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let known = [
        "turn_started",
        "token",
        "reply_finished",
        "action_parsed",
        "permission_requested",
        "permission_decided",
        "action_executed",
        "memory_changed",
        "pulse_fired",
        "agent_halted",
        "agent_state",
        "message_received",
        "parse_failed",
        "error",
    ];
    let mut statuses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in &events {
        let name = e["event"].as_str().expect("every line has an event field");
        assert!(known.contains(&name), "unknown event {name}");
        if name != "error" {
            assert!(e["agent"].is_string(), "{e}");
        }
        if [
            "action_parsed",
            "permission_requested",
            "permission_decided",
            "action_executed",
        ]
        .contains(&name)
        {
            assert!(
                e["verb"].is_string() && e.get("op").is_some() && e["canonical"].is_string(),
                "{e}"
            );
        }
        if name == "action_executed" {
            statuses
                .entry(e["verb"].as_str().unwrap().to_string())
                .or_default()
                .insert(e["status"].as_str().unwrap().to_string());
        }
        if name == "error" || name == "parse_failed" {
            panic!("the demo reported an error: {e}");
        }
    }
    for verb in VERBS {
        let seen = statuses.get(*verb).cloned().unwrap_or_default();
        let expected = if FAIL_OFFLINE.contains(verb) {
            "failed"
        } else {
            "executed"
        };
        assert!(
            seen.contains(expected),
            "/{verb} was never {expected}: {seen:?}"
        );
    }
    for name in [
        "permission_requested",
        "permission_decided",
        "memory_changed",
        "pulse_fired",
        "agent_halted",
        "token",
    ] {
        assert!(events.iter().any(|e| e["event"] == name), "no {name} event");
    }
    let escalated = events.iter().any(|e| {
        e["event"] == "permission_decided"
            && e["decision"] == "escalate"
            && e["by"] == "agent:anchor"
    });
    assert!(escalated, "anchor escalates to the partner");
}
