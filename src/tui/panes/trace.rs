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
use crate::clock::format_time;
use crate::trace::TraceRecord;
use crate::tui::keymap::Action;
use crate::tui::model::{Model, first_line};

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
}

impl TracePane {
    /// The records shown, newest first.
    pub fn rows<'a>(&self, model: &'a Model) -> Vec<&'a TraceRecord> {
        let search = self.search.as_deref().map(str::to_lowercase);
        let agent = self.agent.as_deref();
        model
            .trace
            .iter()
            .rev()
            .filter(|r| agent.is_none_or(|a| r.agent == a))
            .filter(|r| self.verb.as_deref().is_none_or(|v| r.verb == v))
            .filter(|r| {
                self.outcome
                    .as_deref()
                    .is_none_or(|o| r.outcome.as_str() == o)
            })
            .filter(|r| {
                search
                    .as_deref()
                    .is_none_or(|s| r.canonical.to_lowercase().contains(s))
            })
            .collect()
    }

    fn position(&self, rows: &[&TraceRecord]) -> usize {
        self.selected
            .as_deref()
            .and_then(|id| rows.iter().position(|r| r.id == id))
            .unwrap_or(0)
    }

    fn step(&mut self, model: &Model, delta: isize) {
        let rows = self.rows(model);
        if rows.is_empty() {
            return;
        }
        let at = self.position(&rows) as isize;
        let next = (at + delta).clamp(0, rows.len() as isize - 1) as usize;
        self.selected = Some(rows[next].id.clone());
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
        let rows = self.rows(model);
        if let Some(r) = rows.get(self.first_shown.get() + row) {
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
        let theme = view.theme;
        let rows = self.rows(view.model);
        if rows.is_empty() {
            let text = if view.model.trace.is_empty() {
                "No actions executed yet.".to_string()
            } else {
                "No record matches the filters (:filter clears them).".to_string()
            };
            frame.render_widget(Paragraph::new(text).style(theme.style("ui.dim")), area);
            return;
        }
        let sel = self.position(&rows);
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
        let width = usize::from(area.width);
        let agent_w = rows
            .iter()
            .map(|r| r.agent.width())
            .max()
            .unwrap_or(4)
            .clamp(4, 12);
        let lines: Vec<Line> = rows
            .iter()
            .enumerate()
            .skip(first)
            .take(height)
            .map(|(i, r)| {
                let style = if i == sel {
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
                let fixed =
                    id.width() + time.width() + agent.width() + outcome.width() + ms.width();
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
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), list);
        let r = rows[sel];
        let label = |text: &str| Span::styled(format!("{text:<9}"), theme.style("ui.dim"));
        let mut detail_lines: Vec<Line> = decision_words(r)
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
            detail_lines.push(Line::from(vec![
                label("memory"),
                Span::styled(change, theme.style("ui.text")),
            ]));
        }
        detail_lines.push(Line::from(vec![
            label("result"),
            Span::styled(r.result.replace('\n', " ⏎ "), theme.style("ui.text")),
        ]));
        detail_lines.extend(super::tool::detail(theme, r));
        frame.render_widget(
            Paragraph::new(detail_lines).wrap(Wrap { trim: true }),
            detail,
        );
    }
}
