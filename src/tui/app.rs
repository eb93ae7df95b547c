//! [`App`]: the console's state and its reaction to keys and mouse. Keys go
//! through the keymap to actions; actions change the view or produce
//! [`Intent`]s — things that touch the runtime or the database — which the
//! driver carries out off the UI thread and answers with new data.

use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Constraint, Direction, Layout, Position, Rect};
use ratatui_textarea::TextArea;

use super::command::{AgentControl, ConsoleCommand, parse_command};
use super::highlight::DialectHighlighter;
use super::keymap::{Action, KeyChord, Keymap, Lookup};
use super::model::Model;
use super::theme::Theme;
use crate::exec::replay::Divergence;
use crate::permission::Decision;
use crate::trace::TraceRecord;

/// The panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Agents' turns as they stream.
    Turns,
    /// The pending queue.
    Pending,
    /// Memory blocks.
    Memory,
    /// Executed actions.
    Trace,
    /// A trace being replayed.
    Replay,
}

impl Pane {
    /// The pane's title.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Turns => "Turns",
            Pane::Pending => "Pending",
            Pane::Memory => "Memory",
            Pane::Trace => "Trace",
            Pane::Replay => "Replay",
        }
    }
}

/// Something the driver must do for the app.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// Decide a request as the partner.
    Decide {
        /// Request id.
        id: String,
        /// The decision.
        decision: Decision,
    },
    /// Replace a request's action with an edited one and approve that.
    ApproveEdited {
        /// Request id.
        id: String,
        /// The edited action.
        text: String,
    },
    /// Save a block as the partner.
    SaveBlock {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
        /// New value.
        value: String,
    },
    /// Undo a block's last change.
    UndoBlock {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
    },
    /// Load an agent's blocks.
    LoadMemory {
        /// Agent.
        agent: String,
    },
    /// Load a block's history.
    LoadHistory {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
    },
    /// Search memory.
    Search(String),
    /// Send the partner's message to an agent.
    SendMessage {
        /// Agent.
        agent: String,
        /// Text.
        text: String,
    },
    /// Pulse, halt or resume agents (`:pulse anchor`, `:halt`).
    Control {
        /// The agents.
        agents: Vec<String>,
        /// What to do.
        control: AgentControl,
    },
    /// Run a dialect action typed at the command line, as the agent in view.
    RunAction(String),
    /// Open a trace file for replay.
    OpenTrace(PathBuf),
    /// Ring the terminal bell.
    Bell,
    /// Leave.
    Quit,
}

/// What a one-line input is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputPurpose {
    /// A reason to deny this request.
    DenyReason(String),
    /// A command line.
    Command,
    /// A memory search.
    Search,
    /// A message to an agent.
    Message(String),
}

/// What the multi-line editor is editing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditTarget {
    /// A memory block.
    Block {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
    },
    /// A pending request's action.
    Action {
        /// Request id.
        id: String,
    },
}

/// What covers the panes.
#[derive(Debug, Clone, Default)]
pub enum Overlay {
    /// Nothing.
    #[default]
    None,
    /// The key help, generated from the keymap.
    Help,
    /// A one-line input.
    Input {
        /// What for.
        purpose: InputPurpose,
        /// The text so far.
        text: String,
    },
    /// The editor.
    Editor {
        /// What is edited.
        target: EditTarget,
        /// The text area.
        area: Box<TextArea<'static>>,
        /// The text it started with.
        original: String,
    },
    /// "Quit with an unsaved draft?"
    ConfirmQuit,
}

/// A trace opened for replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayState {
    /// The file.
    pub path: PathBuf,
    /// Its records.
    pub records: Vec<TraceRecord>,
    /// Current step (0 = before the first).
    pub step: usize,
    /// Playing.
    pub playing: bool,
    /// Steps per second while playing.
    pub speed: f64,
    /// Where a re-execution differed, if checked.
    pub divergence: Option<Divergence>,
    /// True once verification finished.
    pub verified: bool,
}

