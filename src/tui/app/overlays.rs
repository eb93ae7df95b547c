//! What covers the panes: the help (scrollable, generated from the keymap,
//! with the `:` commands and what every icon means), the prompt, the
//! editor, confirmations, the standing rules, the notifications, and the
//! merge view of a save that met someone else's change.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui_textarea::TextArea;
use unicode_width::UnicodeWidthStr;

use super::App;
use crate::clock::format_time;
use crate::memory::Block;
use crate::permission::{Decision, StandingRule};
use crate::tui::panes::{EditTarget, PromptPurpose, centered, diff_lines, popup};
use crate::tui::prompt::Prompt;

/// What a confirmation does on yes.
#[derive(Debug, Clone, PartialEq)]
pub enum Confirmed {
    /// Decide a request.
    Decide {
        /// The request.
        id: String,
        /// The decision.
        decision: Decision,
    },
    /// Revoke a standing rule.
    RevokeRule(i64),
    /// Forget a learned phrasing.
    Forget(i64),
    /// Run the partner's own command.
    RunCommand(String),
    /// Quit although drafts are unsaved.
    Quit,
    /// Learn that these words stand for this action.
    Learn {
        /// The words.
        words: String,
        /// The action.
        action: String,
    },
}

/// The editor overlay.
#[derive(Debug, Clone)]
pub struct Editor {
    /// What is edited.
    pub target: EditTarget,
    /// The text area.
    pub area: Box<TextArea<'static>>,
    /// The text it started with.
    pub original: String,
    /// Why the last save or approval failed (the editor stays open).
    pub error: Option<String>,
    /// A save or approval was sent and its answer is awaited.
    pub waiting: bool,
}

impl Editor {
    /// An editor on `text`.
    pub fn new(target: EditTarget, text: &str, original: String) -> Self {
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let mut area = TextArea::new(lines);
        // Long lines wrap at word boundaries on screen (soft: the text
        // keeps its own lines).
        area.set_wrap_mode(ratatui_textarea::WrapMode::Word);
        Editor {
            target,
            area: Box::new(area),
            original,
            error: None,
            waiting: false,
        }
    }

    /// The text as edited.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }
}

/// A save that met someone else's change: the partner's text and the
/// block as it is now.
#[derive(Debug, Clone)]
pub struct Merge {
    /// Agent.
    pub agent: String,
    /// Label.
    pub label: String,
    /// The partner's edit.
    pub ours: String,
    /// The block now.
    pub theirs: Block,
}

/// What covers the panes.
#[derive(Debug, Clone, Default)]
pub enum Overlay {
    /// Nothing.
    #[default]
    None,
    /// The key help.
    Help {
        /// Lines scrolled.
        scroll: usize,
    },
    /// A one-line prompt.
    Prompt {
        /// What for.
        purpose: PromptPurpose,
        /// The line.
        prompt: Prompt,
    },
    /// The editor.
    Editor(Editor),
    /// A yes/no question.
    Confirm {
        /// The question.
        question: String,
        /// What yes does.
        on_yes: Confirmed,
    },
    /// The phrasings the partner taught.
    Learned {
        /// The phrasings.
        rules: Vec<crate::memory::learned::LearnedRule>,
        /// The one selected.
        selected: usize,
    },
    /// The standing rules.
    Rules {
        /// The rules in force.
        rules: Vec<StandingRule>,
        /// The selected one.
        selected: usize,
    },
    /// The notifications, newest first.
    Log {
        /// The selected one (0: the newest).
        scroll: usize,
        /// True when the selected one is shown whole, with what to do.
        open: bool,
    },
    /// A save that met someone else's change.
    Merge(Merge),
    /// A `:lisp` result.
    Lisp(crate::tui::panes::LispView),
    /// The partner's own command's output.
    Output(crate::tui::panes::OutputView),
}

/// The `:` commands, for the help.
const COMMANDS: &[(&str, &str)] = &[
    (":msg AGENT TEXT", "send a message to an agent"),
    (":/ACTION", "run a dialect action as the agent in view"),
    (
        "!COMMAND",
        "your own shell command or request: its risk asked, run as you",
    ),
    (":output", "your last command's output again"),
    (":halt [AGENT]", "halt an agent, or every agent"),
    (":resume [AGENT]", "let it run again"),
    (":pulse AGENT [EVERY]", "pulse now, or every 30m"),
    (":rules", "the standing rules (x revokes)"),
    (":learned", "the phrasings you taught (x forgets)"),
    (
        ":lisp EXPR",
        "Pattern Lisp with state = the agent in view's state",
    ),
    (":lisp tool NAME ARGS", "what a tool would do (a dry run)"),
    (":log", "notifications: errors, flags, halts, timeouts"),
    (":open trace FILE", "replay a trace (Esc or :close leaves)"),
    (
        ":replay",
        "replay this constellation's own trace, from its database",
    ),
    (":step N", "jump the replay to step N"),
    (":filter verb V | outcome O", "filter the trace"),
    (":filter clear", "drop every filter"),
    (":q", "quit"),
];

