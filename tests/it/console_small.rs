//! The console at a small terminal, tried the way it went wrong: at
//! 80×24 the status line keeps its help and a long message is shown whole;
//! a popup is as large as what it shows; the block editor wraps long lines;
//! a trace record read twice is shown once.

use crate::support;

use crossterm::event::KeyCode;
use partner::tui::app::Overlay;
use partner::tui::backend::Reply;
use support::driving::*;

#[test]
fn at_80x24_the_status_line_keeps_help_and_a_long_message_is_shown_whole() {
    let mut app = wide();
    let long = "the daemon went away at 12:03:04 while r7 was being decided; the agents may be stopped and nothing you decide reaches them until it is back";
    app.warn(long);
    let shown = screen(&mut app, 80, 24);
    let mut rows: Vec<&str> = shown.lines().map(|l| l.trim_matches('"')).collect();
    let status = rows.pop().unwrap();
    assert!(status.contains("? help"), "{status}");
    // Wrapped onto the lines above the bar, every word there.
    let flat = rows[rows.len() - 2..].join(" ");
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(long), "{shown}");
    // Longer than three lines: kept whole as what it is, a status message.
    app.warn(long.repeat(3));
    assert_eq!(
        app.model.notifications.back().map(|n| n.kind),
        Some(partner::tui::model::NoticeKind::Status)
    );
    key(&mut app, KeyCode::Char('N'));
    key(&mut app, KeyCode::Enter);
    let whole = screen(&mut app, 80, 24);
    let flat = whole
        .lines()
        .map(|l| l.trim_matches(|c: char| c == '║' || c == '"' || c == ' ' || c == '┃'))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("until it is back"), "{whole}");
}

#[test]
fn a_popup_is_as_large_as_what_it_shows() {
    let mut app = wide();
    app.on_reply(Reply::Lisp(partner::tui::panes::LispView {
        title: "(+ 1 2) as sage".into(),
        lines: vec!["3".into()],
        scroll: 0,
        failed: false,
    }));
    let shown = screen(&mut app, 190, 50);
    let top = shown
        .lines()
        .find(|l| l.contains("Lisp —"))
        .expect(&shown)
        .trim_matches('"');
    let border = top.chars().filter(|c| "╔═╗╭─╮┌┐".contains(*c)).count();
    assert!(
        border < 100,
        "a popup {border} columns wide for a 3:\n{shown}"
    );
    // And as tall: its bottom border is a few lines under its top.
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines.iter().position(|l| l.contains("Lisp —")).unwrap();
    let column = lines[at].chars().position(|c| "╔╭┌".contains(c)).unwrap();
    let bottom = lines[at + 1..]
        .iter()
        .position(|l| l.chars().nth(column).is_some_and(|c| "╚╰└".contains(c)))
        .expect(&shown);
    assert!(bottom < 5, "a popup {bottom} lines tall for a 3:\n{shown}");
}

#[test]
fn the_block_editor_wraps_long_lines_at_80x24() {
    let mut app = wide();
    let long = "The partner prefers short morning updates, sent before nine, with the launch date first and anything that needs a decision marked at the top so nothing waits.";
    app.overlay = Overlay::Editor(partner::tui::app::Editor::new(
        partner::tui::panes::EditTarget::Block {
            agent: "sage".into(),
            label: "human".into(),
            base_version: 1,
        },
        long,
        long.into(),
    ));
    let shown = screen(&mut app, 80, 24);
    // The end of the line is on screen, on a line of its own.
    assert!(shown.contains("nothing waits."), "{shown}");
}

#[test]
fn a_trace_record_read_twice_is_shown_once() {
    let mut app = wide();
    let before = app.model.trace.len();
    let fresh = support::console::record(
        999,
        "ada",
        ":memory set ada persona \"I am Ada.\"",
        partner::store::trace::TraceOutcome::Executed,
        "persona is now v1",
    );
    // Two reads asked before either answered: the same record twice.
    app.on_reply(Reply::Trace(vec![fresh.clone()], 999, false));
    app.on_reply(Reply::Trace(vec![fresh], 999, false));
    assert_eq!(app.model.trace.len(), before + 1);
}
