//! The turns pane: each agent's replies as they stream, with their actions
//! highlighted in place and each action's live state beside it; what could
//! not be read marked ✗ with what the model was told; messages to agents;
//! empty pulses collapsed to a line. Laid out from the bottom — or from
//! where the partner scrolled to, which stays put while new turns arrive —
//! reading only as many turns as fit.

use std::cell::Cell;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::render::{agent_style, wrap_words};
use super::{Component, Effect, Pane, PromptPurpose, View};
use crate::keymap::Action;
use crate::model::{ActionState, Model, TurnEntry, first_line};
use partner_core::clock::format_time;
use partner_protocol::PromptKind;

/// The turns pane's state.
#[derive(Debug, Clone, Default)]
pub struct TurnsPane {
    /// Only this agent's turns.
    pub agent: Option<String>,
    /// The turn at the bottom of the pane (its place in the session) and
    /// how many of its lines are hidden below; `None` follows the newest.
    anchor: Cell<Option<(usize, usize)>>,
    /// Lines to scroll at the next draw (negative: up).
    scroll: Cell<isize>,
    /// The selected action's id.
    pub selected_action: Option<String>,
    /// The last search.
    pub search: Option<String>,
}

/// True when `word` is a verb's canonical name (not an alias).
fn is_canonical_verb(word: &str) -> bool {
    partner_dialect::BUILTIN_VERBS
        .iter()
        .any(|v| v.verb.name() == word)
        || word == "do"
}

/// The styled pieces of a turn's text: prose in the text style, actions
/// highlighted with the dialect's roles, unreadable parts as errors.
fn turn_spans(view: &View<'_>, turn: &TurnEntry) -> Vec<(String, Style)> {
    let theme = view.theme;
    let text = &turn.text;
    let base = theme.style("ui.text");
    let ok = |s: &partner_dialect::Span| {
        s.end <= text.len() && text.is_char_boundary(s.start) && text.is_char_boundary(s.end)
    };
    let mut marks: Vec<(partner_dialect::Span, bool)> = turn
        .actions
        .iter()
        .map(|a| (a.span, false))
        .chain(turn.errors.iter().map(|(span, _)| (*span, true)))
        .filter(|(s, _)| ok(s))
        .collect();
    marks.sort_by_key(|(s, _)| s.start);
    let mut out = Vec::new();
    let mut at = 0;
    for (span, error) in marks {
        if span.start < at {
            continue;
        }
        out.push((text[at..span.start].to_string(), base));
        let action = &text[span.start..span.end];
        if error {
            out.push((action.to_string(), theme.style("ui.error")));
            at = span.end;
            continue;
        }
        let mut inner = 0;
        for (range, role) in view.highlighter.roles(action) {
            if range.start < inner || range.end > action.len() {
                continue;
            }
            out.push((action[inner..range.start].to_string(), base));
            let piece = &action[range.clone()];
            // A verb written as an alias (`/remember`, `/look up`) gets its own style.
            let role = if role == "dialect.verb"
                && piece.starts_with('/')
                && !is_canonical_verb(&piece[1..])
            {
                "dialect.alias"
            } else {
                role
            };
            out.push((piece.to_string(), theme.style(role)));
            inner = range.end;
        }
        out.push((action[inner..].to_string(), base));
        at = span.end;
    }
    out.push((text[at..].to_string(), base));
    out.retain(|(t, _)| !t.is_empty());
    out
}

/// A turn that said nothing: one dim line, no gap; a run of them, counted.
fn quiet_line(view: &View<'_>, turn: &TurnEntry, time: &str, kind: &str) -> Line<'static> {
    let (count, last) = turn.quiet_run;
    let said = if count > 1 {
        format!(
            " · {time}–{} · {kind} · nothing to say ×{count}",
            &format_time(last)[11..19]
        )
    } else {
        format!(" · {time} · {kind} · nothing to say")
    };
    Line::from(vec![
        Span::styled(
            turn.agent.clone(),
            agent_style(view.theme, view.model, &turn.agent),
        ),
        Span::styled(said, view.theme.style("ui.dim")),
    ])
}

/// An action of the turn: its line (proposed ones say so) and its state.
fn action_line(
    view: &View<'_>,
    action: &crate::model::ActionEntry,
    selected: bool,
    width: usize,
) -> Line<'static> {
    let theme = view.theme;
    let label = action.state.label();
    let shown = if action.proposed_from.is_some() {
        format!("proposed {}", action.canonical)
    } else {
        action.canonical.clone()
    };
    let canonical = first_line(
        &shown,
        width.saturating_sub(label.chars().count() + 6).max(8),
    );
    let style = if selected {
        theme.style("ui.selection")
    } else {
        theme.style("ui.dim")
    };
    Line::from(vec![
        Span::styled(if selected { "  ▶ " } else { "  ▸ " }, style),
        Span::styled(canonical, style),
        Span::raw("  "),
        Span::styled(label, theme.style(action.state.role())),
    ])
}

