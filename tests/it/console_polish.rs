//! What people expect of a good terminal console, each held by a test:
//! turns wrap on words and keep their place while scrolled, agents have
//! their own colours, empty pulses take one line, actions lead to their
//! request or trace record, columns never collide, searches work in the
//! pane that has the keys, the status line fits, replay plays fast, and
//! keymaps and themes load from files.

use crate::support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use partner::runtime::Event;
use partner::runtime::provider::PromptKind;
use partner::tui::app::{App, Command};
use partner::tui::backend::{BackendOp, Reply};
use partner::tui::panes::{Pane, ReplayPane};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use support::console::{NOW, executed, record, scene, turn};

fn key(app: &mut App, code: KeyCode) -> Vec<Command> {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    app.size = (width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| partner::tui::app::render(app, f))
        .unwrap();
    terminal
}

fn rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect()
}

fn text_of(terminal: &Terminal<TestBackend>) -> String {
    rows(terminal).join("\n")
}

#[test]
fn turns_wrap_on_words_and_keep_tabs_as_spaces() {
    let mut app = scene("dark");
    app.model.turns.clear();
    turn(
        &mut app,
        "sage",
        PromptKind::Response,
        "The launch checklist is long enough to wrap nicely here.\n\tindented\tcolumns",
        &[],
        NOW,
    );
    app.zoom = true;
    let t = draw(&mut app, 32, 10);
    let shown = rows(&t);
    assert!(
        shown
            .iter()
            .any(|r| r.contains("┃The launch checklist is long  ┃")),
        "{shown:#?}"
    );
    assert!(
        shown
            .iter()
            .any(|r| r.contains("┃enough to wrap nicely here.")),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|r| r.contains("┃    indented    columns")),
        "{shown:#?}"
    );
}

#[test]
fn a_scrolled_pane_keeps_its_place_while_new_turns_arrive() {
    let mut app = scene("dark");
    for i in 0..30 {
        turn(
            &mut app,
            "scout",
            PromptKind::Pulse,
            &format!("Note number {i}."),
            &[],
            NOW,
        );
    }
    app.zoom = true;
    for _ in 0..12 {
        key(&mut app, KeyCode::Up);
    }
    let before = rows(&draw(&mut app, 60, 16));
    for i in 30..40 {
        turn(
            &mut app,
            "scout",
            PromptKind::Pulse,
            &format!("Note number {i}."),
            &[],
            NOW,
        );
    }
    let after = rows(&draw(&mut app, 60, 16));
    assert_eq!(
        before[1..15],
        after[1..15],
        "what the partner was reading stayed put"
    );
    assert!(after[0].contains("scrolled"), "{}", after[0]);
    key(&mut app, KeyCode::End);
    let followed = text_of(&draw(&mut app, 60, 16));
    assert!(followed.contains("Note number 39."), "End follows again");
}

#[test]
fn each_agent_has_its_own_colour() {
    let mut app = scene("dark");
    app.zoom = true;
    let t = draw(&mut app, 100, 40);
    let buffer = t.backend().buffer();
    let colour_of = |name: &str| {
        (0..buffer.area.height).find_map(|y| {
            let row: String = (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect();
            row.find(&format!("┃{name} · "))
                .map(|x| buffer[(x as u16 + 1, y)].fg)
        })
    };
    let (sage, scout) = (colour_of("sage"), colour_of("scout"));
    assert!(sage.is_some() && scout.is_some());
    assert_ne!(sage, scout);
}

#[test]
fn empty_pulses_in_a_row_are_one_line_with_a_count() {
    let mut app = scene("dark");
    app.model.turns.clear();
    for _ in 0..3 {
        turn(&mut app, "anchor", PromptKind::Pulse, "", &[], NOW);
    }
    app.zoom = true;
    let shown = text_of(&draw(&mut app, 60, 12));
    assert_eq!(shown.matches("nothing to say").count(), 1, "{shown}");
    assert!(shown.contains("pulse · nothing to say ×3"), "{shown}");
    assert!(
        !shown.contains("(nothing to say)\n┃ "),
        "no blank line after each:\n{shown}"
    );
}

#[test]
fn an_action_leads_to_its_request_or_its_trace_record() {
    let mut app = scene("dark");
    app.size = (180, 48);
    // The newest action first: scout's append waits on r2.
    key(&mut app, KeyCode::Char(']'));
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.focus, Pane::Pending);
    assert_eq!(app.queue.selected.as_deref(), Some("r2"));
    // An executed action leads to its record.
    app.focus = Pane::Turns;
    let mut ev = executed("sage", "/calc 2+2", "4");
    if let Event::ActionExecuted { trace_id, .. } = &mut ev {
        *trace_id = Some("t4".into());
    }
    turn(
        &mut app,
        "sage",
        PromptKind::Response,
        "/calc 2+2",
        &[("/calc 2+2", "/calc 2+2", ev)],
        NOW,
    );
    key(&mut app, KeyCode::Char(']'));
    key(&mut app, KeyCode::Char('['));
    key(&mut app, KeyCode::Char(']'));
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.focus, Pane::Trace);
    assert_eq!(app.trace.selected.as_deref(), Some("t4"));
}

