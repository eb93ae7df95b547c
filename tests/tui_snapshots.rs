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
        divergence: Some(partner::exec::replay::Divergence {
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
fn replay_shows_the_queue_and_memory_as_at_the_step() {
    let mut app = scene("dark");
    let mut records = app.model.trace.clone();
    records[3].decision.request = Some("r7".into());
    records[3].decision.requested_at = Some(records[0].time);
    records[3].decision.decided_at = Some(records[3].time);
    records[3].decision.decision = Some("deny".into());
    records[3].decision.decided_by = Some("agent:anchor".into());
    app.replay = Some(partner::tui::app::ReplayState {
        path: "demo.trace.jsonl".into(),
        records,
        step: 2,
        playing: false,
        speed: 2.0,
        divergence: None,
        verified: true,
    });
    app.replay_memory = Some((2, app.model.blocks[..1].to_vec()));
    assert_eq!(
        app.replay_queue().len(),
        1,
        "r7 was made before step 2 and decided after it"
    );
    insta::assert_snapshot!("replay_wide", draw(&app, 160, 30).backend());
    app.replay.as_mut().unwrap().step = 4;
    assert!(app.replay_queue().is_empty(), "decided by step 4");
}

const WIDE_ACTION: &str =
    "/post bluesky \"ローンチは金曜日 🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀\"";

#[test]
fn wide_characters_keep_their_columns() {
    let mut app = scene("dark");
    let text = format!("Résumé in 日本語 with emoji 🚀🎉 then an action:\n{WIDE_ACTION}");
    support::console::turn(
        &mut app,
        "sage",
        partner::agent::provider::PromptKind::Response,
        &text,
        &[(
            WIDE_ACTION,
            WIDE_ACTION,
            support::console::executed("sage", WIDE_ACTION, "queued 🚀"),
        )],
        support::console::NOW,
    );
    app.zoom = true;
    let terminal = draw(&app, 60, 16);
    insta::assert_snapshot!("wide_characters", terminal.backend());
    // Every row fits the screen: a wide character takes two cells, the
    // second a hidden placeholder, and the right border stays in place.
    use unicode_width::UnicodeWidthStr;
    let buffer = terminal.backend().buffer();
    for y in 1..buffer.area.height - 2 {
        let mut columns = 0;
        let mut x = 0;
        while x < buffer.area.width {
            let w = buffer[(x, y)].symbol().width().max(1);
            columns += w;
            x += w as u16;
        }
        assert_eq!(columns, 60, "row {y} does not fill exactly 60 columns");
        assert_eq!(buffer[(59, y)].symbol(), "┃", "row {y}: the border moved");
    }
}

#[test]
fn command_line_and_quit_confirmation() {
    let mut app = scene("dark");
    key(&mut app, KeyCode::Char(':'));
    for c in "pulse anchor 30m".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    insta::assert_snapshot!("command_line", draw(&app, 100, 12).backend());
    let intents = app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(
        intents,
        vec![partner::tui::app::Intent::Control {
            agents: vec!["anchor".into()],
            control: partner::tui::command::AgentControl::SetPulse(std::time::Duration::from_secs(
                30 * 60
            )),
        }]
    );
    // A command for an agent that is not there is refused on the status line.
    key(&mut app, KeyCode::Char(':'));
    for c in "halt nobody".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        Vec::new()
    );
    assert!(
        app.notice
            .as_deref()
            .is_some_and(|n| n.starts_with("no agent named 'nobody'")),
        "{:?}",
        app.notice
    );
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('i'));
    key(&mut app, KeyCode::Char('x'));
    key(&mut app, KeyCode::Esc);
    assert!(app.draft.is_some(), "Esc keeps the edit as a draft");
    key(&mut app, KeyCode::Char('q'));
    insta::assert_snapshot!("confirm_quit", draw(&app, 100, 12).backend());
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE)),
        vec![partner::tui::app::Intent::Quit]
    );
}

#[test]
fn each_theme_styles_the_console() {
    for theme in ["dark", "light", "high-contrast"] {
        let app = scene(theme);
        let terminal = draw(&app, 120, 30);
        insta::assert_debug_snapshot!(format!("theme_{theme}"), terminal.backend().buffer());
    }
}

#[test]
fn aliases_are_highlighted_apart_from_canonical_verbs() {
    let mut app = scene("dark");
    app.model.turns.clear();
    support::console::turn(
        &mut app,
        "sage",
        partner::agent::provider::PromptKind::Response,
        "/remember \"tea\"\n/recall notes",
        &[
            (
                "/remember \"tea\"",
                "/recall insert \"tea\"",
                support::console::executed("sage", "/recall insert \"tea\"", "stored"),
            ),
            (
                "/recall notes",
                "/recall \"notes\"",
                support::console::executed("sage", "/recall \"notes\"", "nothing found"),
            ),
        ],
        support::console::NOW,
    );
    app.zoom = true;
    let terminal = draw(&app, 60, 10);
    let buffer = terminal.backend().buffer();
    let theme = partner::tui::theme::Theme::builtin("dark").unwrap();
    // Row 2 holds "/remember", row 3 "/recall" (after the border and the header).
    assert_eq!(buffer[(1, 2)].symbol(), "/");
    assert_eq!(buffer[(1, 2)].fg, theme.style("dialect.alias").fg.unwrap());
    assert_eq!(buffer[(1, 3)].symbol(), "/");
    assert_eq!(buffer[(1, 3)].fg, theme.style("dialect.verb").fg.unwrap());
}
