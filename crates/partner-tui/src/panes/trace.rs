//! The trace pane: what ran, newest first, with the selected record's
//! decision path in words — the engine's steps, who was asked, who decided
//! and how — its memory change and its result.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::render::{agent_style, human_duration};
use super::{Component, Effect, PromptPurpose, View};
use crate::keymap::Action;
use crate::model::{Model, first_line};
use partner_core::clock::format_time;
use partner_protocol::wire::TraceFilter;
use partner_protocol::wire::TraceRecord;

/// The trace pane's state.
#[derive(Debug, Clone, Default)]
pub struct TracePane {
    /// The selected record's id (the newest when unset).
    pub selected: Option<String>,
    /// Only records of this verb.
    pub verb: Option<String>,
    /// Only records with this outcome.
    pub outcome: Option<String>,
    /// Only records whose line contains this.
    pub search: Option<String>,
    /// Only this agent's records.
    pub agent: Option<String>,
    /// The first row drawn last time (for clicks).
    first_shown: std::cell::Cell<usize>,
    /// The last frame had fewer rows than the selection plus a screenful
    /// (older records may be wanted).
    short: std::cell::Cell<bool>,
}

impl TracePane {
    /// What the pane's filters admit.
    pub fn filter(&self) -> TraceFilter {
        TraceFilter {
            agent: self.agent.clone(),
            verb: self.verb.clone(),
            outcome: self.outcome.clone(),
            search: self.search.clone(),
        }
    }

    /// The records shown, newest first (every one the console holds for
    /// the filters; a test's view of what a frame walks lazily).
    pub fn rows<'a>(&self, model: &'a Model) -> Vec<&'a TraceRecord> {
        let filter = self.filter();
        model.trace_rows(&filter).collect()
    }

    /// Where the selected record is among `rows` (0, the newest, when it
    /// is not there), walking no further than it.
    fn position<'a>(&self, mut rows: impl Iterator<Item = &'a TraceRecord>) -> usize {
        match self.selected.as_deref() {
            Some(id) => rows.position(|r| r.id == id).unwrap_or(0),
            None => 0,
        }
    }

    fn step(&mut self, model: &Model, delta: isize) {
        let filter = self.filter();
        let at = self.position(model.trace_rows(&filter)) as isize;
        let want = (at + delta).max(0) as usize;
        // The wanted row, or the last there is.
        let mut last = None;
        for (i, r) in model.trace_rows(&filter).enumerate() {
            last = Some(r);
            if i == want {
                break;
            }
        }
        if let Some(r) = last {
            self.selected = Some(r.id.clone());
        }
    }

    /// The page of older records the pane needs, if it needs one: the
    /// last frame ran out of rows before a screenful past the selection.
    pub fn wants_older(&self, model: &mut Model) -> Option<(TraceFilter, u64)> {
        if !self.short.get() {
            return None;
        }
        let filter = self.filter();
        let before = model.ask_older_trace(&filter)?;
        Some((filter, before))
    }

    /// The filters in force, in words (for the title).
    pub fn filters(&self) -> Vec<String> {
        [
            self.agent.clone(),
            self.verb.clone().map(|v| format!("/{v}")),
            self.outcome.clone(),
            self.search.clone().map(|s| format!("“{s}”")),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// A record's decision, in words: how the engine got there, who was
/// asked, and how it was decided.
pub fn decision_words(r: &TraceRecord) -> Vec<String> {
    let d = &r.decision;
    let mut out = Vec::new();
    let verdict = match d.verdict.as_str() {
        "allow" => "allowed",
        "deny" => "denied",
        "ask" => "asked",
        other => other,
    };
    out.push(match d.steps.last() {
        Some(last) => format!("{verdict}: {last}"),
        None => verdict.to_string(),
    });
    for step in d.steps.iter().rev().skip(1).rev() {
        out.push(format!("  · {step}"));
    }
    if let Some(request) = &d.request {
        let how = match (&d.decision, &d.decided_by) {
            (Some(decision), Some(by)) => {
                let waited = match (d.requested_at, d.decided_at) {
                    (Some(a), Some(b)) => format!(" after {}", human_duration(b - a)),
                    _ => String::new(),
                };
                format!(
                    "request {request}: {} by {by}{waited}",
                    decision.replace('_', " ")
                )
            }
            _ => format!("request {request}: not decided"),
        };
        out.push(how);
    }
    out
}

impl Component for TracePane {
    fn act(&mut self, action: Action, model: &Model) -> Option<Vec<Effect>> {
        match action {
            Action::Up => self.step(model, -1),
            Action::Down => self.step(model, 1),
            Action::PageUp => self.step(model, -10),
            Action::PageDown => self.step(model, 10),
            Action::HalfPageUp => self.step(model, -5),
            Action::HalfPageDown => self.step(model, 5),
            Action::Top => self.selected = None,
            Action::Bottom => self.step(model, 1_000_000),
            Action::Search => return Some(vec![Effect::Prompt(PromptPurpose::SearchTrace)]),
            Action::Back if self.search.is_some() => self.search = None,
            _ => return None,
        }
        Some(Vec::new())
    }

    fn click(&mut self, row: usize, model: &Model) -> Vec<Effect> {
        let filter = self.filter();
        if let Some(r) = model.trace_rows(&filter).nth(self.first_shown.get() + row) {
            self.selected = Some(r.id.clone());
        }
        Vec::new()
    }

    fn title(&self, _view: &View<'_>) -> String {
        let filters = self.filters();
        if filters.is_empty() {
            "Trace".into()
        } else {
            format!("Trace [{}]", filters.join(", "))
        }
    }

    fn render(&self, frame: &mut Frame, area: Rect, view: &View<'_>) {
        let model = view.model;
        let filter = self.filter();
        // Only the rows up to the selection and a screenful past it are
        // walked, whatever the trace holds.
        let sel = self.position(model.trace_rows(&filter));
        let list_height = usize::from(area.height);
        let rows: Vec<&TraceRecord> = model
            .trace_rows(&filter)
            .take(sel + 2 * list_height.max(1) + 1)
            .collect();
        self.short
            .set(rows.len() < sel + 2 * list_height.max(1) + 1);
        if rows.is_empty() {
            frame.render_widget(
                Paragraph::new(nothing_shown(model, &filter))
                    .style(view.theme.style("ui.dim"))
                    .wrap(Wrap { trim: true }),
                area,
            );
            return;
        }
        let sel = sel.min(rows.len() - 1);
        // A tool run has more to say: the states it read and returned.
        let wanted = if rows[sel].data["tool"].is_object() {
            12
        } else {
            6
        };
        let detail_height = wanted.min(area.height / 2);
        let [list, detail] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(detail_height)]).areas(area);
        let height = usize::from(list.height);
        let first = sel.saturating_sub(height.saturating_sub(1));
        self.first_shown.set(first);
        let shown = &rows[first..rows.len().min(first + height)];
        let agent_w = shown
            .iter()
            .map(|r| r.agent.width())
            .max()
            .unwrap_or(4)
            .clamp(4, 12);
        let lines: Vec<Line> = shown
            .iter()
            .enumerate()
            .map(|(i, r)| record_row(r, first + i == sel, agent_w, usize::from(area.width), view))
            .collect();
        frame.render_widget(Paragraph::new(lines), list);
        frame.render_widget(
            Paragraph::new(record_detail(rows[sel], view)).wrap(Wrap { trim: true }),
            detail,
        );
    }
}

