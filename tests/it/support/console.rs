//! A console in a known state, for snapshots, pictures and benchmarks.

#![allow(dead_code)]

use partner::dialect::{ActionOp, Span, Verb};
use partner::engine::exec::ActionStatus;
use partner::policy::{Authority, PendingRequest, RequestStatus};
use partner::runtime::Event;
use partner::runtime::provider::PromptKind;
use partner::runtime::runtime::RunState;
use partner::store::memory::{Block, BlockKind, BlockPermission, BlockVersion};
use partner::store::trace::{DecisionPath, TraceOp, TraceOutcome, TraceRecord, TraceSource};
use partner::tui::app::App;
use partner::tui::keymap::Keymap;
use partner::tui::model::AgentLine;
use partner::tui::theme::Theme;

/// 2026-11-21T09:30:00Z.
pub const NOW: i64 = 1_795_253_400_000;

pub fn request(
    id: &str,
    agent: &str,
    canonical: &str,
    on: Authority,
    reason: &str,
    age_s: i64,
) -> PendingRequest {
    PendingRequest {
        id: id.into(),
        agent: agent.into(),
        canonical: canonical.into(),
        action: partner::policy::RequestedAction::default(),
        verb: canonical[1..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .into(),
        marker: canonical
            .rsplit(' ')
            .next()
            .filter(|m| m.starts_with('?') || *m == "!")
            .map(str::to_string),
        reason: reason.into(),
        authorities: vec![Authority::Agent("anchor".into()), Authority::Partner],
        authority_index: usize::from(on == Authority::Partner),
        turn_id: format!("{agent}-3"),
        action_id: Some(format!("{agent}-3:1:1")),
        thread: "main".into(),
        raw_text: canonical.into(),
        on_behalf_of: Vec::new(),
        status: RequestStatus::Waiting,
        decided_by: None,
        decision: None,
        decision_note: None,
        created_at: NOW - age_s * 1000,
        expires_at: None,
        decided_at: None,
        deciders: Vec::new(),
        approvals_needed: 1,
        approved_by: Vec::new(),
        claimed_by: None,
    }
}

pub fn record(
    seq: u64,
    agent: &str,
    canonical: &str,
    outcome: TraceOutcome,
    result: &str,
) -> TraceRecord {
    TraceRecord {
        id: format!("t{seq}"),
        seq,
        action_id: None,
        time: NOW - 60_000 + seq as i64 * 1000,
        agent: agent.into(),
        turn_id: format!("{agent}-1"),
        source: TraceSource::Agent,
        text: canonical.into(),
        span: (0, canonical.len()),
        canonical: canonical.into(),
        verb: canonical[1..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .into(),
        op: TraceOp::Action,
        decision: DecisionPath {
            verdict: "allow".into(),
            steps: vec!["no rule matches; the default is allow".into()],
            ..DecisionPath::default()
        },
        outcome,
        result: result.into(),
        data: serde_json::Value::Null,
        duration_us: 180 + seq * 7,
        memory: None,
        external: false,
        system_error: false,
    }
}

fn block(
    label: &str,
    kind: BlockKind,
    permission: BlockPermission,
    value: &str,
    version: i64,
) -> Block {
    Block {
        id: 1,
        agent: "sage".into(),
        label: label.into(),
        kind,
        description: String::new(),
        value: value.into(),
        char_limit: 5000,
        permission,
        pinned: false,
        shared: false,
        version,
        created_at: NOW - 3_600_000,
        updated_at: NOW - 60_000,
    }
}

/// The event with its action id set (the outcome of an action of a turn).
fn with_action_id(event: &Event, id: &str) -> Event {
    let mut event = event.clone();
    match &mut event {
        Event::ActionExecuted { action_id, .. }
        | Event::PermissionRequested { action_id, .. }
        | Event::PermissionDecided { action_id, .. } => *action_id = Some(id.to_string()),
        _ => {}
    }
    event
}

/// Feeds a turn through the events the runtime publishes; each action gets
/// an id (`agent-at:1:n`) carried by its outcome, as the runtime does.
pub fn turn(
    app: &mut App,
    agent: &str,
    kind: PromptKind,
    text: &str,
    actions: &[(&str, &str, Event)],
    at: i64,
) {
    app.model.apply(
        &Event::TurnStarted {
            agent: agent.into(),
            kind,
            pass: 1,
        },
        at,
    );
    app.model.apply(
        &Event::Token {
            agent: agent.into(),
            text: text.into(),
        },
        at,
    );
    app.model.apply(
        &Event::ReplyFinished {
            agent: agent.into(),
            pass: 1,
            text: text.into(),
        },
        at,
    );
    for (n, (written, canonical, outcome)) in actions.iter().enumerate() {
        let start = text.find(written).expect("the action is in the text");
        let action_id = format!("{agent}-{at}:1:{}", n + 1);
        app.model.apply(
            &Event::ActionParsed {
                agent: agent.into(),
                action_id: action_id.clone(),
                verb: Verb::from_name(canonical[1..].split_whitespace().next().unwrap_or("")),
                op: None,
                canonical: canonical.to_string(),
                span: Span::new(start, start + written.len()),
                cancelled: false,
            },
            at,
        );
        app.model.apply(&with_action_id(outcome, &action_id), at);
    }
}

pub fn executed(agent: &str, canonical: &str, result: &str) -> Event {
    Event::ActionExecuted {
        agent: agent.into(),
        action_id: None,
        verb: Verb::from_name(canonical[1..].split_whitespace().next().unwrap_or("")),
        op: None,
        canonical: canonical.into(),
        status: ActionStatus::Executed,
        result: result.into(),
        trace_id: None,
        system_error: false,
        flagged: false,
    }
}

/// A console showing the demo mid-way: three agents, turns with actions in
/// every state, two waiting requests (one with a memory diff), memory with
/// history, and a trace.
pub fn scene(theme: &str) -> App {
    let mut app = App::new(
        "demo",
        "~/.local/share/partner/demo.db",
        Theme::builtin(theme).unwrap(),
        Keymap::default_keymap(),
    );
    app.now = NOW;
    for (name, state, pulse) in [
        ("anchor", RunState::Idle, Some(4)),
        ("sage", RunState::Waiting, None),
        ("scout", RunState::Generating, None),
    ] {
        app.model.agents.push(AgentLine {
            name: name.into(),
            state,
            next_pulse_at: pulse.map(|secs| NOW + secs * 1000),
            host: None,
        });
    }
    let t = NOW - 30_000;
    turn(
        &mut app,
        "sage",
        PromptKind::Response,
        "Good morning! Let me look at where we are.\n/recall project_notes -> /summarize\nThe launch is on Friday.",
        &[(
            "/recall project_notes -> /summarize",
            "/recall read project_notes -> /summarize",
            executed(
                "sage",
                "/recall read project_notes -> /summarize",
                "project_notes (archival, v1, 35/5000 chars)",
            ),
        )],
        t,
    );
    turn(
        &mut app,
        "sage",
        PromptKind::Pulse,
        "A draft for review:\n/post bluesky \"partner 0.2 ships Friday: live approvals and replay.\" ?public",
        &[(
            "/post bluesky \"partner 0.2 ships Friday: live approvals and replay.\" ?public",
            "/post bluesky \"partner 0.2 ships Friday: live approvals and replay.\" ?public",
            Event::PermissionRequested {
                agent: "sage".into(),
                action_id: None,
                id: "r1".into(),
                verb: Verb::Post,
                op: None,
                canonical:
                    "/post bluesky \"partner 0.2 ships Friday: live approvals and replay.\" ?public"
                        .into(),
                waiting_on: Authority::Partner,
                reason: "public posts are reviewed".into(),
            },
        )],
        t + 5000,
    );
    turn(
        &mut app,
        "scout",
        PromptKind::Pulse,
        "Checking the inbox and tidying.\n/data search inbox \"invoice\" ?ask\n/recall checklist + \"verify the notes\"",
        &[
            (
                "/data search inbox \"invoice\" ?ask",
                "/data search inbox \"invoice\" ?ask",
                Event::ActionExecuted {
                    agent: "scout".into(),
                    action_id: None,
                    verb: Verb::Data,
                    op: Some(ActionOp::Search),
                    canonical: "/data search inbox \"invoice\" ?ask".into(),
                    status: ActionStatus::Denied,
                    result: "agent:anchor said no: not during launch week".into(),
                    trace_id: None,
                    system_error: false,
                    flagged: false,
                },
            ),
            (
                "/recall checklist + \"verify the notes\"",
                "/recall append checklist \"verify the notes\"",
                Event::PermissionRequested {
                    agent: "scout".into(),
                    action_id: None,
                    id: "r2".into(),
                    verb: Verb::Recall,
                    op: Some(ActionOp::Append),
                    canonical: "/recall append checklist \"verify the notes\"".into(),
                    waiting_on: Authority::Partner,
                    reason: "block 'checklist' needs the partner's consent to change".into(),
                },
            ),
        ],
        t + 9000,
    );
    app.model.apply(
        &Event::TurnStarted {
            agent: "scout".into(),
            kind: PromptKind::Continuation,
            pass: 2,
        },
        t + 12_000,
    );
    app.model.apply(
        &Event::Token {
            agent: "scout".into(),
            text: "Understood, leaving the inbox al".into(),
        },
        t + 12_000,
    );
    app.model.pending = vec![
        request(
            "r1",
            "sage",
            "/post bluesky \"partner 0.2 ships Friday: live approvals and replay.\" ?public",
            Authority::Partner,
            "public posts are reviewed",
            25,
        ),
        request(
            "r2",
            "scout",
            "/recall append checklist \"verify the notes\"",
            Authority::Partner,
            "block 'checklist' needs the partner's consent to change",
            21,
        ),
    ];
    // As when the queue is read: the oldest request is selected.
    app.queue.refreshed(&app.model);
    app.model.previews.diffs.insert(
        "r2".into(),
        "--- checklist@2\n+++ checklist@3\n@@ -1,2 +1,3 @@\n docs\n binaries\n+verify the notes\n"
            .into(),
    );
    app.memory.agent = Some("sage".into());
    app.model.blocks = vec![
        block(
            "persona",
            BlockKind::Core,
            BlockPermission::Partner,
            "I am Sage, the partner's assistant.\nBrief and warm.",
            1,
        ),
        block(
            "human",
            BlockKind::Working,
            BlockPermission::ReadWrite,
            "The partner runs a small software studio.\nPrefers short morning updates.",
            2,
        ),
        block(
            "project_notes",
            BlockKind::Archival,
            BlockPermission::ReadWrite,
            "Launch: Friday.\nOwner: the partner.",
            1,
        ),
    ];
    app.memory.selected = Some("human".into());
    app.model.history = vec![
        BlockVersion {
            version: 1,
            value: "The partner runs a small software studio.".into(),
            deleted: false,
            changed_at: NOW - 3_600_000,
            changed_by: "partner".into(),
        },
        BlockVersion {
            version: 2,
            value: "The partner runs a small software studio.\nPrefers short morning updates."
                .into(),
            deleted: false,
            changed_at: NOW - 60_000,
            changed_by: "sage".into(),
        },
    ];
    app.model.trace = vec![
        record(
            1,
            "sage",
            "/recall read project_notes",
            TraceOutcome::Executed,
            "project_notes (archival, v1, 35/5000 chars):\nLaunch: Friday.",
        ),
        record(
            2,
            "sage",
            "/summarize",
            TraceOutcome::Executed,
            "Summarize this: …",
        ),
        record(
            3,
            "scout",
            "/fetch https://docs.partner.invalid/notes",
            TraceOutcome::Failed,
            "could not fetch https://docs.partner.invalid/notes: failed to lookup address",
        ),
        record(
            4,
            "scout",
            "/data search inbox \"invoice\" ?ask",
            TraceOutcome::Denied,
            "agent:anchor said no: not during launch week",
        ),
    ];
    app
}