/// What the icons and codes mean, for the help.
const LEGEND: &[(&str, &str)] = &[
    (
        "○ ◐ ● ■",
        "agent idle · waiting on a decision · generating · halted",
    ),
    ("12s 14m", "time to the agent's next pulse"),
    ("▸", "the selected row; ▶ the selected action in Turns"),
    ("✓ ✗ !", "action executed · denied or unreadable · failed"),
    ("✎", "a block with an unsaved draft"),
    ("C W A", "block kind: core, working, archival"),
    (
        "ro ap rw pt hu ad",
        "read-only, append, read-write, partner or human asks, admin",
    ),
    (
        "! 3",
        "on the status line: unseen notifications (N or :log opens them)",
    ),
    ("REPLAY", "the console shows a trace; decisions are off"),
];

/// The help's width: the popup's inner width on a screen `width` wide.
fn help_width(width: u16) -> usize {
    usize::from(width.min(84).saturating_sub(2))
}

/// The help's lines for a popup `width` columns wide inside: each key or
/// code right-aligned in one column, its meaning wrapped on words beside it.
pub fn help_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let theme = &app.theme;
    let head = |t: &str| Line::from(Span::styled(t.to_string(), theme.style("ui.header")));
    let mut rows: Vec<(Option<&str>, String, String)> = Vec::new();
    // The focused pane's own keys first, then every key.
    let pane = format!("In the {} pane", app.focus.title());
    let mut here: Vec<(String, String)> = Vec::new();
    let moves = [
        crate::tui::keymap::Action::Down,
        crate::tui::keymap::Action::Up,
    ];
    let hinted = super::render::hints(app).into_iter().map(|(a, _)| a);
    for action in moves.into_iter().chain(hinted) {
        for b in app.keymap.bindings().iter().filter(|b| b.action == action) {
            if !here.iter().any(|(k, _)| *k == b.keys_text()) {
                here.push((b.keys_text(), b.desc.clone()));
            }
        }
    }
    if !here.is_empty() {
        rows.push((Some(pane.as_str()), String::new(), String::new()));
        rows.extend(here.into_iter().map(|(k, d)| (None, k, d)));
    }
    rows.push((Some("Keys"), String::new(), String::new()));
    for b in app.keymap.bindings() {
        rows.push((None, b.keys_text(), b.desc.clone()));
    }
    rows.push((Some("Commands (:)"), String::new(), String::new()));
    for (c, d) in COMMANDS {
        rows.push((None, (*c).into(), (*d).into()));
    }
    rows.push((Some("Icons and codes"), String::new(), String::new()));
    for (c, d) in LEGEND {
        rows.push((None, (*c).into(), (*d).into()));
    }
    let key_w = rows
        .iter()
        .map(|(_, k, _)| k.width())
        .max()
        .unwrap_or(0)
        .min(16)
        .min(width / 3);
    let text_w = width.saturating_sub(key_w + 2).max(8);
    let mut lines = Vec::new();
    for (header, key, desc) in rows {
        if let Some(h) = header {
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            lines.push(head(h));
            continue;
        }
        // A key too long for the column gets a line of its own.
        let key = if key.width() > key_w {
            lines.push(Line::from(Span::styled(
                crate::tui::model::first_line(&format!("  {key}"), width),
                theme.style("ui.key_hint"),
            )));
            String::new()
        } else {
            key
        };
        let pad = " ".repeat(key_w.saturating_sub(key.width()));
        let wrapped = crate::tui::panes::wrap_words(vec![(desc, theme.style("ui.text"))], text_w);
        for (i, line) in wrapped.into_iter().enumerate() {
            let lead = if i == 0 {
                Span::styled(format!("{pad}{key}  "), theme.style("ui.key_hint"))
            } else {
                Span::raw(" ".repeat(key_w + 2))
            };
            let mut spans = vec![lead];
            spans.extend(line.spans);
            lines.push(Line::from(spans));
        }
    }
    lines
}

/// How far the help can scroll on a screen of `size`.
pub fn help_max_scroll(app: &App, size: (u16, u16)) -> usize {
    let inner_h = usize::from(size.1.saturating_sub(4));
    help_lines(app, help_width(size.0))
        .len()
        .saturating_sub(inner_h)
}

