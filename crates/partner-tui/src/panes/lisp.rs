//! The Lisp view (`:lisp EXPR`, `:lisp tool NAME ARGS`): what an
//! expression gave against the shown agent's state, or what a tool would
//! do to it — nothing is written — as a tree the partner scrolls.

use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::popup;
use crate::theme::Theme;

/// A result to read.
#[derive(Debug, Clone, Default)]
pub struct LispView {
    /// What was evaluated, as whom.
    pub title: String,
    /// The result as a tree (or the error).
    pub lines: Vec<String>,
    /// Lines scrolled.
    pub scroll: usize,
    /// True when the result is an error.
    pub failed: bool,
}

impl LispView {
    /// Most lines a result shows.
    pub const MAX_LINES: usize = partner_protocol::views::Evaluated::MAX_LINES;

    /// A result to read: its title and its lines (a tree of at most
    /// [`Self::MAX_LINES`], as the evaluator drew it).
    pub fn result(title: String, lines: Vec<String>) -> Self {
        LispView {
            title,
            lines,
            scroll: 0,
            failed: false,
        }
    }

    /// An error to read.
    pub fn error(title: String, message: String) -> Self {
        LispView {
            title,
            lines: vec![message],
            scroll: 0,
            failed: true,
        }
    }

    /// The view of what the host evaluated.
    pub fn of(evaluated: partner_protocol::views::Evaluated) -> Self {
        LispView {
            title: evaluated.title,
            lines: evaluated.lines,
            scroll: 0,
            failed: evaluated.failed,
        }
    }

    /// Handles a key; false when the view should close.
    pub fn key(&mut self, code: KeyCode) -> bool {
        let max = self.lines.len().saturating_sub(1);
        match code {
            KeyCode::Esc | KeyCode::Char('q') => return false,
            KeyCode::Down | KeyCode::Char('j') => self.scroll = (self.scroll + 1).min(max),
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll = (self.scroll + 10).min(max),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = max,
            _ => {}
        }
        true
    }

    /// Draws the view over the screen.
    pub fn render(&self, theme: &Theme, frame: &mut Frame, size: Rect) {
        let title = format!("Lisp — {} — ↑/↓ scroll, Esc closes", self.title);
        let widest = self
            .lines
            .iter()
            .map(|l| unicode_width::UnicodeWidthStr::width(l.as_str()))
            .max()
            .unwrap_or(0);
        // As large as the answer: a `3` is a small box, not the screen.
        let area = super::render::fitted(size, widest, self.lines.len(), &title);
        frame.render_widget(Clear, area);
        let inner_h = usize::from(area.height.saturating_sub(2));
        let role = if self.failed { "ui.error" } else { "ui.text" };
        let lines: Vec<Line> = self
            .lines
            .iter()
            .skip(self.scroll)
            .take(inner_h)
            .map(|l| Line::from(Span::styled(l.clone(), theme.style(role))))
            .collect();
        frame.render_widget(Paragraph::new(lines).block(popup(theme, &title)), area);
    }
}
