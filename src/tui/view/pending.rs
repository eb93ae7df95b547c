//! The pending pane: requests waiting on an authority, their age, reason
//! and, for memory writes, the diff they would make.

use super::*;

pub(super) fn render_pending(app: &App, frame: &mut Frame, area: Rect) {
    if app.replay.is_some() {
        return render_replay_queue(app, frame, area);
    }
    let pending = &app.model.pending;
    if pending.is_empty() {
        frame.render_widget(
            Paragraph::new("Nothing waits for a decision.").style(app.theme.style("ui.dim")),
            area,
        );
        return;
    }
    let now = app.now;
    let list_height = (pending.len() as u16).min(area.height / 2).max(1);
    let [list, _, detail] = Layout::vertical([
        Constraint::Length(list_height),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(area);
    let sel = app.pending_sel.min(pending.len() - 1);
    let first = sel.saturating_sub(usize::from(list_height).saturating_sub(1));
    let rows: Vec<Line> = pending
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(list_height))
        .map(|(i, r)| {
            let style = if i == sel {
                app.theme.style("ui.selection")
            } else {
                app.theme.style("ui.text")
            };
            let waits = format!(" {} · {}", r.waiting_on(), age(now, r.created_at));
            let room = usize::from(area.width).saturating_sub(13 + waits.chars().count());
            Line::from(vec![
                Span::styled(format!("{:<4}", r.id), app.theme.style("ui.key_hint")),
                Span::styled(
                    format!("{:<8} ", first_line(&r.agent, 8)),
                    app.theme.style("ui.agent"),
                ),
                Span::styled(format!("{:<room$}", first_line(&r.canonical, room)), style),
                Span::styled(waits, app.theme.style("ui.waiting")),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(rows), list);
    let r = &pending[sel];
    let mut lines = vec![
        Line::from(vec![
            Span::styled("action  ", app.theme.style("ui.dim")),
            Span::styled(r.canonical.clone(), app.theme.style("dialect.verb")),
        ]),
        Line::from(vec![
            Span::styled("why     ", app.theme.style("ui.dim")),
            Span::styled(r.reason.clone(), app.theme.style("ui.text")),
        ]),
        Line::from(vec![
            Span::styled("from    ", app.theme.style("ui.dim")),
            Span::styled(
                format!(
                    "{} in turn {} ({} ago)",
                    r.agent,
                    r.turn_id,
                    age(now, r.created_at)
                ),
                app.theme.style("ui.text"),
            ),
        ]),
        Line::from(vec![
            Span::styled("waits on ", app.theme.style("ui.dim")),
            Span::styled(
                r.authorities
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
                    .join(" → "),
                app.theme.style("ui.waiting"),
            ),
        ]),
    ];
    if let Some(said) = stated_reason(app, r) {
        lines.push(Line::from(vec![
            Span::styled("said    ", app.theme.style("ui.dim")),
            Span::styled(said, app.theme.style("ui.text")),
        ]));
    }
    if let Some(diff) = app.model.previews.get(&r.id) {
        lines.push(Line::from(Span::styled(
            "would change memory:",
            app.theme.style("ui.dim"),
        )));
        lines.extend(diff_lines(app, diff));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), detail);
}

/// What the agent wrote around a request's action in the turn it came
/// from: its prose, without the actions.
pub(super) fn stated_reason(app: &App, r: &crate::permission::PendingRequest) -> Option<String> {
    let first = r.canonical.lines().next().unwrap_or("");
    let turn = app.model.turns.iter().rev().take(500).find(|t| {
        t.agent == r.agent && t.actions.iter().any(|a| {
            matches!(&a.state, crate::tui::model::ActionState::Waiting { id, .. } if *id == r.id)
                || a.canonical == first
        })
    })?;
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

pub(super) fn diff_lines(app: &App, diff: &str) -> Vec<Line<'static>> {
    diff.lines()
        .filter(|l| !l.starts_with("\\ No newline"))
        .map(|l| {
            let role = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("@@") {
                "ui.diff_header"
            } else if l.starts_with('+') {
                "ui.diff_added"
            } else if l.starts_with('-') {
                "ui.diff_removed"
            } else {
                "ui.text"
            };
            Line::from(Span::styled(l.to_string(), app.theme.style(role)))
        })
        .collect()
}
