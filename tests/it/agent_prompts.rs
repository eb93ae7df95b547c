//! The four prompt types, as sent to the model and as stored: role order,
//! the pulse prompt stored as it was sent, continuations reusing
//! the system prompt with one line added, and the pass cap.

use crate::support;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use partner::engine::exec::ActionStatus;
use partner::policy::Policy;
use partner::runtime::Event;
use partner::runtime::prompt::CONTINUATION_NOTE;
use partner::runtime::provider::{
    Cancel, ChatMessage, ChatRequest, PromptKind, Provider, Role, StreamEvent,
};
use partner::runtime::turn::{AgentInfo, Trigger, TurnEnv, run_turn};
use partner::store::memory::backend::{Memory, NewMessage};
use partner::store::memory::{BlockKind, BlockPermission};
use tokio::sync::{broadcast, mpsc, watch};

/// Records every request and answers from a list.
#[derive(Debug)]
struct Recorder {
    replies: Mutex<VecDeque<String>>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl Provider for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn stream(&self, request: ChatRequest, _cancel: Cancel) -> mpsc::Receiver<StreamEvent> {
        self.seen.lock().unwrap().push(request);
        let reply = self.replies.lock().unwrap().pop_front().unwrap_or_default();
        let (tx, rx) = mpsc::channel(8);
        tokio::spawn(async move {
            let _ = tx.send(StreamEvent::Token(reply)).await;
            let _ = tx.send(StreamEvent::Done).await;
        });
        rx
    }
}

struct Setup {
    rig: support::Rig,
    env: Arc<TurnEnv>,
    recorder: Arc<Recorder>,
    agent: Arc<AgentInfo>,
    events: broadcast::Receiver<Event>,
}

fn setup(replies: &[&str], max_passes: u32) -> Setup {
    let rig = support::rig(Policy::permissive());
    rig.block(
        "ada",
        "notes",
        BlockKind::Working,
        BlockPermission::ReadWrite,
        "launch is Friday",
    );
    {
        let conn = rig.exec.store().sqlite().unwrap().conn();
        conn.add_message(
            &NewMessage {
                agent: "ada",
                thread: "main",
                role: "user",
                content: "earlier question",
                lineage: &[],
                turn: None,
            },
            support::START - 2000,
        )
        .unwrap();
        conn.add_message(
            &NewMessage {
                agent: "ada",
                thread: "main",
                role: "assistant",
                content: "earlier answer",
                lineage: &[],
                turn: None,
            },
            support::START - 1000,
        )
        .unwrap();
    }
    let recorder = Arc::new(Recorder {
        replies: Mutex::new(replies.iter().map(|s| s.to_string()).collect()),
        seen: Mutex::new(Vec::new()),
    });
    let (events, rx) = broadcast::channel(256);
    let executor = Arc::new(
        partner::engine::exec::Executor::with_parts(
            rig.exec.shared_store(),
            Policy::permissive(),
            Default::default(),
            Arc::new(rig.clock.clone()),
        )
        .unwrap(),
    );
    let env = Arc::new(TurnEnv {
        executor,
        events,
        partner: "Sam".into(),
        max_passes,
        history: 30,
        max_tokens: 256,
        max_reply_bytes: 128 * 1024,
        clock: Arc::new(rig.clock.clone()),
        session_start: support::START,
        requests: Arc::new(tokio::sync::Notify::new()),
        proposer: Default::default(),
    });
    let agent = Arc::new(AgentInfo::new("ada", recorder.clone(), "m", false));
    Setup {
        rig,
        env,
        recorder,
        agent,
        events: rx,
    }
}

fn no_cancel() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    std::mem::forget(tx);
    rx
}

fn roles(messages: &[ChatMessage]) -> Vec<Role> {
    messages.iter().map(|m| m.role).collect()
}

fn stored(s: &Setup) -> Vec<(String, String)> {
    (s.rig.exec.store().sqlite().unwrap().conn())
        .recent_messages("ada", "main", 50)
        .unwrap()
        .into_iter()
        .map(|m| (m.role, m.content))
        .collect()
}

fn message(text: &str) -> Trigger {
    Trigger::Message {
        thread: "main".into(),
        from: "user".into(),
        text: text.into(),
        delivery: None,
        lineage: Vec::new(),
    }
}

