//! The runtime under tokio's paused clock (no test waits in real time):
//! pulses, idle reset, pause while waiting on approval, agents running while
//! another waits, halt cancelling generation, intentions falling due, and
//! `/tell` waking the other agent.

use crate::support;

use std::time::Duration;

use partner::core::clock::TokioClock;
use partner::policy::{Authority, Decision};
use partner::runtime::{Event, RunState};
use partner::store::memory::backend::Memory;
use partner::store::memory::roster::Roster;
use support::runtime::{Running, running_with_clock, wait_for};
use tokio::time::Instant;

const POLICY: &str = "[platforms.bluesky]\nagents = [\"*\"]\n[rate_limits]\ndefault = { burst = 1000, per_minute = 1000 }\n[[rules]]\nverb = \"post\"\ndecide = \"ask\"\n";

fn running(agents: &str, script: &str) -> Running {
    running_with_clock(
        agents,
        POLICY,
        script,
        TokioClock::starting_at(support::START),
    )
}

fn pulse_of(agent: &'static str) -> impl Fn(&Event) -> bool {
    move |e| matches!(e, Event::PulseFired { agent: a, .. } if a == agent)
}

fn reply_of(agent: &'static str) -> impl Fn(&Event) -> bool {
    move |e| matches!(e, Event::ReplyFinished { agent: a, .. } if a == agent)
}

const ONE: &str = "[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"10s\"\n";

