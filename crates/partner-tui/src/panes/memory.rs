//! The memory pane: an agent's blocks with their fill, the selected block's
//! value and its version history, or the hits of a memory search. Edits
//! are drafts until saved: a draft survives a failed save and a conflict,
//! one per block, marked in the list.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use unicode_width::UnicodeWidthStr;

use super::render::{diff_lines, wrap_words};
use super::{Component, EditTarget, Effect, PromptPurpose, View};
use crate::backend::BackendOp;
use crate::keymap::Action;
use crate::model::{Model, first_line};
use crate::theme::Theme;
use partner_core::clock::format_time;
use partner_protocol::wire::Via;
use partner_protocol::wire::{Block, BlockKind, BlockPermission};

/// An unsaved edit of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    /// The edited text.
    pub text: String,
    /// The version it was started from (a save succeeds only on it).
    pub base_version: i64,
}

/// The memory pane's state.
#[derive(Debug, Clone, Default)]
pub struct MemoryPane {
    /// The agent shown (the first agent when unset).
    pub agent: Option<String>,
    /// The selected block's label.
    pub selected: Option<String>,
    /// A search being shown instead of the blocks.
    pub search: Option<String>,
    /// The selected search hit.
    pub hit: usize,
    /// Unsaved edits, by agent and label.
    pub drafts: HashMap<(String, String), Draft>,
}

fn kind_code(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::Core => "C",
        BlockKind::Working => "W",
        BlockKind::Archival => "A",
    }
}

fn permission_code(permission: BlockPermission) -> &'static str {
    match permission {
        BlockPermission::ReadOnly => "ro",
        BlockPermission::Partner => "pt",
        BlockPermission::Human => "hu",
        BlockPermission::Append => "ap",
        BlockPermission::ReadWrite => "rw",
        BlockPermission::Admin => "ad",
    }
}

/// A usage bar `width` cells wide, filled in proportion (rounded; a block
/// with anything in it shows at least one cell).
fn bar(theme: &Theme, used: usize, limit: usize, width: usize) -> Vec<Span<'static>> {
    let filled = match (used * width + limit / 2).checked_div(limit) {
        None => width,
        Some(exact) => exact.max(usize::from(used > 0)).min(width),
    };
    vec![
        Span::styled("█".repeat(filled), theme.style("ui.bar_filled")),
        Span::styled("░".repeat(width - filled), theme.style("ui.bar_empty")),
    ]
}

impl MemoryPane {
    /// The agent shown.
    pub fn agent(&self, model: &Model) -> Option<String> {
        self.agent
            .clone()
            .or_else(|| model.agents.first().map(|a| a.name.clone()))
    }

    /// The selected block.
    pub fn selected_block<'a>(&self, blocks: &'a [Block]) -> Option<&'a Block> {
        match &self.selected {
            Some(label) => blocks.iter().find(|b| &b.label == label),
            None => blocks.first(),
        }
    }

    /// Keeps the selection true after the blocks were read again.
    pub fn refreshed(&mut self, model: &Model) {
        if let Some(label) = &self.selected
            && !model.blocks.iter().any(|b| &b.label == label)
        {
            self.selected = None;
        }
    }

    fn history_of(&self, model: &Model) -> Vec<Effect> {
        match (self.agent(model), self.selected_block(&model.blocks)) {
            (Some(agent), Some(b)) => {
                vec![Effect::Op(BackendOp::Host(partner_protocol::Op::History {
                    agent,
                    label: b.label.clone(),
                }))]
            }
            _ => Vec::new(),
        }
    }

    fn step(&mut self, model: &Model, delta: isize) -> Vec<Effect> {
        if self.search.is_some() {
            let n = model.hits.len();
            if n > 0 {
                self.hit = (self.hit as isize + delta).clamp(0, n as isize - 1) as usize;
            }
            return Vec::new();
        }
        let blocks = &model.blocks;
        if blocks.is_empty() {
            return Vec::new();
        }
        let at = self
            .selected_block(blocks)
            .and_then(|b| blocks.iter().position(|x| x.label == b.label))
            .unwrap_or(0);
        let next = (at as isize + delta).clamp(0, blocks.len() as isize - 1) as usize;
        self.selected = Some(blocks[next].label.clone());
        self.history_of(model)
    }

    /// The draft of a block, if any.
    pub fn draft(&self, agent: &str, label: &str) -> Option<&Draft> {
        self.drafts.get(&(agent.to_string(), label.to_string()))
    }
}

