//! The console's edits, tried the way they went wrong: a block edit
//! survives a failed save and a conflict becomes a merge; an edited action
//! that is refused keeps its editor.

use crate::support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use partner::policy::Authority;
use partner::runtime::Event;
use partner::store::memory::{Block, BlockKind, BlockPermission};
use partner::tui::app::overlay::Confirm;
use partner::tui::app::{Command, Overlay};
use partner::tui::backend::{BackendOp, Reply, SaveOutcome};
use partner::tui::panes::Pane;
use support::console::{NOW, scene};
use support::driving::*;

fn block(version: i64, value: &str) -> Block {
    Block {
        id: 1,
        agent: "sage".into(),
        label: "human".into(),
        kind: BlockKind::Working,
        description: String::new(),
        value: value.into(),
        char_limit: 5000,
        permission: BlockPermission::ReadWrite,
        pinned: false,
        shared: false,
        version,
        created_at: NOW,
        updated_at: NOW,
    }
}

#[test]
fn an_edit_survives_a_failed_save_and_a_conflict_becomes_a_merge() {
    let mut app = scene("dark");
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('i'));
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::End);
    typed(&mut app, " Likes tea.");
    let commands = app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    let Some(Command::Op(BackendOp::Host(partner::protocol::Op::SaveBlock {
        base_version,
        value,
        ..
    }))) = commands.first()
    else {
        panic!("{commands:?}");
    };
    assert_eq!(
        *base_version, 2,
        "the save names the version it started from"
    );
    assert!(value.ends_with("Likes tea."));
    // The disk is full: the editor stays open with the error, the text kept.
    app.on_reply(Reply::Saved {
        agent: "sage".into(),
        label: "human".into(),
        outcome: SaveOutcome::Failed("database or disk is full".into()),
    });
    let Overlay::Editor(editor) = &app.overlay else {
        panic!("the editor closed: {:?}", app.overlay);
    };
    assert!(editor.error.as_deref().unwrap().contains("disk is full"));
    assert!(editor.text().ends_with("Likes tea."));
    // Esc: the draft stays, marked in the list.
    key(&mut app, KeyCode::Esc);
    assert!(app.memory.draft("sage", "human").is_some());
    assert!(screen(&mut app, 180, 48).contains("✎ human"));
    // Meanwhile the agent changed the block: saving meets the change.
    key(&mut app, KeyCode::Char('i'));
    app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    app.on_reply(Reply::Saved {
        agent: "sage".into(),
        label: "human".into(),
        outcome: SaveOutcome::Conflict(block(3, "The partner runs a studio.\nHates mornings.")),
    });
    assert!(matches!(app.overlay, Overlay::Merge(_)));
    let shown = screen(&mut app, 120, 30);
    assert!(shown.contains("changed to v3 while you edited"), "{shown}");
    assert!(
        shown.contains("+Prefers short morning updates. Likes tea."),
        "{shown}"
    );
    // Mine over theirs: saved against v3 now.
    let commands = key(&mut app, KeyCode::Char('o'));
    assert!(
        matches!(
            commands.as_slice(),
            [Command::Op(BackendOp::Host(
                partner::protocol::Op::SaveBlock {
                    base_version: 3,
                    ..
                }
            ))]
        ),
        "{commands:?}"
    );
    app.on_reply(Reply::Saved {
        agent: "sage".into(),
        label: "human".into(),
        outcome: SaveOutcome::Saved("human is now v4 (80 chars)".into()),
    });
    assert!(
        app.memory.draft("sage", "human").is_none(),
        "saved: no draft"
    );
}

#[test]
fn an_edited_action_that_is_refused_keeps_the_editor() {
    let mut app = wide();
    key(&mut app, KeyCode::Char('E'));
    assert!(matches!(app.overlay, Overlay::Editor(_)));
    app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert_eq!(edited_sent(&after_window(&mut app)).len(), 1);
    app.on_reply(Reply::Decided {
        id: "r1".into(),
        outcome: Err("write exactly one action, not 0".into()),
    });
    let Overlay::Editor(editor) = &app.overlay else {
        panic!("the editor closed");
    };
    assert_eq!(
        editor.error.as_deref(),
        Some("write exactly one action, not 0")
    );
}

#[test]
fn after_the_partner_empties_the_queue_the_next_request_is_selected() {
    let mut app = scene("dark");
    app.size = (180, 48);
    app.on_reply(pending(vec![three()[0].clone()]));
    key(&mut app, KeyCode::Char('a'));
    // The queue is read again while the decision waits out its window.
    app.on_reply(pending(vec![three()[0].clone()]));
    assert_eq!(app.queue.selected, None, "r1 is not selected again");
    assert_eq!(decisions(&after_window(&mut app)).len(), 1);
    // r1 leaves (the partner's own decision): no surprise to report.
    app.notice = None;
    app.on_reply(pending(Vec::new()));
    assert!(app.notice.is_none(), "{:?}", app.notice);
    app.on_reply(pending(vec![three()[1].clone()]));
    assert_eq!(app.queue.selected.as_deref(), Some("r2"));
}

#[test]
fn what_other_processes_change_is_read_again() {
    let mut app = scene("dark");
    app.now = NOW;
    app.tick(NOW, 0.1);
    let commands = app.tick(NOW + 2_100, 0.1);
    let ops: Vec<String> = commands
        .iter()
        .filter_map(|c| match c {
            Command::Op(op) => Some(format!("{op:?}")),
            _ => None,
        })
        .collect();
    for wanted in ["Host(Queue", "Host(Trace", "Host(Blocks"] {
        assert!(
            ops.iter().any(|o| o.starts_with(wanted)),
            "{wanted} every two seconds: {ops:?}"
        );
    }
}