#[test]
fn columns_never_collide() {
    let mut app = scene("dark");
    app.model.trace.push(record(
        5,
        "a-very-long-agent-name",
        "/recall read project_notes",
        partner::store::trace::TraceOutcome::Executed,
        "ok",
    ));
    for width in [100u16, 120, 140, 160, 200] {
        app.focus = Pane::Trace;
        let shown = text_of(&draw(&mut app, width, 40));
        let lines: Vec<&str> = shown.lines().filter(|l| l.contains("t5 ")).collect();
        assert_eq!(lines.len(), 1, "{width}: the record is shown:\n{shown}");
        for line in lines {
            assert!(
                line.contains("a-very-long… /recall")
                    || line.contains("a-very-long-agent-name /recall"),
                "{width}: the agent runs into the action: {line}"
            );
        }
        app.focus = Pane::Memory;
        let shown = text_of(&draw(&mut app, width, 40));
        let row = shown
            .lines()
            .find(|l| l.contains("project_notes"))
            .unwrap()
            .to_string();
        assert!(
            row.contains("project_notes ") || row.contains("project_not…"),
            "{width}: the label runs into its codes: {row}"
        );
    }
}

#[test]
fn the_usage_bar_is_proportional() {
    let mut app = scene("dark");
    app.model.blocks[0].value = "x".repeat(2500);
    app.focus = Pane::Memory;
    app.zoom = true;
    let shown = text_of(&draw(&mut app, 120, 20));
    assert!(
        shown.contains("████░░░░ 2500"),
        "half full is half a bar:\n{shown}"
    );
}

#[test]
fn slash_searches_the_pane_that_has_the_keys() {
    let mut app = scene("dark");
    app.size = (180, 48);
    // Trace: a filter.
    app.focus = Pane::Trace;
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "fetch");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.trace.rows(&app.model).len(), 1);
    // Turns: the newest turn with the words.
    app.focus = Pane::Turns;
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "good morning");
    key(&mut app, KeyCode::Enter);
    assert!(
        app.notice
            .clone()
            .unwrap()
            .text
            .contains("found in sage's turn"),
        "{:?}",
        app.notice
    );
    // Memory: a search whose hit opens its block.
    app.focus = Pane::Memory;
    key(&mut app, KeyCode::Char('/'));
    typed(&mut app, "studio");
    let commands = key(&mut app, KeyCode::Enter);
    assert!(
        matches!(commands.as_slice(), [Command::Op(BackendOp::Host(partner::protocol::Op::Search { query }))] if query == "studio")
    );
    app.on_reply(Reply::Hits {
        query: "studio".into(),
        found: Ok((
            vec![partner::store::memory::vectors::HybridHit {
                hit: partner::store::memory::SearchHit {
                    domain: partner::store::memory::SearchDomain::Blocks,
                    id: 1,
                    agent: "anchor".into(),
                    label: Some("persona".into()),
                    snippet: "a small software studio".into(),
                    role: None,
                    rank: 1.0,
                    time: NOW,
                },
                score: 1.0 / 61.0,
                via: partner::store::memory::vectors::Via::Fts,
            }],
            None,
        )),
    });
    let commands = key(&mut app, KeyCode::Enter);
    assert_eq!(app.memory.agent.as_deref(), Some("anchor"));
    assert_eq!(app.memory.selected.as_deref(), Some("persona"));
    assert!(
        matches!(commands.as_slice(), [Command::Op(BackendOp::Host(partner::protocol::Op::Blocks { agent }))] if agent == "anchor")
    );
}

#[test]
fn filters_refuse_what_does_not_exist() {
    let mut app = scene("dark");
    key(&mut app, KeyCode::Char(':'));
    typed(&mut app, "filter verb teleport");
    key(&mut app, KeyCode::Enter);
    let notice = app.notice.clone().unwrap();
    assert!(
        notice.warning && notice.text.contains(":filter clear"),
        "{notice:?}"
    );
    assert_eq!(app.trace.verb, None);
}

