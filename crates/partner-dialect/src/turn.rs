//! The result of parsing one agent turn.

use serde::Serialize;

use super::action::ParsedAction;
use super::error::ParseError;
use super::span::Span;

/// What a stretch of the turn is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SegmentKind {
    /// Ordinary prose (including code fences and failed-to-match text).
    Prose,
    /// An action; `index` points into [`ParsedTurn::actions`].
    Action,
    /// Text that was meant as an action but failed; `index` points into
    /// [`ParsedTurn::errors`].
    Invalid,
}

/// A stretch of the turn. Segments are in order, never overlap, and cover
/// every byte of the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// What the stretch is.
    pub kind: SegmentKind,
    /// Where it is.
    pub span: Span,
    /// Index of the action or first error it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

/// Every action and error found in one turn, and how the turn divides into
/// prose and actions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ParsedTurn {
    /// The actions, in the order written (cancelled ones included).
    pub actions: Vec<ParsedAction>,
    /// Errors, in order, worded for the model.
    pub errors: Vec<ParseError>,
    /// The turn divided into prose, actions and invalid actions.
    pub segments: Vec<Segment>,
    /// Lines that repeated an example of the agent's instructions word for
    /// word: read as prose, so an echoed prompt does nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub echoes: Vec<Span>,
}

impl ParsedTurn {
    /// Actions that were not cancelled.
    pub fn live_actions(&self) -> impl Iterator<Item = &ParsedAction> {
        self.actions.iter().filter(|a| !a.cancelled)
    }

    /// True when the turn held no errors.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}
