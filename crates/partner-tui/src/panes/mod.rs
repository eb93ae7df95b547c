//! The console's panes as components: each owns its state (selection by
//! id, scroll, search), handles the keymap actions that mean something in
//! it, and draws itself. The app routes actions to the focused pane (and
//! decisions to the queue, where its requests are on screen) and carries
//! out the [`Effect`]s panes return.

mod lisp;
mod memory;
mod output;
mod queue;
mod render;
mod replay;
mod shell;
mod tool;
mod trace;
mod turns;

use ratatui::Frame;
use ratatui::layout::Rect;

pub use lisp::LispView;
pub use memory::{Draft, MemoryPane};
pub use output::{CommandState, OutputKey, OutputView};
pub use queue::{Held, QueuePane, decision_name, rule_scope};
pub use render::{
    age, agent_style, centered, diff_lines, human_duration, pane_block, popup, wrap_words,
};
pub use replay::ReplayPane;
pub use trace::TracePane;
pub use turns::TurnsPane;

use super::backend::BackendOp;
use super::highlight::DialectHighlighter;
use super::keymap::{Action, Keymap};
use super::model::Model;
use super::theme::Theme;
use partner_core::clock::Millis;
use partner_protocol::wire::Decision;

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
    /// The pane's name.
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

/// What panes read to draw themselves: the model and the console's
/// settings, shared.
pub struct View<'a> {
    /// What is shown.
    pub model: &'a Model,
    /// Colours.
    pub theme: &'a Theme,
    /// Keys (for hints).
    pub keymap: &'a Keymap,
    /// Dialect highlighting.
    pub highlighter: &'a DialectHighlighter,
    /// Now (for ages and countdowns).
    pub now: Millis,
    /// The replay, while one is open.
    pub replay: Option<&'a ReplayPane>,
    /// A decision waiting out its undo window.
    pub held: Option<&'a Held>,
}

/// An editor the app should open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditTarget {
    /// A memory block, edited from `base_version`.
    Block {
        /// Agent.
        agent: String,
        /// Label.
        label: String,
        /// The version the edit starts from.
        base_version: i64,
    },
    /// A pending request's action.
    Action {
        /// Request id.
        id: String,
    },
}

/// What a one-line prompt is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptPurpose {
    /// A reason to deny this request (`always`: with a standing rule).
    DenyReason {
        /// The request.
        id: String,
        /// Deny always.
        always: bool,
    },
    /// The `:` command line.
    Command,
    /// A search in the memory pane.
    SearchMemory,
    /// A search in the turns pane.
    SearchTurns,
    /// A search in the trace pane.
    SearchTrace,
    /// A message to an agent.
    Message(String),
}

/// Something a pane asks the app to do.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Send an op to the backend.
    Op(BackendOp),
    /// Decide a request (held for the undo window first).
    Decide {
        /// The request.
        id: String,
        /// The decision.
        decision: Decision,
    },
    /// Ask before deciding (a standing rule).
    Confirm {
        /// The question.
        question: String,
        /// The decision on yes.
        id: String,
        /// The decision.
        decision: Decision,
    },
    /// Open the editor.
    Edit {
        /// What.
        target: EditTarget,
        /// The text to start from.
        text: String,
    },
    /// Open a prompt.
    Prompt(PromptPurpose),
    /// Say something on the status line.
    Notice(String),
    /// Move the focus.
    Focus(Pane),
    /// Select a request in the queue.
    SelectRequest(String),
    /// Select a trace record.
    SelectRecord(String),
}

/// A pane: state, keys and drawing.
pub trait Component {
    /// Handles an action when the pane has the keys; `None` when the action
    /// means nothing here.
    fn act(&mut self, action: Action, model: &Model) -> Option<Vec<Effect>>;

    /// A click on the `row`th line of the pane's inside.
    fn click(&mut self, _row: usize, _model: &Model) -> Vec<Effect> {
        Vec::new()
    }

    /// The pane's title (with its filters and counts).
    fn title(&self, view: &View<'_>) -> String;

    /// Draws the inside of the pane.
    fn render(&self, frame: &mut Frame, area: Rect, view: &View<'_>);
}
