//! Regenerates the pictures in `screenshots/` from a live run of the
//! built-in demo: the console's app is fed the runtime's real events and
//! the backend's real replies (as in a terminal), each scene is rendered by
//! the real drawing code into a ratatui buffer, turned into ANSI text, then
//! SVG (anstyle-svg), then PNG (resvg).
//!
//! ```sh
//! cargo run --example screenshots
//! ```

use std::fmt::Write as _;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::time::Duration;

use partner::console::ConsoleBackend;
use partner::runtime::Event;
use partner::tui::app::{App, Command};
use partner::tui::backend::{Backend, BackendOp, Reply};
use partner::tui::panes::Pane;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use tokio::sync::{broadcast, mpsc};

/// An SGR parameter for a colour (foreground when `fg`).
fn sgr(color: Color, fg: bool) -> Option<String> {
    let base = if fg { 30 } else { 40 };
    Some(match color {
        Color::Reset => return None,
        Color::Rgb(r, g, b) => format!("{};2;{r};{g};{b}", if fg { 38 } else { 48 }),
        Color::Indexed(i) => format!("{};5;{i}", if fg { 38 } else { 48 }),
        Color::Black => format!("{}", base),
        Color::Red => format!("{}", base + 1),
        Color::Green => format!("{}", base + 2),
        Color::Yellow => format!("{}", base + 3),
        Color::Blue => format!("{}", base + 4),
        Color::Magenta => format!("{}", base + 5),
        Color::Cyan => format!("{}", base + 6),
        Color::Gray => format!("{}", base + 7),
        Color::DarkGray => format!("{}", base + 60),
        Color::LightRed => format!("{}", base + 61),
        Color::LightGreen => format!("{}", base + 62),
        Color::LightYellow => format!("{}", base + 63),
        Color::LightBlue => format!("{}", base + 64),
        Color::LightMagenta => format!("{}", base + 65),
        Color::LightCyan => format!("{}", base + 66),
        Color::White => format!("{}", base + 67),
    })
}

/// The buffer as text with ANSI colour escapes.
fn ansi(buffer: &Buffer) -> String {
    let mut out = String::new();
    let area = buffer.area;
    for y in area.top()..area.bottom() {
        let mut last = String::new();
        for x in area.left()..area.right() {
            let cell = &buffer[(x, y)];
            let mut codes = vec!["0".to_string()];
            if cell.modifier.contains(Modifier::BOLD) {
                codes.push("1".into());
            }
            if cell.modifier.contains(Modifier::ITALIC) {
                codes.push("3".into());
            }
            if cell.modifier.contains(Modifier::UNDERLINED) {
                codes.push("4".into());
            }
            let (fg, bg) = if cell.modifier.contains(Modifier::REVERSED) {
                (cell.bg, cell.fg)
            } else {
                (cell.fg, cell.bg)
            };
            codes.extend(sgr(fg, true));
            codes.extend(sgr(bg, false));
            let code = codes.join(";");
            if code != last {
                // One escape per attribute: converters read these most reliably.
                for part in &codes {
                    let _ = write!(out, "\x1b[{part}m");
                }
                last = code;
            }
            out.push_str(cell.symbol());
        }
        out.push_str("\x1b[0m\n");
    }
    out
}

fn render(app: &mut App, width: u16, height: u16) -> String {
    app.size = (width, height);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("a test terminal");
    terminal
        .draw(|f| partner::tui::app::render(app, f))
        .expect("the frame renders");
    ansi(terminal.backend().buffer())
}

/// The theme's background and text colours, for the picture's margins.
fn colours(app: &App) -> (anstyle::RgbColor, anstyle::RgbColor) {
    let rgb = |c: Option<Color>, fallback: (u8, u8, u8)| match c {
        Some(Color::Rgb(r, g, b)) => anstyle::RgbColor(r, g, b),
        Some(Color::Black) => anstyle::RgbColor(0, 0, 0),
        Some(Color::White) => anstyle::RgbColor(255, 255, 255),
        _ => anstyle::RgbColor(fallback.0, fallback.1, fallback.2),
    };
    (
        rgb(app.theme.style("ui.background").bg, (0x1e, 0x1e, 0x2e)),
        rgb(app.theme.style("ui.text").fg, (0xcd, 0xd6, 0xf4)),
    )
}