/// The console.
pub struct App {
    /// What is shown.
    pub model: Model,
    /// Colours.
    pub theme: Theme,
    /// Keys.
    pub keymap: Keymap,
    /// Dialect highlighting.
    pub highlighter: Arc<DialectHighlighter>,
    /// Constellation name.
    pub title: String,
    /// Database path.
    pub db: String,
    /// Focused pane.
    pub focus: Pane,
    /// Focused pane zoomed to the whole screen.
    pub zoom: bool,
    /// Turns stick to the bottom.
    pub follow: bool,
    /// Lines scrolled up from the bottom of the turns.
    pub turn_scroll: usize,
    /// Only this agent's turns and trace.
    pub agent_filter: Option<String>,
    /// Selected pending request.
    pub pending_sel: usize,
    /// Agent shown in the memory pane.
    pub memory_agent: Option<String>,
    /// Selected block.
    pub block_sel: usize,
    /// Last memory search.
    pub memory_search: Option<String>,
    /// Selected trace record, counted from the newest.
    pub trace_sel: usize,
    /// Only trace records of this verb.
    pub trace_verb: Option<String>,
    /// Only trace records with this outcome.
    pub trace_outcome: Option<String>,
    /// Memory as it was at the replay's current step (step, blocks of the
    /// memory pane's agent), once computed.
    pub replay_memory: Option<(usize, Vec<crate::memory::Block>)>,
    /// A replay, if open.
    pub replay: Option<ReplayState>,
    /// The overlay.
    pub overlay: Overlay,
    /// A draft left in the editor.
    pub draft: Option<(EditTarget, String)>,
    /// A one-line message in the status bar.
    pub notice: Option<String>,
    pending_keys: Vec<KeyChord>,
    /// Width from which all panes are shown at once.
    pub wide_from: u16,
    /// The time views measure ages from (the driver keeps it current).
    pub now: crate::clock::Millis,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("focus", &self.focus)
            .finish_non_exhaustive()
    }
}

/// Where each pane is drawn, for a screen size.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Areas {
    /// Tab bar (narrow screens).
    pub tabs: Option<Rect>,
    /// Panes and their rectangles.
    pub panes: Vec<(Pane, Rect)>,
    /// Status line.
    pub status: Rect,
}

impl App {
    /// A console with a theme and keymap.
    pub fn new(title: &str, db: &str, theme: Theme, keymap: Keymap) -> Self {
        App {
            model: Model::new(),
            theme,
            keymap,
            highlighter: Arc::new(DialectHighlighter::new()),
            title: title.to_string(),
            db: db.to_string(),
            focus: Pane::Turns,
            zoom: false,
            follow: true,
            turn_scroll: 0,
            agent_filter: None,
            pending_sel: 0,
            memory_agent: None,
            block_sel: 0,
            memory_search: None,
            trace_sel: 0,
            trace_verb: None,
            trace_outcome: None,
            replay_memory: None,
            replay: None,
            overlay: Overlay::None,
            draft: None,
            notice: None,
            pending_keys: Vec::new(),
            wide_from: 120,
            now: 0,
        }
    }

    /// The panes that exist now (Replay only while a replay is open).
    pub fn panes(&self) -> Vec<Pane> {
        let mut panes = vec![Pane::Turns, Pane::Pending, Pane::Memory, Pane::Trace];
        if self.replay.is_some() {
            panes.push(Pane::Replay);
        }
        panes
    }