impl Component for MemoryPane {
    fn act(&mut self, action: Action, model: &Model) -> Option<Vec<Effect>> {
        Some(match action {
            Action::Up => self.step(model, -1),
            Action::Down => self.step(model, 1),
            Action::PageUp | Action::HalfPageUp => self.step(model, -5),
            Action::PageDown | Action::HalfPageDown => self.step(model, 5),
            Action::Top => self.step(model, -100_000),
            Action::Bottom => self.step(model, 100_000),
            Action::Search => vec![Effect::Prompt(PromptPurpose::SearchMemory)],
            Action::Back if self.search.is_some() => {
                self.search = None;
                Vec::new()
            }
            Action::Select if self.search.is_some() => {
                // Open the hit's block.
                let Some(hit) = model.hits.get(self.hit) else {
                    return Some(Vec::new());
                };
                let hit = &hit.hit;
                let Some(label) = hit.label.clone() else {
                    return Some(vec![Effect::Notice(format!(
                        "hit #{} is not in a block (archival or a conversation)",
                        hit.id
                    ))]);
                };
                self.search = None;
                self.agent = Some(hit.agent.clone());
                self.selected = Some(label);
                vec![Effect::Op(BackendOp::Host(partner_protocol::Op::Blocks {
                    agent: hit.agent.clone(),
                }))]
            }
            Action::Select => self.history_of(model),
            Action::EditBlock => {
                let (Some(agent), Some(b)) =
                    (self.agent(model), self.selected_block(&model.blocks))
                else {
                    return Some(vec![Effect::Notice("no block to edit".into())]);
                };
                let (text, base_version) = match self.draft(&agent, &b.label) {
                    Some(d) => (d.text.clone(), d.base_version),
                    None => (b.value.clone(), b.version),
                };
                vec![Effect::Edit {
                    target: EditTarget::Block {
                        agent,
                        label: b.label.clone(),
                        base_version,
                    },
                    text,
                }]
            }
            Action::UndoBlock => match (self.agent(model), self.selected_block(&model.blocks)) {
                (Some(agent), Some(b)) => {
                    vec![Effect::Op(BackendOp::Host(
                        partner_protocol::Op::UndoBlock {
                            agent,
                            label: b.label.clone(),
                        },
                    ))]
                }
                _ => vec![Effect::Notice("no block to undo".into())],
            },
            Action::FilterAgent => {
                let names: Vec<String> = model.agents.iter().map(|a| a.name.clone()).collect();
                let current = self.agent(model);
                let i = names
                    .iter()
                    .position(|n| Some(n) == current.as_ref())
                    .map_or(0, |i| (i + 1) % names.len().max(1));
                let Some(next) = names.get(i).cloned() else {
                    return Some(Vec::new());
                };
                self.agent = Some(next.clone());
                self.selected = None;
                vec![Effect::Op(BackendOp::Host(partner_protocol::Op::Blocks {
                    agent: next,
                }))]
            }
            _ => return None,
        })
    }

    fn click(&mut self, row: usize, model: &Model) -> Vec<Effect> {
        if let Some(b) = model.blocks.get(row) {
            self.selected = Some(b.label.clone());
            return self.history_of(model);
        }
        Vec::new()
    }

    fn title(&self, view: &View<'_>) -> String {
        let agent = self.agent(view.model).unwrap_or_default();
        match (view.replay, &self.search) {
            (_, Some(q)) => format!("Memory · search “{q}”"),
            (Some(r), None) => format!("Memory · {agent} as at step {} (replay)", r.state.step),
            (None, None) => format!("Memory · {agent}"),
        }
    }

