//! Where the runtime meets the rest: a decision made by another process
//! reaches the agent that waits on it; a slow effect blocks neither the
//! runtime nor anything else, and halting its agent stops it; and the
//! console's model, fed the runtime's real events, sees every action of
//! the demo to its end.

use crate::support;

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use partner::engine::exec::ActionStatus;
use partner::policy::{Authority, Decision};
use partner::runtime::{Event, RunState};
use support::runtime::{running, wait_for};

const ASK_TO_POST: &str = "[platforms.bluesky]\nagents = [\"*\"]\n[rate_limits]\ndefault = { burst = 1000, per_minute = 1000 }\n[[rules]]\nverb = \"post\"\ndecide = \"ask\"\n";

const ADA: &str = "[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n";

fn requested(e: &Event) -> bool {
    matches!(e, Event::PermissionRequested { .. })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_from_another_process_reaches_the_waiting_agent() {
    let script = "[agents.ada]\nreplies = [\"/post bluesky \\\"launch day\\\"\"]\ncontinuations = [\"Posted, thanks.\"]\n";
    let mut r = running(ADA, ASK_TO_POST, script);
    r.handle.send_message("ada", "announce it");
    let Some(Event::PermissionRequested {
        id,
        action_id,
        waiting_on,
        ..
    }) = wait_for(&mut r.events, Duration::from_secs(10), requested).await
    else {
        panic!("ada asks to post");
    };
    assert_eq!(waiting_on, Authority::Partner);
    let action_id = action_id.expect("the request carries its action's id");
    // The turn ends with ada waiting on the request.
    let asked = Instant::now();
    while r.handle.status().await[0].state != RunState::Waiting {
        assert!(asked.elapsed() < Duration::from_secs(5), "ada waits");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // A shell approves it: another process, the same database.
    let db = r.db();
    let dir = r.dir.path().to_path_buf();
    let id_arg = id.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_partner"))
            .current_dir(&dir)
            .args(["pending", "--db"])
            .arg(&db)
            .args(["--policy", "policy.toml", "approve", &id_arg])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decided_at = Instant::now();

    // The runtime picks the decision up from the database and the agent
    // carries on with the result.
    let executed = wait_for(&mut r.events, Duration::from_secs(5), |e| {
        matches!(
            e,
            Event::ActionExecuted {
                status: ActionStatus::Executed,
                ..
            }
        )
    })
    .await
    .expect("the post's result reaches the runtime");
    let Event::ActionExecuted {
        action_id: executed_id,
        ..
    } = executed
    else {
        unreachable!()
    };
    assert_eq!(
        executed_id.as_deref(),
        Some(action_id.as_str()),
        "the result carries the id of the action that asked"
    );
    let reply = wait_for(
        &mut r.events,
        Duration::from_secs(5),
        |e| matches!(e, Event::ReplyFinished { text, .. } if text == "Posted, thanks."),
    )
    .await;
    assert!(reply.is_some(), "ada continues with the result");
    assert!(
        decided_at.elapsed() < Duration::from_millis(2500),
        "picked up within a second or so: {:?}",
        decided_at.elapsed()
    );
    let idle = wait_for(&mut r.events, Duration::from_secs(5), |e| {
        matches!(
            e,
            Event::AgentState {
                state: RunState::Idle,
                ..
            }
        )
    })
    .await;
    assert!(idle.is_some(), "ada is idle again, not waiting forever");
}

/// A server that accepts connections and never answers; it counts the
/// connections accepted and those the client closed.
fn silent_server() -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let closed = Arc::new(AtomicUsize::new(0));
    let (a, c) = (Arc::clone(&accepted), Arc::clone(&closed));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            a.fetch_add(1, Ordering::SeqCst);
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                // Read the request and whatever follows, answering nothing,
                // until the client hangs up.
                let mut buf = [0u8; 1024];
                while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                c.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    (base, accepted, closed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_fetch_that_never_answers_blocks_nothing_and_halting_stops_it() {
    let (base, accepted, closed) = silent_server();
    let policy = "[network]\nallow_hosts = [\"127.0.0.1\"]\n[rate_limits]\ndefault = { burst = 1000, per_minute = 1000 }\n[[rules]]\nverb = \"fetch\"\ndecide = \"ask\"\n";
    let agents =
        format!("{ADA}[[agents]]\nname = \"bo\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n");
    let script = format!(
        "[agents.ada]\nreplies = [\"/fetch {base}/slow\"]\n[agents.bo]\nreplies = [\"Here.\"]\n"
    );
    let mut r = running(&agents, policy, &script);
    r.handle.send_message("ada", "read that page");
    let Some(Event::PermissionRequested { id, .. }) =
        wait_for(&mut r.events, Duration::from_secs(10), requested).await
    else {
        panic!("ada asks to fetch");
    };
    let handle = r.handle.clone();
    let decision = tokio::spawn(async move {
        handle
            .decide(&id, Decision::ApproveOnce, Authority::Partner)
            .await
    });
    let started = Instant::now();
    while accepted.load(Ordering::SeqCst) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the fetch starts"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Meanwhile the runtime answers at once, and other agents work.
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let asked = Instant::now();
        let status = r.handle.status().await;
        slowest = slowest.max(asked.elapsed());
        assert_eq!(status.len(), 2);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        slowest < Duration::from_millis(100),
        "status() answered within 100 ms while the fetch hung (slowest {slowest:?})"
    );
    r.handle.send_message("bo", "are you there?");
    let answered = wait_for(
        &mut r.events,
        Duration::from_secs(5),
        |e| matches!(e, Event::ReplyFinished { agent, .. } if agent == "bo"),
    )
    .await;
    assert!(answered.is_some(), "bo answers while ada's fetch hangs");
    assert!(!decision.is_finished(), "the fetch still hangs");

    // Halting ada stops the fetch and closes its connection.
    let halted_at = Instant::now();
    r.handle.halt("ada", "enough");
    let outcome = tokio::time::timeout(Duration::from_secs(3), decision)
        .await
        .expect("the decision ends soon after the halt")
        .unwrap();
    assert!(outcome.is_ok(), "{outcome:?}");
    let executed = wait_for(
        &mut r.events,
        Duration::from_secs(3),
        |e| matches!(e, Event::ActionExecuted { agent, .. } if agent == "ada"),
    )
    .await;
    let Some(Event::ActionExecuted { status, result, .. }) = executed else {
        panic!("the fetch's end is reported");
    };
    assert_eq!(status, ActionStatus::Failed);
    assert!(result.contains("halted"), "{result}");
    while closed.load(Ordering::SeqCst) == 0 {
        assert!(
            halted_at.elapsed() < Duration::from_secs(3),
            "the connection is closed when the fetch stops"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_action_of_the_demo_reaches_a_final_state_in_the_console() {
    use partner::tui::model::{ActionState, Model};

    let config = partner::runtime::demo_config().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(partner::core::clock::TokioClock::now());
    let executor = Arc::new({
        let mut executor = partner::engine::exec::Executor::with_parts(
            Arc::new(
                partner::store::memory::MemoryStore::open(dir.path().join("demo.db"))
                    .unwrap()
                    .into(),
            ),
            config.policy.clone(),
            config.exec.clone(),
            clock.clone(),
        )
        .unwrap();
        executor.set_verbs(config.verbs.clone()).unwrap();
        executor
    });
    let (handle, _task) = partner::runtime::start(&config, executor, clock);
    let mut events = handle.subscribe();
    // Sage's greeting opens the demo (the runtime sends it: the
    // conversation is new).
    assert_eq!(
        config.agent("sage").and_then(|a| a.greeting.as_deref()),
        Some(partner::runtime::DEMO_OPENING.1)
    );
    // A message the script does not expect: the demo carries on anyway.
    handle.send_message("scout", "How is it going over there?");
    let mut model = Model::default();
    let mut seen = 0usize;
    let deadline = Instant::now() + Duration::from_secs(90);
    // Until every agent is halted (the demo ends itself) and nothing waits.
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "the demo ends within 90 s");
        let Ok(event) = tokio::time::timeout(left, events.recv()).await else {
            continue;
        };
        let event = match event {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                panic!("the model missed {n} events")
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        };
        // Through JSON, as an attached console will receive them.
        let event: Event = serde_json::from_str(&serde_json::to_string(&event).unwrap()).unwrap();
        seen += 1;
        model.apply(&event, 0);
        if let Event::PermissionRequested { id, waiting_on, .. } = &event
            && waiting_on.is_partner()
        {
            let handle = handle.clone();
            let id = id.clone();
            tokio::spawn(async move {
                handle
                    .decide(&id, Decision::ApproveOnce, Authority::Partner)
                    .await
            });
        }
        let halted =
            !model.agents.is_empty() && model.agents.iter().all(|a| a.state == RunState::Halted);
        if halted && handle.executor().pending().unwrap().is_empty() {
            // Let the last events through.
            while let Ok(Ok(event)) =
                tokio::time::timeout(Duration::from_millis(500), events.recv()).await
            {
                model.apply(&event, 0);
            }
            break;
        }
    }
    handle.shutdown();
    let actions: Vec<_> = model.turns.iter().flat_map(|t| &t.actions).collect();
    assert!(
        actions.len() > 20,
        "the demo acts ({} actions, {seen} events)",
        actions.len()
    );
    let unfinished: Vec<String> = actions
        .iter()
        .filter(|a| {
            matches!(
                a.state,
                ActionState::Queued | ActionState::Waiting { .. } | ActionState::Approved { .. }
            )
        })
        .map(|a| format!("{} ({}): {:?}", a.canonical, a.action_id, a.state))
        .collect();
    assert!(
        unfinished.is_empty(),
        "every action reaches a final state; these did not:\n{}",
        unfinished.join("\n")
    );
    // Chains are followed link by link (`…:1:2.3` is the third link of
    // the second action), each to its end: the check above covers them.
    let links = actions
        .iter()
        .filter(|a| {
            a.action_id
                .rsplit(':')
                .next()
                .is_some_and(|p| p.contains('.'))
        })
        .count();
    assert!(links >= 3, "the demo's chains are seen ({links} links)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phrasing_taught_in_another_process_is_proposed_from_the_next_reply() {
    let words = "ping the night shift";
    let script = format!("[agents.ada]\nreplies = [\"{words}\", \"{words}\"]\n");
    let mut r = running(ADA, ASK_TO_POST, &script);
    let proposed = |e: &Event| matches!(e, Event::ActionProposed { .. });
    let finished = |e: &Event| matches!(e, Event::ReplyFinished { .. });

    // Nothing reads these words as an action yet.
    r.handle.send_message("ada", "anything new?");
    assert!(
        wait_for(&mut r.events, Duration::from_secs(10), finished)
            .await
            .is_some(),
        "ada replies"
    );
    assert!(
        wait_for(&mut r.events, Duration::from_millis(500), proposed)
            .await
            .is_none(),
        "not proposed before it is taught"
    );

    // A shell teaches them: another process, the same database.
    let db = r.db();
    let dir = r.dir.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_partner"))
            .current_dir(&dir)
            .args(["grammar", "learned", "--db"])
            .arg(&db)
            .args([
                "add",
                "ping the night shift",
                "/recall insert \"night shift\"",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The runtime reads the database again within a second or so.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    r.handle.send_message("ada", "anything else?");
    let Some(Event::ActionProposed { action, .. }) =
        wait_for(&mut r.events, Duration::from_secs(10), proposed).await
    else {
        panic!("the taught words are proposed as the action");
    };
    assert_eq!(action, "/recall insert \"night shift\"");
}
