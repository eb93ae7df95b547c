//! A trace being replayed: stepped or played at a speed, with the current
//! step's decision and result, where a re-execution diverged, and the other
//! panes shown as they were at the step (turns, the queue, memory).
//! Replay is a mode: decisions are off while it is open, and Esc (or
//! `:close`) leaves it.

use std::path::PathBuf;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::render::{agent_style, wrap_words};
use super::trace::decision_words;
use super::{Component, Effect, View};
use crate::keymap::Action;
use crate::model::{Model, first_line};
use partner_core::clock::format_time;
use partner_protocol::wire::Block;
use partner_protocol::wire::Divergence;
use partner_protocol::wire::TraceRecord;

/// Fastest replay, in steps per second.
pub const MAX_SPEED: f64 = 64.0;

/// A trace opened for replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayState {
    /// The file.
    pub path: PathBuf,
    /// Its records.
    pub records: Vec<TraceRecord>,
    /// Current step (0 = before the first).
    pub step: usize,
    /// Playing.
    pub playing: bool,
    /// Steps per second while playing.
    pub speed: f64,
    /// Where a re-execution differed, if checked.
    pub divergence: Option<Divergence>,
    /// True once verification finished.
    pub verified: bool,
}

/// The replay pane.
#[derive(Debug, Clone, Default)]
pub struct ReplayPane {
    /// The trace and where it stands.
    pub state: ReplayState,
    /// Memory of the memory pane's agent as at a step, once computed.
    pub memory: Option<(usize, Vec<Block>)>,
    /// The change a step made to a block, as a diff, once computed.
    pub diff: Option<(usize, String)>,
    /// Steps owed to playing, not yet taken (fractions carry over).
    owed: f64,
}

impl ReplayPane {
    /// A replay of `records` from `path`, before its first step.
    pub fn new(path: PathBuf, records: Vec<TraceRecord>) -> Self {
        ReplayPane {
            state: ReplayState {
                path,
                records,
                step: 0,
                playing: false,
                speed: 2.0,
                divergence: None,
                verified: false,
            },
            memory: None,
            diff: None,
            owed: 0.0,
        }
    }

    /// Moves by `delta` steps.
    pub fn step_by(&mut self, delta: isize) {
        let r = &mut self.state;
        r.step = (r.step as isize + delta).clamp(0, r.records.len() as isize) as usize;
    }

    /// Plays on for `seconds` of wall time; true when the step moved. At
    /// any speed the steps owed are taken, however often this is called.
    pub fn advance(&mut self, seconds: f64) -> bool {
        if !self.state.playing {
            return false;
        }
        self.owed += seconds * self.state.speed;
        let steps = self.owed.floor();
        self.owed -= steps;
        if steps < 1.0 {
            return false;
        }
        let before = self.state.step;
        self.step_by(steps as isize);
        if self.state.step >= self.state.records.len() {
            self.state.playing = false;
        }
        self.state.step != before
    }

    /// The record of the current step.
    pub fn current(&self) -> Option<&TraceRecord> {
        self.state
            .step
            .checked_sub(1)
            .and_then(|i| self.state.records.get(i))
    }

    /// The requests waiting at the current step, and how they were decided
    /// later.
    pub fn queue(&self) -> Vec<&TraceRecord> {
        let Some(at) = self.current().map(|r| r.time) else {
            return Vec::new();
        };
        self.state
            .records
            .iter()
            .filter(|rec| {
                rec.decision.requested_at.is_some_and(|t| t <= at)
                    && rec.decision.decided_at.is_some_and(|t| t > at)
            })
            .collect()
    }

