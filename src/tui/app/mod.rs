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

mod actions;
mod input;

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
}
