//! The one-line prompt: a `:` command, a search, a message or a reason,
//! edited with history and completion; Enter submits it for its purpose.

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{Layer, Step};
use crate::app::App;
use crate::panes::PromptPurpose;
use crate::prompt::{Edit, Prompt};

/// A prompt open for a purpose.
#[derive(Debug, Clone)]
pub struct PromptLine {
    /// What for.
    pub purpose: PromptPurpose,
    /// The line.
    pub prompt: Prompt,
}

impl PromptLine {
    /// An empty line for `purpose`.
    pub fn new(purpose: PromptPurpose) -> Self {
        PromptLine {
            purpose,
            prompt: Prompt::default(),
        }
    }

    /// What the line is for, in front of it.
    fn label(&self, app: &App) -> String {
        match &self.purpose {
            PromptPurpose::DenyReason { id, always: false } => format!("deny {id} because: "),
            PromptPurpose::DenyReason { id, always: true } => {
                format!("deny {id} always, because: ")
            }
            PromptPurpose::Command => match app.acting_agent() {
                Some(agent) if self.prompt.line.text().starts_with('/') => {
                    format!(":(as {agent}) ")
                }
                _ => ":".to_string(),
            },
            PromptPurpose::SearchMemory => "search memory: ".into(),
            PromptPurpose::SearchTurns => "find in turns: ".into(),
            PromptPurpose::SearchTrace => "filter the trace: ".into(),
            PromptPurpose::Message(agent) => format!("message to {agent}: "),
        }
    }
}

impl Layer for PromptLine {
    /// Takes text; Enter submits it, Esc drops it.
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step {
        let completer = app.completer(&self.purpose);
        match self.prompt.key(key, &app.history, completer.as_ref()) {
            Edit::Submit => {
                let text = self.prompt.line.text().to_string();
                if self.purpose == PromptPurpose::Command {
                    app.history.push(&text);
                }
                Step::Close(app.submit(self.purpose.clone(), text))
            }
            Edit::Cancel => Step::close(),
            _ => Step::stay(),
        }
    }

    /// One line above the status message when there is one: it may be
    /// what the line is for ("Enter runs it").
    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        let theme = &app.theme;
        let row = app
            .areas(size)
            .message
            .map_or(size.bottom().saturating_sub(2), |m| m.y.saturating_sub(1));
        let area = Rect::new(size.x, row, size.width, 1);
        frame.render_widget(Clear, area);
        let text = self.prompt.line.text();
        let (before, after) = text.split_at(self.prompt.line.cursor());
        let mut after_chars = after.chars();
        let at = after_chars
            .next()
            .map_or(" ".to_string(), |c| c.to_string());
        let rest: String = after_chars.collect();
        let mut spans = vec![
            Span::styled(self.label(app), theme.style("ui.key_hint")),
            Span::styled(before.to_string(), theme.style("ui.input")),
            Span::styled(
                at,
                theme
                    .style("ui.input")
                    .add_modifier(ratatui::style::Modifier::REVERSED),
            ),
            Span::styled(rest, theme.style("ui.input")),
        ];
        if !self.prompt.offered.is_empty() {
            spans.push(Span::styled(
                format!("   {}", self.prompt.offered.join(" ")),
                theme.style("ui.dim"),
            ));
        }
        frame.render_widget(
            Paragraph::new(Line::from(spans)).style(theme.style("ui.input")),
            area,
        );
    }
}
