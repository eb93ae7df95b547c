//! Rendering: pure functions from [`App`] to a ratatui frame. Only visible
//! rows are laid out — the turns pane walks back from the bottom (or the
//! scroll position) until the pane is full, and lists build only the rows
//! they show — so a frame costs the same with 100,000 turns as with ten.

mod memory;
mod pending;
mod status;
mod trace;
mod turns;

use memory::render_memory;
use pending::{diff_lines, render_pending};
use status::{render_overlay, render_status};
use trace::{render_replay, render_trace};
use turns::{render_replay_queue, render_turns};

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthChar;

use super::app::{App, EditTarget, InputPurpose, Overlay, Pane};
use crate::agent::RunState;
use crate::agent::provider::PromptKind;
use crate::clock::format_time;
use crate::tui::model::{TurnEntry, first_line};

/// Draws the whole console.
pub fn render(app: &App, frame: &mut Frame) {
    let size = frame.area();
    frame.render_widget(Block::new().style(app.theme.style("ui.background")), size);
    let areas = app.areas(size);
    if let Some(tabs) = areas.tabs {
        render_tabs(app, frame, tabs);
    }
    for (pane, rect) in &areas.panes {
        let block = pane_block(app, *pane);
        let inner = block.inner(*rect);
        frame.render_widget(block, *rect);
        match pane {
            Pane::Turns => render_turns(app, frame, inner),
            Pane::Pending => render_pending(app, frame, inner),
            Pane::Memory => render_memory(app, frame, inner),
            Pane::Trace => render_trace(app, frame, inner),
            Pane::Replay => render_replay(app, frame, inner),
        }
    }
    render_status(app, frame, areas.status);
    render_overlay(app, frame, size);
}

pub(super) fn pane_block(app: &App, pane: Pane) -> Block<'static> {
    let focused = app.focus == pane;
    let mut title = pane.title().to_string();
    match pane {
        Pane::Pending if app.replay.is_some() => {
            title = format!(
                "Queue as at step {}",
                app.replay.as_ref().map_or(0, |r| r.step)
            )
        }
        Pane::Pending if !app.model.pending.is_empty() => {
            title = format!("Pending ({})", app.model.pending.len())
        }
        Pane::Turns => {
            let mut tags = Vec::new();
            if let Some(a) = &app.agent_filter {
                tags.push(a.clone());
            }
            if !app.follow {
                tags.push("scrolled".into());
            }
            if !tags.is_empty() {
                title = format!("Turns [{}]", tags.join(", "));
            }
        }
        Pane::Memory => {
            if let Some(agent) = app.memory_agent() {
                title = match (&app.replay, &app.replay_memory) {
                    (Some(_), Some((step, _))) => format!("Memory · {agent} as at step {step}"),
                    _ => format!("Memory · {agent}"),
                };
            }
        }
        Pane::Trace => {
            let filters: Vec<String> = [
                app.agent_filter.clone(),
                app.trace_verb.clone().map(|v| format!("/{v}")),
                app.trace_outcome.clone(),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !filters.is_empty() {
                title = format!("Trace [{}]", filters.join(", "));
            }
        }
        _ => {}
    }
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(app.theme.style(if focused {
            "ui.border_focused"
        } else {
            "ui.border"
        }))
        .title(Span::styled(
            format!(" {title} "),
            app.theme.style("ui.title"),
        ))
}

pub(super) fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    for pane in app.panes() {
        let label = match pane {
            Pane::Pending if !app.model.pending.is_empty() => {
                format!(" Pending {} ", app.model.pending.len())
            }
            other => format!(" {} ", other.title()),
        };
        let label = format!("{label:<12}");
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

/// Splits styled text into lines of at most `width` columns.
pub(super) fn wrap(spans: Vec<(String, Style)>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for (text, style) in spans {
        let mut piece = String::new();
        for c in text.chars() {
            if c == '\n' {
                if !piece.is_empty() {
                    current.push(Span::styled(std::mem::take(&mut piece), style));
                }
                lines.push(Line::from(std::mem::take(&mut current)));
                used = 0;
                continue;
            }
            let w = c.width().unwrap_or(0);
            if used + w > width {
                if !piece.is_empty() {
                    current.push(Span::styled(std::mem::take(&mut piece), style));
                }
                lines.push(Line::from(std::mem::take(&mut current)));
                used = 0;
            }
            piece.push(c);
            used += w;
        }
        if !piece.is_empty() {
            current.push(Span::styled(piece, style));
        }
    }
    if !current.is_empty() {
        lines.push(Line::from(current));
    }
    lines
}

pub(super) fn age(now: i64, then: i64) -> String {
    let s = ((now - then).max(0) / 1000) as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        _ => format!("{}h", s / 3600),
    }
}

pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

pub(super) fn popup(app: &App, title: &str) -> Block<'static> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(app.theme.style("ui.border_focused"))
        .title(Span::styled(
            format!(" {title} "),
            app.theme.style("ui.title"),
        ))
        .style(app.theme.style("ui.background"))
}