    /// The queue pane while replaying: the requests as they waited then.
    pub fn render_queue(&self, frame: &mut Frame, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let mut lines = vec![Line::from(Span::styled(
            "replay: decisions are off here (Esc leaves the replay)",
            theme.style("ui.dim"),
        ))];
        let queue = self.queue();
        if queue.is_empty() {
            lines.push(Line::from(Span::styled(
                "nothing was waiting at this step",
                theme.style("ui.dim"),
            )));
        }
        for r in queue {
            let later = format!(
                " → {} by {}",
                r.decision
                    .decision
                    .clone()
                    .unwrap_or_default()
                    .replace('_', " "),
                r.decision.decided_by.clone().unwrap_or_default()
            );
            let room = usize::from(area.width).saturating_sub(14 + later.chars().count());
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{:<5}", r.decision.request.clone().unwrap_or_default()),
                    theme.style("ui.key_hint"),
                ),
                Span::styled(
                    format!("{:<9}", first_line(&r.agent, 8)),
                    agent_style(theme, view.model, &r.agent),
                ),
                Span::styled(first_line(&r.canonical, room), theme.style("ui.text")),
                Span::styled(later, theme.style("ui.dim")),
            ]));
        }
        frame.render_widget(Paragraph::new(lines), area);
    }

    /// The turns pane while replaying: what the agents did up to the step.
    pub fn render_turns(&self, frame: &mut Frame, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let width = usize::from(area.width);
        let height = usize::from(area.height);
        let done = &self.state.records[..self.state.step.min(self.state.records.len())];
        let mut lines: Vec<Line<'static>> = Vec::new();
        let mut last_turn: Option<&str> = None;
        // Only the last screenful of steps is laid out.
        let from = done.len().saturating_sub(height.max(1) * 2);
        for r in &done[from..] {
            if last_turn != Some(r.turn_id.as_str()) {
                lines.push(Line::from(vec![
                    Span::styled(r.agent.clone(), agent_style(theme, view.model, &r.agent)),
                    Span::styled(
                        format!(" · {} · {}", &format_time(r.time)[11..19], r.turn_id),
                        theme.style("ui.header"),
                    ),
                ]));
                last_turn = Some(r.turn_id.as_str());
            }
            let role = match r.outcome.as_str() {
                "executed" => "ui.ok",
                "failed" => "ui.error",
                _ => "ui.denied",
            };
            let mut spans = vec![Span::styled("  ▸ ", theme.style("ui.dim"))];
            spans.push(Span::styled(
                first_line(&r.canonical, width.saturating_sub(30).max(10)),
                theme.style("ui.text"),
            ));
            spans.push(Span::styled(
                format!("  {}: {}", r.outcome.as_str(), first_line(&r.result, 40)),
                theme.style(role),
            ));
            lines.push(Line::from(spans));
        }
        if lines.is_empty() {
            lines.push(Line::from(Span::styled(
                "before the first step: n steps forward, Space plays",
                theme.style("ui.dim"),
            )));
        }
        let start = lines.len().saturating_sub(height);
        frame.render_widget(Paragraph::new(lines.split_off(start)), area);
    }
}

impl Component for ReplayPane {
    fn act(&mut self, action: Action, _model: &Model) -> Option<Vec<Effect>> {
        match action {
            Action::StepForward | Action::Down => self.step_by(1),
            Action::StepBack | Action::Up => self.step_by(-1),
            Action::PageDown | Action::HalfPageDown => self.step_by(10),
            Action::PageUp | Action::HalfPageUp => self.step_by(-10),
            Action::Top => self.step_by(-(self.state.records.len() as isize)),
            Action::Bottom => self.step_by(self.state.records.len() as isize),
            Action::PlayPause => {
                self.state.playing = !self.state.playing;
                if self.state.playing && self.state.step >= self.state.records.len() {
                    self.state.step = 0;
                }
            }
            Action::Faster => self.state.speed = (self.state.speed * 2.0).min(MAX_SPEED),
            Action::Slower => self.state.speed = (self.state.speed / 2.0).max(0.25),
            _ => return None,
        }
        Some(Vec::new())
    }

