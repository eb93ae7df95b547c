//! What covers the panes, as components behind one host: each overlay —
//! the help, the prompt, the editor, a confirmation, the standing rules
//! and the learned phrasings (one [`Chooser`]), the notifications, the
//! merge view, a `:lisp` result, a command's output — is a [`Layer`] with
//! its own state, keys and drawing, in a file of its own. The [`App`]
//! holds at most one in [`Overlay`], gives it the keys while it is open
//! and draws it over the panes; a layer answers a key with a [`Step`]:
//! stay, close, or give way to another overlay.

mod chooser;
mod confirm;
mod editor;
mod help;
mod log;
mod merge;
mod prompt;
mod views;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

pub use chooser::{Choice, Chooser};
pub use confirm::Confirm;
pub use editor::Editor;
pub use help::{Help, help_lines, help_max_scroll};
pub use log::Log;
pub use merge::Merge;
pub use prompt::PromptLine;

use super::{App, Command};
use crate::panes::PromptPurpose;
use partner_protocol::wire::LearnedRule;
use partner_protocol::wire::{Decision, StandingRule};

/// An overlay: its state, what it does with a key, how it is drawn.
pub trait Layer {
    /// Handles a key while the overlay is open. The overlay is out of the
    /// app while it runs, so it may ask the app for anything; what
    /// becomes of the overlay is the [`Step`] it returns.
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step;

    /// Draws it over the screen `size`.
    fn render(&self, app: &App, frame: &mut Frame, size: Rect);
}

/// What becomes of an overlay after a key.
#[derive(Debug)]
pub enum Step {
    /// It stays open; the console sends these.
    Stay(Vec<Command>),
    /// It closes; the console sends these (an overlay the app opened
    /// meanwhile stays).
    Close(Vec<Command>),
    /// It gives way to another overlay.
    Open(Overlay),
}

impl Step {
    /// Stays open, nothing sent.
    pub fn stay() -> Self {
        Step::Stay(Vec::new())
    }

    /// Closes, nothing sent.
    pub fn close() -> Self {
        Step::Close(Vec::new())
    }
}

/// What a confirmation does on yes.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirmed {
    /// Decide a request.
    Decide {
        /// The request.
        id: String,
        /// The decision.
        decision: Decision,
    },
    /// Revoke a standing rule.
    RevokeRule(i64),
    /// Forget a learned phrasing.
    Forget(i64),
    /// Run the partner's own command.
    RunCommand(String),
    /// Quit although drafts are unsaved.
    Quit,
    /// Learn that these words stand for this action.
    Learn {
        /// The words.
        words: String,
        /// The action.
        action: String,
    },
}

/// `Some($as)` with `$l` bound to the open overlay's layer, `None` when
/// nothing is open: one list of the overlays for both borrows.
macro_rules! each_layer {
    ($overlay:expr, $l:ident => $as:expr) => {
        match $overlay {
            Overlay::None => None,
            Overlay::Help($l) => Some($as),
            Overlay::Prompt($l) => Some($as),
            Overlay::Editor($l) => Some($as),
            Overlay::Confirm($l) => Some($as),
            Overlay::Learned($l) => Some($as),
            Overlay::Rules($l) => Some($as),
            Overlay::Log($l) => Some($as),
            Overlay::Merge($l) => Some($as),
            Overlay::Lisp($l) => Some($as),
            Overlay::Output($l) => Some($as),
        }
    };
}

/// The overlay open now, if any: the one slot the app hosts layers in.
#[derive(Debug, Clone, Default)]
pub enum Overlay {
    /// Nothing.
    #[default]
    None,
    /// The key help.
    Help(Help),
    /// A one-line prompt.
    Prompt(PromptLine),
    /// The editor.
    Editor(Editor),
    /// A yes/no question.
    Confirm(Confirm),
    /// The phrasings the partner taught.
    Learned(Chooser<LearnedRule>),
    /// The standing rules.
    Rules(Chooser<StandingRule>),
    /// The notifications, newest first.
    Log(Log),
    /// A save that met someone else's change.
    Merge(Merge),
    /// A `:lisp` result.
    Lisp(crate::panes::LispView),
    /// The partner's own command's output.
    Output(crate::panes::OutputView),
}

impl Overlay {
    /// The help, from its top.
    pub fn help() -> Self {
        Overlay::Help(Help::default())
    }

    /// A yes-or-no question; `on_yes` is done on yes.
    pub fn confirm(question: impl Into<String>, on_yes: Confirmed) -> Self {
        Overlay::Confirm(Confirm {
            question: question.into(),
            on_yes,
        })
    }

    /// An empty prompt for `purpose`.
    pub fn prompt(purpose: PromptPurpose) -> Self {
        Overlay::Prompt(PromptLine::new(purpose))
    }

    /// The notifications list, newest first.
    pub fn log() -> Self {
        Overlay::Log(Log::default())
    }

    /// The overlay as a layer (none when nothing is open).
    pub fn layer(&self) -> Option<&dyn Layer> {
        each_layer!(self, l => l as &dyn Layer)
    }

    /// The overlay as a layer to give keys to.
    pub fn layer_mut(&mut self) -> Option<&mut dyn Layer> {
        each_layer!(self, l => l as &mut dyn Layer)
    }
}

impl App {
    /// Keys for the open overlay; `None` when no overlay is open.
    pub(super) fn overlay_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        let mut open = std::mem::take(&mut self.overlay);
        let step = open.layer_mut()?.key(key, self);
        Some(match step {
            Step::Stay(commands) => {
                self.overlay = open;
                commands
            }
            Step::Close(commands) => commands,
            Step::Open(next) => {
                self.overlay = next;
                Vec::new()
            }
        })
    }
}

/// Draws the open overlay over the panes.
pub fn render_overlay(app: &App, frame: &mut Frame, size: Rect) {
    if let Some(layer) = app.overlay.layer() {
        layer.render(app, frame, size);
    }
}
