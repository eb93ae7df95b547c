//! A list to choose from and take items out of, after asking: the
//! standing rules (`x` revokes) and the learned phrasings (`x` forgets)
//! are one component over two kinds of [`Choice`].

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{Confirmed, Layer, Overlay, Step};
use crate::app::App;
use crate::panes::{centered, popup};
use partner_core::clock::format_time;
use partner_protocol::wire::LearnedRule;
use partner_protocol::wire::StandingRule;

/// What a [`Chooser`] lists.
pub trait Choice: Clone {
    /// The popup's title, with its keys.
    const TITLE: &'static str;
    /// What an empty list says.
    const EMPTY: &'static str;
    /// Its number.
    fn id(&self) -> i64;
    /// Its row, in one line.
    fn row(&self) -> String;
    /// The question asked before it is taken out, and what yes does.
    fn removal(&self) -> (String, Confirmed);
}

impl Choice for StandingRule {
    const TITLE: &'static str = "Standing rules — ↑/↓ select, x revokes, Esc closes";
    const EMPTY: &'static str = "No standing rules: every request is decided one at a time.";

    fn id(&self) -> i64 {
        self.id
    }

    /// Effect, agent, scope, who made it, until when.
    fn row(&self) -> String {
        let until = self
            .expires_at
            .map(|at| format!(" until {}", &format_time(at)[..16]))
            .unwrap_or_default();
        format!(
            "{} {}: /{} (by {}{until})",
            self.effect,
            self.agent,
            self.scope(),
            self.created_by
        )
    }

    fn removal(&self) -> (String, Confirmed) {
        (
            format!(
                "Revoke rule #{} ({} {}'s /{})? Such requests will be asked again.",
                self.id,
                self.effect,
                self.agent,
                self.scope()
            ),
            Confirmed::RevokeRule(self.id),
        )
    }
}

impl Choice for LearnedRule {
    const TITLE: &'static str = "Learned phrasings — ↑/↓ select, x forgets, Esc closes";
    const EMPTY: &'static str =
        "Nothing learned yet: fix a proposed action with E to teach what words mean.";

    fn id(&self) -> i64 {
        self.id
    }

    fn row(&self) -> String {
        format!("\"{}\"  →  {}", self.words, self.action)
    }

    fn removal(&self) -> (String, Confirmed) {
        (
            format!(
                "Forget that \"{}\" means {}? Agents' words like these will no longer be proposed as it.",
                self.words, self.action
            ),
            Confirmed::Forget(self.id),
        )
    }
}

/// Items with one selected.
#[derive(Debug, Clone)]
pub struct Chooser<T> {
    /// The items, in order.
    pub items: Vec<T>,
    /// The selected one.
    pub selected: usize,
}

impl<T> Default for Chooser<T> {
    fn default() -> Self {
        Chooser {
            items: Vec::new(),
            selected: 0,
        }
    }
}

impl<T: Choice> Chooser<T> {
    /// `items`, the first selected.
    pub fn new(items: Vec<T>) -> Self {
        Chooser { items, selected: 0 }
    }

    /// The list as it is now, the selection kept where it can be.
    pub fn replace(&mut self, items: Vec<T>) {
        self.items = items;
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
    }
}

impl<T: Choice> Layer for Chooser<T> {
    fn key(&mut self, key: KeyEvent, _app: &mut App) -> Step {
        let last = self.items.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => Step::close(),
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(last);
                Step::stay()
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                Step::stay()
            }
            KeyCode::Char('x' | 'd') | KeyCode::Delete => match self.items.get(self.selected) {
                Some(item) => {
                    let (question, on_yes) = item.removal();
                    Step::Open(Overlay::confirm(question, on_yes))
                }
                None => Step::stay(),
            },
            _ => Step::stay(),
        }
    }

    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        let theme = &app.theme;
        let area = centered(size, 100, (self.items.len() as u16 + 4).clamp(6, 30));
        frame.render_widget(Clear, area);
        let mut lines = Vec::new();
        if self.items.is_empty() {
            lines.push(Line::from(Span::styled(T::EMPTY, theme.style("ui.dim"))));
        }
        for (i, item) in self.items.iter().enumerate() {
            let style = if i == self.selected {
                theme.style("ui.selection")
            } else {
                theme.style("ui.text")
            };
            lines.push(Line::from(vec![
                Span::styled(format!("#{:<4}", item.id()), theme.style("ui.key_hint")),
                Span::styled(item.row(), style),
            ]));
        }
        frame.render_widget(Paragraph::new(lines).block(popup(theme, T::TITLE)), area);
    }
}

impl From<Chooser<StandingRule>> for Overlay {
    fn from(c: Chooser<StandingRule>) -> Self {
        Overlay::Rules(c)
    }
}

impl From<Chooser<LearnedRule>> for Overlay {
    fn from(c: Chooser<LearnedRule>) -> Self {
        Overlay::Learned(c)
    }
}
