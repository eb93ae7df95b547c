//! The help overlay: every key of the keymap (the focused pane's first),
//! the `:` commands and what every icon means, scrolled.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::{Layer, Step};
use crate::app::App;
use crate::panes::{centered, popup};

/// The help, scrolled by some lines.
#[derive(Debug, Clone, Default)]
pub struct Help {
    /// Lines scrolled.
    pub scroll: usize,
}

impl Layer for Help {
    /// It scrolls; Esc, `?` or `q` closes it.
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step {
        let max = help_max_scroll(app, app.size);
        let scroll = self.scroll.min(max);
        self.scroll = match key.code {
            KeyCode::Esc | KeyCode::Char('?' | 'q') => return Step::close(),
            KeyCode::Down | KeyCode::Char('j') => (scroll + 1).min(max),
            KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => (scroll + 10).min(max),
            KeyCode::End => max,
            KeyCode::PageUp => scroll.saturating_sub(10),
            KeyCode::Home => 0,
            _ => scroll,
        };
        Step::stay()
    }

    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        let theme = &app.theme;
        let lines = help_lines(app, help_width(size.width));
        let area = centered(size, 84, size.height.saturating_sub(2));
        let inner_h = usize::from(area.height.saturating_sub(2));
        let max = lines.len().saturating_sub(inner_h);
        let scroll = self.scroll.min(max);
        let shown: Vec<Line> = lines.into_iter().skip(scroll).take(inner_h).collect();
        frame.render_widget(Clear, area);
        let more = if max > 0 {
            format!(" ↑/↓ scroll {}/{max}", scroll)
        } else {
            String::new()
        };
        frame.render_widget(
            Paragraph::new(shown).block(popup(theme, &format!("Help — Esc closes{more}"))),
            area,
        );
    }
}

/// The `:` commands, for the help.
const COMMANDS: &[(&str, &str)] = &[
    (":msg AGENT TEXT", "send a message to an agent"),
    (":/ACTION", "run a dialect action as the agent in view"),
    (
        "!COMMAND",
        "your own shell command or request: its risk asked, run as you",
    ),
    (":output", "your last command's output again"),
    (":halt [AGENT]", "halt an agent, or every agent"),
    (":resume [AGENT]", "let it run again"),
    (":pulse AGENT [EVERY]", "pulse now, or every 30m"),
    (":rules", "the standing rules (x revokes)"),
    (":learned", "the phrasings you taught (x forgets)"),
    (
        ":lisp EXPR",
        "Pattern Lisp with state = the agent in view's state",
    ),
    (":lisp tool NAME ARGS", "what a tool would do (a dry run)"),
    (":log", "notifications: errors, flags, halts, timeouts"),
    (":open trace FILE", "replay a trace (Esc or :close leaves)"),
    (
        ":replay",
        "replay this constellation's own trace, from its database",
    ),
    (":step N", "jump the replay to step N"),
    (":filter verb V | outcome O", "filter the trace"),
    (":filter clear", "drop every filter"),
    (":q", "quit"),
];

/// What the icons and codes mean, for the help.
const LEGEND: &[(&str, &str)] = &[
    (
        "○ ◐ ● ■",
        "agent idle · waiting on a decision · generating · halted",
    ),
    ("12s 14m", "time to the agent's next pulse"),
    ("▸", "the selected row; ▶ the selected action in Turns"),
    ("✓ ✗ !", "action executed · denied or unreadable · failed"),
    ("✎", "a block with an unsaved draft"),
    ("C W A", "block kind: core, working, archival"),
    (
        "ro ap rw pt hu ad",
        "read-only, append, read-write, partner or human asks, admin",
    ),
    (
        "! 3",
        "on the status line: unseen notifications (N or :log opens them)",
    ),
    ("REPLAY", "the console shows a trace; decisions are off"),
];

/// The help's width: the popup's inner width on a screen `width` wide.
fn help_width(width: u16) -> usize {
    usize::from(width.min(84).saturating_sub(2))
}

/// The help's lines for a popup `width` columns wide inside: each key or
/// code right-aligned in one column, its meaning wrapped on words beside it.
pub fn help_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let head = |t: &str| Line::from(Span::styled(t.to_string(), theme.style("ui.header")));
    let mut rows: Vec<(Option<&str>, String, String)> = Vec::new();
    // The focused pane's own keys first, then every key.
    let pane = format!("In the {} pane", app.focus.title());
    let mut here: Vec<(String, String)> = Vec::new();
    let moves = [crate::keymap::Action::Down, crate::keymap::Action::Up];
    let hinted = crate::app::render::hints(app).into_iter().map(|(a, _)| a);
    for action in moves.into_iter().chain(hinted) {
        for b in app.keymap.bindings().iter().filter(|b| b.action == action) {
            if !here.iter().any(|(k, _)| *k == b.keys_text()) {
                here.push((b.keys_text(), b.desc.clone()));
            }
        }
    }
    if !here.is_empty() {
        rows.push((Some(pane.as_str()), String::new(), String::new()));
        rows.extend(here.into_iter().map(|(k, d)| (None, k, d)));
    }
    rows.push((Some("Keys"), String::new(), String::new()));
    for b in app.keymap.bindings() {
        rows.push((None, b.keys_text(), b.desc.clone()));
    }
    rows.push((Some("Commands (:)"), String::new(), String::new()));
    for (c, d) in COMMANDS {
        rows.push((None, (*c).into(), (*d).into()));
    }
    rows.push((Some("Icons and codes"), String::new(), String::new()));
    for (c, d) in LEGEND {
        rows.push((None, (*c).into(), (*d).into()));
    }
    let key_w = rows
        .iter()
        .map(|(_, k, _)| k.width())
        .max()
        .unwrap_or(0)
        .min(16)
        .min(width / 3);
    let text_w = width.saturating_sub(key_w + 2).max(8);
    let mut lines = Vec::new();
    for (header, key, desc) in rows {
        if let Some(h) = header {
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            lines.push(head(h));
            continue;
        }
        // A key too long for the column gets a line of its own.
        let key = if key.width() > key_w {
            lines.push(Line::from(Span::styled(
                crate::model::first_line(&format!("  {key}"), width),
                theme.style("ui.key_hint"),
            )));
            String::new()
        } else {
            key
        };
        let pad = " ".repeat(key_w.saturating_sub(key.width()));
        let wrapped = crate::panes::wrap_words(vec![(desc, theme.style("ui.text"))], text_w);
        for (i, line) in wrapped.into_iter().enumerate() {
            let lead = if i == 0 {
                Span::styled(format!("{pad}{key}  "), theme.style("ui.key_hint"))
            } else {
                Span::raw(" ".repeat(key_w + 2))
            };
            let mut spans = vec![lead];
            spans.extend(line.spans);
            lines.push(Line::from(spans));
        }
    }
    lines
}

/// How far the help can scroll on a screen of `size`.
pub fn help_max_scroll(app: &App, size: (u16, u16)) -> usize {
    let inner_h = usize::from(size.1.saturating_sub(4));
    help_lines(app, help_width(size.0))
        .len()
        .saturating_sub(inner_h)
}
