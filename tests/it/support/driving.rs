//! Driving the console in tests without a terminal: keys, typing, the
//! screen as text, and a wide console with three requests waiting.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use partner::policy::{Authority, Decision, PendingRequest};
use partner::tui::app::{App, Command, UNDO_WINDOW};
use partner::tui::backend::{BackendOp, Reply};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::console::{request, scene};

pub fn key(app: &mut App, code: KeyCode) -> Vec<Command> {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

pub fn screen(app: &mut App, width: u16, height: u16) -> String {
    app.size = (width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| partner::tui::app::render(app, f))
        .unwrap();
    format!("{}", terminal.backend())
}

pub fn three() -> Vec<PendingRequest> {
    ["r1", "r2", "r3"]
        .iter()
        .enumerate()
        .map(|(i, id)| {
            request(
                id,
                "sage",
                &format!("/post bluesky \"draft {i}\""),
                Authority::Partner,
                "public posts are reviewed",
                30 - i as i64,
            )
        })
        .collect()
}

pub fn pending(list: Vec<PendingRequest>) -> Reply {
    Reply::Pending(list, Default::default())
}

/// The decision ops among commands.
pub fn decisions(commands: &[Command]) -> Vec<(String, Decision)> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Op(BackendOp::Host(partner::protocol::Op::Decide { request, decision })) => {
                Some((request.clone(), decision.clone()))
            }
            _ => None,
        })
        .collect()
}

/// A wide console (the queue always on screen) with r1, r2, r3 waiting.
pub fn wide() -> App {
    let mut app = scene("dark");
    app.size = (180, 48);
    app.on_reply(pending(three()));
    app
}

/// Lets the undo window pass; returns what went out.
pub fn after_window(app: &mut App) -> Vec<Command> {
    let now = app.now + UNDO_WINDOW + 1;
    app.tick(now, 0.1)
}

/// The console's notice line, or nothing.
pub fn notice_text(app: &App) -> String {
    app.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}
