//! Drawing the overlays over the panes: one function per overlay, and one
//! list popup that the learned phrasings and the standing rules share.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::App;
use super::overlays::{Editor, Merge, Overlay, help_lines, help_width};
use crate::panes::{EditTarget, PromptPurpose, centered, diff_lines, popup};
use crate::prompt::Prompt;
use crate::theme::Theme;
use partner_core::clock::format_time;

/// Draws the overlay over the panes.
pub fn render_overlay(app: &App, frame: &mut Frame, size: Rect) {
    let theme = &app.theme;
    match &app.overlay {
        Overlay::None => {}
        Overlay::Lisp(view) => view.render(theme, frame, size),
        Overlay::Output(view) => view.render(theme, frame, size),
        Overlay::Help { scroll } => help(app, frame, size, *scroll),
        Overlay::Prompt { purpose, prompt } => prompt_line(app, frame, size, purpose, prompt),
        Overlay::Editor(editor) => editor_popup(theme, frame, size, editor),
        Overlay::Confirm { question, .. } => confirm(theme, frame, size, question),
        Overlay::Learned { rules, selected } => {
            let rows = rules
                .iter()
                .map(|r| (r.id, format!("\"{}\"  →  {}", r.words, r.action)))
                .collect();
            list_popup(
                theme,
                frame,
                size,
                ListPopup {
                    rows,
                    selected: *selected,
                    empty: "Nothing learned yet: fix a proposed action with E to teach what words mean.",
                    title: "Learned phrasings — ↑/↓ select, x forgets, Esc closes",
                },
            );
        }
        Overlay::Rules { rules, selected } => {
            let rows = rules.iter().map(|r| (r.id, rule_text(r))).collect();
            list_popup(
                theme,
                frame,
                size,
                ListPopup {
                    rows,
                    selected: *selected,
                    empty: "No standing rules: every request is decided one at a time.",
                    title: "Standing rules — ↑/↓ select, x revokes, Esc closes",
                },
            );
        }
        Overlay::Log { scroll, open } => log(app, frame, size, *scroll, *open),
        Overlay::Merge(merge) => merge_popup(theme, frame, size, merge),
    }
}

