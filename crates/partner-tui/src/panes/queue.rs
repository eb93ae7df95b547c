//! The pending queue: requests waiting on an authority, with their age,
//! the time they have left, why they wait and, for memory writes, the diff
//! they would make. The selection is a request id, never a row: when the
//! selected request leaves the queue (decided elsewhere, timed out), the
//! selection does not jump to another request, and the partner is told
//! what happened.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::render::{age, agent_style, diff_lines, human_duration};
use super::{Component, EditTarget, Effect, PromptPurpose, View};
use crate::keymap::Action;
use crate::model::{Model, first_line};
use partner_core::clock::Millis;
use partner_protocol::wire::{Decision, PendingRequest};

/// A decision waiting out its undo window before it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// The request.
    pub id: String,
    /// The decision, as it is sent (an edited approval carries its text).
    pub decision: partner_protocol::wire::Decision,
    /// When it is sent.
    pub until: Millis,
}

/// A decision as the status line names it (`approve once`, `approve as
/// edited`, `deny`…).
pub fn decision_name(decision: &partner_protocol::wire::Decision) -> &'static str {
    use partner_protocol::wire::Decision as D;
    match decision {
        D::ApproveOnce => "approve once",
        D::ApproveAlways => "approve always",
        D::ApproveFor(_) => "approve for a while",
        D::Deny(_) => "deny",
        D::DenyAlways(_) => "deny always",
        D::Escalate(_) => "escalate",
        D::Cancel => "cancel",
        D::ApproveEdited(_) => "approve as edited",
    }
}

/// The queue's state.
#[derive(Debug, Clone, Default)]
pub struct QueuePane {
    /// The selected request.
    pub selected: Option<String>,
    /// True once the selected request left: nothing is selected until the
    /// partner picks one.
    lost: bool,
    /// The first row and how many rows the list showed last time (for
    /// clicks).
    shown: std::cell::Cell<(usize, usize)>,
    /// Requests the partner decided here (the newest hundred): their
    /// leaving is no surprise, and they are never selected again.
    mine: std::collections::VecDeque<String>,
}

/// What the scope of a standing rule for `r` is, in words.
pub fn rule_scope(r: &PendingRequest) -> String {
    let op = r.action.op.map(|op| op.as_str());
    let target = r.action.target.as_deref();
    let mut scope = format!("/{}", r.verb);
    if let Some(op) = op {
        scope.push(' ');
        scope.push_str(op);
    }
    if let Some(target) = target {
        scope.push(' ');
        scope.push_str(target);
    }
    format!("{}'s {scope}", r.agent)
}

impl QueuePane {
    /// The selected request, if it still waits.
    pub fn selected_request<'a>(&self, model: &'a Model) -> Option<&'a PendingRequest> {
        let id = self.selected.as_deref()?;
        model.pending.iter().find(|r| r.id == id)
    }

    /// Selects a request.
    pub fn select(&mut self, id: &str) {
        self.selected = Some(id.to_string());
        self.lost = false;
    }

    /// Forgets that the partner decided `id` here (the decision was taken
    /// back before it was sent).
    pub fn undecided(&mut self, id: &str) {
        self.mine.retain(|m| m != id);
    }

    /// After the queue was read again: keeps the selection on its request;
    /// when it left, clears it and says why. Selects the oldest request
    /// when nothing was selected and none was lost.
    pub fn refreshed(&mut self, model: &Model) -> Option<String> {
        if let Some(id) = &self.selected
            && !model.pending.iter().any(|r| &r.id == id)
        {
            if self.mine.contains(id) {
                self.selected = None;
                self.lost = false;
                return self.refreshed(model);
            }
            let why = model
                .departed
                .get(id)
                .cloned()
                .unwrap_or_else(|| "decided elsewhere".into());
            let notice = format!("{id} left the queue ({why}); nothing is selected now");
            self.selected = None;
            self.lost = true;
            return Some(notice);
        }
        if self.selected.is_none() && !self.lost {
            self.selected = model
                .pending
                .iter()
                .find(|r| !self.mine.contains(&r.id))
                .map(|r| r.id.clone());
        }
        None
    }

    /// After the partner decided `id` (the request stays in the list until
    /// the runtime settles it): moves to the next request, which the
    /// partner's own key asked for.
    pub fn decided(&mut self, id: &str, model: &Model) {
        if self.mine.len() >= 100 {
            self.mine.pop_front();
        }
        self.mine.push_back(id.to_string());
        if self.selected.as_deref() != Some(id) {
            return;
        }
        let list: Vec<&PendingRequest> = model
            .pending
            .iter()
            .filter(|r| r.id == id || !self.mine.contains(&r.id))
            .collect();
        let at = list.iter().position(|r| r.id == id);
        let next = at
            .and_then(|i| {
                list.get(i + 1)
                    .or_else(|| i.checked_sub(1).and_then(|p| list.get(p)))
            })
            .map(|r| r.id.clone());
        // Nothing left: the next request to arrive is selected (the
        // partner emptied the queue; nothing moved under their cursor).
        self.lost = false;
        self.selected = next;
    }

    fn step(&mut self, model: &Model, delta: isize) {
        let list = &model.pending;
        if list.is_empty() {
            return;
        }
        let at = self
            .selected
            .as_deref()
            .and_then(|id| list.iter().position(|r| r.id == id));
        let next = match at {
            Some(i) => (i as isize + delta).clamp(0, list.len() as isize - 1) as usize,
            None if delta < 0 => list.len() - 1,
            None => 0,
        };
        self.select(&list[next].id);
    }

    fn decide(&self, model: &Model, decision: Decision) -> Vec<Effect> {
        let Some(r) = self.selected_request(model) else {
            return vec![Effect::Notice(
                "no request is selected: move to one first (nothing was decided)".into(),
            )];
        };
        let command = model.previews.commands.get(&r.id);
        if let Some(why) = super::shell::refusal(r, command, &decision) {
            return vec![Effect::Notice(why)];
        }
        let id = r.id.clone();
        if let Some(question) = super::shell::unsandboxed_question(r, command, &decision) {
            return vec![Effect::Confirm {
                question,
                id,
                decision,
            }];
        }
        match decision {
            Decision::ApproveAlways => vec![Effect::Confirm {
                question: format!(
                    "Approve {id} and make a standing rule: from now on {} runs without asking?",
                    rule_scope(r)
                ),
                id,
                decision,
            }],
            decision => vec![Effect::Decide { id, decision }],
        }
    }
}

