//! Snapshot tests of the console (ratatui's TestBackend, insta): each pane
//! and overlay in a known state, narrow and wide, each theme at 80×24,
//! 120×40 and 200×60.

use crate::support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use partner::tui::app::{App, Command};
use partner::tui::backend::BackendOp;
use partner::tui::panes::{Pane, ReplayPane};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support::console::scene;

fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.size = (width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| partner::tui::app::render(app, f))
        .unwrap();
    terminal
}

fn key(app: &mut App, code: KeyCode) -> Vec<Command> {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

#[test]
fn wide_shows_every_pane() {
    let mut app = scene("dark");
    insta::assert_snapshot!("wide_all_panes", draw(&mut app, 180, 48).backend());
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
        insta::assert_snapshot!(name, draw(&mut app, 90, 30).backend());
    }
}

#[test]
fn zoom_fills_the_screen() {
    let mut app = scene("dark");
    app.focus = Pane::Pending;
    key(&mut app, KeyCode::Char('z'));
    insta::assert_snapshot!("zoomed_pending", draw(&mut app, 120, 24).backend());
}

#[test]
fn overlays() {
    let mut app = scene("dark");
    key(&mut app, KeyCode::Char('?'));
    insta::assert_snapshot!("help_overlay", draw(&mut app, 120, 44).backend());
    key(&mut app, KeyCode::Esc);
    app.size = (180, 48);
    key(&mut app, KeyCode::Char('D'));
    typed(&mut app, "not on launch day");
    insta::assert_snapshot!("deny_reason_input", draw(&mut app, 120, 30).backend());
    key(&mut app, KeyCode::Esc);
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('i'));
    insta::assert_snapshot!("block_editor", draw(&mut app, 100, 24).backend());
}

#[test]
fn help_fits_a_small_terminal_and_scrolls() {
    let mut app = scene("dark");
    key(&mut app, KeyCode::Char('?'));
    let top = format!("{}", draw(&mut app, 80, 24).backend());
    insta::assert_snapshot!("help_80x24", top);
    for _ in 0..200 {
        key(&mut app, KeyCode::Down);
    }
    let bottom = format!("{}", draw(&mut app, 80, 24).backend());
    assert!(
        bottom.contains("REPLAY"),
        "the icon legend is reached by scrolling:\n{bottom}"
    );
    assert!(top.contains("Keys") && !top.contains("REPLAY"));
    insta::assert_snapshot!("help_80x24_end", bottom);
    // Scrolling stops at the end: one step up moves at once.
    key(&mut app, KeyCode::Up);
    let up = format!("{}", draw(&mut app, 80, 24).backend());
    assert_ne!(up, bottom, "one step up after the end moves the help");
    // No line is cut: every meaning wraps inside the popup.
    for line in top.lines().chain(bottom.lines()) {
        assert!(!line.contains("…"), "a help line was cut: {line}");
    }
}

fn replay_of(app: &App, step: usize) -> ReplayPane {
    let mut replay = ReplayPane::new("demo.trace.jsonl".into(), app.model.trace.clone());
    replay.state.step = step;
    replay.state.verified = true;
    replay
}

#[test]
fn replay_pane() {
    let mut app = scene("dark");
    let mut replay = replay_of(&app, 2);
    replay.state.divergence = Some(partner::engine::exec::replay::Divergence {
        step: 3,
        id: "t3".into(),
        canonical: "/fetch …".into(),
        what: "result was \"a\", now \"b\"".into(),
    });
    app.replay = Some(replay);
    app.focus = Pane::Replay;
    insta::assert_snapshot!("replay", draw(&mut app, 100, 16).backend());
}

