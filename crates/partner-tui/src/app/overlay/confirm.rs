//! A yes-or-no question before something that cannot be taken back (a
//! standing rule, a revocation, quitting with drafts, a command run):
//! `y` does it, any other key does not.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::{Confirmed, Layer, Step};
use crate::app::App;
use crate::panes::{centered, popup};

/// A question and what yes does.
#[derive(Debug, Clone)]
pub struct Confirm {
    /// The question.
    pub question: String,
    /// What yes does.
    pub on_yes: Confirmed,
}

impl Layer for Confirm {
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step {
        if matches!(key.code, KeyCode::Char('y' | 'Y')) {
            return Step::Close(app.confirmed(self.on_yes.clone()));
        }
        app.say("not done");
        Step::close()
    }

    /// As tall as the question needs: a command's reasons can run long.
    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        let theme = &app.theme;
        let wanted = u16::try_from(self.question.width() + 2).unwrap_or(u16::MAX);
        let width = wanted
            .clamp(40, 76)
            .min(size.width.saturating_sub(4))
            .max(20);
        let mut lines = crate::panes::wrap_words(
            vec![(self.question.clone(), theme.style("ui.text"))],
            usize::from(width - 2),
        );
        let height = u16::try_from(lines.len() + 4).unwrap_or(u16::MAX);
        let area = centered(size, width, height);
        // On a screen too small for all of it, the question is cut
        // and the keys stay.
        let room = usize::from(area.height.saturating_sub(4)).max(1);
        if lines.len() > room {
            lines.truncate(room.saturating_sub(1));
            lines.push(Line::from(Span::styled("…", theme.style("ui.dim"))));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "y: yes · any other key: no",
            theme.style("ui.key_hint"),
        )));
        frame.render_widget(Clear, area);
        frame.render_widget(
            Paragraph::new(lines).block(popup(theme, "Are you sure?")),
            area,
        );
    }
}
