//! [`App`]: the console's state — the model, the panes (components that
//! own their state, keys and drawing), the overlay, the mode (live or
//! replay) and a decision waiting out its undo window — and how keys,
//! pastes, clicks, events and replies change it. What touches the
//! constellation leaves as [`Command`]s for the driver, which sends ops to
//! the backend.

mod commands;
mod effects;
mod keys;
mod layout;
pub mod overlay;
mod own_command;
mod render;
mod replies;

use std::sync::Arc;

pub use layout::Areas;
pub use overlay::{Confirmed, Editor, Merge, Overlay};
pub use render::render;

use super::backend::BackendOp;
use super::highlight::DialectHighlighter;
use super::keymap::{KeyChord, Keymap};
use super::model::Model;
use super::panes::{Held, MemoryPane, Pane, QueuePane, ReplayPane, TracePane, TurnsPane, View};
use super::prompt::History;
use super::theme::Theme;
use partner_core::clock::Millis;

/// How long a decision waits before it is sent, so that the partner can
/// take it back (`U`).
pub const UNDO_WINDOW: Millis = 3_000;

/// Something the driver must do for the app.
#[derive(Debug, Clone)]
pub enum Command {
    /// Send an op to the backend.
    Op(BackendOp),
    /// Ring the terminal bell.
    Bell,
    /// Put text on the clipboard (through the terminal: OSC 52).
    Copy(String),
    /// Leave.
    Quit,
}

/// A notice on the status line, and whether it is a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// True for something that went wrong or was refused.
    pub warning: bool,
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
    /// How the console reaches the runtime (the driver keeps it current).
    pub connection: partner_protocol::Connection,
    /// Database path.
    pub db: String,
    /// Focused pane.
    pub focus: Pane,
    /// Focused pane zoomed to the whole screen.
    pub zoom: bool,
    /// The turns pane.
    pub turns: TurnsPane,
    /// The pending queue.
    pub queue: QueuePane,
    /// The memory pane.
    pub memory: MemoryPane,
    /// The trace pane.
    pub trace: TracePane,
    /// A replay, while one is open (the console is in replay mode).
    pub replay: Option<ReplayPane>,
    /// The console was opened for a trace file alone (`partner replay`):
    /// no constellation runs behind its panes.
    pub trace_only: bool,
    /// What covers the panes.
    pub overlay: Overlay,
    /// A decision waiting out its undo window.
    pub held: Option<Held>,
    /// The last decision sent (for undo's answer once it is too late).
    pub last_sent: Option<Held>,
    /// A one-line message in the status bar.
    pub notice: Option<Notice>,
    /// Lines typed at the prompt before, kept across sessions.
    pub history: History,
    /// The dialect's verbs and aliases, for completing `/actions`.
    pub verb_words: Vec<String>,
    /// Reads the partner's plain words at `:` as an action (made on first
    /// use).
    proposer: std::sync::OnceLock<Option<partner_dialect::proposals::Proposer>>,
    /// An edited approval of a proposed action: once it goes through, the
    /// console offers to learn the words (request id, words, action).
    learn_offer: Option<(String, String, String)>,
    pending_keys: Vec<KeyChord>,
    /// Width from which all panes are shown at once.
    pub wide_from: u16,
    /// The time views measure ages from (the driver keeps it current).
    pub now: Millis,
    /// The screen size last drawn (for what is visible).
    pub size: (u16, u16),
    /// The partner's last own command's output (`:output` shows it again).
    pub last_output: Option<crate::panes::OutputView>,
    /// What needs reading again.
    pub fresh: effects::Freshness,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("focus", &self.focus)
            .finish_non_exhaustive()
    }
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
            connection: Default::default(),
            db: db.to_string(),
            focus: Pane::Turns,
            zoom: false,
            turns: TurnsPane::default(),
            queue: QueuePane::default(),
            memory: MemoryPane::default(),
            trace: TracePane::default(),
            replay: None,
            trace_only: false,
            overlay: Overlay::None,
            held: None,
            last_sent: None,
            notice: None,
            history: History::default(),
            verb_words: crate::completion::verb_words(&partner_dialect::VerbTable::builtin()),
            proposer: std::sync::OnceLock::new(),
            learn_offer: None,
            pending_keys: Vec::new(),
            wide_from: 120,
            now: 0,
            size: (200, 60),
            last_output: None,
            fresh: effects::Freshness::default(),
        }
    }

    /// What the panes read to draw themselves.
    pub fn view(&self) -> View<'_> {
        View {
            model: &self.model,
            theme: &self.theme,
            keymap: &self.keymap,
            highlighter: &self.highlighter,
            now: self.now,
            replay: self.replay.as_ref(),
            held: self.held.as_ref(),
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

    /// The agents known to the console.
    pub fn agent_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.model.agents.iter().map(|a| a.name.clone()).collect();
        if let Some(r) = &self.replay {
            names.extend(
                r.state
                    .records
                    .iter()
                    .filter(|r| r.source == partner_protocol::wire::TraceSource::Agent)
                    .map(|r| r.agent.clone()),
            );
        }
        names.sort();
        names.dedup();
        names
    }

    /// The agent a typed `/action` runs as: the agent the panes are
    /// filtered to, else the memory pane's.
    pub fn acting_agent(&self) -> Option<String> {
        self.turns
            .agent
            .clone()
            .or_else(|| self.memory.agent(&self.model))
    }

    /// True when a prompt or the editor has the keys.
    pub fn typing(&self) -> bool {
        matches!(self.overlay, Overlay::Prompt { .. } | Overlay::Editor(_))
    }

    /// Says something on the status line.
    pub fn say(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.keep_if_long(&text);
        self.notice = Some(Notice {
            text,
            warning: false,
        });
    }

    /// A status message longer than the lines the status bar gives it is
    /// kept whole in the notifications, one key (`N`) away.
    fn keep_if_long(&mut self, text: &str) {
        use unicode_width::UnicodeWidthStr;
        if text.width() + 8 > 3 * usize::from(self.size.0).saturating_sub(2) {
            self.model.notify(
                self.now,
                None,
                crate::model::NoticeKind::Status,
                text.to_string(),
            );
        }
    }

    /// Warns on the status line.
    pub fn warn(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.keep_if_long(&text);
        self.notice = Some(Notice {
            text,
            warning: true,
        });
    }
}
