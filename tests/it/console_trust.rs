//! The console's decisions, tried the way they went wrong: the selection
//! follows a request, never a row; a paste is never keys; keys act only on
//! what they visibly refer to; a standing rule asks first and the last
//! decision can be taken back; replay is a mode in which nothing is
//! decided; problems are visible (edits: `console_edits.rs`).

use crate::support;

use crossterm::event::KeyCode;
use partner::policy::Decision;
use partner::runtime::Event;
use partner::tui::app::overlay::Confirm;
use partner::tui::app::{Command, Overlay};
use partner::tui::backend::{BackendOp, OpenedTrace, Reply};
use partner::tui::panes::Pane;
use support::console::{NOW, scene};
use support::driving::*;

#[test]
fn the_selection_follows_its_request_and_never_jumps_to_another() {
    let mut app = wide();
    assert_eq!(app.queue.selected.as_deref(), Some("r1"));
    key(&mut app, KeyCode::Char('J'));
    assert_eq!(app.queue.selected.as_deref(), Some("r2"));
    // r1 times out: r2 stays selected although its row moved up.
    app.on_event(&Event::PermissionDecided {
        agent: "sage".into(),
        action_id: None,
        id: "r1".into(),
        verb: partner::dialect::Verb::Post,
        op: None,
        canonical: String::new(),
        decision: partner::policy::DecisionKind::Timeout,
        by: "timeout".into(),
    });
    let mut rest = three();
    rest.remove(0);
    app.on_reply(pending(rest.clone()));
    assert_eq!(app.queue.selected.as_deref(), Some("r2"));
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(
        decisions(&after_window(&mut app)),
        [("r2".to_string(), Decision::ApproveOnce)],
        "a approved the request that was selected"
    );

    // Now r3 is selected (the partner's own decision moved on); a
    // supervisor decides r3 elsewhere: the selection empties, and says so.
    assert_eq!(app.queue.selected.as_deref(), Some("r3"));
    app.on_event(&Event::PermissionDecided {
        agent: "sage".into(),
        action_id: None,
        id: "r3".into(),
        verb: partner::dialect::Verb::Post,
        op: None,
        canonical: String::new(),
        decision: partner::policy::DecisionKind::Deny,
        by: "agent:anchor".into(),
    });
    let mut r4 = three()[0].clone();
    r4.id = "r4".into();
    app.on_reply(pending(vec![r4]));
    assert_eq!(app.queue.selected, None, "nothing is selected, not r4");
    let notice = app.notice.clone().unwrap().text;
    assert!(
        notice.contains("r3 left the queue") && notice.contains("deny by agent:anchor"),
        "{notice}"
    );
    let commands = key(&mut app, KeyCode::Char('a'));
    assert!(decisions(&commands).is_empty() && app.held.is_none());
    assert!(
        decisions(&after_window(&mut app)).is_empty(),
        "r4 was never approved"
    );
    assert!(
        app.notice.unwrap().text.contains("no request is selected"),
        "a says why it did nothing"
    );
}

#[test]
fn a_paste_is_text_never_keys() {
    let mut app = wide();
    let commands = app.on_paste("please read this and tell me");
    assert!(commands.is_empty());
    assert!(app.held.is_none(), "no decision from the a in the paste");
    assert!(matches!(app.overlay, Overlay::None), "no editor from its i");
    assert!(decisions(&after_window(&mut app)).is_empty());
    // Into an open prompt, it is text.
    key(&mut app, KeyCode::Char('D'));
    app.on_paste("not on\nlaunch day");
    let commands = key(&mut app, KeyCode::Enter);
    assert!(commands.is_empty(), "held first");
    assert_eq!(
        decisions(&after_window(&mut app)),
        [(
            "r1".to_string(),
            Decision::Deny(Some("not on launch day".into()))
        )]
    );
}