    fn render(&self, frame: &mut Frame, area: Rect, view: &View<'_>) {
        if let Some(query) = &self.search {
            let lines = self.hit_lines(query, view);
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
            return;
        }
        let agent = self.agent(view.model).unwrap_or_default();
        let shown: &[Block] = match view.replay {
            Some(r) => match &r.memory {
                Some((_, blocks)) => blocks,
                None => {
                    // Never the live blocks under a replay: they are not
                    // what was so at this step.
                    frame.render_widget(
                        Paragraph::new(format!(
                            "reading {agent}'s memory as it was at step {}…",
                            r.state.step
                        ))
                        .style(view.theme.style("ui.dim")),
                        area,
                    );
                    return;
                }
            },
            None => &view.model.blocks,
        };
        // The list: label, kind and permission, a usage bar, chars. Its
        // width follows the pane; narrow panes drop the bar first.
        let list_width = (area.width / 2).clamp(20, 40);
        let [list, _, content] = Layout::horizontal([
            Constraint::Length(list_width),
            Constraint::Length(1),
            Constraint::Min(0),
        ])
        .areas(area);
        let rows = self.block_rows(shown, list, view, &agent);
        if rows.is_empty() {
            frame.render_widget(
                Paragraph::new("No blocks.").style(view.theme.style("ui.dim")),
                list,
            );
        } else {
            frame.render_widget(Paragraph::new(rows), list);
        }
        let Some(block) = self.selected_block(shown) else {
            return;
        };
        let lines = self.block_lines(block, view, &agent, usize::from(content.width));
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), content);
    }
}

impl MemoryPane {
    /// A search's head line and its hits: which side found each, its
    /// score, where it is, its snippet with the matched terms marked.
    fn hit_lines(&self, query: &str, view: &View<'_>) -> Vec<Line<'static>> {
        let (theme, model) = (view.theme, view.model);
        let answered = model.hits_for.as_deref() == Some(query);
        let head = match (&model.hits_failed, &model.hits_note) {
            // Nothing held answers these words yet: never "0 hits".
            _ if !answered => format!("searching memory for “{query}”… Esc closes"),
            (Some(why), _) => format!("the search for “{query}” failed: {why} — Esc closes"),
            (None, note) => format!(
                "{} hits for “{query}”{} — Enter opens a block, Esc closes",
                model.hits.len(),
                note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
            ),
        };
        let mut lines = vec![Line::from(Span::styled(head, theme.style("ui.title")))];
        for (i, h) in model.hits.iter().enumerate() {
            let hit = &h.hit;
            let place = hit.label.clone().unwrap_or_else(|| format!("#{}", hit.id));
            let style = if i == self.hit {
                theme.style("ui.selection")
            } else {
                theme.style("ui.text")
            };
            // Which side found it, and the fused score (×100: the
            // nearest item holding every word reads 120).
            let via = match h.via {
                Via::Fts => "words  ",
                Via::Vector => "meaning",
                Via::Both => "both   ",
            };
            let mut spans = vec![
                Span::styled(
                    format!("{via} {:>3.0} ", h.score * 100.0),
                    theme.style("ui.dim"),
                ),
                Span::styled(format!("{}/{place} ", hit.agent), theme.style("ui.agent")),
            ];
            // The matched terms highlighted, not bracketed.
            let marked = style.add_modifier(
                ratatui::style::Modifier::BOLD | ratatui::style::Modifier::UNDERLINED,
            );
            for (piece, matched) in partner_protocol::wire::marked(&hit.snippet) {
                spans.push(Span::styled(piece, if matched { marked } else { style }));
            }
            lines.push(Line::from(spans));
        }
        lines
    }

    /// One row per block that fits `list`: draft or selection mark, label,
    /// kind and permission, a usage bar where there is room, chars.
    fn block_rows(
        &self,
        shown: &[Block],
        list: Rect,
        view: &View<'_>,
        agent: &str,
    ) -> Vec<Line<'static>> {
        let theme = view.theme;
        let lw = usize::from(list.width);
        let show_bar = lw >= 30;
        let label_w = lw.saturating_sub(if show_bar { 2 + 5 + 9 + 5 } else { 2 + 5 + 5 });
        let selected = self.selected_block(shown).map(|b| b.label.clone());
        shown
            .iter()
            .take(usize::from(list.height))
            .map(|b| {
                let is_sel = Some(&b.label) == selected.as_ref();
                let style = if is_sel {
                    theme.style("ui.selection")
                } else {
                    theme.style("ui.text")
                };
                let mark = if view.replay.is_none() && self.draft(agent, &b.label).is_some() {
                    "✎ "
                } else if is_sel {
                    "▸ "
                } else {
                    "  "
                };
                let label = first_line(&b.label, label_w);
                let pad = label_w.saturating_sub(label.width());
                let mut spans = vec![
                    Span::styled(mark, theme.style("ui.key_hint")),
                    Span::styled(format!("{label}{}", " ".repeat(pad)), style),
                    Span::styled(
                        format!(" {} {} ", kind_code(b.kind), permission_code(b.permission)),
                        theme.style("ui.dim"),
                    ),
                ];
                if show_bar {
                    spans.extend(bar(theme, b.chars(), b.char_limit, 8));
                    spans.push(Span::raw(" "));
                }
                spans.push(Span::styled(
                    format!("{:>4}", b.chars()),
                    theme.style("ui.dim"),
                ));
                Line::from(spans)
            })
            .collect()
    }

