//! The console's driver: sets up the terminal (and always restores it — on
//! quit, on error, on panic, on SIGTERM and SIGHUP), reads keys, pastes
//! and the mouse on a thread, feeds runtime events and backend replies to
//! the app, sends the app's ops to the backend, and redraws on demand at a
//! capped frame rate. The app never waits on the database or the network.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event as TermEvent,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use super::app::{App, Command};
use super::backend::{Backend, BackendOp, Reply};
use super::keymap::Keymap;
use super::theme::{ColorDepth, Theme};
use partner_core::clock::Clock;

/// Settings of the console.
#[derive(Debug, Clone, Default)]
pub struct ConsoleSettings {
    /// Theme name (`dark`, `light`, `high-contrast`) or file.
    pub theme: Option<String>,
    /// Keymap name (`default`, `vim`, `emacs`) or file.
    pub keymap: Option<String>,
    /// Ring the bell when a request arrives for the partner.
    pub bell: bool,
    /// A trace to open in the replay pane at start (a database file or a
    /// JSON-lines export: the backend reads which).
    pub replay: Option<PathBuf>,
    /// Where the prompt's history is kept.
    pub history: Option<PathBuf>,
}

/// True when `name` is a path to a file rather than a built-in's name.
fn is_file(name: &str) -> bool {
    name.ends_with(".toml") || name.contains('/') || name.contains('\\')
}

/// Loads the theme: a built-in by name, or a theme file (a path); the
/// user's `theme.toml` from the config directory on top; adapted to the
/// terminal's colours.
pub fn load_theme(name: Option<&str>, config_dir: Option<&Path>) -> Result<Theme, String> {
    let name = name.unwrap_or("dark");
    let mut theme = if is_file(name) {
        let text = std::fs::read_to_string(name)
            .map_err(|e| format!("cannot read the theme {name}: {e}"))?;
        // A theme file on top of the dark theme: it may name only some roles.
        let mut theme = Theme::builtin("dark").ok_or("the built-in dark theme is missing")?;
        theme.overlay(&text, name).map_err(|e| e.to_string())?;
        theme.name = Path::new(name)
            .file_stem()
            .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned());
        theme
    } else {
        Theme::builtin(name).ok_or_else(|| {
            format!("there is no theme '{name}' (dark, light, high-contrast, or a .toml file)")
        })?
    };
    if let Some(dir) = config_dir {
        let path = dir.join("theme.toml");
        if let Ok(text) = std::fs::read_to_string(&path) {
            theme
                .overlay(&text, &path.display().to_string())
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(theme.with_depth(ColorDepth::detect()))
}

/// Loads the keymap: a built-in by name, or a keymap file (a path, on top
/// of the default keymap); the user's `keymap.toml` on top.
pub fn load_keymap(name: Option<&str>, config_dir: Option<&Path>) -> Result<Keymap, String> {
    let name = name.unwrap_or("default");
    let mut keymap = if is_file(name) {
        let text = std::fs::read_to_string(name)
            .map_err(|e| format!("cannot read the keymap {name}: {e}"))?;
        Keymap::default_keymap()
            .overridden_by(Keymap::from_toml(&text, name).map_err(|e| e.to_string())?)
    } else {
        Keymap::builtin(name).ok_or_else(|| {
            format!("there is no keymap '{name}' (default, vim, emacs, or a .toml file)")
        })?
    };
    if let Some(dir) = config_dir {
        let path = dir.join("keymap.toml");
        if let Ok(text) = std::fs::read_to_string(&path) {
            keymap = keymap.overridden_by(
                Keymap::from_toml(&text, &path.display().to_string()).map_err(|e| e.to_string())?,
            );
        }
    }
    Ok(keymap)
}

/// Puts the terminal back: raw mode off, main screen, no mouse capture, no
/// bracketed paste, the cursor shown.
pub fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// SIGTERM and SIGHUP, registered before the terminal is taken over (so
/// one that arrives at any moment after gives the terminal back); Ctrl-C in
/// raw mode arrives as a key.
struct StopSignals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl StopSignals {
    /// Registers the handlers now.
    fn register() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                streams: signal(SignalKind::terminate())
                    .ok()
                    .zip(signal(SignalKind::hangup()).ok()),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// Resolves when the process is asked to stop.
    async fn recv(&mut self) {
        #[cfg(unix)]
        if let Some((term, hup)) = &mut self.streams {
            tokio::select! {
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
            return;
        }
        std::future::pending::<()>().await;
    }
}

/// Runs the console over any backend, its replies arriving on `replies`.
pub async fn run_with(
    backend: &dyn Backend,
    mut replies: mpsc::UnboundedReceiver<Reply>,
    mut app: App,
    settings: ConsoleSettings,
) -> std::io::Result<()> {
    keep_terminal_on_background_panics();
    // Before the terminal changes: a stop request at any later moment
    // is caught and the terminal given back.
    let mut signals = StopSignals::register();
    let (mut terminal, _guard) = open_terminal()?;
    let stop = Arc::new(AtomicBool::new(false));
    let mut input_rx = read_input(Arc::clone(&stop));

    app.history = crate::prompt::History::load(settings.history.clone());
    let mut events = backend.events();
    let clock = partner_core::clock::SystemClock;
    app.now = clock.now_ms();
    first_reads(backend, &settings);
    let mut dirty = true;
    let mut last_draw = Instant::now() - Duration::from_secs(1);
    let mut last_tick = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(100));

    loop {
        if dirty && last_draw.elapsed() >= Duration::from_millis(16) {
            let size = terminal.size()?;
            app.size = (size.width, size.height);
            terminal.draw(|frame| super::app::render(&app, frame))?;
            last_draw = Instant::now();
            dirty = false;
        }
        let commands = tokio::select! {
            input = input_rx.recv() => input.map(|input| { dirty = true; on_input(&mut app, input) }),
            event = events.recv() => { dirty = true; on_runtime_event(&mut app, event) }
            reply = replies.recv() => reply.map(|reply| { dirty = true; app.on_reply(reply) }),
            _ = tick.tick() => {
                let elapsed = last_tick.elapsed().as_secs_f64();
                last_tick = Instant::now();
                Some(on_tick(&mut app, backend, clock.now_ms(), elapsed, &mut dirty))
            }
            () = signals.recv() => {
                flush_held(&mut app, backend);
                None
            }
        };
        // None: the input, the events or the replies ended, or a stop.
        let Some(commands) = commands else { break };
        if carry_out(commands, backend, &settings) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    Ok(())
}

/// The terminal in raw mode on the alternate screen, with mouse and
/// bracketed paste; the guard gives it back when dropped.
fn open_terminal() -> std::io::Result<(Terminal<CrosstermBackend<std::io::Stdout>>, TerminalGuard)>
{
    enable_raw_mode()?;
    execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )?;
    let guard = TerminalGuard;
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.clear()?;
    Ok((terminal, guard))
}

/// Where every agent stands now (changes then arrive as events), the
/// first reads, and the trace to replay if one was given.
fn first_reads(backend: &dyn Backend, settings: &ConsoleSettings) {
    for op in [
        BackendOp::Host(partner_protocol::Op::Status),
        BackendOp::Host(partner_protocol::Op::Queue),
        BackendOp::Host(partner_protocol::Op::Trace { after: 0 }),
    ] {
        backend.send(op);
    }
    if let Some(input) = settings.replay.clone() {
        backend.send(BackendOp::OpenReplay(input));
    }
}

/// A key, a paste or a mouse event from the terminal.
fn on_input(app: &mut App, input: TermEvent) -> Vec<Command> {
    match input {
        TermEvent::Key(key) if key.kind == event::KeyEventKind::Press => app.on_key(key),
        TermEvent::Paste(text) => app.on_paste(&text),
        TermEvent::Mouse(mouse) => app.on_mouse(mouse),
        _ => Vec::new(),
    }
}

/// An event of the constellation; `None` when the stream ended.
fn on_runtime_event(
    app: &mut App,
    event: Result<partner_protocol::Event, tokio::sync::broadcast::error::RecvError>,
) -> Option<Vec<Command>> {
    match event {
        Ok(event) => Some(app.on_event(&event)),
        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
            // Read everything again rather than miss a change.
            app.fresh.pending = true;
            app.fresh.trace = true;
            app.fresh.memory = true;
            Some(Vec::new())
        }
        Err(tokio::sync::broadcast::error::RecvError::Closed) => None,
    }
}

