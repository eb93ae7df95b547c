//! The running constellation under hostile model output: a reply too large
//! to read is cut off with nothing run, a reply that would crash a handler
//! costs only that action, and the runtime keeps answering meanwhile.

use crate::support;

use std::time::{Duration, Instant};

use partner::core::clock::TokioClock;
use partner::runtime::Event;
use partner::store::memory::backend::Memory;
use support::runtime::{Running, running_with_clock, wait_for};

const POLICY: &str = "[rate_limits]\ndefault = { burst = 100000, per_minute = 100000 }\n";

fn running(script: &str, runtime: &str) -> Running {
    let agents =
        format!("[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n{runtime}");
    running_with_clock(
        &agents,
        POLICY,
        script,
        TokioClock::starting_at(support::START),
    )
}

fn archival(r: &Running) -> i64 {
    let store = partner::store::memory::MemoryStore::open(r.dir.path().join("c.db")).unwrap();
    store.conn().archival_count("ada").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_too_large_is_cut_off_and_nothing_in_it_runs() {
    // 480 KB of actions, as a model echoing its prompt in a loop would send.
    let huge = "/recall insert \\\"echo\\\"\\n".repeat(24_000);
    let script = format!("[agents.ada]\nreplies = [\"{huge}\", \"/recall insert \\\"fine\\\"\"]\n");
    let mut r = running(&script, "");
    r.handle.send_message("ada", "go");
    let started = Instant::now();
    // The runtime answers while the reply streams in.
    let mut slowest = Duration::ZERO;
    let error = loop {
        let t = Instant::now();
        let _ = r.handle.status().await;
        slowest = slowest.max(t.elapsed());
        if let Ok(Some(e)) = tokio::time::timeout(
            Duration::from_millis(20),
            wait_for(&mut r.events, Duration::from_millis(20), |e| {
                matches!(e, Event::TurnFailed { .. })
            }),
        )
        .await
        {
            break e;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no error event"
        );
    };
    let Event::TurnFailed { message, .. } = error else {
        unreachable!()
    };
    assert!(message.contains("grew past"), "{message}");
    assert!(
        slowest < Duration::from_millis(500),
        "status took {slowest:?}"
    );
    assert_eq!(archival(&r), 0, "nothing in the cut-off reply ran");
    // The agent carries on with its next message.
    r.handle.send_message("ada", "again");
    wait_for(
        &mut r.events,
        Duration::from_secs(30),
        |e| matches!(e, Event::ActionExecuted { verb, .. } if verb == "recall"),
    )
    .await
    .expect("the next reply's action ran");
    assert_eq!(archival(&r), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_would_crash_a_handler_costs_only_that_action() {
    let deep = format!("/calc {}1{}", "(".repeat(300), ")".repeat(300));
    let script = format!(
        "[agents.ada]\nreplies = [\"{deep}\\n/remind \\\"in 999999999999999 hours\\\" \\\"x\\\"\\n/recall insert \\\"kept\\\"\"]\ncontinuations = [\"Noted.\"]\n"
    );
    let mut r = running(&script, "");
    r.handle.send_message("ada", "go");
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let e = wait_for(&mut r.events, Duration::from_secs(30), |e| {
            matches!(e, Event::ActionExecuted { .. })
        })
        .await
        .expect("each action is reported");
        if let Event::ActionExecuted { verb, status, .. } = e {
            seen.push((verb.name().to_string(), status.as_str().to_string()));
        }
    }
    assert_eq!(
        seen,
        vec![
            ("calc".to_string(), "failed".to_string()),
            ("remind".to_string(), "failed".to_string()),
            ("recall".to_string(), "executed".to_string()),
        ]
    );
    assert_eq!(archival(&r), 1);
    // Still running.
    assert!(!r.handle.status().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reply_limit_is_configurable() {
    let long = format!("[agents.ada]\nreplies = [\"{}\"]\n", "word ".repeat(600));
    let mut r = running(&long, "[runtime]\nmax_reply_bytes = 1024\n");
    r.handle.send_message("ada", "go");
    let e = wait_for(&mut r.events, Duration::from_secs(30), |e| {
        matches!(e, Event::TurnFailed { .. })
    })
    .await
    .expect("a failed turn");
    let Event::TurnFailed { message, .. } = e else {
        unreachable!()
    };
    assert!(message.contains("1024 bytes"), "{message}");
}
