//! The notifications overlay (`N`, `:log`): each notification wrapped,
//! newest first, and one shown whole with what to do about it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{Layer, Step};
use crate::app::App;
use crate::panes::{centered, popup, wrap_words};
use crate::theme::Theme;
use partner_core::clock::format_time;

/// The notifications: a list to scroll, or one opened whole.
#[derive(Debug, Clone, Default)]
pub struct Log {
    /// The selected one (0: the newest).
    pub scroll: usize,
    /// True when the selected one is shown whole, with what to do.
    pub open: bool,
}

impl Layer for Log {
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step {
        let max = app.model.notifications.len().saturating_sub(1);
        let scroll = self.scroll;
        let (to, open) = match key.code {
            KeyCode::Esc | KeyCode::Char('q' | '!') if self.open => (scroll, false),
            KeyCode::Esc | KeyCode::Char('q' | '!') => return Step::close(),
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') if !self.open => {
                self.open = !app.model.notifications.is_empty();
                return Step::stay();
            }
            KeyCode::Enter | KeyCode::Left | KeyCode::Char('h') => (scroll, false),
            KeyCode::Down | KeyCode::Char('j') => (scroll + 1, false),
            KeyCode::Up | KeyCode::Char('k') => (scroll.saturating_sub(1), false),
            KeyCode::PageDown => (scroll + 10, false),
            KeyCode::PageUp => (scroll.saturating_sub(10), false),
            _ => return Step::stay(),
        };
        self.scroll = to.min(max);
        self.open = open;
        Step::stay()
    }

    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        let theme = &app.theme;
        let area = centered(
            size,
            size.width.saturating_sub(4),
            size.height.saturating_sub(2),
        );
        frame.render_widget(Clear, area);
        let (title, lines) = if self.open {
            entry(
                app,
                theme,
                self.scroll,
                usize::from(area.width.saturating_sub(2)),
            )
        } else {
            list(app, theme, self.scroll, area)
        };
        frame.render_widget(Paragraph::new(lines).block(popup(theme, &title)), area);
    }
}

/// What to do about a notification, when partner knows.
fn advice(n: &crate::model::Notification) -> Option<&'static str> {
    use crate::model::NoticeKind;
    let text = n.text.as_str();
    Some(if text.contains("model call failed") {
        "Check that the model server named above runs and can be reached (a refused connection means nothing listens there), or change the agent's model or its [providers] section in the config. The agent tries again at its next message or pulse."
    } else if text.contains("daemon went away") {
        "The agents may be stopped. Start the daemon again with `partner serve`; this console attaches again by itself. Decisions are refused until it does."
    } else {
        match n.kind {
            NoticeKind::Halt => {
                "The agent stays halted until you let it run again: `:resume AGENT`."
            }
            NoticeKind::Timeout => {
                "Nobody decided the request in time, so it was refused; the agent was told."
            }
            NoticeKind::Proposal => "The proposed action waits in the queue for you.",
            NoticeKind::Echo => {
                "The model repeated its instructions as if they were actions; none of those lines ran. A model this small may do better with `profile = \"compact\"`, or a larger model."
            }
            NoticeKind::Context => {
                "Older history was left out of the prompt to fit the model's context; raise `context` for the agent to keep more."
            }
            _ => return None,
        }
    })
}

/// The notifications, newest first, each wrapped; the selected one marked
/// and kept in view.
fn list(app: &App, theme: &Theme, selected: usize, area: Rect) -> (String, Vec<Line<'static>>) {
    let title = format!(
        "Notifications ({}) · ↑/↓ select · Enter: whole · Esc",
        app.model.notifications.len()
    );
    if app.model.notifications.is_empty() {
        return (
            title,
            vec![Line::from(Span::styled(
                "Nothing to report: errors, flags, halts and timeouts appear here.",
                theme.style("ui.dim"),
            ))],
        );
    }
    let width = usize::from(area.width.saturating_sub(2)).max(20);
    let height = usize::from(area.height.saturating_sub(2)).max(1);
    let mut lines = Vec::new();
    let mut selected_at = 0;
    for (i, n) in app.model.notifications.iter().rev().enumerate() {
        if i == selected {
            selected_at = lines.len();
        }
        let role = match n.kind {
            crate::model::NoticeKind::Flag => "ui.waiting",
            crate::model::NoticeKind::Halt => "ui.denied",
            _ => "ui.error",
        };
        let marker = if i == selected { "▶ " } else { "  " };
        let head = format!(
            "{marker}{} {:<8} {} ",
            &format_time(n.time)[11..19],
            n.kind.tag(),
            n.agent.clone().unwrap_or_else(|| "-".into())
        );
        let text_style = if i == selected {
            theme.style("ui.selection")
        } else {
            theme.style("ui.text")
        };
        // At most three lines each in the list; Enter shows the rest.
        let wrapped = wrap_words(
            vec![
                (head, theme.style(role)),
                (n.text.replace('\n', " "), text_style),
            ],
            width,
        );
        let more = wrapped.len() > 3;
        lines.extend(wrapped.into_iter().take(3));
        if more {
            lines.push(Line::from(Span::styled(
                "    … (Enter shows it whole)",
                theme.style("ui.dim"),
            )));
        }
        if lines.len() > selected_at + height * 2 {
            break;
        }
    }
    // Scroll so the selected notification is in view.
    let start = selected_at.saturating_sub(height.saturating_sub(4));
    (title, lines.into_iter().skip(start).collect())
}

/// One notification whole, and what to do about it.
fn entry(app: &App, theme: &Theme, selected: usize, width: usize) -> (String, Vec<Line<'static>>) {
    let Some(n) = app.model.notifications.iter().rev().nth(selected) else {
        return ("Notification".into(), Vec::new());
    };
    let title = format!(
        "{} · {} · {} · Esc: back",
        &format_time(n.time)[11..19],
        n.kind.tag(),
        n.agent.clone().unwrap_or_else(|| "-".into())
    );
    let width = width.max(20);
    let mut lines = Vec::new();
    for paragraph in n.text.split('\n') {
        lines.extend(wrap_words(
            vec![(paragraph.to_string(), theme.style("ui.text"))],
            width,
        ));
    }
    if let Some(advice) = advice(n) {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "What to do",
            theme.style("ui.header"),
        )));
        lines.extend(wrap_words(
            vec![(advice.to_string(), theme.style("ui.dim"))],
            width,
        ));
    }
    (title, lines)
}