/// What an empty trace pane says: why nothing is shown.
fn nothing_shown(model: &crate::model::Model, filter: &TraceFilter) -> String {
    let failure = model.older_trace_failure(filter);
    match (model.trace.is_empty(), model.older_trace_left(filter)) {
        _ if failure.is_some() => format!(
            "None of the records held matches; older ones could not be read ({}).",
            failure.unwrap_or_default()
        ),
        (_, None | Some(true)) if !model.trace.is_empty() => "Reading older records…".to_string(),
        (true, _) => "No actions executed yet.".to_string(),
        _ => "No record matches the filters (:filter clears them).".to_string(),
    }
}

/// A record's row: id, time, agent, action, outcome and how long it took.
fn record_row(
    r: &TraceRecord,
    selected: bool,
    agent_w: usize,
    width: usize,
    view: &View<'_>,
) -> Line<'static> {
    let theme = view.theme;
    let style = if selected {
        theme.style("ui.selection")
    } else {
        theme.style("ui.text")
    };
    let outcome_role = match r.outcome.as_str() {
        "executed" => "ui.ok",
        "denied" | "timed_out" => "ui.denied",
        "failed" => "ui.error",
        _ => "ui.dim",
    };
    let id = format!("{:>6} ", r.id);
    let time = format!("{} ", &format_time(r.time)[11..19]);
    let agent = first_line(&r.agent, agent_w);
    let agent = format!("{agent}{} ", " ".repeat(agent_w - agent.width()));
    let outcome = format!(" {}", r.outcome.as_str());
    let ms = format!(" {:.1}ms", r.duration_us as f64 / 1000.0);
    let fixed = id.width() + time.width() + agent.width() + outcome.width() + ms.width();
    let room = width.saturating_sub(fixed);
    let canonical = first_line(&r.canonical, room);
    let pad = room.saturating_sub(canonical.width());
    Line::from(vec![
        Span::styled(id, theme.style("ui.dim")),
        Span::styled(time, theme.style("ui.dim")),
        Span::styled(agent, agent_style(theme, view.model, &r.agent)),
        Span::styled(format!("{canonical}{}", " ".repeat(pad)), style),
        Span::styled(outcome, theme.style(outcome_role)),
        Span::styled(ms, theme.style("ui.dim")),
    ])
}

/// The selected record in full: the decision in words, the memory it
/// changed, its result, and a tool run's states and writes.
fn record_detail(r: &TraceRecord, view: &View<'_>) -> Vec<Line<'static>> {
    let theme = view.theme;
    let label = |text: &str| Span::styled(format!("{text:<9}"), theme.style("ui.dim"));
    let mut lines: Vec<Line> = decision_words(r)
        .into_iter()
        .enumerate()
        .map(|(i, text)| {
            Line::from(vec![
                label(if i == 0 { "decision" } else { "" }),
                Span::styled(text, theme.style("ui.text")),
            ])
        })
        .collect();
    if let Some(m) = &r.memory {
        let change = match m.version_before {
            Some(before) => format!("{} v{before} → v{}", m.label, m.version_after),
            None => format!("{} created (v{})", m.label, m.version_after),
        };
        lines.push(Line::from(vec![
            label("memory"),
            Span::styled(change, theme.style("ui.text")),
        ]));
    }
    lines.push(Line::from(vec![
        label("result"),
        Span::styled(r.result.replace('\n', " ⏎ "), theme.style("ui.text")),
    ]));
    lines.extend(super::tool::detail(theme, r));
    lines
}