/// Draws the overlay over the panes.
pub fn render_overlay(app: &App, frame: &mut Frame, size: Rect) {
    let theme = &app.theme;
    match &app.overlay {
        Overlay::None => {}
        Overlay::Lisp(view) => view.render(theme, frame, size),
        Overlay::Output(view) => view.render(theme, frame, size),
        Overlay::Help { scroll } => {
            let lines = help_lines(app, help_width(size.width));
            let area = centered(size, 84, size.height.saturating_sub(2));
            let inner_h = usize::from(area.height.saturating_sub(2));
            let max = lines.len().saturating_sub(inner_h);
            let scroll = (*scroll).min(max);
            let shown: Vec<Line> = lines.into_iter().skip(scroll).take(inner_h).collect();
            frame.render_widget(Clear, area);
            let more = if max > 0 {
                format!(" ↑/↓ scroll {}/{max}", scroll)
            } else {
                String::new()
            };
            frame.render_widget(
                Paragraph::new(shown).block(popup(theme, &format!("Help — Esc closes{more}"))),
                area,
            );
        }
        Overlay::Prompt { purpose, prompt } => {
            let label = match purpose {
                PromptPurpose::DenyReason { id, always: false } => format!("deny {id} because: "),
                PromptPurpose::DenyReason { id, always: true } => {
                    format!("deny {id} always, because: ")
                }
                PromptPurpose::Command => match app.acting_agent() {
                    Some(agent) if prompt.line.text().starts_with('/') => {
                        format!(":(as {agent}) ")
                    }
                    _ => ":".to_string(),
                },
                PromptPurpose::SearchMemory => "search memory: ".into(),
                PromptPurpose::SearchTurns => "find in turns: ".into(),
                PromptPurpose::SearchTrace => "filter the trace: ".into(),
                PromptPurpose::Message(agent) => format!("message to {agent}: "),
            };
            // Above the status message, when there is one: it may be what
            // the line is for ("Enter runs it").
            let row = app
                .areas(size)
                .message
                .map_or(size.bottom().saturating_sub(2), |m| m.y.saturating_sub(1));
            let area = Rect::new(size.x, row, size.width, 1);
            frame.render_widget(Clear, area);
            let text = prompt.line.text();
            let cursor = prompt.line.cursor();
            let (before, after) = text.split_at(cursor);
            let mut after_chars = after.chars();
            let at = after_chars
                .next()
                .map_or(" ".to_string(), |c| c.to_string());
            let rest: String = after_chars.collect();
            let mut spans = vec![
                Span::styled(label, theme.style("ui.key_hint")),
                Span::styled(before.to_string(), theme.style("ui.input")),
                Span::styled(
                    at,
                    theme
                        .style("ui.input")
                        .add_modifier(ratatui::style::Modifier::REVERSED),
                ),
                Span::styled(rest, theme.style("ui.input")),
            ];
            if !prompt.offered.is_empty() {
                spans.push(Span::styled(
                    format!("   {}", prompt.offered.join(" ")),
                    theme.style("ui.dim"),
                ));
            }
            frame.render_widget(
                Paragraph::new(Line::from(spans)).style(theme.style("ui.input")),
                area,
            );
        }
        Overlay::Editor(editor) => {
            let title = match &editor.target {
                EditTarget::Block { agent, label, .. } => {
                    format!("editing {agent}/{label} — Ctrl-S saves, Esc keeps a draft")
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
            let block = popup(theme, &title);
            let inner = block.inner(area);
            frame.render_widget(block, area);
            let (text_area, status) = if editor.error.is_some() || editor.waiting {
                let [t, s] = ratatui::layout::Layout::vertical([
                    ratatui::layout::Constraint::Min(1),
                    ratatui::layout::Constraint::Length(2),
                ])
                .areas(inner);
                (t, Some(s))
            } else {
                (inner, None)
            };
            frame.render_widget(&*editor.area, text_area);
            if let Some(s) = status {
                let (text, role) = match &editor.error {
                    Some(e) => (format!("✗ {e}"), "ui.error"),
                    None => ("sent; waiting for the answer…".to_string(), "ui.dim"),
                };
                frame.render_widget(
                    Paragraph::new(text)
                        .style(theme.style(role))
                        .wrap(Wrap { trim: true }),
                    s,
                );
            }
        }
        Overlay::Confirm { question, .. } => {
            // As tall as the question needs: a command's reasons can run long.
            let wanted = u16::try_from(question.width() + 2).unwrap_or(u16::MAX);
            let width = wanted
                .clamp(40, 76)
                .min(size.width.saturating_sub(4))
                .max(20);
            let mut lines = crate::tui::panes::wrap_words(
                vec![(question.clone(), theme.style("ui.text"))],
                usize::from(width - 2),
            );
            let height = u16::try_from(lines.len() + 4).unwrap_or(u16::MAX);
            let area = centered(size, width, height);
            // On a screen too small for all of it, the question is cut
            // and the keys stay.
            let room = usize::from(area.height.saturating_sub(4)).max(1);
            if lines.len() > room {
                lines.truncate(room.saturating_sub(1));
                lines.push(Line::from(Span::styled("…", theme.style("ui.dim"))));
            }
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                "y: yes · any other key: no",
                theme.style("ui.key_hint"),
            )));
            frame.render_widget(Clear, area);
            frame.render_widget(
                Paragraph::new(lines).block(popup(theme, "Are you sure?")),
                area,
            );
        }
        Overlay::Learned { rules, selected } => {
            let area = centered(size, 100, (rules.len() as u16 + 4).clamp(6, 30));
            frame.render_widget(Clear, area);
            let mut lines = Vec::new();
            if rules.is_empty() {
                lines.push(Line::from(Span::styled(
                    "Nothing learned yet: fix a proposed action with E to teach what words mean.",
                    theme.style("ui.dim"),
                )));
            }
            for (i, r) in rules.iter().enumerate() {
                let style = if i == *selected {
                    theme.style("ui.selection")
                } else {
                    theme.style("ui.text")
                };
                lines.push(Line::from(vec![
                    Span::styled(format!("#{:<4}", r.id), theme.style("ui.key_hint")),
                    Span::styled(format!("\"{}\"  →  {}", r.words, r.action), style),
                ]));
            }
            frame.render_widget(
                Paragraph::new(lines).block(popup(
                    theme,
                    "Learned phrasings — ↑/↓ select, x forgets, Esc closes",
                )),
                area,
            );
        }
        Overlay::Rules { rules, selected } => {
            let area = centered(size, 100, (rules.len() as u16 + 4).clamp(6, 30));
            frame.render_widget(Clear, area);
            let mut lines = Vec::new();
            if rules.is_empty() {
                lines.push(Line::from(Span::styled(
                    "No standing rules: every request is decided one at a time.",
                    theme.style("ui.dim"),
                )));
            }
            for (i, r) in rules.iter().enumerate() {
                let style = if i == *selected {
                    theme.style("ui.selection")
                } else {
                    theme.style("ui.text")
                };
                let scope = [Some(r.verb.as_str()), r.op.as_deref(), r.target.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                let until = r
                    .expires_at
                    .map(|at| format!(" until {}", &format_time(at)[..16]))
                    .unwrap_or_default();
                lines.push(Line::from(vec![
                    Span::styled(format!("#{:<4}", r.id), theme.style("ui.key_hint")),
                    Span::styled(
                        format!(
                            "{} {}: /{scope} (by {}{until})",
                            r.effect, r.agent, r.created_by
                        ),
                        style,
                    ),
                ]));
            }
            frame.render_widget(
                Paragraph::new(lines).block(popup(
                    theme,
                    "Standing rules — ↑/↓ select, x revokes, Esc closes",
                )),
                area,
            );
        }
        Overlay::Log { scroll, open } => {
            let area = centered(
                size,
                size.width.saturating_sub(4),
                size.height.saturating_sub(2),
            );
            frame.render_widget(Clear, area);
            let (title, lines) = if *open {
                super::log::entry(
                    app,
                    theme,
                    *scroll,
                    usize::from(area.width.saturating_sub(2)),
                )
            } else {
                super::log::list(app, theme, *scroll, area)
            };
            frame.render_widget(Paragraph::new(lines).block(popup(theme, &title)), area);
        }
        Overlay::Merge(merge) => {
            let area = centered(
                size,
                size.width.saturating_sub(6),
                size.height.saturating_sub(4),
            );
            frame.render_widget(Clear, area);
            let diff = crate::memory::blocks::diff(
                &merge.label,
                &merge.theirs.value,
                &merge.ours,
                merge.theirs.version,
                merge.theirs.version + 1,
            );
            let mut lines = vec![
                Line::from(Span::styled(
                    format!(
                        "{}/{} changed to v{} while you edited. Your edit, against it:",
                        merge.agent, merge.label, merge.theirs.version
                    ),
                    theme.style("ui.waiting"),
                )),
                Line::default(),
            ];
            lines.extend(diff_lines(theme, &diff));
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                "o: save mine over it · t: take theirs (drop my draft) · e: edit mine again · Esc: keep my draft",
                theme.style("ui.key_hint"),
            )));
            frame.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .block(popup(theme, "The block changed")),
                area,
            );
        }
    }
}
