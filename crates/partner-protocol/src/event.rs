//! The runtime's one typed event stream (a tokio broadcast channel): every
//! turn, token, parsed action, permission request and decision, executed
//! action, memory change, pulse and halt. The console and headless runs
//! consume it; nothing else reaches into the runtime.

use serde::{Deserialize, Serialize};

use crate::request::{Authority, DecisionKind};
use crate::{ActionStatus, PromptKind, RunState};
use partner_dialect::{ActionOp, Span, Verb};

/// Something the runtime did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A model pass began.
    TurnStarted {
        /// The agent.
        agent: String,
        /// Which prompt type.
        kind: PromptKind,
        /// Pass number within the turn, from 1.
        pass: u32,
    },
    /// A piece of the model's reply arrived.
    Token {
        /// The agent.
        agent: String,
        /// The text.
        text: String,
    },
    /// A model pass finished.
    ReplyFinished {
        /// The agent.
        agent: String,
        /// Pass number.
        pass: u32,
        /// The whole reply.
        text: String,
    },
    /// An action (or chain link, or batch member) was found in a reply.
    ActionParsed {
        /// The agent.
        agent: String,
        /// The action's id: turn, pass and place (`ada-k3x-4:1:2.1`).
        action_id: String,
        /// Canonical verb.
        verb: Verb,
        /// Sub-operation.
        op: Option<ActionOp>,
        /// Canonical form.
        canonical: String,
        /// Where it is in the reply.
        span: Span,
        /// Taken back in the reply's prose.
        cancelled: bool,
    },
    /// An action waits for an authority.
    PermissionRequested {
        /// The asking agent.
        agent: String,
        /// The action's id, when it came from a turn.
        action_id: Option<String>,
        /// Request id.
        id: String,
        /// Verb.
        verb: Verb,
        /// Sub-operation.
        op: Option<ActionOp>,
        /// Canonical form.
        canonical: String,
        /// Who it waits on.
        waiting_on: Authority,
        /// Why.
        reason: String,
    },
    /// A request was decided (or escalated, or timed out).
    PermissionDecided {
        /// The asking agent.
        agent: String,
        /// The action's id, when it came from a turn.
        action_id: Option<String>,
        /// Request id.
        id: String,
        /// Verb.
        verb: Verb,
        /// Sub-operation.
        op: Option<ActionOp>,
        /// Canonical form.
        canonical: String,
        /// How it was decided.
        decision: DecisionKind,
        /// Who decided.
        by: String,
    },
    /// An action reached its outcome.
    ActionExecuted {
        /// The agent.
        agent: String,
        /// The action's id, when it came from a turn.
        action_id: Option<String>,
        /// Verb.
        verb: Verb,
        /// Sub-operation.
        op: Option<ActionOp>,
        /// Canonical form.
        canonical: String,
        /// How it ended.
        status: ActionStatus,
        /// The result given to the model.
        result: String,
        /// Its trace record.
        trace_id: Option<String>,
        /// True when it failed because of partner, not the agent.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        system_error: bool,
        /// True when it ran and its verb flags it for the partner's
        /// review (`/uncertain`): the console notifies.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        flagged: bool,
    },
    /// A memory block changed.
    MemoryChanged {
        /// The agent.
        agent: String,
        /// Block label.
        label: String,
        /// Version before.
        version_before: Option<i64>,
        /// Version after.
        version_after: i64,
    },
    /// A pulse woke an agent.
    PulseFired {
        /// The agent.
        agent: String,
        /// Why (`idle`, `intention #3 due`, `partner`).
        reason: String,
    },
    /// An agent was halted.
    AgentHalted {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
    /// An agent's state, or when it pulses next, changed (for status
    /// lines: pushed, never polled).
    AgentState {
        /// The agent.
        agent: String,
        /// What it is doing now.
        state: RunState,
        /// When it pulses next (wall time), when idle with a pulse.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next_pulse_at: Option<partner_core::clock::Millis>,
        /// The daemon that runs it (its `--host-name`), in team mode; none
        /// when this process runs it or nobody is known to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// A message reached an agent: from the partner, or from another
    /// agent (`agent:scout`).
    MessageReceived {
        /// The agent it is for.
        agent: String,
        /// Who sent it (`partner`, `agent:scout`).
        from: String,
        /// The text.
        text: String,
    },
    /// Part of a reply looked like an action but could not be read; the
    /// model is told why.
    ParseFailed {
        /// The agent.
        agent: String,
        /// Where it is in the reply.
        span: Span,
        /// What the model is told.
        message: String,
    },
    /// A line of a reply was an echo of the agent's own instructions (an
    /// example, or the instructions reworded with a slash in front): read
    /// as text, not run.
    EchoIgnored {
        /// The agent.
        agent: String,
        /// Where it is in the reply.
        span: Span,
        /// The line.
        text: String,
    },
    /// A reply held no action, but its words read as one: the action is
    /// proposed to the partner (it waits for them, whatever the policy).
    ActionProposed {
        /// The agent.
        agent: String,
        /// The action's id.
        action_id: String,
        /// The words it was read from (the reply's first line, bounded).
        words: String,
        /// The proposed action.
        action: String,
    },
    /// A prompt was cut to fit the agent's context budget: what was left
    /// out, so the partner can see why an agent forgot.
    PromptFitted {
        /// The agent.
        agent: String,
        /// The prompt's estimated size after fitting, in tokens.
        tokens: usize,
        /// The budget it was fitted to.
        budget: usize,
        /// History messages left out.
        dropped_messages: usize,
        /// Their estimated size.
        dropped_tokens: usize,
        /// True when the recalled memories were left out too.
        dropped_recalled: bool,
        /// All of it, in words.
        summary: String,
    },
    /// A model pass ended without a reply: the call failed (the server
    /// is down, refused, stalled, or sent something unreadable). The turn
    /// is over; nothing of it runs.
    TurnFailed {
        /// The agent.
        agent: String,
        /// Pass number.
        pass: u32,
        /// What failed, with the provider, model and URL.
        message: String,
    },
    /// Something went wrong.
    Error {
        /// The agent, if it concerns one.
        agent: Option<String>,
        /// What.
        message: String,
    },
    /// What another daemon of the team reported (through the store): one
    /// of its agents' model call failed, it halted one, or it lost one's
    /// lease.
    TeamNotice {
        /// The daemon it happened on.
        host: String,
        /// The agent.
        agent: String,
        /// What happened.
        kind: TeamNoticeKind,
        /// In words, with the cause.
        message: String,
    },
}

/// What a [`Event::TeamNotice`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TeamNoticeKind {
    /// A turn ended on a failed model call (or another error).
    TurnFailed,
    /// The agent was halted.
    Halted,
    /// The daemon lost the agent's lease (it stops running it there).
    LeaseLost,
}

