//! Drawing the whole console: the panes (each draws itself inside its
//! border), the tab bar on narrow screens, the status line, the overlay.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::App;
use super::layout::TAB_WIDTH;
use super::overlay::render_overlay;
use crate::keymap::Action;
use crate::model::first_line;
use crate::panes::{Component, Pane, human_duration, pane_block};
use partner_protocol::RunState;

/// Draws the whole console.
pub fn render(app: &App, frame: &mut Frame) {
    let size = frame.area();
    frame.render_widget(Block::new().style(app.theme.style("ui.background")), size);
    let areas = app.areas(size);
    let view = app.view();
    if let Some(tabs) = areas.tabs {
        render_tabs(app, frame, tabs);
    }
    for (pane, rect) in &areas.panes {
        let component: &dyn Component = match pane {
            Pane::Turns => &app.turns,
            Pane::Pending => &app.queue,
            Pane::Memory => &app.memory,
            Pane::Trace => &app.trace,
            Pane::Replay => match &app.replay {
                Some(r) => r,
                None => continue,
            },
        };
        let block = pane_block(&app.theme, &component.title(&view), app.focus == *pane);
        let inner = block.inner(*rect);
        frame.render_widget(block, *rect);
        component.render(frame, inner, &view);
    }
    render_status(app, frame, areas.status, areas.message);
    render_overlay(app, frame, size);
}

fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    for pane in app.panes() {
        let label = match pane {
            Pane::Pending if !app.model.pending.is_empty() => {
                format!(" Pending {} ", app.model.pending.len())
            }
            other => format!(" {} ", other.title()),
        };
        let width = usize::from(TAB_WIDTH);
        let label = format!("{label:<width$}");
        let style = if pane == app.focus {
            app.theme.style("ui.selection")
        } else {
            app.theme.style("ui.dim")
        };
        spans.push(Span::styled(label, style));
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(app.theme.style("ui.status_bar")),
        area,
    );
}

/// The key hints for the focused pane (the footer shows them; help lists
/// them first).
pub(super) fn hints(app: &App) -> Vec<(Action, &'static str)> {
    let mut hints: Vec<(Action, &'static str)> = match app.focus {
        Pane::Turns => vec![(Action::Follow, "follow"), (Action::NextAction, "actions")],
        Pane::Memory => vec![
            (Action::EditBlock, "edit"),
            (Action::UndoBlock, "undo"),
            (Action::Search, "search"),
        ],
        Pane::Replay => vec![(Action::StepForward, "step"), (Action::PlayPause, "play")],
        Pane::Trace => vec![(Action::Search, "filter")],
        Pane::Pending => Vec::new(),
    };
    if app.decisions_visible() {
        hints.push((Action::Approve, "approve"));
        hints.push((Action::Deny, "deny"));
    }
    hints.push((Action::Help, "help"));
    hints
}

/// How much of the agents a status bar has room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Detail {
    /// Each agent with its daemon and next pulse; the connection in words.
    Full,
    /// Each agent's mark and name; the connection in a word.
    Brief,
    /// How many agents; the connection in a word.
    Count,
}

/// The mode and connection, then each agent's state and next pulse (none
/// while the daemon is gone: they are not known), at `detail`.
fn agent_spans(app: &App, detail: Detail) -> Vec<Span<'static>> {
    let theme = &app.theme;
    let mut spans = Vec::new();
    if app.replay.is_some() {
        spans.push(Span::styled(" REPLAY ", theme.style("ui.selection")));
    }
    let gone = !app.connection.reaches();
    if app.connection != partner_protocol::Connection::Embedded {
        let label = match (detail, app.connection) {
            (Detail::Full, connection) => connection.label(),
            (_, partner_protocol::Connection::Gone { .. }) => "daemon gone".to_string(),
            (_, partner_protocol::Connection::Refused { .. }) => "refused".to_string(),
            (_, connection) => connection.label(),
        };
        spans.push(Span::styled(
            format!(" {label} "),
            theme.style(if gone { "ui.error" } else { "ui.dim" }),
        ));
    }
    if detail == Detail::Count {
        spans.push(Span::styled(
            format!(" {} agents", app.model.agents.len()),
            theme.style("ui.dim"),
        ));
        return spans;
    }
    for a in &app.model.agents {
        if gone {
            // What the agents do now is not known: no state, no countdown.
            spans.push(Span::styled(
                format!(" ? {}", a.name),
                theme.style("ui.dim"),
            ));
            continue;
        }
        let (mark, role) = match a.state {
            RunState::Generating => ("●", "ui.ok"),
            RunState::Waiting => ("◐", "ui.waiting"),
            RunState::Halted => ("■", "ui.denied"),
            RunState::Idle => ("○", "ui.dim"),
            RunState::Elsewhere => ("◇", "ui.dim"),
        };
        let pulse = a
            .next_pulse_at
            .filter(|_| detail == Detail::Full)
            .map(|at| format!(" {}", human_duration(at - app.now)))
            .unwrap_or_default();
        // Run by another daemon: where (`@?` while no daemon is known to
        // run it), never a guess at what it does.
        let host = match (&a.host, a.state) {
            _ if detail != Detail::Full => String::new(),
            (Some(h), _) => format!("@{h}"),
            (None, RunState::Elsewhere) => "@?".to_string(),
            (None, _) => String::new(),
        };
        spans.push(Span::styled(
            format!(" {mark} {}{host}{pulse}", a.name),
            theme.style(role),
        ));
    }
    spans
}

