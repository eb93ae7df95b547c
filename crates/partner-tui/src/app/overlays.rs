//! What covers the panes: the help (scrollable, generated from the keymap,
//! with the `:` commands and what every icon means), the prompt, the
//! editor, confirmations, the standing rules, the notifications, and the
//! merge view of a save that met someone else's change.

use ratatui::text::{Line, Span};
use ratatui_textarea::TextArea;
use unicode_width::UnicodeWidthStr;

use super::App;
use crate::panes::{EditTarget, PromptPurpose};
use crate::prompt::Prompt;
use partner_policy::{Decision, StandingRule};
use partner_store::memory::Block;

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
        rules: Vec<partner_store::memory::learned::LearnedRule>,
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
    Lisp(crate::panes::LispView),
    /// The partner's own command's output.
    Output(crate::panes::OutputView),
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
pub(super) fn help_width(width: u16) -> usize {
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
    let moves = [crate::keymap::Action::Down, crate::keymap::Action::Up];
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
                crate::model::first_line(&format!("  {key}"), width),
                theme.style("ui.key_hint"),
            )));
            String::new()
        } else {
            key
        };
        let pad = " ".repeat(key_w.saturating_sub(key.width()));
        let wrapped = crate::panes::wrap_words(vec![(desc, theme.style("ui.text"))], text_w);
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
