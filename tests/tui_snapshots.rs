//! Snapshot tests of the console (ratatui's TestBackend, insta): each pane
//! and overlay in a known state, narrow and wide, and each theme's styles.

mod support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use partner::tui::app::{App, Pane};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support::console::scene;

fn draw(app: &App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| partner::tui::view::render(app, f))
        .unwrap();
    terminal
}

fn key(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

#[test]
fn wide_shows_every_pane() {
    let app = scene("dark");
    insta::assert_snapshot!("wide_all_panes", draw(&app, 180, 48).backend());
}

#[test]
fn narrow_switches_panes_with_tabs() {
    let mut app = scene("dark");
    for (pane, name) in [
        (Pane::Turns, "narrow_turns"),
        (Pane::Pending, "narrow_pending"),
        (Pane::Memory, "narrow_memory"),
        (Pane::Trace, "narrow_trace"),
    ] {
        app.focus = pane;
        insta::assert_snapshot!(name, draw(&app, 90, 30).backend());
    }
}

#[test]
fn zoom_fills_the_screen() {
    let mut app = scene("dark");
    app.focus = Pane::Pending;
    key(&mut app, KeyCode::Char('z'));
    insta::assert_snapshot!("zoomed_pending", draw(&app, 120, 24).backend());
}

#[test]
fn overlays() {
    let mut app = scene("dark");
    key(&mut app, KeyCode::Char('?'));
    insta::assert_snapshot!("help_overlay", draw(&app, 120, 44).backend());
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('D'));
    for c in "not on launch day".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    insta::assert_snapshot!("deny_reason_input", draw(&app, 120, 30).backend());
    key(&mut app, KeyCode::Esc);
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('i'));
    insta::assert_snapshot!("block_editor", draw(&app, 100, 24).backend());
}

#[test]
fn replay_pane() {
    let mut app = scene("dark");
    let records = app.model.trace.clone();
    app.replay = Some(partner::tui::app::ReplayState {
        path: "demo.trace.jsonl".into(),
        records,
        step: 2,
        playing: false,
        speed: 2.0,
        divergence: Some(partner::trace::replay::Divergence {
            step: 3,
            id: "t3".into(),
            canonical: "/fetch …".into(),
            what: "result was \"a\", now \"b\"".into(),
        }),
        verified: true,
    });
    app.focus = Pane::Replay;
    insta::assert_snapshot!("replay", draw(&app, 100, 16).backend());
}

#[test]
fn each_theme_styles_the_console() {
    for theme in ["dark", "light", "high-contrast"] {
        let app = scene(theme);
        let terminal = draw(&app, 120, 30);
        insta::assert_debug_snapshot!(format!("theme_{theme}"), terminal.backend().buffer());
    }
}