#[tokio::test]
async fn first_pass_response_sends_history_and_the_message() {
    let s = setup(&["Hello Sam!"], 4);
    run_turn(
        s.env.clone(),
        s.agent.clone(),
        message("hello"),
        std::time::Duration::from_secs(600),
        1,
        no_cancel(),
    )
    .await;
    let seen = s.recorder.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(r.kind, PromptKind::Response);
    assert_eq!(
        roles(&r.messages),
        vec![Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(r.messages[0].content, "earlier question");
    assert!(
        r.messages[2]
            .content
            .starts_with("hello\n\n<temporal_context>"),
        "the turn's changing context follows the message: {}",
        r.messages[2].content
    );
    assert!(
        r.system
            .starts_with("You are ada, an agent working with Sam."),
        "{}",
        r.system
    );
    for section in [
        "<core_memory>",
        "<your_intentions>",
        "<system_pulse_control>",
        "<ai_commands>",
    ] {
        assert!(r.system.contains(section), "missing {section}");
    }
    for changing in [
        "<temporal_context>",
        "<recent_conversation>",
        "earlier question",
    ] {
        assert!(
            !r.system.contains(changing),
            "{changing} is not in the system prompt (history travels once, as messages)"
        );
    }
    assert!(!r.system.contains(CONTINUATION_NOTE));
    assert!(
        !r.system.contains("/approve"),
        "a worker is not told about authority verbs"
    );
    // The message is stored as sent, its changing context included.
    let sent = r.messages.last().unwrap().content.clone();
    assert!(sent.starts_with("hello\n\n<temporal_context>"), "{sent}");
    let stored = stored(&s);
    assert_eq!(
        &stored[2..],
        [
            ("user".to_string(), sent),
            ("assistant".to_string(), "Hello Sam!".to_string())
        ]
    );
}

#[tokio::test]
async fn first_pass_pulse_sends_the_pulse_prompt_but_stores_the_short_form() {
    let s = setup(&["Nothing to do."], 4);
    let trigger = Trigger::Pulse {
        interval: std::time::Duration::from_secs(600),
        reason: String::new(),
    };
    run_turn(
        s.env.clone(),
        s.agent.clone(),
        trigger,
        std::time::Duration::from_secs(600),
        1,
        no_cancel(),
    )
    .await;
    let seen = s.recorder.seen.lock().unwrap();
    let r = &seen[0];
    assert_eq!(r.kind, PromptKind::Pulse);
    assert_eq!(
        roles(&r.messages),
        vec![Role::User, Role::Assistant, Role::User]
    );
    let sent = &r.messages[2].content;
    assert!(
        sent.starts_with("[AUTOMATED SYSTEM PULSE") && sent.contains("10m idle timer has fired"),
        "{sent}"
    );
    let stored = stored(&s);
    // Stored as sent, so the next request starts with this one's bytes.
    assert_eq!(stored[2], ("user".to_string(), sent.clone()));
    assert_eq!(
        stored[3],
        ("assistant".to_string(), "Nothing to do.".to_string())
    );
}

#[tokio::test]
async fn second_pass_response_adds_the_reply_and_the_results() {
    let mut s = setup(&["Let me check.\n/recall notes", "It is on Friday."], 4);
    run_turn(
        s.env.clone(),
        s.agent.clone(),
        message("when is the launch?"),
        std::time::Duration::from_secs(600),
        1,
        no_cancel(),
    )
    .await;
    let seen = s.recorder.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let (first, second) = (&seen[0], &seen[1]);
    assert_eq!(second.kind, PromptKind::Continuation);
    assert_eq!(
        second.system, first.system,
        "the system prompt is reused unchanged (a server's prompt cache keeps it)"
    );
    assert_eq!(
        roles(&second.messages),
        vec![
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert_eq!(second.messages[2].content, first.messages[2].content);
    assert!(
        second.messages[2]
            .content
            .starts_with("when is the launch?")
    );
    assert_eq!(second.messages[3].content, "Let me check.\n/recall notes");
    let results = &second.messages[4].content;
    assert!(
        results.starts_with("[Action Results]")
            && results.contains("Your /recall read notes returned:")
            && results.contains("launch is Friday"),
        "{results}"
    );
    let stored = stored(&s);
    let roles_stored: Vec<&str> = stored[2..].iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles_stored, vec!["user", "assistant", "user", "assistant"]);
    assert_eq!(stored[4].1, *results, "the results are stored as sent");
    let mut names = Vec::new();
    while let Ok(e) = s.events.try_recv() {
        names.push(e.name());
    }
    assert!(
        names.starts_with(&[
            "turn_started",
            "token",
            "reply_finished",
            "action_parsed",
            "action_executed",
            "turn_started"
        ]),
        "{names:?}"
    );
}

#[tokio::test]
async fn second_pass_pulse_follows_the_pulse_prompt() {
    let s = setup(&["/calc 6 * 7", "42 noted."], 4);
    let trigger = Trigger::Pulse {
        interval: std::time::Duration::from_secs(180),
        reason: String::new(),
    };
    run_turn(
        s.env.clone(),
        s.agent.clone(),
        trigger,
        std::time::Duration::from_secs(180),
        1,
        no_cancel(),
    )
    .await;
    let seen = s.recorder.seen.lock().unwrap();
    let second = &seen[1];
    assert_eq!(second.kind, PromptKind::Continuation);
    assert_eq!(
        roles(&second.messages),
        vec![
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert!(
        second.messages[2]
            .content
            .starts_with("[AUTOMATED SYSTEM PULSE")
    );
    assert_eq!(second.messages[3].content, "/calc 6 * 7");
    assert!(second.messages[4].content.contains("6 * 7 = 42"));
    let stored = stored(&s);
    assert_eq!(stored[2].1, second.messages[2].content);
    assert!(stored[4].1.starts_with("[Action Results]"));
}

#[tokio::test]
async fn a_pass_cap_ends_runaway_turns_with_a_message() {
    let s = setup(&["/recall notes", "/recall notes", "/recall notes"], 2);
    let mut events = s.env.events.subscribe();
    let outcome = run_turn(
        s.env.clone(),
        s.agent.clone(),
        message("loop"),
        std::time::Duration::from_secs(600),
        1,
        no_cancel(),
    )
    .await;
    assert_eq!(s.recorder.seen.lock().unwrap().len(), 2);
    assert_eq!(
        outcome.error.as_deref(),
        Some("ada stopped after 2 passes in one turn")
    );
    let mut saw = false;
    while let Ok(e) = events.try_recv() {
        saw |= matches!(e, Event::Error { ref message, .. } if message.contains("stopped after 2 passes"));
    }
    assert!(saw);
}

#[tokio::test]
async fn requests_that_wait_end_the_turn_without_running() {
    let mut s = setup(&["/post bluesky \"hi\""], 4);
    let policy = Policy::from_toml(
        "[platforms.bluesky]\nagents = [\"*\"]\n[[rules]]\nverb = \"post\"\ndecide = \"ask\"\n",
    )
    .unwrap();
    let exec = partner::engine::exec::Executor::with_parts(
        s.rig.exec.shared_store(),
        policy,
        Default::default(),
        Arc::new(s.rig.clock.clone()),
    )
    .unwrap();
    let requests = Arc::new(tokio::sync::Notify::new());
    let env = Arc::new(TurnEnv {
        executor: Arc::new(exec),
        events: s.env.events.clone(),
        partner: "Sam".into(),
        max_passes: 4,
        history: 30,
        max_tokens: 64,
        max_reply_bytes: 128 * 1024,
        clock: Arc::new(s.rig.clock.clone()),
        session_start: support::START,
        requests: Arc::clone(&requests),
        proposer: Default::default(),
    });
    let outcome = run_turn(
        env,
        s.agent.clone(),
        message("post it"),
        std::time::Duration::from_secs(600),
        1,
        no_cancel(),
    )
    .await;
    assert_eq!(outcome.requests.len(), 1);
    assert_eq!(
        s.recorder.seen.lock().unwrap().len(),
        1,
        "no second pass while it waits"
    );
    assert_eq!(
        outcome.requests[0].waiting_on(),
        &partner::policy::Authority::Partner
    );
    // The runtime announces requests from the database (once, whoever made
    // them); the turn wakes it at once rather than at the end of the turn.
    tokio::time::timeout(std::time::Duration::from_millis(100), requests.notified())
        .await
        .expect("the turn woke the runtime about its request");
    while let Ok(e) = s.events.try_recv() {
        assert!(
            !matches!(e, Event::PermissionRequested { .. }),
            "the turn does not announce requests itself: {e:?}"
        );
    }
    let _ = ActionStatus::Pending;
}
