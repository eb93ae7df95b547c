//! The status line (state, hints, notices) and the overlays drawn over
//! the panes: help, prompts, confirmations, the editor.

use super::*;

pub(super) fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(
        format!(" {} ", app.title),
        app.theme.style("ui.title"),
    )];
    for a in &app.model.agents {
        let (mark, role) = match a.state {
            RunState::Generating => ("●", "ui.ok"),
            RunState::Waiting => ("◐", "ui.waiting"),
            RunState::Halted => ("■", "ui.denied"),
            RunState::Idle => ("○", "ui.dim"),
        };
        let pulse = a
            .next_pulse_at
            .map(|at| format!(" {}s", (at - app.now).max(0) / 1000))
            .unwrap_or_default();
        spans.push(Span::styled(
            format!(" {mark} {}{pulse}", a.name),
            app.theme.style(role),
        ));
    }
    spans.push(Span::styled(
        format!("  │ {} pending │ {} ", app.model.pending.len(), app.db),
        app.theme.style("ui.status_bar"),
    ));
    if let Some(notice) = &app.notice {
        spans.push(Span::styled(
            format!("│ {notice} "),
            app.theme.style("ui.waiting"),
        ));
    } else {
        let hints: &[(crate::tui::keymap::Action, &str)] = match app.focus {
            Pane::Turns => &[
                (crate::tui::keymap::Action::Follow, "follow"),
                (crate::tui::keymap::Action::FilterAgent, "agent"),
            ],
            Pane::Memory => &[
                (crate::tui::keymap::Action::EditBlock, "edit"),
                (crate::tui::keymap::Action::UndoBlock, "undo"),
                (crate::tui::keymap::Action::Search, "search"),
            ],
            Pane::Replay => &[
                (crate::tui::keymap::Action::StepForward, "next"),
                (crate::tui::keymap::Action::PlayPause, "play"),
            ],
            _ => &[],
        };
        let common = [
            (crate::tui::keymap::Action::Approve, "approve"),
            (crate::tui::keymap::Action::Deny, "deny"),
            (crate::tui::keymap::Action::Help, "help"),
        ];
        for (action, name) in hints.iter().chain(common.iter()) {
            if let Some(keys) = app.keymap.keys_for(*action) {
                spans.push(Span::styled(
                    format!(" {keys}"),
                    app.theme.style("ui.key_hint"),
                ));
                spans.push(Span::styled(
                    format!(" {name}"),
                    app.theme.style("ui.status_bar"),
                ));
            }
        }
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(app.theme.style("ui.status_bar")),
        area,
    );
}

pub(super) fn render_overlay(app: &App, frame: &mut Frame, size: Rect) {
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => {
            let bindings = app.keymap.bindings();
            let area = centered(size, 72, bindings.len() as u16 + 2);
            let lines: Vec<Line> = bindings
                .iter()
                .map(|b| {
                    Line::from(vec![
                        Span::styled(
                            format!("{:>14}  ", b.keys_text()),
                            app.theme.style("ui.key_hint"),
                        ),
                        Span::styled(b.desc.clone(), app.theme.style("ui.text")),
                    ])
                })
                .collect();
            frame.render_widget(Clear, area);
            frame.render_widget(
                Paragraph::new(lines).block(popup(app, "Keys (Esc closes)")),
                area,
            );
        }
        Overlay::Input { purpose, text } => {
            let prompt = match purpose {
                InputPurpose::DenyReason(id) => format!("deny {id} because: "),
                InputPurpose::Command => ":".to_string(),
                InputPurpose::Search => "search memory: ".to_string(),
                InputPurpose::Message(agent) => format!("message to {agent}: "),
            };
            let area = Rect::new(size.x, size.bottom().saturating_sub(2), size.width, 1);
            frame.render_widget(Clear, area);
            let line = Line::from(vec![
                Span::styled(prompt, app.theme.style("ui.key_hint")),
                Span::styled(format!("{text}█"), app.theme.style("ui.input")),
            ]);
            frame.render_widget(
                Paragraph::new(line).style(app.theme.style("ui.input")),
                area,
            );
        }
        Overlay::Editor {
            target,
            area: textarea,
            ..
        } => {
            let title = match target {
                EditTarget::Block { agent, label } => {
                    format!("editing {agent}/{label} — Ctrl-S saves, Esc closes")
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
            let block = popup(app, &title);
            let inner = block.inner(area);
            frame.render_widget(block, area);
            frame.render_widget(&**textarea, inner);
        }
        Overlay::ConfirmQuit => {
            let area = centered(size, 50, 3);
            frame.render_widget(Clear, area);
            frame.render_widget(
                Paragraph::new("An edit is unsaved. Quit anyway? (y/n)").block(popup(app, "Quit")),
                area,
            );
        }
    }
}