impl Component for QueuePane {
    fn act(&mut self, action: Action, model: &Model) -> Option<Vec<Effect>> {
        Some(match action {
            Action::Approve => self.decide(model, Decision::ApproveOnce),
            Action::ApproveAlways => self.decide(model, Decision::ApproveAlways),
            Action::Deny => self.decide(model, Decision::Deny(None)),
            Action::Escalate => self.decide(model, Decision::Escalate(None)),
            Action::DenyWithReason | Action::DenyAlways => match self.selected_request(model) {
                Some(r) => vec![Effect::Prompt(PromptPurpose::DenyReason {
                    id: r.id.clone(),
                    always: action == Action::DenyAlways,
                })],
                None => self.decide(model, Decision::Deny(None)),
            },
            Action::EditAction => match self.selected_request(model) {
                Some(r) => vec![Effect::Edit {
                    target: EditTarget::Action { id: r.id.clone() },
                    text: editable(r, model),
                }],
                None => self.decide(model, Decision::Deny(None)),
            },
            Action::NextRequest | Action::Down => {
                self.step(model, 1);
                Vec::new()
            }
            Action::PrevRequest | Action::Up => {
                self.step(model, -1);
                Vec::new()
            }
            Action::PageDown | Action::HalfPageDown => {
                self.step(model, 10);
                Vec::new()
            }
            Action::PageUp | Action::HalfPageUp => {
                self.step(model, -10);
                Vec::new()
            }
            Action::Top => {
                self.step(model, -(model.pending.len() as isize));
                Vec::new()
            }
            Action::Bottom => {
                self.step(model, model.pending.len() as isize);
                Vec::new()
            }
            _ => return None,
        })
    }

    fn click(&mut self, row: usize, model: &Model) -> Vec<Effect> {
        let (first, rows) = self.shown.get();
        if row < rows
            && let Some(r) = model.pending.get(first + row)
        {
            self.select(&r.id.clone());
        }
        Vec::new()
    }

    fn title(&self, view: &View<'_>) -> String {
        match view.replay {
            Some(replay) => format!("Queue as at step {} (replay)", replay.state.step),
            None if view.model.pending.is_empty() => "Pending".into(),
            None => format!("Pending ({})", view.model.pending.len()),
        }
    }

