//! The console's driver: sets up the terminal (and always restores it — on
//! quit, on error and on panic), reads keys and mouse on a thread, applies
//! runtime events, carries out the app's intents off the UI task, and
//! redraws on demand at a capped frame rate.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event as TermEvent};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use tokio::sync::mpsc;

use super::app::{App, Intent, Pane, ReplayState};
use super::command::AgentControl;
use super::keymap::Keymap;
use super::model::AgentRow;
use super::theme::{ColorDepth, Theme};
use crate::agent::{Event, RuntimeHandle};
use crate::exec::{Executor, TurnContext};
use crate::memory::{Block, BlockVersion, SearchHit, blocks};
use crate::permission::{Authority, PendingRequest};
use crate::trace::{BlockSpec, TraceInput, TraceRecord};

/// Settings of the console.
#[derive(Debug, Clone, Default)]
pub struct ConsoleSettings {
    /// Theme name (`dark`, `light`, `high-contrast`).
    pub theme: Option<String>,
    /// Keymap name (`default`, `vim`, `emacs`).
    pub keymap: Option<String>,
    /// Ring the bell when a request arrives for the partner.
    pub bell: bool,
    /// A trace to open in the replay pane at start.
    pub replay: Option<TraceInput>,
}

/// Loads the theme: the named built-in, with the user's `theme.toml` from
/// the config directory on top, adapted to the terminal's colours.
pub fn load_theme(name: Option<&str>, config_dir: Option<&Path>) -> Result<Theme, String> {
    let name = name.unwrap_or("dark");
    let mut theme = Theme::builtin(name)
        .ok_or_else(|| format!("there is no theme '{name}' (dark, light, high-contrast)"))?;
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

/// Loads the keymap: the named built-in, with the user's `keymap.toml` on top.
pub fn load_keymap(name: Option<&str>, config_dir: Option<&Path>) -> Result<Keymap, String> {
    let name = name.unwrap_or("default");
    let mut keymap = Keymap::builtin(name)
        .ok_or_else(|| format!("there is no keymap '{name}' (default, vim, emacs)"))?;
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

/// Puts the terminal back: raw mode off, main screen, no mouse capture.
pub fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
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

/// Results of background work, sent back to the UI task.
enum Loaded {
    Pending(Vec<PendingRequest>, HashMap<String, String>),
    Blocks(String, Vec<Block>),
    History(Vec<BlockVersion>),
    Hits(Vec<SearchHit>),
    Trace(Vec<TraceRecord>, u64),
    Replay(ReplayState),
    Verified(Option<crate::exec::replay::Divergence>),
    ReplayMemory(usize, Vec<Block>),
    Notice(String),
    Status(Vec<AgentRow>),
}

/// The memory change a request would make, as a diff (memory writes only):
/// the verb registry says which block it writes and what it would leave.
fn preview(executor: &Executor, request: &PendingRequest) -> Option<String> {
    let action = executor
        .parser_for(&request.agent)
        .parse(&request.canonical)
        .actions
        .into_iter()
        .next()?;
    let handler = executor.registry().handler(&action.verb)?;
    let write = handler.traits(&action).writes_block?;
    let block = blocks::get(&executor.store().read(), &request.agent, &write.label).ok()??;
    let new = handler.preview(&action, &block)?;
    Some(blocks::diff(
        &write.label,
        &block.value,
        &new,
        block.version,
        block.version + 1,
    ))
}

fn load_pending(executor: &Executor) -> Loaded {
    let pending = executor.pending().unwrap_or_default();
    let previews = pending
        .iter()
        .filter_map(|r| preview(executor, r).map(|d| (r.id.clone(), d)))
        .collect();
    Loaded::Pending(pending, previews)
}

/// Runs the console until the partner quits.
pub async fn run(
    handle: RuntimeHandle,
    mut app: App,
    settings: ConsoleSettings,
) -> std::io::Result<()> {
    // The terminal is given back only when the console itself (on this
    // thread) panics. A contained panic is an error value already; a panic
    // in a background task is kept for the status line instead of being
    // printed over the screen, and the console carries on.
    let console_thread = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if crate::isolate::is_contained() {
            return;
        }
        if std::thread::current().id() != console_thread {
            crate::isolate::note_background_panic(info.to_string());
            return;
        }
        restore_terminal();
        previous(info);
    }));
    enable_raw_mode()?;
    execute!(std::io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
    let _guard = TerminalGuard;
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.clear()?;

    let (input_tx, mut input_rx) = mpsc::unbounded_channel::<TermEvent>();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_reader = Arc::clone(&stop);
    std::thread::spawn(move || {
        while !stop_reader.load(Ordering::Relaxed) {
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

    let (loaded_tx, mut loaded_rx) = mpsc::unbounded_channel::<Loaded>();
    let executor = Arc::clone(handle.executor());
    let spawn_load = |f: Box<dyn FnOnce(&Executor) -> Loaded + Send>| {
        let executor = Arc::clone(&executor);
        let tx = loaded_tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(f(&executor));
        });
    };
    let mut events = handle.subscribe();
    // Where every agent stands now; changes arrive as events from here on.
    let wall = crate::clock::SystemClock.now_ms_public();
    let rows = handle
        .status()
        .await
        .into_iter()
        .map(|s| AgentRow {
            name: s.name,
            state: s.state,
            next_pulse_at: s.next_pulse.map(|d| crate::clock::after(wall, d)),
        })
        .collect();
    let _ = loaded_tx.send(Loaded::Status(rows));
    // The last trace record shown: new ones are read from the database.
    let mut trace_offset = 0u64;
    let load_trace = |after: u64| -> Box<dyn FnOnce(&Executor) -> Loaded + Send> {
        Box::new(move |ex| {
            let read = crate::trace::store::since(&ex.store().read(), after, 100_000);
            match read {
                Ok((records, _)) => {
                    let next = records.last().map_or(after, |r| r.seq);
                    Loaded::Trace(records, next)
                }
                Err(_) => Loaded::Trace(Vec::new(), after),
            }
        })
    };
    spawn_load(Box::new(load_pending));
    spawn_load(load_trace(0));
    if let Some(input) = settings.replay.clone() {
        spawn_load(Box::new(move |_| open_replay(input)));
    }
    let mut memory_loaded = false;
    let mut dirty = true;
    let mut last_draw = Instant::now() - Duration::from_secs(1);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut pending_dirty = false;
    let mut trace_dirty = false;
    let mut last_step = Instant::now();
    let mut replay_requested: Option<usize> = None;

    loop {
        if dirty && last_draw.elapsed() >= Duration::from_millis(16) {
            app.now = crate::clock::SystemClock.now_ms_public();
            terminal.draw(|frame| super::view::render(&app, frame))?;
            last_draw = Instant::now();
            dirty = false;
        }
        let mut intents = Vec::new();
        tokio::select! {
            input = input_rx.recv() => {
                let Some(input) = input else { break };
                let size = terminal.size().map(|s| Rect::new(0, 0, s.width, s.height)).unwrap_or_default();
                match input {
                    TermEvent::Key(key) if key.kind == event::KeyEventKind::Press => intents = app.on_key(key),
                    TermEvent::Mouse(mouse) => intents = app.on_mouse(mouse, size),
                    _ => {}
                }
                dirty = true;
            }
            event = events.recv() => {
                match event {
                    Ok(event) => {
                        let now = crate::clock::SystemClock.now_ms_public();
                        if app.model.apply(&event, now) && settings.bell {
                            intents.push(Intent::Bell);
                        }
                        match &event {
                            Event::PermissionRequested { .. } | Event::PermissionDecided { .. } => pending_dirty = true,
                            Event::ActionExecuted { .. } => {
                                pending_dirty = true;
                                trace_dirty = true;
                            }
                            Event::MemoryChanged { agent, .. } if Some(agent.clone()) == app.memory_agent() => {
                                intents.push(Intent::LoadMemory { agent: agent.clone() });
                            }
                            _ => {}
                        }
                        if !memory_loaded && let Some(agent) = app.memory_agent() {
                            memory_loaded = true;
                            intents.push(Intent::LoadMemory { agent });
                        }
                        dirty = true;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        pending_dirty = true;
                        trace_dirty = true;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
            loaded = loaded_rx.recv() => {
                if let Some(loaded) = loaded {
                    match loaded {
                        Loaded::Pending(pending, previews) => {
                            app.model.pending = pending;
                            app.model.previews = previews;
                            app.pending_sel = app.pending_sel.min(app.model.pending.len().saturating_sub(1));
                        }
                        Loaded::Blocks(agent, list) => {
                            if Some(agent.clone()) == app.memory_agent() {
                                app.model.blocks = list;
                                app.block_sel = app.block_sel.min(app.model.blocks.len().saturating_sub(1));
                                if let Some(b) = app.selected_block() {
                                    intents.push(Intent::LoadHistory { agent, label: b.label.clone() });
                                }
                            }
                        }
                        Loaded::History(history) => app.model.history = history,
                        Loaded::Hits(hits) => app.model.hits = hits,
                        Loaded::Trace(records, next) => {
                            trace_offset = next;
                            app.model.trace.extend(records);
                        }
                        Loaded::Replay(state) => {
                            let records = state.records.clone();
                            app.replay = Some(state);
                            app.focus = Pane::Replay;
                            spawn_load(Box::new(move |ex| match crate::exec::replay::verify_records_with(&records, Some(ex.registry().table())) {
                                Ok((_, divergence)) => Loaded::Verified(divergence),
                                Err(e) => Loaded::Notice(format!("verification failed: {e}")),
                            }));
                        }
                        Loaded::Verified(divergence) => {
                            if let Some(r) = &mut app.replay {
                                r.divergence = divergence;
                                r.verified = true;
                            }
                        }
                        Loaded::ReplayMemory(step, list) => app.replay_memory = Some((step, list)),
                        Loaded::Notice(text) => app.notice = Some(text),
                        Loaded::Status(rows) => {
                            for row in rows {
                                match app.model.agents.iter_mut().find(|a| a.name == row.name) {
                                    Some(a) => *a = row,
                                    None => app.model.agents.push(row),
                                }
                            }
                            app.model.agents.sort_by(|a, b| a.name.cmp(&b.name));
                        }
                    }
                    dirty = true;
                }
            }
            _ = tick.tick() => {
                if pending_dirty {
                    pending_dirty = false;
                    spawn_load(Box::new(load_pending));
                }
                if trace_dirty {
                    trace_dirty = false;
                    spawn_load(load_trace(trace_offset));
                }
                if let Some(panic) = crate::isolate::take_background_panics().pop() {
                    app.notice = Some(format!("internal error in a background task (please report it): {panic}"));
                    dirty = true;
                }
                // Agents' states arrive as events; the tick redraws (below)
                // so countdowns move.
                if let Some(r) = &mut app.replay
                    && r.playing
                    && last_step.elapsed().as_secs_f64() >= 1.0 / r.speed
                {
                    last_step = Instant::now();
                    if r.step < r.records.len() {
                        r.step += 1;
                    } else {
                        r.playing = false;
                    }
                    dirty = true;
                }
            }
        }
        // Memory as at the replay's step, when the step moved.
        if let (Some(replay), Some(agent)) = (&app.replay, app.memory_agent()) {
            let step = replay.step;
            if app.replay_memory.as_ref().is_none_or(|(s, _)| *s != step)
                && replay_requested != Some(step)
            {
                replay_requested = Some(step);
                let records = replay.records.clone();
                spawn_load(Box::new(move |ex| {
                    let verbs = Some(ex.registry().table());
                    match crate::exec::replay::memory_at(&records, step, &agent, verbs) {
                        Ok(list) => Loaded::ReplayMemory(step, list),
                        Err(e) => {
                            Loaded::Notice(format!("cannot rebuild memory at step {step}: {e}"))
                        }
                    }
                }));
            }
        }
        for intent in intents {
            match intent {
                Intent::Quit => {
                    stop.store(true, Ordering::Relaxed);
                    return Ok(());
                }
                Intent::Bell => {
                    let mut out = std::io::stdout();
                    let _ = out.write_all(b"\x07");
                    let _ = out.flush();
                }
                Intent::Decide { id, decision } => {
                    let handle = handle.clone();
                    let tx = loaded_tx.clone();
                    let name = decision.name().replace('_', " ");
                    tokio::spawn(async move {
                        let notice = match handle.decide(&id, decision).await {
                            Ok(()) => format!("{name}: {id}"),
                            Err(e) => e,
                        };
                        let _ = tx.send(Loaded::Notice(notice));
                    });
                    pending_dirty = true;
                }
                Intent::ApproveEdited { id, text } => {
                    let handle = handle.clone();
                    spawn_load(Box::new(move |ex| {
                        let notice = match ex.approve_edited(&id, &text, &Authority::Partner) {
                            Ok(report) => format!("approved the edited {id}: {}", report.summary()),
                            Err(e) => e.to_string(),
                        };
                        // The agent that asked hears of it now, not at the next sweep.
                        handle.sync();
                        Loaded::Notice(notice)
                    }));
                }
                Intent::SaveBlock {
                    agent,
                    label,
                    value,
                } => {
                    let tx = loaded_tx.clone();
                    spawn_load(Box::new(move |ex| {
                        let existing = blocks::get(&ex.store().conn(), &agent, &label)
                            .ok()
                            .flatten();
                        let Some(b) = existing else {
                            return Loaded::Notice(format!("block {label} no longer exists"));
                        };
                        let spec = BlockSpec {
                            agent: agent.clone(),
                            label: label.clone(),
                            kind: b.kind,
                            permission: b.permission,
                            char_limit: b.char_limit,
                            description: b.description,
                            value,
                            shared: b.shared,
                        };
                        let notice = match ex.partner_set_block(spec) {
                            Ok(report) => format!("saved: {}", report.text),
                            Err(e) => format!("not saved: {e}"),
                        };
                        let list =
                            blocks::list(&ex.store().conn(), Some(&agent)).unwrap_or_default();
                        let _ = tx.send(Loaded::Blocks(agent, list));
                        Loaded::Notice(notice)
                    }));
                    app.draft = None;
                    trace_dirty = true;
                }
                Intent::UndoBlock { agent, label } => {
                    let tx = loaded_tx.clone();
                    spawn_load(Box::new(move |ex| {
                        let notice = match ex.partner_undo(&agent, &label) {
                            Ok(report) => report.text,
                            Err(e) => e.to_string(),
                        };
                        let list =
                            blocks::list(&ex.store().conn(), Some(&agent)).unwrap_or_default();
                        let _ = tx.send(Loaded::Blocks(agent, list));
                        Loaded::Notice(notice)
                    }));
                    trace_dirty = true;
                }
                Intent::LoadMemory { agent } => spawn_load(Box::new(move |ex| {
                    let list = blocks::list(&ex.store().conn(), Some(&agent)).unwrap_or_default();
                    Loaded::Blocks(agent, list)
                })),
                Intent::LoadHistory { agent, label } => spawn_load(Box::new(move |ex| {
                    Loaded::History(
                        blocks::history(&ex.store().conn(), &agent, &label).unwrap_or_default(),
                    )
                })),
                Intent::Search(query) => spawn_load(Box::new(move |ex| {
                    let q = crate::memory::SearchQuery::new(&query, None);
                    Loaded::Hits(
                        crate::memory::search::search(&ex.store().conn(), &q).unwrap_or_default(),
                    )
                })),
                Intent::SendMessage { agent, text } => {
                    handle.send_message(&agent, &text);
                    app.notice = Some(format!("sent to {agent}"));
                }
                Intent::Control { agents, control } => {
                    app.notice = Some(control_agents(&handle, &agents, control));
                }
                Intent::RunAction(text) => {
                    app.notice = Some(run_action(&app, &text, &loaded_tx, &handle));
                }
                Intent::OpenTrace(path) => {
                    let input = TraceInput::guess(&path);
                    spawn_load(Box::new(move |_| open_replay(input)))
                }
            }
            dirty = true;
        }
    }
    stop.store(true, Ordering::Relaxed);
    Ok(())
}

/// Pulses, halts or resumes agents; returns the notice for the status line.
fn control_agents(handle: &RuntimeHandle, agents: &[String], control: AgentControl) -> String {
    for agent in agents {
        match control {
            AgentControl::PulseNow => handle.pulse_now(agent),
            AgentControl::SetPulse(every) => handle.set_pulse(agent, every),
            AgentControl::Halt => handle.halt(agent, "halted by the partner"),
            AgentControl::Resume => handle.resume(agent),
        }
    }
    let who = agents.join(", ");
    match control {
        AgentControl::PulseNow => format!("pulsed {who}"),
        AgentControl::SetPulse(every) => {
            format!(
                "{who} now pulses every {}",
                humantime::format_duration(every)
            )
        }
        AgentControl::Halt => format!("halted {who}"),
        AgentControl::Resume => format!("resumed {who}"),
    }
}

/// Runs a dialect action typed at the command line as the agent in view, on a
/// blocking thread; its summary arrives later as a notice.
fn run_action(
    app: &App,
    text: &str,
    tx: &mpsc::UnboundedSender<Loaded>,
    handle: &RuntimeHandle,
) -> String {
    let Some(agent) = app.agent_filter.clone().or_else(|| app.memory_agent()) else {
        return "no agent to act for: pick one with F or in the memory pane".into();
    };
    let handle = handle.clone();
    let (text, tx) = (text.to_string(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let mut ctx = TurnContext::new(&agent, "partner", "partner");
        let report = handle.executor().run_turn(&mut ctx, &text);
        // Requests it made are announced now.
        handle.sync();
        let summary = report
            .actions
            .iter()
            .map(|r| r.summary())
            .chain(report.errors.iter().map(|e| e.message()))
            .collect::<Vec<_>>()
            .join("; ");
        let _ = tx.send(Loaded::Notice(format!("as {agent}: {summary}")));
    });
    "running…".into()
}

/// Reads a trace for the replay pane (on a loader thread).
fn open_replay(input: TraceInput) -> Loaded {
    match input.load() {
        Ok((records, _)) => Loaded::Replay(ReplayState {
            path: input.path().to_path_buf(),
            records,
            step: 0,
            playing: false,
            speed: 2.0,
            divergence: None,
            verified: false,
        }),
        Err(e) => Loaded::Notice(format!("cannot open the trace: {e}")),
    }
}