/// The help, scrolled.
fn help(app: &App, frame: &mut Frame, size: Rect, scroll: usize) {
    let theme = &app.theme;
    let lines = help_lines(app, help_width(size.width));
    let area = centered(size, 84, size.height.saturating_sub(2));
    let inner_h = usize::from(area.height.saturating_sub(2));
    let max = lines.len().saturating_sub(inner_h);
    let scroll = scroll.min(max);
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

/// The one-line prompt, above the status message when there is one.
fn prompt_line(app: &App, frame: &mut Frame, size: Rect, purpose: &PromptPurpose, prompt: &Prompt) {
    let theme = &app.theme;
    let label = match purpose {
        PromptPurpose::DenyReason { id, always: false } => format!("deny {id} because: "),
        PromptPurpose::DenyReason { id, always: true } => {
            format!("deny {id} always, because: ")
        }
        PromptPurpose::Command => match app.acting_agent() {
            Some(agent) if prompt.line.text().starts_with('/') => {
                format!(":(as {agent}) ")
            }
            _ => ":".to_string(),
        },
        PromptPurpose::SearchMemory => "search memory: ".into(),
        PromptPurpose::SearchTurns => "find in turns: ".into(),
        PromptPurpose::SearchTrace => "filter the trace: ".into(),
        PromptPurpose::Message(agent) => format!("message to {agent}: "),
    };
    // Above the status message, when there is one: it may be what
    // the line is for ("Enter runs it").
    let row = app
        .areas(size)
        .message
        .map_or(size.bottom().saturating_sub(2), |m| m.y.saturating_sub(1));
    let area = Rect::new(size.x, row, size.width, 1);
    frame.render_widget(Clear, area);
    let text = prompt.line.text();
    let cursor = prompt.line.cursor();
    let (before, after) = text.split_at(cursor);
    let mut after_chars = after.chars();
    let at = after_chars
        .next()
        .map_or(" ".to_string(), |c| c.to_string());
    let rest: String = after_chars.collect();
    let mut spans = vec![
        Span::styled(label, theme.style("ui.key_hint")),
        Span::styled(before.to_string(), theme.style("ui.input")),
        Span::styled(
            at,
            theme
                .style("ui.input")
                .add_modifier(ratatui::style::Modifier::REVERSED),
        ),
        Span::styled(rest, theme.style("ui.input")),
    ];
    if !prompt.offered.is_empty() {
        spans.push(Span::styled(
            format!("   {}", prompt.offered.join(" ")),
            theme.style("ui.dim"),
        ));
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(theme.style("ui.input")),
        area,
    );
}

/// The block or action editor.
fn editor_popup(theme: &Theme, frame: &mut Frame, size: Rect, editor: &Editor) {
    let title = match &editor.target {
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
    let (text_area, status) = if editor.error.is_some() || editor.waiting {
        let [t, s] = ratatui::layout::Layout::vertical([
            ratatui::layout::Constraint::Min(1),
            ratatui::layout::Constraint::Length(2),
        ])
        .areas(inner);
        (t, Some(s))
    } else {
        (inner, None)
    };
    frame.render_widget(&*editor.area, text_area);
    if let Some(s) = status {
        let (text, role) = match &editor.error {
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

/// A yes-or-no question, as tall as it needs.
fn confirm(theme: &Theme, frame: &mut Frame, size: Rect, question: &str) {
    // As tall as the question needs: a command's reasons can run long.
    let wanted = u16::try_from(question.width() + 2).unwrap_or(u16::MAX);
    let width = wanted
        .clamp(40, 76)
        .min(size.width.saturating_sub(4))
        .max(20);
    let mut lines = crate::panes::wrap_words(
        vec![(question.to_string(), theme.style("ui.text"))],
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

/// A list of numbered rows with one selected, or a line saying it is empty.
struct ListPopup {
    /// Each row's number and text.
    rows: Vec<(i64, String)>,
    /// The selected row.
    selected: usize,
    /// What an empty list says.
    empty: &'static str,
    /// The popup's title.
    title: &'static str,
}

/// Draws a [`ListPopup`] in the middle of the screen.
fn list_popup(theme: &Theme, frame: &mut Frame, size: Rect, list: ListPopup) {
    let area = centered(size, 100, (list.rows.len() as u16 + 4).clamp(6, 30));
    frame.render_widget(Clear, area);
    let mut lines = Vec::new();
    if list.rows.is_empty() {
        lines.push(Line::from(Span::styled(list.empty, theme.style("ui.dim"))));
    }
    for (i, (id, text)) in list.rows.into_iter().enumerate() {
        let style = if i == list.selected {
            theme.style("ui.selection")
        } else {
            theme.style("ui.text")
        };
        lines.push(Line::from(vec![
            Span::styled(format!("#{id:<4}"), theme.style("ui.key_hint")),
            Span::styled(text, style),
        ]));
    }
    frame.render_widget(Paragraph::new(lines).block(popup(theme, list.title)), area);
}

/// A standing rule in one line: effect, agent, scope, who made it, until when.
fn rule_text(r: &partner_policy::StandingRule) -> String {
    let scope = r.scope();
    let until = r
        .expires_at
        .map(|at| format!(" until {}", &format_time(at)[..16]))
        .unwrap_or_default();
    format!(
        "{} {}: /{scope} (by {}{until})",
        r.effect, r.agent, r.created_by
    )
}

/// The notifications: the list, or one opened whole.
fn log(app: &App, frame: &mut Frame, size: Rect, scroll: usize, open: bool) {
    let theme = &app.theme;
    let area = centered(
        size,
        size.width.saturating_sub(4),
        size.height.saturating_sub(2),
    );
    frame.render_widget(Clear, area);
    let (title, lines) = if open {
        super::log::entry(
            app,
            theme,
            scroll,
            usize::from(area.width.saturating_sub(2)),
        )
    } else {
        super::log::list(app, theme, scroll, area)
    };
    frame.render_widget(Paragraph::new(lines).block(popup(theme, &title)), area);
}

/// A block that changed while it was edited: the edit against it, and the
/// ways out.
fn merge_popup(theme: &Theme, frame: &mut Frame, size: Rect, merge: &Merge) {
    let area = centered(
        size,
        size.width.saturating_sub(6),
        size.height.saturating_sub(4),
    );
    frame.render_widget(Clear, area);
    let diff = partner_store::memory::blocks::diff(
        &merge.label,
        &merge.theirs.value,
        &merge.ours,
        merge.theirs.version,
        merge.theirs.version + 1,
    );
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                "{}/{} changed to v{} while you edited. Your edit, against it:",
                merge.agent, merge.label, merge.theirs.version
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