    fn render(&self, frame: &mut Frame, area: Rect, view: &View<'_>) {
        if let Some(replay) = view.replay {
            return replay.render_queue(frame, area, view);
        }
        let theme = view.theme;
        let pending = &view.model.pending;
        if pending.is_empty() {
            frame.render_widget(
                Paragraph::new("Nothing waits for a decision.").style(theme.style("ui.dim")),
                area,
            );
            return;
        }
        let list_height = (pending.len() as u16).min(area.height / 2).max(1);
        let [list, _, detail] = Layout::vertical([
            Constraint::Length(list_height),
            Constraint::Length(1),
            Constraint::Min(0),
        ])
        .areas(area);
        let sel = self
            .selected
            .as_deref()
            .and_then(|id| pending.iter().position(|r| r.id == id));
        let first = sel
            .unwrap_or(0)
            .saturating_sub(usize::from(list_height).saturating_sub(1));
        self.shown.set((first, usize::from(list_height)));
        let rows: Vec<Line> = pending
            .iter()
            .enumerate()
            .skip(first)
            .take(usize::from(list_height))
            .map(|(i, r)| request_row(r, Some(i) == sel, usize::from(area.width), view))
            .collect();
        frame.render_widget(Paragraph::new(rows), list);
        let Some(r) = sel.map(|i| &pending[i]) else {
            frame.render_widget(
                Paragraph::new(
                    "No request is selected: ↑/↓ (or j/k) picks one. Decision keys act only on the selected request.",
                )
                .wrap(Wrap { trim: true })
                .style(theme.style("ui.dim")),
                detail,
            );
            return;
        };
        frame.render_widget(
            Paragraph::new(request_detail(r, view)).wrap(Wrap { trim: false }),
            detail,
        );
    }
}

/// A waiting request's row: id, agent, action, and its state — a held
/// decision's countdown, or who it waits on, its age and time left.
fn request_row(r: &PendingRequest, selected: bool, width: usize, view: &View<'_>) -> Line<'static> {
    let (theme, now) = (view.theme, view.now);
    let style = if selected {
        theme.style("ui.selection")
    } else {
        theme.style("ui.text")
    };
    let held = view.held.filter(|h| h.id == r.id);
    let state = match (held, r.expires_at) {
        (Some(h), _) => format!(
            " {} in {}s (U undoes)",
            decision_name(&h.decision),
            ((h.until - now).max(0) + 999) / 1000
        ),
        (None, Some(at)) => format!(
            " {} · {} · {} left",
            waits_on(r),
            age(now, r.created_at),
            human_duration(at - now)
        ),
        (None, None) => format!(" {} · {}", waits_on(r), age(now, r.created_at)),
    };
    let marker = if selected { "▸" } else { " " };
    let id = format!("{marker}{:<4}", r.id);
    let agent = format!("{:<9}", first_line(&r.agent, 8));
    let room =
        width.saturating_sub(id.chars().count() + agent.chars().count() + state.chars().count());
    Line::from(vec![
        Span::styled(id, theme.style("ui.key_hint")),
        Span::styled(agent, agent_style(theme, view.model, &r.agent)),
        Span::styled(
            format!("{:<room$}", first_line(&row_text(r, view), room)),
            style,
        ),
        Span::styled(
            state,
            theme.style(if held.is_some() {
                "ui.ok"
            } else {
                "ui.waiting"
            }),
        ),
    ])
}

/// The action the partner edits: a tool call's or a question's JSON as
/// it reads (`/ask {"title": …}`), not as the canonical form quotes it;
/// any other action as it is.
fn editable(r: &PendingRequest, model: &Model) -> String {
    let unquoted = model.previews.fields.get(&r.id).and_then(|_| {
        let quoted = r.canonical.strip_prefix(&format!("/{} ", r.verb.name()))?;
        let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            out.push(match (c, c == '\\') {
                (_, true) => match chars.next()? {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                },
                (c, false) => c,
            });
        }
        Some(format!("/{} {out}", r.verb.name()))
    });
    unquoted.unwrap_or_else(|| r.canonical.clone())
}

