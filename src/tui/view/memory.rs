//! The memory pane: an agent's blocks with their fill, the selected block's
//! value and its version history, or search hits.

use super::*;

pub(super) fn bar(app: &App, used: usize, limit: usize, width: usize) -> Vec<Span<'static>> {
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

pub(super) fn render_memory(app: &App, frame: &mut Frame, area: Rect) {
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