    /// The selected block: its head, a draft waiting, its value wrapped to
    /// `width`, and its recent history as diffs.
    fn block_lines(
        &self,
        block: &Block,
        view: &View<'_>,
        agent: &str,
        width: usize,
    ) -> Vec<Line<'static>> {
        let theme = view.theme;
        let mut lines = vec![Line::from(vec![
            Span::styled(block.label.clone(), theme.style("ui.title")),
            Span::styled(
                format!(
                    "  {} · {} · v{} · {}/{} chars",
                    block.kind,
                    block.permission,
                    block.version,
                    block.chars(),
                    block.char_limit
                ),
                theme.style("ui.dim"),
            ),
        ])];
        if let Some(draft) = self
            .draft(agent, &block.label)
            .filter(|_| view.replay.is_none())
        {
            lines.push(Line::from(Span::styled(
                format!(
                    "✎ an unsaved draft from v{} ({} chars): i reopens it",
                    draft.base_version,
                    draft.text.chars().count()
                ),
                theme.style("ui.waiting"),
            )));
        }
        lines.extend(wrap_words(
            vec![(block.value.clone(), theme.style("ui.text"))],
            width,
        ));
        lines.extend(history_lines(block, view));
        lines
    }
}

/// The block's last five changes, newest first, as diffs — when the held
/// history is this block's (never under a replay).
fn history_lines(block: &Block, view: &View<'_>) -> Vec<Line<'static>> {
    let (theme, history) = (view.theme, &view.model.history);
    let history_is_this = history
        .last()
        .is_some_and(|v| v.version == block.version && view.replay.is_none());
    if !history_is_this || history.len() < 2 {
        return Vec::new();
    }
    let mut lines = vec![
        Line::default(),
        Line::from(Span::styled("history", theme.style("ui.header"))),
    ];
    for pair in history.windows(2).rev().take(5) {
        let (old, new) = (&pair[0], &pair[1]);
        lines.push(Line::from(Span::styled(
            format!(
                "v{} by {} at {}",
                new.version,
                new.changed_by,
                &format_time(new.changed_at)[11..19]
            ),
            theme.style("ui.dim"),
        )));
        let diff = partner_protocol::wire::diff(
            &block.label,
            &old.value,
            &new.value,
            old.version,
            new.version,
        );
        lines.extend(diff_lines(theme, &diff).into_iter().skip(3));
    }
    lines
}
