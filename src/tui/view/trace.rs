//! The trace pane (what ran, newest last) and the replay pane (a trace
//! stepped through, with where a re-run diverged).

use super::*;

pub(super) fn render_trace(app: &App, frame: &mut Frame, area: Rect) {
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

pub(super) fn render_replay(app: &App, frame: &mut Frame, area: Rect) {
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
