//! A save that met someone else's change: the partner's edit as a diff
//! against the block as it is now, and the ways out — save mine over it,
//! take theirs, edit mine again, or keep the draft.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::{Editor, Layer, Overlay, Step};
use crate::app::{App, Command};
use crate::backend::BackendOp;
use crate::panes::{EditTarget, centered, diff_lines, popup};
use partner_protocol::wire::Block;

/// The partner's text and the block as it is now.
#[derive(Debug, Clone)]
pub struct Merge {
    /// Agent.
    pub agent: String,
    /// Label.
    pub label: String,
    /// The partner's edit.
    pub ours: String,
    /// The block now.
    pub theirs: Block,
}

impl Merge {
    /// The draft's base moves to their version (mine is saved, or edited,
    /// against it).
    fn rebase_draft(&self, app: &mut App) {
        let key = (self.agent.clone(), self.label.clone());
        if let Some(d) = app.memory.drafts.get_mut(&key) {
            d.base_version = self.theirs.version;
        }
    }
}

impl Layer for Merge {
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step {
        match key.code {
            KeyCode::Char('o') => {
                self.rebase_draft(app);
                Step::Close(vec![Command::Op(BackendOp::Host(
                    partner_protocol::Op::SaveBlock {
                        agent: self.agent.clone(),
                        label: self.label.clone(),
                        value: self.ours.clone(),
                        base_version: self.theirs.version,
                    },
                ))])
            }
            KeyCode::Char('t') => {
                app.memory
                    .drafts
                    .remove(&(self.agent.clone(), self.label.clone()));
                app.say(format!("kept their {}: your draft is dropped", self.label));
                Step::Close(vec![Command::Op(BackendOp::Host(
                    partner_protocol::Op::Blocks {
                        agent: self.agent.clone(),
                    },
                ))])
            }
            KeyCode::Char('e') => {
                self.rebase_draft(app);
                let target = EditTarget::Block {
                    agent: self.agent.clone(),
                    label: self.label.clone(),
                    base_version: self.theirs.version,
                };
                Step::Open(Overlay::Editor(Editor::new(
                    target,
                    &self.ours,
                    self.theirs.value.clone(),
                )))
            }
            KeyCode::Esc => {
                app.say("your draft is kept: i reopens it");
                Step::close()
            }
            _ => Step::stay(),
        }
    }

    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        let theme = &app.theme;
        let area = centered(
            size,
            size.width.saturating_sub(6),
            size.height.saturating_sub(4),
        );
        frame.render_widget(Clear, area);
        let diff = partner_protocol::wire::diff(
            &self.label,
            &self.theirs.value,
            &self.ours,
            self.theirs.version,
            self.theirs.version + 1,
        );
        let mut lines = vec![
            Line::from(Span::styled(
                format!(
                    "{}/{} changed to v{} while you edited. Your edit, against it:",
                    self.agent, self.label, self.theirs.version
                ),
                theme.style("ui.waiting"),
            )),
            Line::default(),
        ];
        lines.extend(diff_lines(theme, &diff));
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "o: save mine over it · t: take theirs (drop my draft) · e: edit mine again · Esc: keep my draft",
            theme.style("ui.key_hint"),
        )));
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(popup(theme, "The block changed")),
            area,
        );
    }
}