/// A request's text in its row: its action, or — for a tool call or a
/// question, whose action is JSON — the verb with the question's title or
/// the arguments on one line.
fn row_text(r: &PendingRequest, view: &View<'_>) -> String {
    let Some(fields) = view.model.previews.fields.get(&r.id) else {
        return r.canonical.clone();
    };
    let summary = fields
        .iter()
        .find(|(name, _)| name == "asks")
        .or_else(|| fields.iter().find(|(name, _)| name == "args"))
        .map(|(_, text)| text.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    format!("/{} {summary}", r.verb.name())
}

/// The selected request in full: its action and why (or the command, its
/// risk and context), where it came from, whom it waits on, when it
/// expires, what the agent said, and the memory change it would make.
fn request_detail(r: &PendingRequest, view: &View<'_>) -> Vec<Line<'static>> {
    let theme = view.theme;
    let label = |text: &str| Span::styled(format!("{text:<9}"), theme.style("ui.dim"));
    // A shell command shows itself, its risk and its context first,
    // in place of the action line and the reason that sums them up.
    let command = view.model.previews.commands.get(&r.id);
    let shell = super::shell::detail(theme, r, command);
    let fields = view.model.previews.fields.get(&r.id);
    // A tool call or a question shows its fields below, not its JSON.
    let action = match fields {
        Some(_) => format!("/{}", r.verb.name()),
        None => r.canonical.clone(),
    };
    let mut lines = if shell.is_empty() {
        vec![
            Line::from(vec![
                label("action"),
                Span::styled(action, theme.style("dialect.verb")),
            ]),
            Line::from(vec![
                label("why"),
                Span::styled(r.reason.clone(), theme.style("ui.text")),
            ]),
        ]
    } else {
        shell
    };
    for (name, text) in fields.into_iter().flatten() {
        if name == "diff" {
            lines.push(Line::from(Span::styled(
                "would change the file:",
                theme.style("ui.dim"),
            )));
            lines.extend(diff_lines(theme, text));
            continue;
        }
        for (i, part) in text.lines().enumerate() {
            let name = if i == 0 { name.as_str() } else { "" };
            lines.push(Line::from(vec![
                label(name),
                Span::styled(part.to_string(), theme.style("ui.text")),
            ]));
        }
    }
    lines.extend(provenance_lines(r, view));
    if let Some(diff) = view.model.previews.diffs.get(&r.id) {
        lines.push(Line::from(Span::styled(
            "would change memory:",
            theme.style("ui.dim"),
        )));
        lines.extend(diff_lines(theme, diff));
    }
    lines
}

/// Where a request came from, whom it waits on, when it expires, and
/// what the agent said around it (or the words it was proposed from).
fn provenance_lines(r: &PendingRequest, view: &View<'_>) -> Vec<Line<'static>> {
    let (theme, now) = (view.theme, view.now);
    let label = |text: &str| Span::styled(format!("{text:<9}"), theme.style("ui.dim"));
    let mut lines = Vec::new();
    let chain = r
        .authorities
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if i == r.authority_index {
                format!("[{a}]")
            } else {
                a.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" → ");
    lines.extend([
        Line::from(vec![
            label("from"),
            Span::styled(
                format!(
                    "{} in turn {} ({} ago)",
                    r.agent,
                    r.turn_id,
                    age(now, r.created_at)
                ),
                theme.style("ui.text"),
            ),
        ]),
        Line::from(vec![
            label("waits on"),
            Span::styled(chain, theme.style("ui.waiting")),
        ]),
    ]);
    if let Some(at) = r.expires_at {
        lines.push(Line::from(vec![
            label("expires"),
            Span::styled(
                format!("in {} (then it is denied)", human_duration(at - now)),
                theme.style("ui.text"),
            ),
        ]));
    }
    if let Some(words) = view.model.proposed_words(&r.id) {
        lines.push(Line::from(vec![
            label("proposed"),
            Span::styled(
                format!("read from the agent's words \"{words}\"; it wrote no action"),
                theme.style("ui.waiting"),
            ),
        ]));
    } else if let Some(said) = stated_reason(view.model, r) {
        lines.push(Line::from(vec![
            label("said"),
            Span::styled(said, theme.style("ui.text")),
        ]));
    }
    lines
}

/// What the agent wrote around a request's action in the turn it came
/// from: its prose, without the actions.
/// Who a request waits on, as the queue says it: its authority, or the
/// partners its rule names; and, when it needs several approvals, how
/// many it has and whose.
fn waits_on(r: &PendingRequest) -> String {
    let who = if r.deciders.is_empty() {
        r.waiting_on().to_string()
    } else {
        r.deciders.join(" or ")
    };
    if r.approvals_needed <= 1 {
        return who;
    }
    let whose = if r.approved_by.is_empty() {
        String::new()
    } else {
        format!(": {}", r.approved_by.join(", "))
    };
    format!(
        "{who} · {} of {} approved{whose}",
        r.approved_by.len(),
        r.approvals_needed
    )
}

fn stated_reason(model: &Model, r: &PendingRequest) -> Option<String> {
    let turn = r
        .action_id
        .as_deref()
        .and_then(|a| model.turn_of_action(a))
        .or_else(|| model.waiting_action(&r.id).map(|(turn, _)| turn))
        .filter(|t| t.agent == r.agent)?;
    let mut prose = String::new();
    let mut at = 0;
    let mut spans: Vec<_> = turn.actions.iter().map(|a| a.span).collect();
    spans.sort_by_key(|s| s.start);
    for span in spans {
        if span.start >= at
            && span.end <= turn.text.len()
            && turn.text.is_char_boundary(span.start)
            && turn.text.is_char_boundary(span.end)
        {
            prose.push_str(&turn.text[at..span.start]);
            at = span.end;
        }
    }
    prose.push_str(turn.text.get(at..).unwrap_or(""));
    let said = prose.split_whitespace().collect::<Vec<_>>().join(" ");
    (!said.is_empty()).then_some(said)
}