/// Asked to stop: decisions waiting out their undo window still go out.
fn flush_held(app: &mut App, backend: &dyn Backend) {
    for command in app.flush_held() {
        if let Command::Op(op) = command {
            backend.send(op);
        }
    }
}

/// The terminal is given back only when the console itself (on this
/// thread) panics. A contained panic is an error value already; a panic
/// in a background task is kept for the status line instead of being
/// printed over the screen, and the console carries on.
fn keep_terminal_on_background_panics() {
    let console_thread = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if partner_core::isolate::is_contained() {
            return;
        }
        if std::thread::current().id() != console_thread {
            partner_core::isolate::note_background_panic(info.to_string());
            return;
        }
        restore_terminal();
        previous(info);
    }));
}

/// The terminal's input, read on a thread of its own until `stop` is set
/// or the console stops listening.
fn read_input(stop: Arc<AtomicBool>) -> mpsc::UnboundedReceiver<TermEvent> {
    let (input_tx, input_rx) = mpsc::unbounded_channel::<TermEvent>();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if event::poll(Duration::from_millis(100)).unwrap_or(false) {
                match event::read() {
                    Ok(e) => {
                        if input_tx.send(e).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        }
    });
    input_rx
}

/// A tick: the connection's state, the clock, a background panic said;
/// `dirty` when the screen changed (countdowns move every second).
fn on_tick(
    app: &mut App,
    backend: &dyn Backend,
    now: partner_core::clock::Millis,
    elapsed: f64,
    dirty: &mut bool,
) -> Vec<Command> {
    let connection = backend.connection();
    *dirty |= connection != app.connection;
    app.connection = connection;
    let commands = app.tick(now, elapsed);
    if let Some(panic) = partner_core::isolate::take_background_panics().pop() {
        app.warn(format!(
            "internal error in a background task (please report it): {panic}"
        ));
    }
    *dirty |= !commands.is_empty() || app.now / 1000 != (app.now - 100) / 1000;
    commands
}

/// Carries out what the app asked: ops to the backend, the bell, a copy
/// to the clipboard; true when it asked to quit.
fn carry_out(commands: Vec<Command>, backend: &dyn Backend, settings: &ConsoleSettings) -> bool {
    for command in commands {
        match command {
            Command::Op(op) => backend.send(op),
            Command::Bell if settings.bell => {
                let mut out = std::io::stdout();
                let _ = out.write_all(b"\x07");
                let _ = out.flush();
            }
            Command::Bell => {}
            Command::Copy(text) => {
                let _ = crossterm::execute!(
                    std::io::stdout(),
                    crossterm::clipboard::CopyToClipboard::to_clipboard_from(text)
                );
            }
            Command::Quit => return true,
        }
    }
    false
}
