//! The editor overlay: a block's value or a waiting request's action,
//! edited in a text area; Ctrl-S saves the block (at the version the
//! edit began from) or approves the edited action, Esc keeps a changed
//! block as a draft.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui_textarea::TextArea;

use super::{Layer, Step};
use crate::app::{App, Command};
use crate::backend::BackendOp;
use crate::panes::{Draft, EditTarget, centered, popup};

/// The editor: what is edited, the text, and how its last save went.
#[derive(Debug, Clone)]
pub struct Editor {
    /// What is edited.
    pub target: EditTarget,
    /// The text area.
    pub area: Box<TextArea<'static>>,
    /// The text it started with.
    pub original: String,
    /// Why the last save or approval failed (the editor stays open).
    pub error: Option<String>,
    /// A save or approval was sent and its answer is awaited.
    pub waiting: bool,
}

impl Editor {
    /// An editor on `text`.
    pub fn new(target: EditTarget, text: &str, original: String) -> Self {
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let mut area = TextArea::new(lines);
        // Long lines wrap at word boundaries on screen (soft: the text
        // keeps its own lines).
        area.set_wrap_mode(ratatui_textarea::WrapMode::Word);
        Editor {
            target,
            area: Box::new(area),
            original,
            error: None,
            waiting: false,
        }
    }

    /// The text as edited.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// Sends the edit: a block's save (its draft kept until it succeeds);
    /// an edited action's approval is held for the undo window, then sent.
    fn send(&mut self, app: &mut App) -> Vec<Command> {
        let value = self.text();
        match &self.target {
            EditTarget::Block {
                agent,
                label,
                base_version,
            } => {
                self.error = None;
                self.waiting = true;
                app.memory.drafts.insert(
                    (agent.clone(), label.clone()),
                    Draft {
                        text: value.clone(),
                        base_version: *base_version,
                    },
                );
                vec![Command::Op(BackendOp::Host(
                    partner_protocol::Op::SaveBlock {
                        agent: agent.clone(),
                        label: label.clone(),
                        value,
                        base_version: *base_version,
                    },
                ))]
            }
            EditTarget::Action { id } => {
                let id = id.clone();
                app.learn_offer = app
                    .model
                    .proposed_words(&id)
                    .map(|words| (id.clone(), words, value.trim().to_string()));
                app.hold_spec(id, partner_protocol::wire::Decision::ApproveEdited(value))
            }
        }
    }

    /// Keeps a changed block as a draft.
    fn keep_draft(&self, app: &mut App) {
        let value = self.text();
        if let EditTarget::Block {
            agent,
            label,
            base_version,
        } = &self.target
            && value != self.original
        {
            app.memory.drafts.insert(
                (agent.clone(), label.clone()),
                Draft {
                    text: value,
                    base_version: *base_version,
                },
            );
            app.say(format!("{label}: kept as a draft (✎): i reopens it"));
        }
    }
}

impl Layer for Editor {
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('s') if ctrl => {
                let sent = self.send(app);
                // An edited approval is a decision like any: held for the
                // undo window, the editor closed meanwhile.
                match self.target {
                    EditTarget::Action { .. } => Step::Close(sent),
                    EditTarget::Block { .. } => Step::Stay(sent),
                }
            }
            KeyCode::Esc => {
                self.keep_draft(app);
                Step::close()
            }
            // The whole text's end and start, as editors have them.
            KeyCode::End if ctrl => {
                self.area.move_cursor(ratatui_textarea::CursorMove::Bottom);
                self.area.move_cursor(ratatui_textarea::CursorMove::End);
                Step::stay()
            }
            KeyCode::Home if ctrl => {
                self.area.move_cursor(ratatui_textarea::CursorMove::Top);
                self.area.move_cursor(ratatui_textarea::CursorMove::Head);
                Step::stay()
            }
            _ => {
                self.area.input(key);
                Step::stay()
            }
        }
    }

    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        let theme = &app.theme;
        let title = match &self.target {
            EditTarget::Block { agent, label, .. } => {
                format!("editing {agent}/{label} — Ctrl-S saves, Esc keeps a draft")
            }
            EditTarget::Action { id } => {
                format!("editing the action of {id} — Ctrl-S approves it, Esc closes")
            }
        };
        let area = centered(
            size,
            size.width.saturating_sub(8).max(40),
            size.height.saturating_sub(6).max(8),
        );
        frame.render_widget(Clear, area);
        let block = popup(theme, &title);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let (text_area, status) = if self.error.is_some() || self.waiting {
            let [t, s] = Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);
            (t, Some(s))
        } else {
            (inner, None)
        };
        frame.render_widget(&*self.area, text_area);
        if let Some(s) = status {
            let (text, role) = match &self.error {
                Some(e) => (format!("✗ {e}"), "ui.error"),
                None => ("sent; waiting for the answer…".to_string(), "ui.dim"),
            };
            frame.render_widget(
                Paragraph::new(text)
                    .style(theme.style(role))
                    .wrap(Wrap { trim: true }),
                s,
            );
        }
    }
}