/// Why the turn failed and its errors, each wrapped under a ✗.
fn error_lines(view: &View<'_>, turn: &TurnEntry, width: usize) -> Vec<Line<'static>> {
    let theme = view.theme;
    let mut lines = Vec::new();
    for message in turn
        .failed
        .iter()
        .chain(turn.errors.iter().map(|(_, message)| message))
    {
        let wrapped = wrap_words(
            vec![(message.clone(), theme.style("ui.error"))],
            width.saturating_sub(4).max(8),
        );
        for (i, line) in wrapped.into_iter().enumerate() {
            let mut spans = vec![Span::styled(
                if i == 0 { "  ✗ " } else { "    " },
                theme.style("ui.error"),
            )];
            spans.extend(line.spans);
            lines.push(Line::from(spans));
        }
    }
    lines
}

impl TurnsPane {
    /// True while the pane follows the newest turn.
    pub fn following(&self) -> bool {
        self.anchor.get().is_none() && self.scroll.get() >= 0
    }

    /// Follows the newest turn again.
    pub fn follow(&mut self) {
        self.anchor.set(None);
        self.scroll.set(0);
    }

    /// All lines of one entry at `width`.
    fn lines(&self, view: &View<'_>, turn: &TurnEntry, width: usize) -> Vec<Line<'static>> {
        let theme = view.theme;
        let time = &format_time(turn.time)[11..19];
        let name = agent_style(theme, view.model, &turn.agent).add_modifier(Modifier::BOLD);
        if let Some(from) = &turn.from {
            let mut lines = vec![Line::from(vec![
                Span::styled(from.clone(), theme.style("ui.header")),
                Span::styled(" → ", theme.style("ui.dim")),
                Span::styled(turn.agent.clone(), name),
                Span::styled(format!(" · {time} · message"), theme.style("ui.header")),
            ])];
            lines.extend(wrap_words(
                vec![(turn.text.clone(), theme.style("ui.dim"))],
                width,
            ));
            lines.push(Line::default());
            return lines;
        }
        let kind = match turn.kind {
            PromptKind::Response => "response",
            PromptKind::Pulse => "pulse",
            PromptKind::Continuation => "continuation",
        };
        if turn.is_quiet() {
            return vec![quiet_line(view, turn, time, kind)];
        }
        let pass = if turn.pass > 1 {
            format!(" (pass {})", turn.pass)
        } else {
            String::new()
        };
        let mut lines = vec![Line::from(vec![
            Span::styled(turn.agent.clone(), name),
            Span::styled(
                format!(
                    " · {time} · {kind}{pass}{}",
                    if turn.done { "" } else { " …" }
                ),
                theme.style("ui.header"),
            ),
            Span::styled(
                if turn.failed.is_some() {
                    " · failed"
                } else {
                    ""
                },
                theme.style("ui.error"),
            ),
        ])];
        lines.extend(wrap_words(turn_spans(view, turn), width));
        for action in &turn.actions {
            let selected = self.selected_action.as_deref() == Some(action.action_id.as_str());
            lines.push(action_line(view, action, selected, width));
        }
        lines.extend(error_lines(view, turn, width));
        lines.push(Line::default());
        lines
    }

    /// The entries shown, newest first (index in the model).
    fn shown<'a>(&'a self, model: &'a Model) -> impl Iterator<Item = (usize, &'a TurnEntry)> + 'a {
        model.turns_newest_first(self.agent.as_deref())
    }

    /// The actions of the newest `limit` entries shown, newest first.
    fn recent_actions(&self, model: &Model, limit: usize) -> Vec<(usize, String)> {
        self.shown(model)
            .take(limit)
            .flat_map(|(i, t)| {
                t.actions
                    .iter()
                    .rev()
                    .map(move |a| (i, a.action_id.clone()))
            })
            .collect()
    }

    /// Moves the action selection `delta` actions older (positive) or newer.
    fn select_action(&mut self, model: &Model, older: bool) -> Vec<Effect> {
        let actions = self.recent_actions(model, 2000);
        if actions.is_empty() {
            return vec![Effect::Notice("no actions to select".into())];
        }
        let at = self
            .selected_action
            .as_deref()
            .and_then(|id| actions.iter().position(|(_, a)| a == id));
        let next = match (at, older) {
            (None, _) => 0,
            (Some(i), true) => (i + 1).min(actions.len() - 1),
            (Some(i), false) => i.saturating_sub(1),
        };
        let (turn, id) = &actions[next];
        self.selected_action = Some(id.clone());
        self.anchor.set(Some((model.dropped + turn, 0)));
        self.scroll.set(0);
        Vec::new()
    }

    /// Where the selected action leads: its request, or its trace record.
    fn open_action(&self, model: &Model) -> Vec<Effect> {
        let Some(id) = &self.selected_action else {
            return vec![Effect::Notice(
                "select an action first ([ and ] move between actions)".into(),
            )];
        };
        let action = model
            .turns
            .iter()
            .rev()
            .flat_map(|t| t.actions.iter())
            .find(|a| &a.action_id == id);
        match action {
            Some(a) => match (&a.state, &a.trace_id) {
                (ActionState::Waiting { id, .. }, _) => vec![
                    Effect::SelectRequest(id.clone()),
                    Effect::Focus(Pane::Pending),
                ],
                (_, Some(record)) => vec![
                    Effect::SelectRecord(record.clone()),
                    Effect::Focus(Pane::Trace),
                ],
                _ => vec![Effect::Notice(format!(
                    "{} has no request or trace record yet",
                    a.canonical
                ))],
            },
            None => vec![Effect::Notice("that action is no longer shown".into())],
        }
    }

    /// Scrolls to the newest turn whose text has `query` (any case).
    pub fn find(&mut self, model: &Model, query: &str) -> Option<String> {
        let q = query.to_lowercase();
        self.search = Some(query.to_string());
        match self
            .shown(model)
            .find(|(_, t)| t.text.to_lowercase().contains(&q))
        {
            Some((i, t)) => {
                self.anchor.set(Some((model.dropped + i, 0)));
                self.scroll.set(0);
                Some(format!(
                    "found in {}'s turn at {}",
                    t.agent,
                    &format_time(t.time)[11..19]
                ))
            }
            None => Some(format!("no turn has “{query}”")),
        }
    }

    fn scroll_by(&mut self, lines: isize) {
        self.scroll.set(self.scroll.get() + lines);
    }
}