    fn title(&self, _view: &View<'_>) -> String {
        format!(
            "Replay · {} · step {}/{}",
            self.state
                .path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            self.state.step,
            self.state.records.len()
        )
    }

    fn render(&self, frame: &mut Frame, area: Rect, view: &View<'_>) {
        let theme = view.theme;
        let replay = &self.state;
        let state = if replay.playing {
            "▶ playing"
        } else {
            "‖ paused"
        };
        let check = match (&replay.divergence, replay.verified) {
            (Some(d), _) => Span::styled(
                format!("  diverges at step {}: {}", d.step, d.what),
                theme.style("ui.error"),
            ),
            (None, true) => Span::styled("  re-execution matches", theme.style("ui.ok")),
            (None, false) => Span::styled("  verifying…", theme.style("ui.dim")),
        };
        let detail_height = if self.current().is_some() {
            (area.height / 3).max(4)
        } else {
            0
        };
        let [head, list, detail] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(detail_height),
        ])
        .areas(area);
        frame.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(
                    format!("{state} · {}× · Esc leaves", replay.speed),
                    theme.style("ui.title"),
                ),
                check,
            ])),
            head,
        );
        let lines = self.step_lines(view, list.height, area.width);
        frame.render_widget(Paragraph::new(lines), list);
        if let Some(r) = self.current() {
            let lines = self.detail_lines(view, r, usize::from(detail.width));
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), detail);
        }
    }
}

impl ReplayPane {
    /// The steps around the current one, one line each: the divergent
    /// step flagged, the current one selected, those ahead dimmed.
    fn step_lines(&self, view: &View<'_>, list_height: u16, width: u16) -> Vec<Line<'static>> {
        let theme = view.theme;
        let replay = &self.state;
        let height = usize::from(list_height);
        let first = replay.step.saturating_sub(height / 2);
        let mut lines = Vec::new();
        for (i, r) in replay.records.iter().enumerate().skip(first).take(height) {
            let step = i + 1;
            let current = step == replay.step;
            let diverged = replay.divergence.as_ref().is_some_and(|d| d.step == step);
            let style = if current {
                theme.style("ui.selection")
            } else if step > replay.step {
                theme.style("ui.dim")
            } else {
                theme.style("ui.text")
            };
            let flag = if diverged {
                "≠ "
            } else if current {
                "▸ "
            } else {
                "  "
            };
            lines.push(Line::from(vec![
                Span::styled(flag, theme.style("ui.error")),
                Span::styled(
                    format!("{step:>4} {:<9}", first_line(&r.agent, 8)),
                    agent_style(theme, view.model, &r.agent),
                ),
                Span::styled(
                    first_line(&r.canonical, usize::from(width).saturating_sub(30)),
                    style,
                ),
                Span::styled(format!(" {}", r.outcome.as_str()), theme.style("ui.dim")),
            ]));
        }
        lines
    }

    /// What the current step decided and did: its decision, the memory it
    /// changed (with the diff, once read) and its result.
    fn detail_lines(&self, view: &View<'_>, r: &TraceRecord, width: usize) -> Vec<Line<'static>> {
        let theme = view.theme;
        let mut lines: Vec<Line<'static>> = decision_words(r)
            .into_iter()
            .map(|t| Line::from(Span::styled(t, theme.style("ui.text"))))
            .collect();
        if let Some(m) = &r.memory {
            lines.push(Line::from(Span::styled(
                match m.version_before {
                    Some(v) => format!("memory: {} v{v} → v{}", m.label, m.version_after),
                    None => format!("memory: {} created", m.label),
                },
                theme.style("ui.diff_header"),
            )));
            if let Some((step, diff)) = &self.diff
                && *step == self.state.step
            {
                lines.extend(super::render::diff_lines(theme, diff).into_iter().skip(3));
            }
        }
        lines.extend(wrap_words(
            vec![(format!("result: {}", r.result), theme.style("ui.dim"))],
            width,
        ));
        lines
    }
}
