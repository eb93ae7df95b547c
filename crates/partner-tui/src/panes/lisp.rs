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
use partner_engine::exec::Executor;
use partner_engine::exec::tools::{StateChange, changes, state_of};
use partner_lisp::show::tree;
use partner_lisp::{Lisp, Value};
use partner_store::memory::blocks;

/// Most lines a result shows.
const MAX_LINES: usize = 5_000;

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
    /// Evaluates `text` for `agent` (blocking: run it off the console's
    /// thread): an expression with `state` bound to the agent's state, or
    /// `tool NAME ARGS`, a dry run of a tool.
    pub fn evaluate(
        ex: &Executor,
        agent: &str,
        text: &str,
        now: partner_core::clock::Millis,
    ) -> Self {
        let list = match blocks::list(&ex.store().read(), Some(agent)) {
            Ok(l) => l,
            Err(e) => {
                return Self::error(
                    format!("{agent}: {text}"),
                    format!("cannot read {agent}'s blocks: {e}"),
                );
            }
        };
        if let Some(rest) = text.strip_prefix("tool ") {
            let mut words = rest.trim().splitn(2, char::is_whitespace);
            let name = words.next().unwrap_or("");
            let args = words.next().unwrap_or("").trim();
            let title = format!("tool {name} on {agent}'s state (a dry run: nothing is written)");
            let tool = match ex.tools().get(name) {
                Ok(t) => t,
                Err(e) => return Self::error(title, e),
            };
            let state = state_of(agent, args, now, &list);
            return match tool.run(&state, partner_engine::exec::tools::TOOL_STEPS) {
                Ok(out) => {
                    let (wanted, ignored) = changes(&state, &out);
                    let mut lines: Vec<String> = wanted
                        .iter()
                        .map(|c| match c {
                            StateChange::Write { label, .. } => format!("would patch {label}"),
                            StateChange::Create { label, .. } => format!("would create {label}"),
                        })
                        .collect();
                    if lines.is_empty() {
                        lines.push("would change nothing".into());
                    }
                    lines.extend(ignored.into_iter().map(|i| format!("ignored: {i}")));
                    lines.push(String::new());
                    match Value::pattern(out) {
                        Ok(v) => lines.extend(tree(&v, MAX_LINES)),
                        Err(e) => lines.push(format!("error: {e}")),
                    }
                    LispView {
                        title,
                        lines,
                        scroll: 0,
                        failed: false,
                    }
                }
                Err(e) => Self::error(title, format!("error: {e}")),
            };
        }
        let title = format!("{text}  — with state = {agent}'s state");
        let mut lisp = Lisp::new();
        match Value::pattern(state_of(agent, "", now, &list)) {
            Ok(state) => lisp.define("state", state),
            Err(e) => return Self::error(title, format!("error: {e}")),
        }
        match lisp.eval_str(text) {
            Ok(v) => LispView {
                title,
                lines: tree(&v, MAX_LINES),
                scroll: 0,
                failed: false,
            },
            Err(e) => Self::error(title, format!("error: {e}")),
        }
    }

    fn error(title: String, message: String) -> Self {
        LispView {
            title,
            lines: vec![message],
            scroll: 0,
            failed: true,
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
