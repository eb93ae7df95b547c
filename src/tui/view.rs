//! Rendering: pure functions from [`App`] to a ratatui frame. Only visible
//! rows are laid out — the turns pane walks back from the bottom (or the
//! scroll position) until the pane is full, and lists build only the rows
//! they show — so a frame costs the same with 100,000 turns as with ten.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};
use unicode_width::UnicodeWidthChar;

use super::app::{App, EditTarget, InputPurpose, Overlay, Pane};
use super::model::{TurnEntry, first_line};
use crate::agent::provider::PromptKind;
use crate::clock::format_time;

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

fn pane_block(app: &App, pane: Pane) -> Block<'static> {
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

fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
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
fn wrap(spans: Vec<(String, Style)>, width: usize) -> Vec<Line<'static>> {
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

/// True when `word` is a verb's canonical name (not an alias).
fn is_canonical_verb(word: &str) -> bool {
    crate::dialect::BUILTIN_VERBS
        .iter()
        .any(|v| v.verb.name() == word)
        || word == "do"
}

/// The styled pieces of a turn's text: prose in the text style, actions
/// highlighted with the dialect's roles.
fn turn_spans(app: &App, turn: &TurnEntry) -> Vec<(String, Style)> {
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
fn turn_lines(app: &App, turn: &TurnEntry, width: usize) -> Vec<Line<'static>> {
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

fn render_turns(app: &App, frame: &mut Frame, area: Rect) {
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

fn age(now: i64, then: i64) -> String {
    let s = ((now - then).max(0) / 1000) as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        _ => format!("{}h", s / 3600),
    }
}

fn render_replay_queue(app: &App, frame: &mut Frame, area: Rect) {
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

fn render_pending(app: &App, frame: &mut Frame, area: Rect) {
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
fn stated_reason(app: &App, r: &crate::permission::PendingRequest) -> Option<String> {
    let first = r.canonical.lines().next().unwrap_or("");
    let turn = app.model.turns.iter().rev().take(500).find(|t| {
        t.agent == r.agent
            && t.actions.iter().any(|a| {
                matches!(&a.state, super::model::ActionState::Waiting { id, .. } if *id == r.id)
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

fn diff_lines(app: &App, diff: &str) -> Vec<Line<'static>> {
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

fn bar(app: &App, used: usize, limit: usize, width: usize) -> Vec<Span<'static>> {
    let filled = if limit == 0 {
        width
    } else {
        (used * width).div_ceil(limit).min(width)
    };
    vec![
        Span::styled("█".repeat(filled), app.theme.style("ui.bar_filled")),
        Span::styled("░".repeat(width - filled), app.theme.style("ui.bar_empty")),
    ]
}

fn render_memory(app: &App, frame: &mut Frame, area: Rect) {
    let [list, content] = Layout::horizontal([
        Constraint::Length(36.min(area.width / 2)),
        Constraint::Min(0),
    ])
    .areas(area);
    if let Some(query) = &app.memory_search {
        let mut lines = vec![Line::from(Span::styled(
            format!(
                "search: {query}  ({} hits, Esc clears)",
                app.model.hits.len()
            ),
            app.theme.style("ui.title"),
        ))];
        for h in &app.model.hits {
            let place = h.label.clone().unwrap_or_else(|| format!("#{}", h.id));
            lines.push(Line::from(vec![
                Span::styled(format!("{}/{place} ", h.agent), app.theme.style("ui.agent")),
                Span::styled(h.snippet.replace('\n', " "), app.theme.style("ui.text")),
            ]));
        }
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
        return;
    }
    let replayed = app
        .replay
        .as_ref()
        .and(app.replay_memory.as_ref())
        .map(|(_, b)| b);
    let shown = replayed.unwrap_or(&app.model.blocks);
    let rows: Vec<Line> = shown
        .iter()
        .enumerate()
        .take(usize::from(list.height))
        .map(|(i, b)| {
            let style = if i == app.block_sel {
                app.theme.style("ui.selection")
            } else {
                app.theme.style("ui.text")
            };
            let mut spans = vec![Span::styled(
                format!("{:<14}", first_line(&b.label, 14)),
                style,
            )];
            let kind = match b.kind {
                crate::memory::BlockKind::Core => "C",
                crate::memory::BlockKind::Working => "W",
                crate::memory::BlockKind::Archival => "A",
            };
            let permission = match b.permission {
                crate::memory::BlockPermission::ReadOnly => "ro",
                crate::memory::BlockPermission::Partner => "pt",
                crate::memory::BlockPermission::Human => "hu",
                crate::memory::BlockPermission::Append => "ap",
                crate::memory::BlockPermission::ReadWrite => "rw",
                crate::memory::BlockPermission::Admin => "ad",
            };
            spans.push(Span::styled(
                format!("{kind} {permission} "),
                app.theme.style("ui.dim"),
            ));
            spans.extend(bar(app, b.chars(), b.char_limit, 8));
            spans.push(Span::styled(
                format!(" {:>4}", b.chars()),
                app.theme.style("ui.dim"),
            ));
            Line::from(spans)
        })
        .collect();
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new("No blocks.").style(app.theme.style("ui.dim")),
            list,
        );
    } else {
        frame.render_widget(Paragraph::new(rows), list);
    }
    let Some(block) = shown.get(app.block_sel) else {
        return;
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(block.label.clone(), app.theme.style("ui.title")),
        Span::styled(
            format!(
                "  {} · {} · v{} · {}/{} chars",
                block.kind,
                block.permission,
                block.version,
                block.chars(),
                block.char_limit
            ),
            app.theme.style("ui.dim"),
        ),
    ])];
    lines.extend(
        block
            .value
            .lines()
            .map(|l| Line::from(Span::styled(l.to_string(), app.theme.style("ui.text")))),
    );
    if replayed.is_none() && app.model.history.len() > 1 {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "history",
            app.theme.style("ui.header"),
        )));
        let h = &app.model.history;
        for pair in h.windows(2).rev().take(5) {
            let (old, new) = (&pair[0], &pair[1]);
            lines.push(Line::from(Span::styled(
                format!(
                    "v{} by {} at {}",
                    new.version,
                    new.changed_by,
                    &format_time(new.changed_at)[11..19]
                ),
                app.theme.style("ui.dim"),
            )));
            let diff = crate::memory::blocks::diff(
                &block.label,
                &old.value,
                &new.value,
                old.version,
                new.version,
            );
            lines.extend(diff_lines(app, &diff).into_iter().skip(2));
        }
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), content);
}