    /// Lays out a screen of `size`.
    pub fn areas(&self, size: Rect) -> Areas {
        let [main, status] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(size);
        if self.zoom {
            return Areas {
                tabs: None,
                panes: vec![(self.focus, main)],
                status,
            };
        }
        if size.width < self.wide_from {
            let [tabs, body] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(main);
            return Areas {
                tabs: Some(tabs),
                panes: vec![(self.focus, body)],
                status,
            };
        }
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(main);
        let mut right_panes = vec![
            Pane::Pending,
            Pane::Memory,
            if self.replay.is_some() {
                Pane::Replay
            } else {
                Pane::Trace
            },
        ];
        if self.replay.is_some() && self.focus == Pane::Trace {
            right_panes[2] = Pane::Trace;
        }
        let rows = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Percentage(30),
                Constraint::Percentage(40),
                Constraint::Percentage(30),
            ])
            .split(right);
        let mut panes = vec![(Pane::Turns, left)];
        panes.extend(right_panes.into_iter().zip(rows.iter().copied()));
        Areas {
            tabs: None,
            panes,
            status,
        }
    }

    /// The queue as it was at the replay's step: requests made before the
    /// step and decided after it (with how they were decided).
    pub fn replay_queue(&self) -> Vec<&TraceRecord> {
        let Some(r) = &self.replay else {
            return Vec::new();
        };
        let Some(at) = r
            .step
            .checked_sub(1)
            .and_then(|i| r.records.get(i))
            .map(|rec| rec.time)
        else {
            return Vec::new();
        };
        r.records
            .iter()
            .filter(|rec| {
                rec.decision.requested_at.is_some_and(|t| t <= at)
                    && rec.decision.decided_at.is_some_and(|t| t > at)
            })
            .collect()
    }

    /// The agents known to the console.
    pub fn agent_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.model.agents.iter().map(|a| a.name.clone()).collect();
        if let Some(r) = &self.replay {
            names.extend(
                r.records
                    .iter()
                    .filter(|r| r.source == crate::trace::TraceSource::Agent)
                    .map(|r| r.agent.clone()),
            );
        }
        names.sort();
        names.dedup();
        names
    }

    /// The agent the memory pane shows.
    pub fn memory_agent(&self) -> Option<String> {
        self.memory_agent
            .clone()
            .or_else(|| self.agent_names().into_iter().next())
    }

    /// The selected block, if any.
    pub fn selected_block(&self) -> Option<&crate::memory::Block> {
        self.model.blocks.get(self.block_sel)
    }

    /// The selected pending request.
    pub fn selected_request(&self) -> Option<&crate::permission::PendingRequest> {
        self.model.pending.get(
            self.pending_sel
                .min(self.model.pending.len().saturating_sub(1)),
        )
    }

    /// Trace records shown (filtered by agent), newest first.
    pub fn trace_rows(&self) -> Vec<&TraceRecord> {
        self.model
            .trace
            .iter()
            .rev()
            .filter(|r| self.agent_filter.as_deref().is_none_or(|a| r.agent == a))
            .filter(|r| self.trace_verb.as_deref().is_none_or(|v| r.verb == v))
            .filter(|r| {
                self.trace_outcome
                    .as_deref()
                    .is_none_or(|o| r.outcome.as_str() == o)
            })
            .collect()
    }

    /// True when a text input or the editor has the keys.
    pub fn typing(&self) -> bool {
        matches!(self.overlay, Overlay::Input { .. } | Overlay::Editor { .. })
    }

    fn decide(&mut self, decision: Decision) -> Vec<Intent> {
        match self.selected_request() {
            Some(r) => vec![Intent::Decide {
                id: r.id.clone(),
                decision,
            }],
            None => {
                self.notice = Some("no request is waiting".into());
                Vec::new()
            }
        }
    }

    fn cycle_focus(&mut self, forward: bool) {
        let panes = self.panes();
        let i = panes.iter().position(|p| *p == self.focus).unwrap_or(0);
        let n = panes.len();
        self.focus = panes[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
    }

    fn move_selection(&mut self, delta: isize) -> Vec<Intent> {
        let step = |v: usize, len: usize| -> usize {
            if len == 0 {
                return 0;
            }
            (v as isize + delta).clamp(0, len as isize - 1) as usize
        };
        match self.focus {
            Pane::Turns => {
                if delta < 0 {
                    self.turn_scroll = self.turn_scroll.saturating_add(delta.unsigned_abs());
                    self.follow = false;
                } else {
                    self.turn_scroll = self.turn_scroll.saturating_sub(delta as usize);
                    if self.turn_scroll == 0 {
                        self.follow = true;
                    }
                }
            }
            Pane::Pending => self.pending_sel = step(self.pending_sel, self.model.pending.len()),
            Pane::Memory => {
                self.block_sel = step(self.block_sel, self.model.blocks.len());
                if let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block()) {
                    return vec![Intent::LoadHistory {
                        agent,
                        label: b.label.clone(),
                    }];
                }
            }
            Pane::Trace => self.trace_sel = step(self.trace_sel, self.trace_rows().len()),
            Pane::Replay => self.replay_step(delta),
        }
        Vec::new()
    }

    /// Moves the replay by `delta` steps.
    pub fn replay_step(&mut self, delta: isize) {
        if let Some(r) = &mut self.replay {
            r.step = (r.step as isize + delta).clamp(0, r.records.len() as isize) as usize;
        }
    }

    /// Handles one key.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Intent> {
        match std::mem::take(&mut self.overlay) {
            Overlay::Input { purpose, mut text } => {
                match key.code {
                    KeyCode::Esc => {}
                    KeyCode::Enter => return self.submit(purpose, text),
                    KeyCode::Backspace => {
                        text.pop();
                        self.overlay = Overlay::Input { purpose, text };
                    }
                    KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                        text.push(c);
                        self.overlay = Overlay::Input { purpose, text };
                    }
                    _ => self.overlay = Overlay::Input { purpose, text },
                }
                return Vec::new();
            }
            Overlay::Editor {
                target,
                mut area,
                original,
            } => {
                let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
                match key.code {
                    KeyCode::Char('s') if ctrl => {
                        let value = area.lines().join("\n");
                        return match target {
                            EditTarget::Block { agent, label } => vec![Intent::SaveBlock {
                                agent,
                                label,
                                value,
                            }],
                            EditTarget::Action { id } => {
                                vec![Intent::ApproveEdited { id, text: value }]
                            }
                        };
                    }
                    KeyCode::Esc => {
                        let value = area.lines().join("\n");
                        if value != original {
                            self.notice = Some(
                                "edit kept as a draft: i reopens it, q asks before quitting".into(),
                            );
                            self.draft = Some((target, value));
                        }
                        return Vec::new();
                    }
                    _ => {
                        area.input(key);
                        self.overlay = Overlay::Editor {
                            target,
                            area,
                            original,
                        };
                        return Vec::new();
                    }
                }
            }
            Overlay::Help => {
                if !matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q')
                ) {
                    self.overlay = Overlay::Help;
                }
                return Vec::new();
            }
            Overlay::ConfirmQuit => {
                return match key.code {
                    KeyCode::Char('y') | KeyCode::Char('Y') => vec![Intent::Quit],
                    _ => Vec::new(),
                };
            }
            Overlay::None => {}
        }
        self.pending_keys.push(KeyChord::from_event(&key));
        match self.keymap.lookup(&self.pending_keys) {
            Lookup::Pending => Vec::new(),
            Lookup::None => {
                self.pending_keys.clear();
                Vec::new()
            }
            Lookup::Action(action) => {
                self.pending_keys.clear();
                self.act(action)
            }
        }
    }

    fn submit(&mut self, purpose: InputPurpose, text: String) -> Vec<Intent> {
        let text = text.trim().to_string();
        match purpose {
            InputPurpose::DenyReason(id) => vec![Intent::Decide {
                id,
                decision: Decision::Deny((!text.is_empty()).then_some(text)),
            }],
            InputPurpose::Command if text.is_empty() => Vec::new(),
            InputPurpose::Command => {
                let agents: Vec<String> =
                    self.model.agents.iter().map(|a| a.name.clone()).collect();
                match parse_command(&text, &agents) {
                    Ok(command) => self.run_command(command),
                    Err(message) => {
                        self.notice = Some(message);
                        Vec::new()
                    }
                }
            }
            InputPurpose::Search => {
                self.memory_search = (!text.is_empty()).then(|| text.clone());
                if text.is_empty() {
                    Vec::new()
                } else {
                    vec![Intent::Search(text)]
                }
            }
            InputPurpose::Message(agent) if !text.is_empty() => {
                vec![Intent::SendMessage { agent, text }]
            }
            InputPurpose::Message(_) => Vec::new(),
        }
    }

    /// Carries out a parsed command line: console state here, the rest as
    /// intents for the driver.
    fn run_command(&mut self, command: ConsoleCommand) -> Vec<Intent> {
        match command {
            ConsoleCommand::OpenTrace(path) => return vec![Intent::OpenTrace(path)],
            ConsoleCommand::Quit => return self.act(Action::Quit),
            ConsoleCommand::FilterVerb(verb) => {
                self.trace_verb = Some(verb);
                self.trace_sel = 0;
                self.focus = Pane::Trace;
            }
            ConsoleCommand::FilterOutcome(outcome) => {
                self.trace_outcome = Some(outcome);
                self.trace_sel = 0;
                self.focus = Pane::Trace;
            }
            ConsoleCommand::FilterClear => {
                self.trace_verb = None;
                self.trace_outcome = None;
                self.agent_filter = None;
            }
            ConsoleCommand::Step(n) => match &mut self.replay {
                Some(r) => {
                    r.step = n.min(r.records.len());
                    self.focus = Pane::Replay;
                }
                None => self.notice = Some("no replay is open: :open trace FILE".into()),
            },
            ConsoleCommand::Control { agents, control } => {
                return vec![Intent::Control { agents, control }];
            }
            ConsoleCommand::Message { agent, text } => {
                return vec![Intent::SendMessage { agent, text }];
            }
            ConsoleCommand::Action(text) => return vec![Intent::RunAction(text)],
        }
        Vec::new()
    }

    fn open_editor(&mut self, target: EditTarget, text: String) {
        let text = match &self.draft {
            Some((t, draft)) if *t == target => draft.clone(),
            _ => text,
        };
        let original = match &target {
            EditTarget::Block { .. } => self
                .selected_block()
                .map(|b| b.value.clone())
                .unwrap_or_default(),
            EditTarget::Action { .. } => text.clone(),
        };
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let area = TextArea::new(lines);
        self.overlay = Overlay::Editor {
            target,
            area: Box::new(area),
            original,
        };
    }

    /// Performs an action.
    pub fn act(&mut self, action: Action) -> Vec<Intent> {
        self.notice = None;
        match action {
            Action::Approve => return self.decide(Decision::ApproveOnce),
            Action::ApproveAlways => return self.decide(Decision::ApproveAlways),
            Action::Deny => return self.decide(Decision::Deny(None)),
            Action::Escalate => return self.decide(Decision::Escalate(None)),
            Action::DenyWithReason => {
                if let Some(r) = self.selected_request() {
                    self.overlay = Overlay::Input {
                        purpose: InputPurpose::DenyReason(r.id.clone()),
                        text: String::new(),
                    };
                }
            }
            Action::EditAction => {
                if let Some(r) = self.selected_request() {
                    let (id, text) = (r.id.clone(), r.canonical.clone());
                    self.open_editor(EditTarget::Action { id }, text);
                }
            }
            Action::NextRequest => {
                self.pending_sel =
                    (self.pending_sel + 1).min(self.model.pending.len().saturating_sub(1))
            }
            Action::PrevRequest => self.pending_sel = self.pending_sel.saturating_sub(1),
            Action::FocusNext => self.cycle_focus(true),
            Action::FocusPrev => self.cycle_focus(false),
            Action::Zoom => self.zoom = !self.zoom,
            Action::Search => {
                self.focus = Pane::Memory;
                self.overlay = Overlay::Input {
                    purpose: InputPurpose::Search,
                    text: String::new(),
                };
            }
            Action::CommandLine => {
                self.overlay = Overlay::Input {
                    purpose: InputPurpose::Command,
                    text: String::new(),
                }
            }
            Action::Help => self.overlay = Overlay::Help,
            Action::Quit => {
                if self.draft.is_some() {
                    self.overlay = Overlay::ConfirmQuit;
                } else {
                    return vec![Intent::Quit];
                }
            }
            Action::Up => return self.move_selection(-1),
            Action::Down => return self.move_selection(1),
            Action::PageUp => return self.move_selection(-10),
            Action::PageDown => return self.move_selection(10),
            Action::Top => return self.move_selection(-1_000_000),
            Action::Bottom => {
                if self.focus == Pane::Turns {
                    self.turn_scroll = 0;
                    self.follow = true;
                } else {
                    return self.move_selection(1_000_000);
                }
            }
            Action::Select => {
                if self.focus == Pane::Memory
                    && let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block())
                {
                    return vec![Intent::LoadHistory {
                        agent,
                        label: b.label.clone(),
                    }];
                }
            }
            Action::Back => {
                self.zoom = false;
                self.memory_search = None;
                self.model.hits.clear();
            }
            Action::EditBlock => {
                if let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block()) {
                    let target = EditTarget::Block {
                        agent,
                        label: b.label.clone(),
                    };
                    let value = b.value.clone();
                    self.focus = Pane::Memory;
                    self.open_editor(target, value);
                }
            }
            Action::UndoBlock => {
                if let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block()) {
                    return vec![Intent::UndoBlock {
                        agent,
                        label: b.label.clone(),
                    }];
                }
            }
            Action::Follow => {
                self.follow = !self.follow;
                if self.follow {
                    self.turn_scroll = 0;
                }
            }
            Action::FilterAgent => {
                let names = self.agent_names();
                if self.focus == Pane::Memory {
                    let current = self.memory_agent();
                    let i = names
                        .iter()
                        .position(|n| Some(n) == current.as_ref())
                        .map_or(0, |i| (i + 1) % names.len().max(1));
                    if let Some(next) = names.get(i) {
                        self.memory_agent = Some(next.clone());
                        self.block_sel = 0;
                        return vec![Intent::LoadMemory {
                            agent: next.clone(),
                        }];
                    }
                } else {
                    self.agent_filter = match &self.agent_filter {
                        None => names.first().cloned(),
                        Some(current) => names.iter().skip_while(|n| *n != current).nth(1).cloned(),
                    };
                    self.turn_scroll = 0;
                    self.trace_sel = 0;
                }
            }
            Action::StepForward => self.replay_step(1),
            Action::StepBack => self.replay_step(-1),
            Action::PlayPause => {
                if let Some(r) = &mut self.replay {
                    r.playing = !r.playing;
                }
            }
            Action::Faster => {
                if let Some(r) = &mut self.replay {
                    r.speed = (r.speed * 2.0).min(64.0);
                }
            }
            Action::Slower => {
                if let Some(r) = &mut self.replay {
                    r.speed = (r.speed / 2.0).max(0.25);
                }
            }
            Action::Message => {
                let agent = self
                    .agent_filter
                    .clone()
                    .or_else(|| self.model.agents.first().map(|a| a.name.clone()));
                if let Some(agent) = agent {
                    self.overlay = Overlay::Input {
                        purpose: InputPurpose::Message(agent),
                        text: String::new(),
                    };
                }
            }
        }
        Vec::new()
    }

    /// Handles the mouse: a click focuses the pane under it (and selects a
    /// row in lists); the wheel scrolls.
    pub fn on_mouse(&mut self, mouse: MouseEvent, size: Rect) -> Vec<Intent> {
        if self.typing() {
            return Vec::new();
        }
        let at = Position::new(mouse.column, mouse.row);
        let areas = self.areas(size);
        let hit = areas.panes.iter().find(|(_, r)| r.contains(at)).copied();
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(tabs) = areas.tabs
                    && tabs.contains(at)
                {
                    let panes = self.panes();
                    let index = usize::from(mouse.column.saturating_sub(tabs.x)) / 12;
                    if let Some(p) = panes.get(index) {
                        self.focus = *p;
                    }
                    return Vec::new();
                }
                if let Some((pane, rect)) = hit {
                    self.focus = pane;
                    let row = usize::from(mouse.row.saturating_sub(rect.y + 1));
                    match pane {
                        Pane::Pending if row < self.model.pending.len() => self.pending_sel = row,
                        Pane::Trace => {
                            self.trace_sel = row.min(self.trace_rows().len().saturating_sub(1))
                        }
                        Pane::Memory if row < self.model.blocks.len() => {
                            self.block_sel = row;
                            return self.move_selection(0);
                        }
                        _ => {}
                    }
                }
            }
            MouseEventKind::ScrollUp => {
                if let Some((pane, _)) = hit {
                    self.focus = pane;
                }
                return self.move_selection(-3);
            }
            MouseEventKind::ScrollDown => {
                if let Some((pane, _)) = hit {
                    self.focus = pane;
                }
                return self.move_selection(3);
            }
            _ => {}
        }
        Vec::new()
    }
}
