//! Where each pane is drawn for a screen size: one layout shared by drawing,
//! clicks, and the rule that keys act only on what is on screen.

use ratatui::layout::{Constraint, Direction, Layout, Position, Rect};

use super::App;
use crate::panes::Pane;

/// Where each pane is drawn, for a screen size.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Areas {
    /// Tab bar (narrow screens).
    pub tabs: Option<Rect>,
    /// Panes and their rectangles.
    pub panes: Vec<(Pane, Rect)>,
    /// Status line.
    pub status: Rect,
    /// A status message too long for the status line, above it.
    pub message: Option<Rect>,
}

/// Width of one tab in the tab bar.
pub const TAB_WIDTH: u16 = 14;

impl Areas {
    /// The pane at a screen position, and its rectangle.
    pub fn pane_at(&self, column: u16, row: u16) -> Option<(Pane, Rect)> {
        let at = Position::new(column, row);
        self.panes.iter().find(|(_, r)| r.contains(at)).copied()
    }

    /// True when `pane` is on screen.
    pub fn shows(&self, pane: Pane) -> bool {
        self.panes.iter().any(|(p, _)| *p == pane)
    }
}

impl App {
    /// Lays out a screen of `size`.
    pub fn areas(&self, size: Rect) -> Areas {
        let lines = super::render::message_lines(self, size.width).len();
        let [main, message, status] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(u16::try_from(lines).unwrap_or(0)),
            Constraint::Length(1),
        ])
        .areas(size);
        let message = (lines > 0).then_some(message);
        if self.zoom {
            return Areas {
                tabs: None,
                panes: vec![(self.focus, main)],
                status,
                message,
            };
        }
        if size.width < self.wide_from {
            let [tabs, body] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(main);
            return Areas {
                tabs: Some(tabs),
                panes: vec![(self.focus, body)],
                status,
                message,
            };
        }
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(main);
        let third = if self.replay.is_some() && self.focus != Pane::Trace {
            Pane::Replay
        } else {
            Pane::Trace
        };
        let rows = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Percentage(34),
                Constraint::Percentage(38),
                Constraint::Percentage(28),
            ])
            .split(right);
        let mut panes = vec![(Pane::Turns, left)];
        panes.extend(
            [Pane::Pending, Pane::Memory, third]
                .into_iter()
                .zip(rows.iter().copied()),
        );
        Areas {
            tabs: None,
            panes,
            status,
            message,
        }
    }

    /// The layout of the screen last drawn.
    pub fn current_areas(&self) -> Areas {
        self.areas(Rect::new(0, 0, self.size.0, self.size.1))
    }
}