impl TeamNoticeKind {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            TeamNoticeKind::TurnFailed => "turn_failed",
            TeamNoticeKind::Halted => "halted",
            TeamNoticeKind::LeaseLost => "lease_lost",
        }
    }

    /// Read back from the store (`None` for a kind this build does not
    /// know).
    pub fn parse(text: &str) -> Option<Self> {
        [Self::TurnFailed, Self::Halted, Self::LeaseLost]
            .into_iter()
            .find(|k| k.as_str() == text)
    }
}

impl Event {
    /// The event's name, as in its JSON `event` field.
    pub fn name(&self) -> &'static str {
        match self {
            Event::TurnStarted { .. } => "turn_started",
            Event::Token { .. } => "token",
            Event::ReplyFinished { .. } => "reply_finished",
            Event::ActionParsed { .. } => "action_parsed",
            Event::PermissionRequested { .. } => "permission_requested",
            Event::PermissionDecided { .. } => "permission_decided",
            Event::ActionExecuted { .. } => "action_executed",
            Event::MemoryChanged { .. } => "memory_changed",
            Event::PulseFired { .. } => "pulse_fired",
            Event::AgentHalted { .. } => "agent_halted",
            Event::AgentState { .. } => "agent_state",
            Event::MessageReceived { .. } => "message_received",
            Event::ParseFailed { .. } => "parse_failed",
            Event::EchoIgnored { .. } => "echo_ignored",
            Event::PromptFitted { .. } => "prompt_fitted",
            Event::ActionProposed { .. } => "action_proposed",
            Event::TurnFailed { .. } => "turn_failed",
            Event::Error { .. } => "error",
            Event::TeamNotice { .. } => "team_notice",
        }
    }
}

impl Event {
    /// Every free text of the event (what a model, an agent or the
    /// partner wrote), for cutting to size.
    pub fn texts_mut(&mut self) -> Vec<&mut String> {
        match self {
            Event::TurnStarted { .. } | Event::AgentState { .. } => vec![],
            Event::Token { text, .. } | Event::ReplyFinished { text, .. } => vec![text],
            Event::ActionParsed { canonical, .. } => vec![canonical],
            Event::PermissionRequested {
                canonical, reason, ..
            } => vec![canonical, reason],
            Event::PermissionDecided { canonical, by, .. } => vec![canonical, by],
            Event::ActionExecuted {
                canonical, result, ..
            } => vec![canonical, result],
            Event::MemoryChanged { label, .. } => vec![label],
            Event::PulseFired { reason, .. } | Event::AgentHalted { reason, .. } => vec![reason],
            Event::MessageReceived { from, text, .. } => vec![from, text],
            Event::EchoIgnored { text, .. } => vec![text],
            Event::ParseFailed { message, .. }
            | Event::Error { message, .. }
            | Event::TurnFailed { message, .. } => vec![message],
            Event::TeamNotice { host, message, .. } => vec![host, message],
            Event::ActionProposed { words, action, .. } => vec![words, action],
            Event::PromptFitted { summary, .. } => vec![summary],
        }
    }

    /// Bytes of free text the event holds.
    pub fn text_len(&mut self) -> usize {
        self.texts_mut().into_iter().map(|t| t.len()).sum()
    }
}