#[tokio::test(start_paused = true)]
async fn pulses_fire_after_the_idle_interval() {
    let mut r = running(
        ONE,
        "[agents.ada]\npulses = [\"Quiet here.\", \"Still quiet.\"]\n",
    );
    let t0 = Instant::now();
    wait_for(&mut r.events, Duration::from_secs(60), pulse_of("ada"))
        .await
        .expect("a pulse");
    let first = t0.elapsed();
    assert!(
        first >= Duration::from_secs(10) && first < Duration::from_secs(11),
        "{first:?}"
    );
    wait_for(&mut r.events, Duration::from_secs(60), reply_of("ada"))
        .await
        .expect("the pulse reply");
    wait_for(&mut r.events, Duration::from_secs(60), pulse_of("ada"))
        .await
        .expect("a second pulse");
    let second = t0.elapsed();
    assert!(
        second >= Duration::from_secs(20) && second < Duration::from_secs(21),
        "{second:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn new_input_resets_the_idle_timer() {
    let mut r = running(
        ONE,
        "[agents.ada]\nreplies = [\"Hi!\"]\npulses = [\"Quiet.\"]\n",
    );
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs(6)).await;
    r.handle.send_message("ada", "hello");
    wait_for(&mut r.events, Duration::from_secs(60), reply_of("ada"))
        .await
        .expect("a reply");
    wait_for(&mut r.events, Duration::from_secs(60), pulse_of("ada"))
        .await
        .expect("a pulse");
    let at = t0.elapsed();
    assert!(
        at >= Duration::from_secs(16),
        "the timer restarted at 6s: pulse at {at:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn pulses_pause_while_waiting_on_approval() {
    let mut r = running(
        ONE,
        "[agents.ada]\npulses = [\"/post bluesky \\\"launch!\\\"\", \"Back again.\"]\ncontinuations = [\"Posted.\"]\n",
    );
    let asked = wait_for(&mut r.events, Duration::from_secs(60), |e| {
        matches!(e, Event::PermissionRequested { .. })
    })
    .await;
    let Some(Event::PermissionRequested { id, .. }) = asked else {
        panic!("no request")
    };
    assert!(
        wait_for(&mut r.events, Duration::from_secs(120), pulse_of("ada"))
            .await
            .is_none(),
        "no pulse while waiting"
    );
    let status = r.handle.status().await;
    assert_eq!(status[0].state, RunState::Waiting);
    r.handle
        .decide(&id, Decision::ApproveOnce, Authority::Partner)
        .await
        .unwrap();
    let executed = wait_for(&mut r.events, Duration::from_secs(10), |e| matches!(e, Event::ActionExecuted { verb, status, .. } if verb == "post" && status == "executed")).await;
    assert!(executed.is_some());
    let resumed = wait_for(
        &mut r.events,
        Duration::from_secs(10),
        |e| matches!(e, Event::ReplyFinished { text, .. } if text == "Posted."),
    )
    .await;
    assert!(resumed.is_some(), "the agent resumed with the result");
    assert!(
        wait_for(&mut r.events, Duration::from_secs(30), pulse_of("ada"))
            .await
            .is_some(),
        "pulses again"
    );
}

#[tokio::test(start_paused = true)]
async fn two_agents_run_while_a_third_waits() {
    let agents = "[[agents]]\nname = \"a\"\nmodel = \"scripted:x\"\npulse = \"off\"\n[[agents]]\nname = \"b\"\nmodel = \"scripted:x\"\npulse = \"off\"\n[[agents]]\nname = \"c\"\nmodel = \"scripted:x\"\npulse = \"5s\"\n";
    let script = "[agents.a]\nreplies = [\"a here\"]\n[agents.b]\nreplies = [\"b here\"]\n[agents.c]\npulses = [\"/post bluesky \\\"hi\\\"\"]\n";
    let mut r = running(agents, script);
    wait_for(
        &mut r.events,
        Duration::from_secs(60),
        |e| matches!(e, Event::PermissionRequested { agent, .. } if agent == "c"),
    )
    .await
    .expect("c waits");
    r.handle.send_message("a", "hello a");
    r.handle.send_message("b", "hello b");
    let mut replied = Vec::new();
    while replied.len() < 2 {
        match wait_for(&mut r.events, Duration::from_secs(30), |e| {
            matches!(e, Event::ReplyFinished { .. })
        })
        .await
        {
            Some(Event::ReplyFinished { agent, text, .. }) => replied.push((agent, text)),
            _ => break,
        }
    }
    replied.sort();
    assert_eq!(
        replied,
        vec![("a".into(), "a here".into()), ("b".into(), "b here".into())]
    );
    let status = r.handle.status().await;
    let c = status.iter().find(|s| s.name == "c").unwrap();
    assert_eq!(c.state, RunState::Waiting);
    assert_eq!(c.waiting.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn halting_cancels_generation() {
    let long: String = (0..40).map(|i| format!("word{i} ")).collect();
    let script = format!(
        "[agents.ada]\ntyping_delay = \"1s\"\nreplies = [\"{long}\\n/recall insert \\\"should never be stored\\\"\"]\n"
    );
    let mut r = running(ONE, &script);
    r.handle.send_message("ada", "talk to me");
    wait_for(&mut r.events, Duration::from_secs(10), |e| {
        matches!(e, Event::Token { .. })
    })
    .await
    .expect("it starts talking");
    r.handle.halt("ada", "the partner pressed stop");
    let halted = wait_for(&mut r.events, Duration::from_secs(5), |e| {
        matches!(e, Event::AgentHalted { .. })
    })
    .await;
    assert!(
        matches!(halted, Some(Event::AgentHalted { ref reason, .. }) if reason == "the partner pressed stop")
    );
    let later = wait_for(&mut r.events, Duration::from_secs(120), |e| {
        matches!(
            e,
            Event::ReplyFinished { .. } | Event::ActionExecuted { .. } | Event::Token { .. }
        )
    })
    .await;
    assert!(later.is_none(), "nothing more after the halt: {later:?}");
    assert_eq!(r.handle.status().await[0].state, RunState::Halted);
    let stored = (r.handle.executor().store().sqlite().unwrap().conn())
        .archival_count("ada")
        .unwrap();
    assert_eq!(stored, 0);
    r.handle.resume("ada");
    tokio::task::yield_now().await;
    assert_eq!(r.handle.status().await[0].state, RunState::Idle);
}

#[tokio::test(start_paused = true)]
async fn intentions_that_fall_due_pulse_their_agent() {
    let agents = "[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"6h\"\n";
    let mut r = running(
        agents,
        "[agents.ada]\nreplies = [\"/remind \\\"in 20 minutes\\\" \\\"stretch\\\"\"]\npulses = [\"Stretching now.\\n/complete 1\"]\n",
    );
    let t0 = Instant::now();
    r.handle.send_message("ada", "remind yourself to stretch");
    let fired = wait_for(&mut r.events, Duration::from_secs(3600), pulse_of("ada")).await;
    let Some(Event::PulseFired { reason, .. }) = fired else {
        panic!("no pulse")
    };
    assert_eq!(reason, "intention #1 is due: stretch");
    assert!(
        t0.elapsed() >= Duration::from_secs(20 * 60)
            && t0.elapsed() < Duration::from_secs(20 * 60 + 3),
        "{:?}",
        t0.elapsed()
    );
    let completed = wait_for(
        &mut r.events,
        Duration::from_secs(60),
        |e| matches!(e, Event::ActionExecuted { verb, .. } if verb == "complete"),
    )
    .await;
    assert!(completed.is_some());
}

#[tokio::test(start_paused = true)]
async fn telling_another_agent_wakes_it() {
    let agents = "[[agents]]\nname = \"a\"\nmodel = \"scripted:x\"\npulse = \"off\"\n[[agents]]\nname = \"b\"\nmodel = \"scripted:x\"\npulse = \"off\"\n";
    let script = "[agents.a]\nreplies = [\"/tell @b \\\"please look at the build\\\"\"]\n[agents.b]\nreplies = [\"On it.\"]\n";
    let mut r = running(agents, script);
    r.handle.send_message("a", "ask b to check the build");
    let woke = wait_for(&mut r.events, Duration::from_secs(30), reply_of("b")).await;
    assert!(matches!(woke, Some(Event::ReplyFinished { ref text, .. }) if text == "On it."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_halt_and_resume_ends_resumed() {
    // Halt and resume are stored in the order asked, and a sync that read
    // the database in between never halts the agent again.
    let r = support::runtime::running(ONE, POLICY, "[agents.ada]\n");
    for _ in 0..20 {
        r.handle.halt("ada", "stop");
        r.handle.resume("ada");
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(r.handle.status().await[0].state, RunState::Idle);
    let stored = (r.handle.executor().store().sqlite().unwrap().conn())
        .agent_state("ada")
        .unwrap();
    assert!(!stored.halted, "the database says resumed");
}

/// A model provider with a bug: every call panics.
#[derive(Debug)]
struct Broken;

impl partner::runtime::provider::Provider for Broken {
    fn name(&self) -> &str {
        "broken"
    }

    fn stream(
        &self,
        _request: partner::runtime::provider::ChatRequest,
        _cancel: partner::runtime::provider::Cancel,
    ) -> tokio::sync::mpsc::Receiver<partner::runtime::provider::StreamEvent> {
        panic!("a bug in the provider")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_turn_is_contained_reported_and_its_agent_runs_again() {
    let text = "[providers.scripted]\nkind = \"scripted\"\n[[agents]]\nname = \"ada\"\nmodel = \"broken:x\"\npulse = \"off\"\n[[agents]]\nname = \"bob\"\nmodel = \"scripted:x\"\npulse = \"off\"\n";
    let mut config = partner::runtime::ConstellationConfig::from_toml(
        &text.replace("broken:x", "scripted:x"),
        "test",
        std::path::Path::new("."),
        Some("default = \"allow\"\n"),
        Some("[agents.bob]\nunexpected = \"hello\"\n"),
    )
    .unwrap();
    // Ada's model is the broken one.
    config
        .providers
        .insert("broken".into(), std::sync::Arc::new(Broken));
    config.agents[0].provider = "broken".into();
    let dir = tempfile::tempdir().unwrap();
    let clock = std::sync::Arc::new(TokioClock::now());
    let executor = std::sync::Arc::new(
        partner::engine::exec::Executor::with_parts(
            std::sync::Arc::new(
                partner::store::memory::MemoryStore::open(dir.path().join("c.db"))
                    .unwrap()
                    .into(),
            ),
            config.policy.clone(),
            config.exec.clone(),
            clock.clone(),
        )
        .unwrap(),
    );
    let (handle, _task) = partner::runtime::start(&config, executor, clock);
    let mut events = handle.subscribe();
    for round in 0..2 {
        handle.send_message("ada", &format!("hello {round}"));
        let failed = wait_for(&mut events, Duration::from_secs(10), |e| {
            matches!(e, Event::Error { agent: Some(a), message } if a == "ada" && message.contains("internal error"))
        })
        .await;
        assert!(
            failed.is_some(),
            "round {round}: the panic was not reported"
        );
        wait_for(&mut events, Duration::from_secs(10), |e| {
            matches!(e, Event::AgentState { agent, state: RunState::Idle, .. } if agent == "ada")
        })
        .await
        .expect("ada is ready again");
        // Bob never stopped.
        handle.send_message("bob", "hi");
        let replied = wait_for(
            &mut events,
            Duration::from_secs(10),
            |e| matches!(e, Event::ReplyFinished { agent, .. } if agent == "bob"),
        )
        .await;
        assert!(replied.is_some(), "round {round}: bob did not answer");
        wait_for(&mut events, Duration::from_secs(10), |e| {
            matches!(e, Event::AgentState { agent, state: RunState::Idle, .. } if agent == "bob")
        })
        .await
        .expect("bob's turn ends");
    }
    let status = handle.status().await;
    assert_eq!(status.len(), 2);
    assert!(
        status.iter().all(|s| s.state == RunState::Idle),
        "{status:?}"
    );
}