#[test]
fn fixing_a_proposed_action_offers_to_learn_the_words() {
    use partner::dialect::{Span, Verb};
    use partner::runtime::provider::PromptKind;
    let mut app = wide();
    let words = "Jot down: buy oat milk";
    let action_id = "ada-1:1:1".to_string();
    for event in [
        Event::TurnStarted {
            agent: "sage".into(),
            kind: PromptKind::Response,
            pass: 1,
        },
        Event::ReplyFinished {
            agent: "sage".into(),
            pass: 1,
            text: words.into(),
        },
        Event::ActionParsed {
            agent: "sage".into(),
            action_id: action_id.clone(),
            verb: Verb::from_name("recall"),
            op: None,
            canonical: "/recall \"Jot down: buy oat milk\" ?ask".into(),
            span: Span::new(words.len(), words.len()),
            cancelled: false,
        },
        Event::ActionProposed {
            agent: "sage".into(),
            action_id: action_id.clone(),
            words: words.into(),
            action: "/recall \"Jot down: buy oat milk\"".into(),
        },
        Event::PermissionRequested {
            agent: "sage".into(),
            action_id: Some(action_id.clone()),
            id: "r1".into(),
            verb: Verb::from_name("recall"),
            op: None,
            canonical: "/recall \"Jot down: buy oat milk\" ?ask".into(),
            waiting_on: Authority::Partner,
            reason: "the agent asked for a check (?ask)".into(),
        },
    ] {
        app.model.apply(&event, app.now);
    }
    assert!(
        screen(&mut app, 180, 48).contains("proposed /recall"),
        "the turn marks it as proposed"
    );
    // E, the fixed action, saved: approved in place of the request.
    key(&mut app, KeyCode::Char('E'));
    let Overlay::Editor(editor) = &mut app.overlay else {
        panic!("no editor");
    };
    *editor = partner::tui::app::Editor::new(
        editor.target.clone(),
        "/recall insert \"buy oat milk\"",
        editor.original.clone(),
    );
    app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    let sent = after_window(&mut app);
    assert!(
        sent.iter().any(
            |c| matches!(c, Command::Op(BackendOp::Host(partner::protocol::Op::Decide {
                request,
                decision: partner::protocol::wire::Decision::ApproveEdited(_),
            })) if request == "r1")
        ),
        "{sent:?}"
    );
    app.on_reply(Reply::Decided {
        id: "r1".into(),
        outcome: Ok("approved the edited r1".into()),
    });
    let Overlay::Confirm(Confirm { question, .. }) = &app.overlay else {
        panic!("no offer to learn: {:?}", app.overlay);
    };
    assert!(
        question.contains("Jot down: buy oat milk")
            && question.contains("/recall insert \"buy oat milk\""),
        "{question}"
    );
    let learned = key(&mut app, KeyCode::Char('y'));
    assert!(
        learned.iter().any(
            |c| matches!(c, Command::Op(BackendOp::Host(partner::protocol::Op::Learn { words, action }))
            if words == "Jot down: buy oat milk" && action == "/recall insert \"buy oat milk\"")
        ),
        "{learned:?}"
    );
}

/// The edited approvals among what went out: (request, text).
fn edited_sent(commands: &[Command]) -> Vec<(String, String)> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Op(BackendOp::Host(partner::protocol::Op::Decide {
                request,
                decision: partner::protocol::wire::Decision::ApproveEdited(text),
            })) => Some((request.clone(), text.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn an_edited_approval_waits_out_the_undo_window_like_any_decision() {
    let mut app = wide();
    key(&mut app, KeyCode::Char('E'));
    let sent = app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    assert!(edited_sent(&sent).is_empty(), "sent at once: {sent:?}");
    assert!(matches!(app.overlay, Overlay::None), "{:?}", app.overlay);
    let shown = screen(&mut app, 180, 48);
    assert!(shown.contains("approve as edited in 3s"), "{shown}");
    // Taken back within the window: nothing goes out, r1 still waits.
    key(&mut app, KeyCode::Char('U'));
    let said = notice_text(&app);
    assert!(said.contains("taken back: r1"), "{said}");
    assert!(edited_sent(&after_window(&mut app)).is_empty());
    // Edited again and left alone: it goes out once the window has passed,
    // and U then names that request, not one decided before.
    key(&mut app, KeyCode::Char('E'));
    app.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    let out = edited_sent(&after_window(&mut app));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].0, "r1");
    key(&mut app, KeyCode::Char('U'));
    let said = notice_text(&app);
    assert!(said.contains("r1 was already decided and sent"), "{said}");
}

#[test]
fn ctrl_end_and_ctrl_home_go_to_the_whole_texts_end_and_start() {
    let mut app = scene("dark");
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('i'));
    let Overlay::Editor(editor) = &app.overlay else {
        panic!("no editor");
    };
    let before = editor.text();
    assert!(
        before.lines().count() > 1,
        "a block of several lines: {before:?}"
    );
    app.on_key(KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
    typed(&mut app, "!");
    app.on_key(KeyEvent::new(KeyCode::Home, KeyModifiers::CONTROL));
    typed(&mut app, "^");
    let Overlay::Editor(editor) = &app.overlay else {
        panic!("the editor closed");
    };
    assert_eq!(editor.text(), format!("^{before}!"));
}
