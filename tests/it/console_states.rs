//! What the console says in the states the served path brings — in a
//! replay, with the daemon gone, refused, opened for a trace alone — at
//! 80×24 as on a wide screen: the status bar keeps the pending count and
//! `? help` whatever else it must shorten, and nothing is called live
//! that is not.

use crate::support;

use crossterm::event::KeyCode;
use partner::protocol::Connection;
use partner::tui::backend::{OpenedTrace, Reply};
use support::console::{NOW, scene};
use support::driving::*;

/// The last line of a screen: the status bar.
fn status_bar(shown: &str) -> String {
    shown
        .lines()
        .rev()
        .find(|l| !l.trim_matches('"').trim().is_empty())
        .unwrap_or("")
        .to_string()
}

/// A console with r1–r3 waiting, its size 80×24.
fn small() -> partner::tui::app::App {
    let mut app = scene("dark");
    app.on_reply(pending(three()));
    app.size = (80, 24);
    app
}

fn replaying(app: &mut partner::tui::app::App) {
    let records = app.model.trace.clone();
    app.on_reply(Reply::Replay(OpenedTrace {
        path: "old.jsonl".into(),
        records,
    }));
    assert!(app.replay.is_some());
}

/// Puts a console in one state.
type SetState = fn(&mut partner::tui::app::App);

#[test]
fn at_80x24_the_status_bar_keeps_the_count_and_help_in_every_state() {
    let states: [(&str, SetState); 4] = [
        ("attached", |app| app.connection = Connection::Attached),
        ("the daemon gone", |app| {
            app.connection = Connection::Gone { since: NOW }
        }),
        ("refused", |app| {
            app.connection = Connection::Refused { since: NOW }
        }),
        ("a replay with the daemon gone", |app| {
            replaying(app);
            app.connection = Connection::Gone { since: NOW };
        }),
    ];
    for (name, set) in states {
        for (width, height) in [(80, 24), (160, 48)] {
            let mut app = small();
            set(&mut app);
            app.notice = None;
            let shown = screen(&mut app, width, height);
            let bar = status_bar(&shown);
            assert!(bar.contains("? help"), "{name} at {width}: {bar}");
            assert!(bar.contains(" pending"), "{name} at {width}: {bar}");
            if app.connection.reaches() {
                assert!(bar.contains("3 pending"), "{name} at {width}: {bar}");
            } else {
                assert!(bar.contains("? pending"), "{name} at {width}: {bar}");
            }
            if !matches!(app.connection, Connection::Attached) {
                // The connection is said, shortly if it must be.
                assert!(
                    bar.contains("gone") || bar.contains("refused"),
                    "{name} at {width}: {bar}"
                );
            }
        }
    }
}

#[test]
fn leaving_the_replay_of_a_console_opened_for_a_trace_never_calls_it_live() {
    let mut app = small();
    app.trace_only = true;
    replaying(&mut app);
    key(&mut app, KeyCode::Esc);
    assert!(app.replay.is_none());
    let said = app.notice.clone().unwrap().text;
    assert!(!said.contains("live"), "{said}");
    assert!(said.contains("nothing runs in it"), "{said}");
    // A console over a constellation: its panes are live again.
    let mut app = small();
    replaying(&mut app);
    key(&mut app, KeyCode::Esc);
    assert!(app.notice.clone().unwrap().text.contains("live again"));
}