#[test]
fn keys_act_only_on_what_they_refer_to() {
    // Memory keys do nothing outside the memory pane.
    let mut app = wide();
    app.focus = Pane::Turns;
    let commands = key(&mut app, KeyCode::Char('u'));
    assert!(
        !commands.iter().any(|c| matches!(
            c,
            Command::Op(BackendOp::Host(partner::protocol::Op::UndoBlock { .. }))
        )),
        "u in Turns undid a block"
    );
    assert!(app.notice.clone().unwrap().text.contains("Memory pane"));
    key(&mut app, KeyCode::Char('i'));
    assert!(
        matches!(app.overlay, Overlay::None),
        "i in Turns opened an editor"
    );

    // On a narrow screen the queue is not on screen from Turns: no decision.
    let mut narrow = wide();
    narrow.size = (90, 30);
    narrow.focus = Pane::Turns;
    key(&mut narrow, KeyCode::Char('a'));
    assert!(narrow.held.is_none());
    assert!(narrow.notice.unwrap().text.contains("Pending pane"));
    // In its tab, it is.
    let mut narrow = wide();
    narrow.size = (90, 30);
    narrow.focus = Pane::Pending;
    key(&mut narrow, KeyCode::Char('a'));
    assert_eq!(narrow.held.map(|h| h.id), Some("r1".to_string()));

    // Zoomed on Turns, the queue is hidden.
    let mut zoomed = wide();
    zoomed.focus = Pane::Turns;
    zoomed.zoom = true;
    key(&mut zoomed, KeyCode::Char('d'));
    assert!(zoomed.held.is_none());
}

