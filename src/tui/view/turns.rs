//! The turns pane: each agent's replies with their actions marked in place
//! and their state beside them, laid out from the bottom so a frame costs the
//! same however long the history; and the replay's queue of turns.

use super::*;

/// True when `word` is a verb's canonical name (not an alias).
pub(super) fn is_canonical_verb(word: &str) -> bool {
    crate::dialect::BUILTIN_VERBS
        .iter()
        .any(|v| v.verb.name() == word)
        || word == "do"
}

/// The styled pieces of a turn's text: prose in the text style, actions
/// highlighted with the dialect's roles.
pub(super) fn turn_spans(app: &App, turn: &TurnEntry) -> Vec<(String, Style)> {
    let text = &turn.text;
    let base = app.theme.style("ui.text");
    let mut out = Vec::new();
    let mut at = 0;
    let mut spans: Vec<_> = turn
        .actions
        .iter()
        .map(|a| a.span)
        .filter(|s| {
            s.end <= text.len() && text.is_char_boundary(s.start) && text.is_char_boundary(s.end)
        })
        .collect();
    spans.sort_by_key(|s| s.start);
    for span in spans {
        if span.start < at {
            continue;
        }
        out.push((text[at..span.start].to_string(), base));
        let action = &text[span.start..span.end];
        let mut inner = 0;
        for (range, role) in app.highlighter.roles(action) {
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
            out.push((piece.to_string(), app.theme.style(role)));
            inner = range.end;
        }
        out.push((action[inner..].to_string(), base));
        at = span.end;
    }
    out.push((text[at..].to_string(), base));
    out.retain(|(t, _)| !t.is_empty());
    out
}

/// All lines of one turn at `width`.
pub(super) fn turn_lines(app: &App, turn: &TurnEntry, width: usize) -> Vec<Line<'static>> {
    let kind = match turn.kind {
        PromptKind::Response => "response",
        PromptKind::Pulse => "pulse",
        PromptKind::Continuation => "continuation",
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(
            turn.agent.clone(),
            app.theme.style("ui.agent").add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                " · {} · {kind}{}{}",
                &format_time(turn.time)[11..19],
                if turn.pass > 1 {
                    format!(" (pass {})", turn.pass)
                } else {
                    String::new()
                },
                if turn.done { "" } else { " …" }
            ),
            app.theme.style("ui.header"),
        ),
    ])];
    if turn.text.trim().is_empty() && turn.done {
        lines.push(Line::from(Span::styled(
            "(nothing to say)",
            app.theme.style("ui.dim"),
        )));
    } else {
        lines.extend(wrap(turn_spans(app, turn), width));
    }
    for action in &turn.actions {
        let label = action.state.label();
        let canonical = first_line(
            &action.canonical,
            width.saturating_sub(label.chars().count() + 6).max(8),
        );
        lines.push(Line::from(vec![
            Span::styled("  ▸ ", app.theme.style("ui.dim")),
            Span::styled(canonical, app.theme.style("ui.dim")),
            Span::raw("  "),
            Span::styled(label, app.theme.style(action.state.role())),
        ]));
    }
    lines.push(Line::default());
    lines
}

pub(super) fn render_turns(app: &App, frame: &mut Frame, area: Rect) {
    let height = usize::from(area.height);
    let width = usize::from(area.width);
    if height == 0 {
        return;
    }
    let indices = app.model.visible_turns(app.agent_filter.as_deref());
    if indices.is_empty() {
        let hint = Paragraph::new("No turns yet. Agents' replies stream here as they are written.")
            .style(app.theme.style("ui.dim"));
        frame.render_widget(hint, area);
        return;
    }
    // Walk back from the newest turn until the pane (plus the scroll) is full.
    let skip = if app.follow { 0 } else { app.turn_scroll };
    let mut collected: Vec<Line<'static>> = Vec::new();
    for &i in indices.iter().rev() {
        let mut lines = turn_lines(app, &app.model.turns[i], width);
        lines.append(&mut collected);
        collected = lines;
        if collected.len() >= height + skip {
            break;
        }
    }
    let end = collected.len().saturating_sub(skip);
    let start = end.saturating_sub(height);
    let visible: Vec<Line<'static>> = collected[start..end].to_vec();
    frame.render_widget(Paragraph::new(visible), area);
}

pub(super) fn render_replay_queue(app: &App, frame: &mut Frame, area: Rect) {
    let queue = app.replay_queue();
    let mut lines = Vec::new();
    if queue.is_empty() {
        lines.push(Line::from(Span::styled(
            "nothing was waiting",
            app.theme.style("ui.dim"),
        )));
    }
    for r in queue {
        let later = format!(
            " → {} by {}",
            r.decision.decision.clone().unwrap_or_default(),
            r.decision.decided_by.clone().unwrap_or_default()
        );
        let room = usize::from(area.width).saturating_sub(14 + later.chars().count());
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:<4}", r.decision.request.clone().unwrap_or_default()),
                app.theme.style("ui.key_hint"),
            ),
            Span::styled(
                format!("{:<8} ", first_line(&r.agent, 8)),
                app.theme.style("ui.agent"),
            ),
            Span::styled(first_line(&r.canonical, room), app.theme.style("ui.text")),
            Span::styled(later, app.theme.style("ui.dim")),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), area);
}