fn render_trace(app: &App, frame: &mut Frame, area: Rect) {
    let rows = app.trace_rows();
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new("No actions executed yet.").style(app.theme.style("ui.dim")),
            area,
        );
        return;
    }
    let detail_height = 4.min(area.height / 2);
    let [list, detail] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(detail_height)]).areas(area);
    let height = usize::from(list.height);
    let sel = app.trace_sel.min(rows.len() - 1);
    let first = sel.saturating_sub(height.saturating_sub(1));
    let width = usize::from(area.width);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, r)| {
            let style = if i == sel {
                app.theme.style("ui.selection")
            } else {
                app.theme.style("ui.text")
            };
            let outcome_role = match r.outcome.as_str() {
                "executed" => "ui.ok",
                "denied" | "timed_out" => "ui.denied",
                "failed" => "ui.error",
                _ => "ui.dim",
            };
            Line::from(vec![
                Span::styled(format!("{:>5} ", r.id), app.theme.style("ui.dim")),
                Span::styled(
                    format!("{} ", &format_time(r.time)[11..19]),
                    app.theme.style("ui.dim"),
                ),
                Span::styled(format!("{:<8}", r.agent), app.theme.style("ui.agent")),
                Span::styled(first_line(&r.canonical, width.saturating_sub(40)), style),
                Span::styled(
                    format!(" {}", r.outcome.as_str()),
                    app.theme.style(outcome_role),
                ),
                Span::styled(
                    format!(" {:.1}ms", r.duration_us as f64 / 1000.0),
                    app.theme.style("ui.dim"),
                ),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
    let r = rows[sel];
    let path = r.decision.decided_by.as_ref().map_or_else(
        || r.decision.verdict.clone(),
        |by| {
            format!(
                "{} by {by}",
                r.decision.decision.clone().unwrap_or_default()
            )
        },
    );
    let memory = r
        .memory
        .as_ref()
        .map(|m| {
            format!(
                "  memory: {} v{:?}→v{}",
                m.label, m.version_before, m.version_after
            )
        })
        .unwrap_or_default();
    let detail_lines = vec![
        Line::from(vec![
            Span::styled("decision ", app.theme.style("ui.dim")),
            Span::styled(format!("{path}{memory}"), app.theme.style("ui.text")),
        ]),
        Line::from(vec![
            Span::styled("result   ", app.theme.style("ui.dim")),
            Span::styled(r.result.replace('\n', " ⏎ "), app.theme.style("ui.text")),
        ]),
    ];
    frame.render_widget(
        Paragraph::new(detail_lines).wrap(Wrap { trim: true }),
        detail,
    );
}

fn render_replay(app: &App, frame: &mut Frame, area: Rect) {
    let Some(replay) = &app.replay else {
        frame.render_widget(
            Paragraph::new("Open a trace with :open trace FILE").style(app.theme.style("ui.dim")),
            area,
        );
        return;
    };
    let total = replay.records.len();
    let state = if replay.playing {
        "▶ playing"
    } else {
        "⏸ paused"
    };
    let check = match (&replay.divergence, replay.verified) {
        (Some(d), _) => Span::styled(
            format!("  diverges at step {}: {}", d.step, d.what),
            app.theme.style("ui.error"),
        ),
        (None, true) => Span::styled("  re-execution matches", app.theme.style("ui.ok")),
        (None, false) => Span::styled("  verifying…", app.theme.style("ui.dim")),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(
            format!(
                "{} · step {}/{total} · {state} · {}x",
                replay.path.display(),
                replay.step,
                replay.speed
            ),
            app.theme.style("ui.title"),
        ),
        check,
    ])];
    let height = usize::from(area.height.saturating_sub(1));
    let first = replay.step.saturating_sub(height / 2);
    for (i, r) in replay.records.iter().enumerate().skip(first).take(height) {
        let step = i + 1;
        let current = step == replay.step;
        let diverged = replay.divergence.as_ref().is_some_and(|d| d.step == step);
        let style = if current {
            app.theme.style("ui.selection")
        } else if step > replay.step {
            app.theme.style("ui.dim")
        } else {
            app.theme.style("ui.text")
        };
        let flag = if diverged {
            "≠ "
        } else if current {
            "▸ "
        } else {
            "  "
        };
        lines.push(Line::from(vec![
            Span::styled(flag, app.theme.style("ui.error")),
            Span::styled(
                format!("{step:>4} {:<8} ", r.agent),
                app.theme.style("ui.agent"),
            ),
            Span::styled(
                first_line(&r.canonical, usize::from(area.width).saturating_sub(30)),
                style,
            ),
            Span::styled(
                format!(" {}", r.outcome.as_str()),
                app.theme.style("ui.dim"),
            ),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(
        format!(" {} ", app.title),
        app.theme.style("ui.title"),
    )];
    for a in &app.model.agents {
        let (mark, role) = match a.state.as_str() {
            "generating" => ("●", "ui.ok"),
            "waiting" => ("◐", "ui.waiting"),
            "halted" => ("■", "ui.denied"),
            _ => ("○", "ui.dim"),
        };
        let pulse = a.next_pulse.map(|s| format!(" {s}s")).unwrap_or_default();
        spans.push(Span::styled(
            format!(" {mark} {}{pulse}", a.name),
            app.theme.style(role),
        ));
    }
    spans.push(Span::styled(
        format!("  │ {} pending │ {} ", app.model.pending.len(), app.db),
        app.theme.style("ui.status_bar"),
    ));
    if let Some(notice) = &app.notice {
        spans.push(Span::styled(
            format!("│ {notice} "),
            app.theme.style("ui.waiting"),
        ));
    } else {
        let hints: &[(super::keymap::Action, &str)] = match app.focus {
            Pane::Turns => &[
                (super::keymap::Action::Follow, "follow"),
                (super::keymap::Action::FilterAgent, "agent"),
            ],
            Pane::Memory => &[
                (super::keymap::Action::EditBlock, "edit"),
                (super::keymap::Action::UndoBlock, "undo"),
                (super::keymap::Action::Search, "search"),
            ],
            Pane::Replay => &[
                (super::keymap::Action::StepForward, "next"),
                (super::keymap::Action::PlayPause, "play"),
            ],
            _ => &[],
        };
        let common = [
            (super::keymap::Action::Approve, "approve"),
            (super::keymap::Action::Deny, "deny"),
            (super::keymap::Action::Help, "help"),
        ];
        for (action, name) in hints.iter().chain(common.iter()) {
            if let Some(keys) = app.keymap.keys_for(*action) {
                spans.push(Span::styled(
                    format!(" {keys}"),
                    app.theme.style("ui.key_hint"),
                ));
                spans.push(Span::styled(
                    format!(" {name}"),
                    app.theme.style("ui.status_bar"),
                ));
            }
        }
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(app.theme.style("ui.status_bar")),
        area,
    );
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

fn popup(app: &App, title: &str) -> Block<'static> {
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

fn render_overlay(app: &App, frame: &mut Frame, size: Rect) {
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => {
            let bindings = app.keymap.bindings();
            let area = centered(size, 72, bindings.len() as u16 + 2);
            let lines: Vec<Line> = bindings
                .iter()
                .map(|b| {
                    Line::from(vec![
                        Span::styled(
                            format!("{:>14}  ", b.keys_text()),
                            app.theme.style("ui.key_hint"),
                        ),
                        Span::styled(b.desc.clone(), app.theme.style("ui.text")),
                    ])
                })
                .collect();
            frame.render_widget(Clear, area);
            frame.render_widget(
                Paragraph::new(lines).block(popup(app, "Keys (Esc closes)")),
                area,
            );
        }
        Overlay::Input { purpose, text } => {
            let prompt = match purpose {
                InputPurpose::DenyReason(id) => format!("deny {id} because: "),
                InputPurpose::Command => ":".to_string(),
                InputPurpose::Search => "search memory: ".to_string(),
                InputPurpose::Message(agent) => format!("message to {agent}: "),
            };
            let area = Rect::new(size.x, size.bottom().saturating_sub(2), size.width, 1);
            frame.render_widget(Clear, area);
            let line = Line::from(vec![
                Span::styled(prompt, app.theme.style("ui.key_hint")),
                Span::styled(format!("{text}█"), app.theme.style("ui.input")),
            ]);
            frame.render_widget(
                Paragraph::new(line).style(app.theme.style("ui.input")),
                area,
            );
        }
        Overlay::Editor {
            target,
            area: textarea,
            ..
        } => {
            let title = match target {
                EditTarget::Block { agent, label } => {
                    format!("editing {agent}/{label} — Ctrl-S saves, Esc closes")
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
            let block = popup(app, &title);
            let inner = block.inner(area);
            frame.render_widget(block, area);
            frame.render_widget(&**textarea, inner);
        }
        Overlay::ConfirmQuit => {
            let area = centered(size, 50, 3);
            frame.render_widget(Clear, area);
            frame.render_widget(
                Paragraph::new("An edit is unsaved. Quit anyway? (y/n)").block(popup(app, "Quit")),
                area,
            );
        }
    }
}