#[test]
fn replay_shows_the_queue_memory_and_turns_as_at_the_step() {
    let mut app = scene("dark");
    let mut replay = replay_of(&app, 2);
    let records = &mut replay.state.records;
    let first = records[0].time;
    records[3].decision.request = Some("r7".into());
    records[3].decision.requested_at = Some(first);
    records[3].decision.decided_at = Some(records[3].time);
    records[3].decision.decision = Some("deny".into());
    records[3].decision.decided_by = Some("agent:anchor".into());
    replay.memory = Some((2, app.model.blocks[..1].to_vec()));
    assert_eq!(
        replay.queue().len(),
        1,
        "r7 was made before step 2 and decided after it"
    );
    app.replay = Some(replay);
    insta::assert_snapshot!("replay_wide", draw(&mut app, 160, 30).backend());
    app.replay.as_mut().unwrap().state.step = 4;
    assert!(
        app.replay.as_ref().unwrap().queue().is_empty(),
        "decided by step 4"
    );
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
        partner::runtime::provider::PromptKind::Response,
        &text,
        &[(
            WIDE_ACTION,
            WIDE_ACTION,
            support::console::executed("sage", WIDE_ACTION, "queued 🚀"),
        )],
        support::console::NOW,
    );
    app.zoom = true;
    let terminal = draw(&mut app, 60, 16);
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
    typed(&mut app, "pulse anchor 30m");
    insta::assert_snapshot!("command_line", draw(&mut app, 100, 12).backend());
    let commands = key(&mut app, KeyCode::Enter);
    assert!(
        matches!(
            commands.as_slice(),
            [Command::Op(BackendOp::Host(partner::protocol::Op::SetPulse { agent, seconds }))]
                if agent == "anchor" && seconds.as_secs() == 30 * 60
        ),
        "{commands:?}"
    );
    // A command for an agent that is not there is refused on the status line.
    key(&mut app, KeyCode::Char(':'));
    typed(&mut app, "halt nobody");
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    assert!(
        app.notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("no agent named 'nobody'")),
        "{:?}",
        app.notice
    );
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('i'));
    key(&mut app, KeyCode::Char('x'));
    key(&mut app, KeyCode::Esc);
    assert!(
        app.memory.draft("sage", "human").is_some(),
        "Esc keeps the edit as a draft"
    );
    key(&mut app, KeyCode::Char('q'));
    insta::assert_snapshot!("confirm_quit", draw(&mut app, 100, 12).backend());
    assert!(matches!(
        key(&mut app, KeyCode::Char('y')).as_slice(),
        [Command::Quit]
    ));
}

#[test]
fn each_theme_at_three_sizes() {
    for theme in ["dark", "light", "high-contrast"] {
        for (w, h) in [(80, 24), (120, 40), (200, 60)] {
            let mut app = scene(theme);
            let terminal = draw(&mut app, w, h);
            insta::assert_snapshot!(format!("theme_{theme}_{w}x{h}"), terminal.backend());
            if w == 120 {
                insta::assert_debug_snapshot!(
                    format!("theme_{theme}_styles"),
                    terminal.backend().buffer()
                );
            }
        }
    }
}

#[test]
fn aliases_are_highlighted_apart_from_canonical_verbs() {
    let mut app = scene("dark");
    app.model.turns.clear();
    support::console::turn(
        &mut app,
        "sage",
        partner::runtime::provider::PromptKind::Response,
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
    let terminal = draw(&mut app, 60, 10);
    let buffer = terminal.backend().buffer();
    let theme = partner::tui::theme::Theme::builtin("dark").unwrap();
    // Row 2 holds "/remember", row 3 "/recall" (after the border and the header).
    assert_eq!(buffer[(1, 2)].symbol(), "/");
    assert_eq!(buffer[(1, 2)].fg, theme.style("dialect.alias").fg.unwrap());
    assert_eq!(buffer[(1, 3)].symbol(), "/");
    assert_eq!(buffer[(1, 3)].fg, theme.style("dialect.verb").fg.unwrap());
}

#[test]
fn a_tool_run_in_the_trace_shows_its_states_and_writes() {
    let mut app = scene("dark");
    let mut run = support::console::record(
        5,
        "scout",
        "/checklist \"binaries\"",
        partner::store::trace::TraceOutcome::Executed,
        "tool checklist ran: it writes checklist (each write is checked like your own)",
    );
    run.data = serde_json::json!({
        "tool": {
            "name": "checklist",
            "args": "binaries",
            "input": "[:State {agent: \"scout\", args: \"binaries\"} | (:Block {label: \"checklist\", value: \"docs\\nbinaries\"}), (:Block {label: \"scratch\", value: \"\"})]",
            "output": "[:State {agent: \"scout\", args: \"binaries\"} | (:Block {label: \"checklist\", value: \"docs\\nbinaries (done)\"}), (:Block {label: \"scratch\", value: \"\"})]",
            "input_nodes": 3,
            "output_nodes": 3,
            "changes": [{"Write": {"label": "checklist", "old": "docs\nbinaries", "new": "docs\nbinaries (done)"}}],
            "ignored": [],
        },
        "replay_check": "",
    });
    app.model.trace.push(run);
    app.focus = Pane::Trace;
    key(&mut app, KeyCode::Char('z'));
    insta::assert_snapshot!("trace_tool_run", draw(&mut app, 120, 30).backend());
}

#[test]
fn memory_search_shows_which_side_found_each_hit_and_the_index_catching_up() {
    use partner::engine::embed::IndexStatus;
    use partner::store::memory::vectors::{HybridHit, Via};
    use partner::store::memory::{SearchDomain, SearchHit};
    use partner::tui::backend::Reply;
    let mut app = scene("dark");
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "launch");
    key(&mut app, KeyCode::Enter);
    let hit = |id: i64, label: &str, snippet: &str, score: f64, via: Via| HybridHit {
        hit: SearchHit {
            domain: SearchDomain::Blocks,
            agent: "ada".into(),
            id,
            label: Some(label.into()),
            role: None,
            snippet: snippet.into(),
            rank: -1.0,
            time: 0,
        },
        score,
        via,
    };
    app.on_reply(Reply::Hits {
        query: "launch".into(),
        found: Ok((
            vec![
                hit(1, "dates", "the [launch] date moved", 1.2, Via::Both),
                hit(2, "plans", "Dana: we ship on Friday", 0.85, Via::Vector),
                hit(3, "notes", "[launch] party ideas", 0.2, Via::Fts),
            ],
            None,
        )),
    });
    app.on_reply(Reply::Index(Some(IndexStatus {
        embedder: "model2vec:potion-base-8M:256".into(),
        done: 1_200,
        waiting: 34,
        problem: None,
    })));
    insta::assert_snapshot!("memory_search_hybrid", draw(&mut app, 120, 24).backend());
    // The embedder is down: searches are by words, and the status line says so.
    app.on_reply(Reply::Index(Some(IndexStatus {
        embedder: "model2vec:potion-base-8M:256".into(),
        done: 1_200,
        waiting: 40,
        problem: Some("the embedder is unavailable".into()),
    })));
    let screen = format!("{:?}", draw(&mut app, 120, 24).backend());
    assert!(screen.contains("search by words only"), "{screen}");
}