#[test]
fn the_status_line_fits_and_reads_in_human_units() {
    let mut app = scene("dark");
    app.model.agents[0].next_pulse_at = Some(NOW + 895_000);
    app.warn("a very long notice ".repeat(20));
    let t = draw(&mut app, 80, 24);
    let mut rows = rows(&t);
    let status = rows.pop().unwrap();
    assert!(status.contains("anchor 14m"), "{status}");
    assert!(status.contains("? help"), "{status}");
    assert_eq!(
        unicode_width::UnicodeWidthStr::width(status.as_str()),
        80,
        "{status}"
    );
    // Too long for the bar: on lines of its own above it, three at most,
    // the last saying where it is whole.
    let above = rows.pop().unwrap();
    assert!(above.contains("… (N shows it whole)"), "{above}");
    assert!(rows.pop().unwrap().contains("a very long notice"));
}

#[test]
fn replay_plays_as_fast_as_asked() {
    let app = scene("dark");
    let records: Vec<_> = (1..=200)
        .map(|i| {
            record(
                i,
                "sage",
                "/calc 1",
                partner::store::trace::TraceOutcome::Executed,
                "1",
            )
        })
        .collect();
    let mut replay = ReplayPane::new("t.jsonl".into(), records);
    replay.state.playing = true;
    replay.state.speed = 64.0;
    assert!(replay.advance(1.0));
    assert_eq!(replay.state.step, 64, "64 steps in a second at 64×");
    replay.state.speed = 8.0;
    // Many small ticks add up.
    for _ in 0..10 {
        replay.advance(0.1);
    }
    assert_eq!(replay.state.step, 72);
    let _ = app;
}

#[test]
fn vim_half_pages_and_files_for_keymaps_and_themes() {
    let vim = partner::tui::keymap::Keymap::builtin("vim").unwrap();
    let chord = |s: &str| vec![s.parse::<partner::tui::keymap::KeyChord>().unwrap()];
    assert_eq!(
        vim.lookup(&chord("<C-d>")),
        partner::tui::keymap::Lookup::Action(partner::tui::keymap::Action::HalfPageDown)
    );
    assert_eq!(
        vim.lookup(&chord("<C-u>")),
        partner::tui::keymap::Lookup::Action(partner::tui::keymap::Action::HalfPageUp)
    );
    let dir = tempfile::tempdir().unwrap();
    let keymap = dir.path().join("my-keys.toml");
    std::fs::write(
        &keymap,
        "[[bind]]\nkeys = \"y\"\naction = \"approve\"\ndesc = \"yes\"\n",
    )
    .unwrap();
    let loaded = partner::tui::driver::load_keymap(Some(keymap.to_str().unwrap()), None).unwrap();
    assert_eq!(
        loaded.lookup(&chord("y")),
        partner::tui::keymap::Lookup::Action(partner::tui::keymap::Action::Approve)
    );
    let theme = dir.path().join("mine.toml");
    std::fs::write(&theme, "[ui]\ntext = \"#ff0000\"\n").unwrap();
    let loaded = partner::tui::driver::load_theme(Some(theme.to_str().unwrap()), None).unwrap();
    assert_eq!(loaded.name, "mine");
    assert!(
        partner::tui::driver::load_theme(Some("nope/missing.toml"), None)
            .unwrap_err()
            .contains("cannot read the theme")
    );
}

#[test]
fn plain_words_at_the_command_line_are_offered_as_an_action() {
    let mut app = scene("dark");
    typed(&mut app, ":remember that the launch moved to Monday");
    let commands = key(&mut app, KeyCode::Enter);
    assert!(commands.is_empty(), "nothing runs on the words alone");
    let screen = text_of(&draw(&mut app, 120, 30));
    assert!(
        screen.contains("/recall insert \"the launch moved to Monday\""),
        "{screen}"
    );
    assert!(screen.contains("Enter runs it"), "{screen}");
    // Enter runs what is on the line, as the agent in view.
    let commands = key(&mut app, KeyCode::Enter);
    assert!(
        commands.iter().any(|c| matches!(
            c,
            Command::Op(partner::tui::backend::BackendOp::Host(partner::protocol::Op::Run { text, .. }))
                if text == "/recall insert \"the launch moved to Monday\""
        )),
        "{commands:?}"
    );
    // Words that read as nothing are an error, as before.
    typed(&mut app, ":dance a little");
    key(&mut app, KeyCode::Enter);
    assert!(text_of(&draw(&mut app, 120, 30)).contains("unknown command"));
}