/// What waits: the pending count, search by meaning catching up (or its
/// embedder down), unseen notifications.
fn count_spans(app: &App) -> Vec<Span<'static>> {
    let theme = &app.theme;
    let mut spans = Vec::new();
    // Not reaching the daemon, what waits is not known: never a stale 0.
    let pending = if app.connection.reaches() {
        app.model.pending.len().to_string()
    } else {
        "?".to_string()
    };
    spans.push(Span::styled(
        format!("  │ {pending} pending "),
        theme.style("ui.status_bar"),
    ));
    // Search by meaning catching up (or its embedder down).
    if let Some(index) = &app.model.index {
        if index.problem.is_some() {
            spans.push(Span::styled(
                "│ search by words only ".to_string(),
                theme.style("ui.denied"),
            ));
        } else if index.waiting > 0 {
            spans.push(Span::styled(
                format!("│ indexing {}/{} ", index.done, index.done + index.waiting),
                theme.style("ui.waiting"),
            ));
        }
    }
    if app.model.unseen > 0 {
        spans.push(Span::styled(
            format!("! {} ", app.model.unseen),
            theme.style("ui.error"),
        ));
    }
    spans
}

/// Most lines a status message takes above the status bar.
const MESSAGE_LINES: usize = 3;

/// The status bar's fixed parts on a bar `width` wide: title, agents and
/// counts — the agents told more briefly, then only counted, so that the
/// counts and `? help` always fit.
fn fixed_spans(app: &App, width: usize) -> Vec<Span<'static>> {
    let help = help_keys(app).width() + " help".width() + 1;
    let mut spans = Vec::new();
    for detail in [Detail::Full, Detail::Brief, Detail::Count] {
        spans = vec![Span::styled(
            format!(" {} ", app.title),
            app.theme.style("ui.title"),
        )];
        spans.extend(agent_spans(app, detail));
        spans.extend(count_spans(app));
        let used: usize = spans.iter().map(|s| s.content.width()).sum();
        if used + help < width {
            break;
        }
    }
    spans
}

/// The `? help` keys that end the status bar.
fn help_keys(app: &App) -> String {
    app.keymap
        .keys_for(Action::Help)
        .unwrap_or_else(|| "?".into())
}

/// Columns left on a status bar `width` wide for a message or hints.
fn room(app: &App, width: usize) -> usize {
    let used: usize = fixed_spans(app, width)
        .iter()
        .map(|s| s.content.width())
        .sum();
    let help = help_keys(app).width() + " help".width() + 1;
    width.saturating_sub(used + 3 + help)
}

/// The status message on lines of its own above the status bar, when it
/// does not fit on the bar (none when it does): wrapped, at most
/// [`MESSAGE_LINES`]; a longer one ends with where it is kept whole.
pub(super) fn message_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let Some(notice) = &app.notice else {
        return Vec::new();
    };
    let width = usize::from(width);
    if notice.text.width() + 2 <= room(app, width) && !notice.text.contains('\n') {
        return Vec::new();
    }
    let style = app.theme.style(if notice.warning {
        "ui.denied"
    } else {
        "ui.waiting"
    });
    let mut lines =
        crate::panes::wrap_words(vec![(notice.text.clone(), style)], width.saturating_sub(2));
    if lines.len() > MESSAGE_LINES {
        lines.truncate(MESSAGE_LINES - 1);
        lines.push(Line::styled(
            "… (N shows it whole)",
            app.theme.style("ui.dim"),
        ));
    }
    lines
        .into_iter()
        .map(|l| {
            let mut spans = vec![Span::raw(" ")];
            spans.extend(l.spans);
            Line::from(spans)
        })
        .collect()
}

fn render_status(app: &App, frame: &mut Frame, area: Rect, message: Option<Rect>) {
    let theme = &app.theme;
    let width = usize::from(area.width);
    let mut spans = fixed_spans(app, width);
    // `? help` is always there, at the end: whatever else is cut, the way
    // to every key is not.
    let help_keys = help_keys(app);
    let room = room(app, width);
    if let Some(rect) = message {
        frame.render_widget(
            Paragraph::new(message_lines(app, area.width)).style(theme.style("ui.status_bar")),
            rect,
        );
    }
    let notice = app.notice.as_ref().filter(|_| message.is_none());
    match notice {
        Some(notice) => {
            spans.push(Span::styled(
                format!("│ {} ", first_line(&notice.text, room.saturating_sub(1))),
                theme.style(if notice.warning {
                    "ui.denied"
                } else {
                    "ui.waiting"
                }),
            ));
        }
        None => {
            let mut left = room;
            for (action, name) in hints(app) {
                if action == Action::Help {
                    continue;
                }
                let Some(keys) = app.keymap.keys_for(action) else {
                    continue;
                };
                let piece = keys.width() + name.width() + 2;
                if piece > left {
                    break;
                }
                left -= piece;
                spans.push(Span::styled(format!(" {keys}"), theme.style("ui.key_hint")));
                spans.push(Span::styled(
                    format!(" {name}"),
                    theme.style("ui.status_bar"),
                ));
            }
            if room > 20 && left == room {
                spans.push(Span::styled(
                    format!("│ {}", first_line(&app.db, room.saturating_sub(2))),
                    theme.style("ui.status_bar"),
                ));
            }
        }
    }
    spans.push(Span::styled(
        format!(" {help_keys}"),
        theme.style("ui.key_hint"),
    ));
    spans.push(Span::styled(" help", theme.style("ui.status_bar")));
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(theme.style("ui.status_bar")),
        area,
    );
}