#[test]
fn standing_rules_ask_first_and_the_last_decision_can_be_taken_back() {
    let mut app = wide();
    key(&mut app, KeyCode::Char('A'));
    assert!(
        matches!(&app.overlay, Overlay::Confirm(Confirm { question, .. }) if question.contains("standing rule") && question.contains("sage's /post")),
        "{:?}",
        app.overlay
    );
    key(&mut app, KeyCode::Char('n'));
    assert!(app.held.is_none(), "no: nothing decided");
    key(&mut app, KeyCode::Char('A'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(
        app.held.as_ref().map(|h| (h.id.as_str(), &h.decision)),
        Some(("r1", &partner::protocol::wire::Decision::ApproveAlways))
    );
    // Taken back within the window: nothing is sent.
    key(&mut app, KeyCode::Char('U'));
    assert!(app.held.is_none());
    assert!(decisions(&after_window(&mut app)).is_empty());
    assert_eq!(app.queue.selected.as_deref(), Some("r1"), "back on r1");

    // Deny always asks for a reason, then confirms.
    key(&mut app, KeyCode::Char('X'));
    typed(&mut app, "never");
    key(&mut app, KeyCode::Enter);
    assert!(
        matches!(&app.overlay, Overlay::Confirm(Confirm { question, .. }) if question.contains("refused without asking"))
    );
    key(&mut app, KeyCode::Char('y'));
    let sent = decisions(&after_window(&mut app));
    assert_eq!(
        sent,
        [("r1".to_string(), Decision::DenyAlways(Some("never".into())))]
    );
    // Too late to take back: the console says what remains.
    key(&mut app, KeyCode::Char('U'));
    assert!(
        app.notice
            .clone()
            .unwrap()
            .text
            .contains("R lists the rules")
    );

    // The rules: listed, and revoked after a confirmation.
    let commands = key(&mut app, KeyCode::Char('R'));
    assert!(matches!(
        commands.as_slice(),
        [Command::Op(BackendOp::Host(partner::protocol::Op::Rules))]
    ));
    app.on_reply(Reply::Rules(vec![partner::policy::StandingRule {
        id: 7,
        agent: "sage".into(),
        verb: "post".into(),
        op: None,
        target: Some("bluesky".into()),
        effect: "deny".into(),
        reason: Some("never".into()),
        created_by: "partner".into(),
        created_at: NOW,
        expires_at: None,
    }]));
    assert!(screen(&mut app, 120, 30).contains("#7   deny sage: /post bluesky"));
    key(&mut app, KeyCode::Char('x'));
    let commands = key(&mut app, KeyCode::Char('y'));
    assert!(matches!(
        commands.as_slice(),
        [Command::Op(BackendOp::Host(
            partner::protocol::Op::RevokeRule { id: 7 }
        ))]
    ));
}

#[test]
fn replay_is_a_mode_in_which_nothing_is_decided() {
    let mut app = wide();
    let records = app.model.trace.clone();
    let commands = app.on_reply(Reply::Replay(OpenedTrace {
        path: "old.jsonl".into(),
        records,
    }));
    // Verified, and the memory asked for as it was before step 1: never
    // the live blocks under a replay.
    assert!(
        matches!(
            commands.as_slice(),
            [
                Command::Op(BackendOp::VerifyReplay(_)),
                Command::Op(BackendOp::ReplayMemory { step: 0, .. })
            ]
        ),
        "{commands:?}"
    );
    app.focus = Pane::Memory;
    let shown = screen(&mut app, 180, 48);
    assert!(shown.contains("as it was at step 0"), "{shown}");
    app.focus = Pane::Replay;
    let shown = screen(&mut app, 180, 48);
    assert!(shown.contains("REPLAY"), "the mode is marked:\n{shown}");
    assert!(shown.contains("decisions are off"));
    for k in ['a', 'd', 'A', 'e'] {
        key(&mut app, KeyCode::Char(k));
        assert!(app.held.is_none() && matches!(app.overlay, Overlay::None));
    }
    assert!(app.notice.clone().unwrap().text.contains("Esc leaves"));
    assert!(decisions(&after_window(&mut app)).is_empty());
    // Esc leaves it; the live queue is back, and decides again.
    key(&mut app, KeyCode::Esc);
    assert!(app.replay.is_none());
    assert!(screen(&mut app, 180, 48).contains("Pending (3)"));
    key(&mut app, KeyCode::Char('d'));
    assert_eq!(
        decisions(&after_window(&mut app)),
        [("r1".to_string(), Decision::Deny(None))]
    );
    // `:close` leaves too.
    let records = app.model.trace.clone();
    app.on_reply(Reply::Replay(OpenedTrace {
        path: "old.jsonl".into(),
        records,
    }));
    key(&mut app, KeyCode::Char(':'));
    typed(&mut app, "close");
    key(&mut app, KeyCode::Enter);
    assert!(app.replay.is_none());
}

#[test]
fn the_queue_shows_the_time_each_request_has_left() {
    let mut app = scene("dark");
    let mut list = three();
    list[0].expires_at = Some(NOW + 14 * 60_000 + 5_000);
    app.on_reply(pending(list));
    let shown = screen(&mut app, 180, 48);
    assert!(shown.contains("14m left"), "{shown}");
    assert!(
        shown.contains("expires  in 14m (then it is denied)"),
        "{shown}"
    );
}

#[test]
fn problems_are_listed_and_counted() {
    let mut app = scene("dark");
    app.on_event(&Event::Error {
        agent: Some("ada".into()),
        message: "ada's model call failed: could not reach the model server".into(),
    });
    app.on_event(&Event::TurnStarted {
        agent: "sage".into(),
        kind: partner::runtime::provider::PromptKind::Response,
        pass: 1,
    });
    app.on_event(&Event::ReplyFinished {
        agent: "sage".into(),
        pass: 1,
        text: "On it.\n/aprove r1".into(),
    });
    app.on_event(&Event::ParseFailed {
        agent: "sage".into(),
        span: partner::dialect::Span::new(7, 17),
        message: "/aprove is not a verb; did you mean /approve?".into(),
    });
    app.on_event(&Event::MessageReceived {
        agent: "sage".into(),
        from: "partner".into(),
        text: "Please hold the launch post.".into(),
    });
    assert_eq!(app.model.unseen, 2);
    let shown = screen(&mut app, 180, 48);
    assert!(
        shown.contains("! 2"),
        "the count is on the status line:\n{shown}"
    );
    assert!(
        shown.contains("✗ /aprove is not a verb; did you mean /approve?"),
        "the unreadable action is marked in its turn:\n{shown}"
    );
    assert!(
        shown.contains("partner → sage") && shown.contains("Please hold the launch post."),
        "the partner's message is in Turns:\n{shown}"
    );
    key(&mut app, KeyCode::Char('N'));
    let log = screen(&mut app, 180, 48);
    assert!(log.contains("could not reach the model server") && log.contains("parse"));
    assert_eq!(app.model.unseen, 0, "seen once opened");
}

#[test]
fn the_trace_detail_says_how_it_was_decided_in_words() {
    let mut app = scene("dark");
    let mut r = app.model.trace[0].clone();
    r.decision.verdict = "ask".into();
    r.decision.steps = vec![
        "rule 3 (post asks) matches".into(),
        "asks agent:anchor → partner".into(),
    ];
    r.decision.request = Some("r9".into());
    r.decision.decided_by = Some("partner".into());
    r.decision.decision = Some("approve_once".into());
    r.decision.requested_at = Some(NOW - 120_000);
    r.decision.decided_at = Some(NOW - 30_000);
    r.memory = Some(partner::store::memory::MemoryChange {
        agent: "sage".into(),
        label: "project_notes".into(),
        version_before: Some(2),
        version_after: 3,
    });
    app.model.trace = vec![r];
    app.focus = Pane::Trace;
    app.zoom = true;
    let shown = screen(&mut app, 120, 20);
    assert!(
        shown.contains("asked: asks agent:anchor → partner"),
        "{shown}"
    );
    assert!(shown.contains("rule 3 (post asks) matches"), "{shown}");
    assert!(
        shown.contains("request r9: approve once by partner after 1m"),
        "{shown}"
    );
    assert!(shown.contains("project_notes v2 → v3"), "{shown}");
    assert!(!shown.contains("Some("), "no Rust debug text:\n{shown}");
}

#[test]
fn a_decision_is_refused_at_once_while_the_daemon_is_gone() {
    let mut app = wide();
    app.connection = partner::protocol::Connection::Gone { since: NOW };
    key(&mut app, KeyCode::Char('a'));
    assert!(
        decisions(&after_window(&mut app)).is_empty(),
        "a decision nobody would receive was sent"
    );
    let shown = screen(&mut app, 120, 30);
    assert!(
        shown.contains("r1 not decided: the daemon has been gone since"),
        "{shown}"
    );
    assert!(shown.contains("daemon gone since"), "{shown}");
    // What waits is not known meanwhile: never a count from before.
    assert!(shown.contains("? pending"), "{shown}");
    // Refused (the partner's token revoked): said, and nothing sent.
    app.connection = partner::protocol::Connection::Refused { since: NOW };
    key(&mut app, KeyCode::Char('a'));
    assert!(decisions(&after_window(&mut app)).is_empty());
    let shown = screen(&mut app, 160, 30);
    assert!(shown.contains("refused by the daemon since"), "{shown}");
    assert!(shown.contains("? pending"), "{shown}");
    // Back: the same key decides.
    app.connection = partner::protocol::Connection::Attached;
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(decisions(&after_window(&mut app)).len(), 1);
}

#[test]
fn j_and_k_move_the_focused_list_and_shift_moves_the_queue_from_anywhere() {
    let mut app = wide();
    // The trace pane has focus: j moves it, not the queue.
    app.focus = Pane::Trace;
    let before = app.queue.selected.clone();
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(
        app.queue.selected, before,
        "j moved the queue from another pane"
    );
    // In the queue, j is the next request.
    app.focus = Pane::Pending;
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(app.queue.selected.as_deref(), Some("r2"));
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(app.queue.selected.as_deref(), Some("r1"));
    // J moves the queue from any pane.
    app.focus = Pane::Turns;
    key(&mut app, KeyCode::Char('J'));
    assert_eq!(app.queue.selected.as_deref(), Some("r2"));
}

#[test]
fn pulses_with_nothing_to_say_fold_into_one_line_with_a_count() {
    let mut app = wide();
    let quiet = |app: &mut partner::tui::app::App, agent: &str| {
        app.on_event(&Event::TurnStarted {
            agent: agent.into(),
            kind: partner::runtime::provider::PromptKind::Pulse,
            pass: 1,
        });
        app.on_event(&Event::ReplyFinished {
            agent: agent.into(),
            pass: 1,
            text: String::new(),
        });
    };
    let before = app.model.turns.len();
    for _ in 0..40 {
        quiet(&mut app, "sage");
    }
    assert_eq!(
        app.model.turns.len(),
        before + 1,
        "forty quiet pulses, one entry"
    );
    let shown = screen(&mut app, 120, 30);
    assert!(shown.contains("nothing to say ×40"), "{shown}");
    // Something said in between starts a new run.
    app.on_event(&Event::TurnStarted {
        agent: "sage".into(),
        kind: partner::runtime::provider::PromptKind::Pulse,
        pass: 1,
    });
    app.on_event(&Event::ReplyFinished {
        agent: "sage".into(),
        pass: 1,
        text: "Morning: nothing new.".into(),
    });
    quiet(&mut app, "sage");
    quiet(&mut app, "sage");
    assert_eq!(app.model.turns.len(), before + 3);
    let shown = screen(&mut app, 120, 30);
    assert!(shown.contains("nothing to say ×2"), "{shown}");
}

#[test]
fn a_request_arriving_while_another_is_selected_is_announced_and_takes_no_key() {
    let mut app = wide();
    assert_eq!(app.queue.selected.as_deref(), Some("r1"));
    let mut more = three();
    let mut r4 = more[0].clone();
    r4.id = "r4".into();
    r4.agent = "partner".into();
    r4.canonical = "/shell rm -r build".into();
    more.push(r4);
    app.on_reply(pending(more));
    assert_eq!(
        app.queue.selected.as_deref(),
        Some("r1"),
        "the selection moved"
    );
    let shown = screen(&mut app, 160, 30);
    assert!(shown.contains("r4 arrived"), "{shown}");
    assert!(shown.contains("r1 is still selected"), "{shown}");
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(
        decisions(&after_window(&mut app)),
        [("r1".to_string(), Decision::ApproveOnce)]
    );
}

#[test]
fn a_lisp_answer_replaces_evaluating_on_the_status_line() {
    let mut app = wide();
    app.focus = Pane::Memory;
    app.memory.agent = Some("sage".into());
    typed(&mut app, ":lisp (+ 1 2)");
    key(&mut app, KeyCode::Enter);
    let shown = screen(&mut app, 160, 30);
    assert!(shown.contains("evaluating"), "{shown}");
    app.on_reply(Reply::Lisp(partner::tui::panes::LispView {
        title: "(+ 1 2) as sage".into(),
        lines: vec!["3".into()],
        scroll: 0,
        failed: false,
    }));
    let shown = screen(&mut app, 160, 30);
    assert!(!shown.contains("evaluating"), "{shown}");
    assert!(shown.contains("done"), "{shown}");
}

#[test]
fn help_lists_the_focused_panes_keys_first() {
    let mut app = wide();
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('?'));
    let shown = screen(&mut app, 100, 30);
    let first = shown.find("In the Memory pane").expect(&shown);
    let all = shown.find("Keys").expect(&shown);
    assert!(first < all, "{shown}");
    assert!(shown[first..all].contains("edit"), "{shown}");
}

#[test]
fn open_needs_a_file_and_replay_opens_the_live_trace() {
    let mut app = wide();
    typed(&mut app, ":open trace");
    let commands = key(&mut app, KeyCode::Enter);
    assert!(
        !commands
            .iter()
            .any(|c| matches!(c, Command::Op(BackendOp::OpenReplay(_)))),
        "{commands:?}"
    );
    let shown = screen(&mut app, 160, 30);
    assert!(shown.contains("open trace takes a file"), "{shown}");
    typed(&mut app, ":replay");
    let commands = key(&mut app, KeyCode::Enter);
    let opened = commands.iter().find_map(|c| match c {
        Command::Op(BackendOp::OpenReplay(input)) => Some(input.clone()),
        _ => None,
    });
    assert_eq!(opened, Some(std::path::PathBuf::from(&app.db)));
}