fn save(name: &str, app: &App, ansi_text: &str) {
    let (bg, fg) = colours(app);
    let svg = anstyle_svg::Term::new()
        .bg_color(bg.into())
        .fg_color(fg.into())
        .render_svg(ansi_text);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("screenshots");
    std::fs::create_dir_all(&dir).expect("screenshots/ can be created");
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    options
        .fontdb_mut()
        .set_monospace_family("DejaVu Sans Mono");
    let tree = resvg::usvg::Tree::from_str(&svg, &options).expect("anstyle-svg writes valid SVG");
    let size = tree.size().to_int_size();
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("a non-empty picture");
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let path = dir.join(format!("{name}.png"));
    pixmap.save_png(&path).expect("the PNG is written");
    println!(
        "wrote {} ({}x{})",
        path.display(),
        size.width(),
        size.height()
    );
}

/// Renders `app` at a size and saves the picture.
fn shoot(name: &str, app: &mut App, width: u16, height: u16) {
    let text = render(app, width, height);
    save(name, app, &text);
}

fn key(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// The built-in demo, run live in this process: the console's app fed by
/// the runtime's real events and the backend's real replies, as in a
/// terminal, stopping once `done` says so (or after `limit`).
async fn live(
    app: &mut App,
    backend: &dyn Backend,
    events: &mut broadcast::Receiver<Event>,
    replies: &mut mpsc::UnboundedReceiver<Reply>,
    limit: Duration,
    done: impl Fn(&App) -> bool,
) {
    let clock = partner::core::clock::SystemClock;
    let started = std::time::Instant::now();
    let mut last = std::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while started.elapsed() < limit && !done(app) {
        let commands = tokio::select! {
            Ok(event) = events.recv() => app.on_event(&event),
            Some(reply) = replies.recv() => app.on_reply(reply),
            _ = tick.tick() => {
                let elapsed = last.elapsed().as_secs_f64();
                last = std::time::Instant::now();
                app.tick(clock.now_ms_public(), elapsed)
            }
        };
        for command in commands {
            if let Command::Op(op) = command {
                backend.send(op);
            }
        }
    }
}

#[tokio::main]
async fn main() {
    // A live run of the demo, shown as the console shows it.
    let dir = tempfile::tempdir().expect("a scratch directory");
    let db = dir.path().join("demo.db");
    let config = partner::runtime::demo_config().expect("the demo's config");
    let executor =
        partner::commands::open_constellation(&config, &db).expect("the demo's database");
    let (handle, _task) = partner::runtime::start(
        &config,
        executor,
        std::sync::Arc::new(partner::core::clock::TokioClock::now()),
    );
    let (tx, mut replies) = mpsc::unbounded_channel();
    let host = std::sync::Arc::new(partner::host::InProcess::new(handle.clone(), &config, &db));
    let verbs = std::sync::Arc::new(handle.executor().registry().table().clone());
    let backend = ConsoleBackend::new(host, verbs, tx);
    let mut events = backend.events();
    let mut app = App::new(
        "demo",
        "~/.local/share/partner/demo.db",
        partner::tui::theme::Theme::builtin("dark").expect("the dark theme"),
        partner::tui::keymap::Keymap::default_keymap(),
    );
    app.size = (180, 44);
    for op in [
        BackendOp::Host(partner::protocol::Op::Status),
        BackendOp::Host(partner::protocol::Op::Queue),
        BackendOp::Host(partner::protocol::Op::Trace { after: 0 }),
    ] {
        backend.send(op);
    }
    handle.send_message(
        partner::runtime::DEMO_OPENING.0,
        partner::runtime::DEMO_OPENING.1,
    );
    let waits_on_partner = |app: &App, n: usize| {
        app.model
            .pending
            .iter()
            .filter(|r| r.waiting_on().is_partner())
            .count()
            >= n
    };
    let limit = Duration::from_secs(60);
    live(&mut app, &backend, &mut events, &mut replies, limit, |a| {
        waits_on_partner(a, 1) && a.model.turns.len() >= 6
    })
    .await;
    shoot("console-turns", &mut app, 180, 44);

    // A memory write waiting on the partner, with the diff it would make.
    live(&mut app, &backend, &mut events, &mut replies, limit, |a| {
        a.model
            .pending
            .iter()
            .any(|r| a.model.previews.diffs.contains_key(&r.id))
    })
    .await;
    if let Some(r) = app
        .model
        .pending
        .iter()
        .find(|r| app.model.previews.diffs.contains_key(&r.id))
    {
        let id = r.id.clone();
        app.queue.select(&id);
    }
    app.focus = Pane::Pending;
    app.zoom = true;
    shoot("pending-diff", &mut app, 110, 20);
    app.zoom = false;

    // Approve what waits on the partner until the demo ends.
    let over = |a: &App| {
        !a.model.agents.is_empty()
            && a.model
                .agents
                .iter()
                .all(|x| x.state == partner::runtime::RunState::Halted)
    };
    let started = std::time::Instant::now();
    while !over(&app) && started.elapsed() < Duration::from_secs(90) {
        if app.held.is_none() && app.queue.selected_request(&app.model).is_some() {
            app.focus = Pane::Pending;
            for command in app.on_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE)) {
                if let Command::Op(op) = command {
                    backend.send(op);
                }
            }
        }
        live(
            &mut app,
            &backend,
            &mut events,
            &mut replies,
            Duration::from_millis(500),
            over,
        )
        .await;
    }
    live(
        &mut app,
        &backend,
        &mut events,
        &mut replies,
        Duration::from_secs(3),
        |_| false,
    )
    .await;

    app.focus = Pane::Trace;
    app.zoom = true;
    // A record the partner decided: its decision path in words.
    if let Some(r) = app
        .model
        .trace
        .iter()
        .rev()
        .find(|r| r.decision.decided_by.as_deref() == Some("partner"))
    {
        app.trace.selected = Some(r.id.clone());
    }
    shoot("trace", &mut app, 110, 16);
    app.zoom = false;

    app.focus = Pane::Memory;
    app.memory.agent = Some("sage".into());
    backend.send(BackendOp::Host(partner::protocol::Op::Blocks {
        agent: "sage".into(),
    }));
    live(
        &mut app,
        &backend,
        &mut events,
        &mut replies,
        Duration::from_secs(2),
        |_| false,
    )
    .await;
    key(&mut app, KeyCode::Char('i'));
    key(&mut app, KeyCode::End);
    for c in " Likes tea.".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    shoot("memory-editing", &mut app, 110, 26);
    key(&mut app, KeyCode::Esc);

    // The run's own trace, replayed.
    backend.send(BackendOp::OpenReplay(db.clone()));
    live(
        &mut app,
        &backend,
        &mut events,
        &mut replies,
        Duration::from_secs(10),
        |a| a.replay.as_ref().is_some_and(|r| r.state.verified),
    )
    .await;
    if let Some(r) = &mut app.replay {
        r.state.step = (r.state.records.len() / 2).max(1);
    }
    let asked = app.tick(partner::core::clock::SystemClock.now_ms_public(), 0.0);
    for command in asked {
        if let Command::Op(op) = command {
            backend.send(op);
        }
    }
    live(
        &mut app,
        &backend,
        &mut events,
        &mut replies,
        Duration::from_secs(3),
        |_| false,
    )
    .await;
    app.focus = Pane::Replay;
    app.notice = None;
    shoot("replay", &mut app, 180, 44);
    app.close_replay();

    app.theme = partner::tui::theme::Theme::builtin("light").expect("the light theme");
    app.focus = Pane::Turns;
    app.memory.drafts.clear();
    app.notice = None;
    shoot("console-light", &mut app, 180, 44);
    handle.shutdown();
}