/// The lines of the turns a frame shows, laid out once per frame as they
/// are needed.
struct Laid<'a, 'v> {
    pane: &'a TurnsPane,
    view: &'a View<'v>,
    entries: &'a [usize],
    width: usize,
    cache: std::collections::HashMap<usize, Vec<Line<'static>>>,
}

impl Laid<'_, '_> {
    /// How many lines the `p`th entry shown takes.
    fn count(&mut self, p: usize) -> usize {
        let (pane, view, width) = (self.pane, self.view, self.width);
        let turn = &view.model.turns[self.entries[p]];
        self.cache
            .entry(p)
            .or_insert_with(|| pane.lines(view, turn, width))
            .len()
    }

    /// The `p`th entry's lines, taken out.
    fn take(&mut self, p: usize) -> Vec<Line<'static>> {
        self.count(p);
        self.cache.remove(&p).unwrap_or_default()
    }
}

impl TurnsPane {
    /// The entries a frame may show, newest first: only as many as a
    /// screenful past the anchor (plus the scroll) needs, whatever the
    /// history holds — each entry is at least one line.
    fn window(&self, model: &Model, height: usize) -> Vec<usize> {
        let dropped = model.dropped;
        let anchor_at = match self.anchor.get() {
            Some((abs, _)) => self
                .shown(model)
                .position(|(i, _)| dropped + i <= abs)
                .unwrap_or(usize::MAX - 1),
            None => 0,
        };
        let reach = self.scroll.get().unsigned_abs() + self.anchor.get().map_or(0, |a| a.1);
        let need = anchor_at.saturating_add(height + reach + 2);
        self.shown(model).take(need).map(|(i, _)| i).collect()
    }