#[test]
fn learned_phrasings_are_listed_and_forgotten() {
    use partner::store::memory::learned::LearnedRule;
    use partner::tui::backend::{BackendOp, Reply};
    let mut app = scene("dark");
    typed(&mut app, ":learned");
    let asked = key(&mut app, KeyCode::Enter);
    assert!(
        asked.iter().any(|c| matches!(
            c,
            Command::Op(BackendOp::Host(partner::protocol::Op::Learned))
        )),
        "{asked:?}"
    );
    app.on_reply(Reply::LearnedRules(vec![LearnedRule {
        id: 4,
        rule: String::new(),
        words: "jot down buy milk".into(),
        action: "/recall insert \"buy milk\"".into(),
        created_at: NOW,
    }]));
    let shown = text_of(&draw(&mut app, 120, 30));
    assert!(
        shown.contains("\"jot down buy milk\"  →  /recall insert \"buy milk\""),
        "{shown}"
    );
    key(&mut app, KeyCode::Char('x'));
    assert!(text_of(&draw(&mut app, 120, 30)).contains("Forget that"));
    let forgot = key(&mut app, KeyCode::Char('y'));
    assert!(
        forgot.iter().any(|c| matches!(
            c,
            Command::Op(BackendOp::Host(partner::protocol::Op::Forget { id: 4 }))
        )),
        "{forgot:?}"
    );
}

/// The shortest times of frames of `a` and `b` (200×60), drawn in turns
/// so that the machine's load weighs on both alike.
fn frame_times(a: &App, b: &App) -> (std::time::Duration, std::time::Duration) {
    let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
    let mut time = |app: &App| {
        let start = std::time::Instant::now();
        terminal
            .draw(|f| partner::tui::app::render(app, f))
            .unwrap();
        start.elapsed()
    };
    let mut best = (std::time::Duration::MAX, std::time::Duration::MAX);
    for _ in 0..9 {
        best.0 = best.0.min(time(a));
        best.1 = best.1.min(time(b));
    }
    best
}

/// A frame walks a window of the history, not all of it: with a hundred
/// times more turns (requests waiting, the trace pane filtered), a frame
/// takes about as long.
#[test]
fn a_frame_costs_the_same_whatever_the_history_holds() {
    let load = |n: usize| {
        let mut app = scene("dark");
        let text = "Checking the notes.\n/recall project_notes\nDone.";
        for i in 0..n {
            let agent = ["sage", "anchor", "scout"][i % 3];
            turn(
                &mut app,
                agent,
                PromptKind::Pulse,
                text,
                &[(
                    "/recall project_notes",
                    "/recall read project_notes",
                    executed(agent, "/recall read project_notes", "project_notes (v1)"),
                )],
                NOW - 1000,
            );
        }
        app.trace.agent = Some("scout".into());
        app
    };
    let small = load(1_000);
    let large = load(100_000);
    assert!(
        !small.model.pending.is_empty(),
        "requests wait in the scene"
    );
    assert!(
        large.model.turns.len() > 50_000,
        "{}",
        large.model.turns.len()
    );
    let (a, b) = frame_times(&small, &large);
    println!("frame with 1,000 turns {a:?}, with 100,000 turns {b:?}");
    assert!(
        b < a * 4 / 3,
        "a frame with 100× the turns took {b:?} against {a:?}"
    );
}

/// An agent another daemon runs shows where; one no daemon is known to
/// run says so, never passing for idle.
#[test]
fn an_agent_run_elsewhere_shows_its_daemon_or_that_none_is_known() {
    use partner::runtime::RunState;
    let mut app = scene("dark");
    let apply = |app: &mut App, agent: &str, host: Option<&str>| {
        app.model.apply(
            &Event::AgentState {
                agent: agent.into(),
                state: RunState::Elsewhere,
                next_pulse_at: None,
                host: host.map(str::to_string),
            },
            NOW,
        );
    };
    apply(&mut app, "sage", Some("h2"));
    apply(&mut app, "scout", None);
    let screen = text_of(&draw(&mut app, 160, 30));
    let status = screen.lines().last().unwrap().to_string();
    assert!(status.contains("◇ sage@h2"), "{status}");
    assert!(status.contains("◇ scout@?"), "{status}");
    assert!(!status.contains("○ scout"), "{status}");
}