/// The rows of a drawn screen, as text.
fn screen_text(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect()
}

/// The standing rules and the learned phrasings share one list popup:
/// each row numbered, the selected one marked, an empty list said so.
#[test]
fn the_rules_and_learned_lists_show_each_row_or_say_they_are_empty() {
    use partner::policy::StandingRule;
    use partner::store::memory::learned::LearnedRule;
    use partner::tui::app::Overlay;
    use partner::tui::app::overlay::Chooser;
    let mut app = scene("dark");
    let rule = |id: i64, effect: &str, target: Option<&str>| StandingRule {
        id,
        agent: "ada".into(),
        verb: "post".into(),
        op: None,
        target: target.map(Into::into),
        effect: effect.into(),
        reason: None,
        created_by: "partner".into(),
        created_at: 0,
        expires_at: None,
    };
    app.overlay = Overlay::Rules(Chooser {
        items: vec![rule(7, "allow", Some("bluesky")), rule(9, "deny", None)],
        selected: 1,
    });
    let text = screen_text(&draw(&mut app, 120, 30)).join("\n");
    assert!(
        text.contains("Standing rules — ↑/↓ select, x revokes"),
        "{text}"
    );
    assert!(
        text.contains("#7   allow ada: /post bluesky (by partner)"),
        "{text}"
    );
    assert!(text.contains("#9   deny ada: /post (by partner)"), "{text}");

    app.overlay = Overlay::Rules(Chooser::default());
    let text = screen_text(&draw(&mut app, 120, 30)).join("\n");
    assert!(
        text.contains("No standing rules: every request is decided one at a time."),
        "{text}"
    );

    app.overlay = Overlay::Learned(Chooser {
        items: vec![LearnedRule {
            id: 3,
            rule: String::new(),
            words: "jot down".into(),
            action: "/recall insert".into(),
            created_at: 0,
        }],
        selected: 0,
    });
    let text = screen_text(&draw(&mut app, 120, 30)).join("\n");
    assert!(
        text.contains("Learned phrasings — ↑/↓ select, x forgets"),
        "{text}"
    );
    assert!(
        text.contains("#3   \"jot down\"  →  /recall insert"),
        "{text}"
    );
}

#[test]
fn a_memory_search_says_it_is_searching_until_its_own_answer_comes() {
    use partner::tui::backend::Reply;
    let mut app = scene("dark");
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "launch");
    key(&mut app, KeyCode::Enter);
    let screen = format!("{:?}", draw(&mut app, 120, 24).backend());
    assert!(screen.contains("searching memory for “launch”"), "{screen}");
    assert!(
        !screen.contains("0 hits"),
        "nothing was searched yet:\n{screen}"
    );
    // An answer to an earlier search is not this one's.
    app.on_reply(Reply::Hits {
        query: "friday".into(),
        found: Ok((Vec::new(), None)),
    });
    let screen = format!("{:?}", draw(&mut app, 120, 24).backend());
    assert!(screen.contains("searching memory for “launch”"), "{screen}");
    // A search that failed says so, never "0 hits".
    app.on_reply(Reply::Hits {
        query: "launch".into(),
        found: Err("search failed: the database is locked".into()),
    });
    let screen = format!("{:?}", draw(&mut app, 120, 24).backend());
    assert!(
        screen.contains("the search for “launch” failed"),
        "{screen}"
    );
    assert!(!screen.contains("0 hits"), "{screen}");
    // Its own answer, empty: now "0 hits" is true.
    app.on_reply(Reply::Hits {
        query: "launch".into(),
        found: Ok((Vec::new(), None)),
    });
    let screen = format!("{:?}", draw(&mut app, 120, 24).backend());
    assert!(screen.contains("0 hits for “launch”"), "{screen}");
}