    /// Where the bottom of the pane is after the pending scroll: the
    /// anchor turn's position in the window and how many of its lines hide
    /// below; the anchor is kept (none: following the newest).
    fn settle(&self, laid: &mut Laid<'_, '_>) -> (usize, isize) {
        let dropped = laid.view.model.dropped;
        let entries = laid.entries;
        let mut pos = match self.anchor.get() {
            Some((abs, _)) => entries
                .iter()
                .position(|&i| dropped + i <= abs)
                .unwrap_or(entries.len() - 1),
            None => 0,
        };
        let mut offset = self.anchor.get().map_or(0, |(_, o)| o) as isize;
        offset -= self.scroll.replace(0);
        // Up: hide more of the anchor turn, then move to older turns.
        while offset > 0 && offset as usize >= laid.count(pos) {
            if pos + 1 >= entries.len() {
                offset = laid.count(pos).saturating_sub(1) as isize;
                break;
            }
            offset -= laid.count(pos) as isize;
            pos += 1;
        }
        // Down: show more, then move to newer turns; past the newest, follow.
        let mut follow = self.anchor.get().is_none() && offset <= 0;
        while offset < 0 {
            if pos == 0 {
                offset = 0;
                follow = true;
                break;
            }
            pos -= 1;
            offset += laid.count(pos) as isize;
        }
        if follow && pos == 0 && offset == 0 {
            self.anchor.set(None);
        } else {
            self.anchor
                .set(Some((dropped + entries[pos], offset.max(0) as usize)));
        }
        (pos, offset)
    }
}

impl Component for TurnsPane {
    fn act(&mut self, action: Action, model: &Model) -> Option<Vec<Effect>> {
        match action {
            Action::Up => self.scroll_by(-1),
            Action::Down => self.scroll_by(1),
            Action::PageUp => self.scroll_by(-20),
            Action::PageDown => self.scroll_by(20),
            Action::HalfPageUp => self.scroll_by(-10),
            Action::HalfPageDown => self.scroll_by(10),
            Action::Bottom => self.follow(),
            Action::Top => {
                let oldest = self.shown(model).last().map(|(i, _)| model.dropped + i);
                self.anchor.set(oldest.map(|i| (i, 0)));
                self.scroll.set(0);
            }
            Action::Follow => {
                if self.following() {
                    let newest = self.shown(model).next().map(|(i, _)| model.dropped + i);
                    self.anchor.set(newest.map(|i| (i, 0)));
                } else {
                    self.follow();
                }
            }
            Action::PrevAction => return Some(self.select_action(model, true)),
            Action::NextAction => return Some(self.select_action(model, false)),
            Action::Select => return Some(self.open_action(model)),
            Action::Search => return Some(vec![Effect::Prompt(PromptPurpose::SearchTurns)]),
            Action::Back if self.selected_action.is_some() || self.search.is_some() => {
                self.selected_action = None;
                self.search = None;
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn title(&self, _view: &View<'_>) -> String {
        let mut tags = Vec::new();
        if let Some(a) = &self.agent {
            tags.push(a.clone());
        }
        if !self.following() {
            tags.push("scrolled: End follows".into());
        }
        if tags.is_empty() {
            "Turns".into()
        } else {
            format!("Turns [{}]", tags.join(", "))
        }
    }

    fn render(&self, frame: &mut Frame, area: Rect, view: &View<'_>) {
        if let Some(replay) = view.replay {
            return replay.render_turns(frame, area, view);
        }
        let height = usize::from(area.height);
        let width = usize::from(area.width);
        if height == 0 {
            return;
        }
        let model = view.model;
        let entries = self.window(model, height);
        // Turns another daemon runs are not streamed here: said, so an
        // empty pane is not read as idle agents.
        let mut elsewhere: Vec<&str> = model
            .agents
            .iter()
            .filter_map(|a| a.host.as_deref())
            .collect();
        elsewhere.sort_unstable();
        elsewhere.dedup();
        let note = if elsewhere.is_empty() {
            String::new()
        } else {
            format!(
                "\nTurns of agents run by {} stream there, not here; their actions are in the trace.",
                elsewhere.join(", ")
            )
        };
        if entries.is_empty() {
            let hint = Paragraph::new(format!(
                "No turns yet. Agents' replies stream here as they are written.{note}"
            ))
            .style(view.theme.style("ui.dim"));
            frame.render_widget(hint, area);
            return;
        }
        let mut laid = Laid {
            pane: self,
            view,
            entries: &entries,
            width,
            cache: std::collections::HashMap::new(),
        };
        let (pos, offset) = self.settle(&mut laid);
        // Collect from the anchor upwards until the pane is full.
        let mut collected: Vec<Line<'static>> = Vec::new();
        let skip = offset.max(0) as usize;
        let mut p = pos;
        loop {
            let mut lines = laid.take(p);
            if p == pos {
                let keep = lines.len().saturating_sub(skip);
                lines.truncate(keep);
            }
            lines.append(&mut collected);
            collected = lines;
            if collected.len() >= height || p + 1 >= entries.len() {
                break;
            }
            p += 1;
        }
        let start = collected.len().saturating_sub(height);
        let visible: Vec<Line<'static>> = collected.split_off(start);
        frame.render_widget(Paragraph::new(visible), area);
    }
}
