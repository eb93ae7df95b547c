//! What the model is made of: turns and their actions with each action's
//! state, agents' rows, and notifications.

use partner_core::clock::Millis;
use partner_dialect::Span;
use partner_protocol::PromptKind;
use partner_protocol::RunState;

/// Where an action stands, as the console shows it inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionState {
    /// Parsed, not yet decided.
    Queued,
    /// Waiting on an authority.
    Waiting {
        /// Request id.
        id: String,
        /// Who it waits on.
        on: String,
    },
    /// Approved, about to run.
    Approved {
        /// Who approved.
        by: String,
    },
    /// Ran.
    Executed {
        /// Short result.
        result: String,
    },
    /// Refused.
    Denied {
        /// Why.
        reason: String,
    },
    /// Ran into an error.
    Failed {
        /// The error.
        error: String,
    },
    /// Withdrawn or taken back.
    Cancelled,
}

impl ActionState {
    /// A short label for the turn view.
    pub fn label(&self) -> String {
        match self {
            ActionState::Queued => "queued".into(),
            ActionState::Waiting { id, on } => format!("waiting on {on} ({id})"),
            ActionState::Approved { by } => format!("approved by {by}"),
            ActionState::Executed { result } => format!("✓ {}", first_line(result, 60)),
            ActionState::Denied { reason } => format!("✗ denied: {}", first_line(reason, 60)),
            ActionState::Failed { error } => format!("! failed: {}", first_line(error, 60)),
            ActionState::Cancelled => "cancelled".into(),
        }
    }

    /// The theme role of the label.
    pub fn role(&self) -> &'static str {
        match self {
            ActionState::Queued | ActionState::Cancelled => "ui.dim",
            ActionState::Waiting { .. } | ActionState::Approved { .. } => "ui.waiting",
            ActionState::Executed { .. } => "ui.ok",
            ActionState::Denied { .. } | ActionState::Failed { .. } => "ui.denied",
        }
    }
}

/// The first line of `text`, cut to `max` terminal columns (wide
/// characters such as CJK and emoji count two).
pub fn first_line(text: &str, max: usize) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    let line = text.lines().next().unwrap_or("");
    if line.width() <= max {
        return line.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in line.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// One action inside a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionEntry {
    /// The action's id (turn, pass, place): events about it carry it.
    pub action_id: String,
    /// Canonical form (first line).
    pub canonical: String,
    /// Where it is in the turn's text.
    pub span: Span,
    /// Its status.
    pub state: ActionState,
    /// The trace record of its outcome, once it has one.
    pub trace_id: Option<String>,
    /// The agent's plain words it was read from, when it was proposed
    /// rather than written as an action (it waits for the partner).
    pub proposed_from: Option<String>,
}

/// One model pass of one agent, as it streamed — or a message that
/// reached it (`from` set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEntry {
    /// The agent.
    pub agent: String,
    /// For a message to the agent: who sent it (`partner`, `agent:scout`).
    pub from: Option<String>,
    /// What of the reply could not be read as an action, and what the model
    /// was told.
    pub errors: Vec<(Span, String)>,
    /// When it started.
    pub time: Millis,
    /// Response, pulse or continuation.
    pub kind: PromptKind,
    /// Pass number.
    pub pass: u32,
    /// The text so far.
    pub text: String,
    /// Actions found in it.
    pub actions: Vec<ActionEntry>,
    /// True once the reply finished (or failed).
    pub done: bool,
    /// Why the model call failed, when it did: the turn ended without a
    /// reply.
    pub failed: Option<String>,
    /// Quiet turns folded into this one: how many in a row said nothing
    /// (1: just this one), and when the last of them started.
    pub quiet_run: (u32, Millis),
}

impl TurnEntry {
    /// True when the turn said nothing at all: no text, no action, no
    /// error, no failure.
    pub fn is_quiet(&self) -> bool {
        self.done
            && self.from.is_none()
            && self.failed.is_none()
            && self.text.trim().is_empty()
            && self.actions.is_empty()
            && self.errors.is_empty()
    }
}

/// An agent's state line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentLine {
    /// Name.
    pub name: String,
    /// What it is doing.
    pub state: RunState,
    /// When it pulses next (wall time), when idle with a pulse.
    pub next_pulse_at: Option<Millis>,
    /// The daemon that runs it, when another does (team mode).
    pub host: Option<String>,
}

/// What a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Something failed (a model call, a read).
    Error,
    /// A reply held something that looked like an action and was not one.
    Parse,
    /// partner's own trouble (a busy database), not the agent's.
    System,
    /// An agent flagged that it is unsure (`/uncertain`).
    Flag,
    /// An agent was halted.
    Halt,
    /// Nobody decided a request in time.
    Timeout,
    /// A prompt was cut to fit the agent's context budget.
    Context,
    /// An agent's words were read as an action, waiting for the partner.
    Proposal,
    /// A status-line message too long for the status line, kept whole.
    Status,
    /// A reply echoed the agent's instructions; the lines were not run.
    Echo,
}

impl NoticeKind {
    /// A short tag for lists.
    pub fn tag(self) -> &'static str {
        match self {
            NoticeKind::Error => "error",
            NoticeKind::Parse => "parse",
            NoticeKind::System => "system",
            NoticeKind::Status => "status",
            NoticeKind::Flag => "flag",
            NoticeKind::Halt => "halt",
            NoticeKind::Timeout => "timeout",
            NoticeKind::Context => "context",
            NoticeKind::Proposal => "proposal",
            NoticeKind::Echo => "echo",
        }
    }
}

/// Something the partner should see even when it scrolled past.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// When.
    pub time: Millis,
    /// The agent it concerns.
    pub agent: Option<String>,
    /// What kind.
    pub kind: NoticeKind,
    /// What happened.
    pub text: String,
}

/// Most notifications kept.
pub const MAX_NOTIFICATIONS: usize = 1000;
