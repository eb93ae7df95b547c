//! What the console shows, kept up to date from the runtime's events and
//! from background reads of the database: the turns as they stream, each
//! action's live status, the pending queue, memory, the trace and the
//! agents' states.

use std::collections::HashMap;

use crate::agent::provider::PromptKind;
use crate::agent::{Event, RunState};
use crate::clock::Millis;
use crate::dialect::Span;
use crate::exec::ActionStatus;
use crate::memory::{Block, BlockVersion, SearchHit};
use crate::permission::PendingRequest;
use crate::trace::TraceRecord;

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
}

/// One model pass of one agent, as it streamed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEntry {
    /// The agent.
    pub agent: String,
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
    /// True once the reply finished.
    pub done: bool,
}

/// An agent's state line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    /// Name.
    pub name: String,
    /// What it is doing.
    pub state: RunState,
    /// When it pulses next (wall time), when idle with a pulse.
    pub next_pulse_at: Option<Millis>,
}

/// Everything the console shows.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Turns, oldest first.
    pub turns: Vec<TurnEntry>,
    /// Index of each agent's turn in progress.
    current: HashMap<String, usize>,
    /// Where each action is: its turn and its place among the turn's
    /// actions, by action id.
    actions: HashMap<String, (usize, usize)>,
    /// The pending queue, oldest first.
    pub pending: Vec<PendingRequest>,
    /// Agents and their states.
    pub agents: Vec<AgentRow>,
    /// Blocks of the agent shown in the memory pane.
    pub blocks: Vec<Block>,
    /// History of the selected block.
    pub history: Vec<BlockVersion>,
    /// Memory search results.
    pub hits: Vec<SearchHit>,
    /// Trace records, oldest first.
    pub trace: Vec<TraceRecord>,
    /// Requests that arrived for the partner since the last bell.
    pub new_for_partner: usize,
    /// The memory change each waiting request would make, by request id.
    pub previews: HashMap<String, String>,
}

impl Model {
    /// An empty model.
    pub fn new() -> Self {
        Model::default()
    }

    fn agent_row(&mut self, agent: &str) -> &mut AgentRow {
        if let Some(i) = self.agents.iter().position(|a| a.name == agent) {
            return &mut self.agents[i];
        }
        self.agents.push(AgentRow {
            name: agent.to_string(),
            state: RunState::Idle,
            next_pulse_at: None,
        });
        self.agents.sort_by(|a, b| a.name.cmp(&b.name));
        let i = self
            .agents
            .iter()
            .position(|a| a.name == agent)
            .unwrap_or(0);
        &mut self.agents[i]
    }

    /// The turn an agent is in, or a new one.
    fn turn_of(&mut self, agent: &str, now: Millis) -> &mut TurnEntry {
        let index = match self.current.get(agent) {
            Some(&i) if i < self.turns.len() => i,
            _ => {
                self.turns.push(TurnEntry {
                    agent: agent.to_string(),
                    time: now,
                    kind: PromptKind::Response,
                    pass: 1,
                    text: String::new(),
                    actions: Vec::new(),
                    done: false,
                });
                let i = self.turns.len() - 1;
                self.current.insert(agent.to_string(), i);
                i
            }
        };
        &mut self.turns[index]
    }

    /// The action with this id, if the console saw it parsed.
    fn action_mut(&mut self, action_id: Option<&String>) -> Option<&mut ActionEntry> {
        let &(turn, index) = self.actions.get(action_id?)?;
        self.turns.get_mut(turn)?.actions.get_mut(index)
    }

    /// Applies one runtime event at time `now`. Returns true when the
    /// partner should hear a bell (a request now waits on them).
    pub fn apply(&mut self, event: &Event, now: Millis) -> bool {
        match event {
            Event::TurnStarted { agent, kind, pass } => {
                self.turns.push(TurnEntry {
                    agent: agent.clone(),
                    time: now,
                    kind: *kind,
                    pass: *pass,
                    text: String::new(),
                    actions: Vec::new(),
                    done: false,
                });
                self.current.insert(agent.clone(), self.turns.len() - 1);
            }
            Event::Token { agent, text } => self.turn_of(agent, now).text.push_str(text),
            Event::ReplyFinished { agent, text, .. } => {
                let turn = self.turn_of(agent, now);
                turn.text = text.clone();
                turn.done = true;
            }
            Event::ActionParsed {
                agent,
                action_id,
                canonical,
                span,
                cancelled,
                ..
            } => {
                let turn = self.turn_of(agent, now);
                let index = turn.actions.len();
                turn.actions.push(ActionEntry {
                    action_id: action_id.clone(),
                    canonical: canonical.clone(),
                    span: *span,
                    state: if *cancelled {
                        ActionState::Cancelled
                    } else {
                        ActionState::Queued
                    },
                });
                if let Some(&turn_index) = self.current.get(agent) {
                    self.actions.insert(action_id.clone(), (turn_index, index));
                }
            }
            Event::PermissionRequested {
                action_id,
                id,
                waiting_on,
                ..
            } => {
                if let Some(a) = self.action_mut(action_id.as_ref()) {
                    a.state = ActionState::Waiting {
                        id: id.clone(),
                        on: waiting_on.to_string(),
                    };
                }
                if waiting_on.is_partner() {
                    self.new_for_partner += 1;
                    return true;
                }
            }
            Event::PermissionDecided {
                action_id,
                decision,
                by,
                ..
            } => {
                if let Some(a) = self.action_mut(action_id.as_ref())
                    && decision.approves()
                {
                    a.state = ActionState::Approved { by: by.clone() };
                }
            }
            Event::ActionExecuted {
                action_id,
                status,
                result,
                ..
            } => {
                if let Some(a) = self.action_mut(action_id.as_ref()) {
                    a.state = match status {
                        ActionStatus::Executed => ActionState::Executed {
                            result: result.clone(),
                        },
                        ActionStatus::Denied | ActionStatus::TimedOut => ActionState::Denied {
                            reason: result.clone(),
                        },
                        ActionStatus::Cancelled | ActionStatus::NotRun => ActionState::Cancelled,
                        ActionStatus::Pending => ActionState::Queued,
                        ActionStatus::Failed => ActionState::Failed {
                            error: result.clone(),
                        },
                    };
                }
            }
            Event::AgentState {
                agent,
                state,
                next_pulse_at,
            } => {
                let row = self.agent_row(agent);
                row.state = *state;
                row.next_pulse_at = *next_pulse_at;
            }
            Event::AgentHalted { agent, .. } => {
                let row = self.agent_row(agent);
                row.state = RunState::Halted;
                row.next_pulse_at = None;
                self.current.remove(agent);
            }
            Event::PulseFired { .. } | Event::MemoryChanged { .. } | Event::Error { .. } => {}
        }
        false
    }

    /// Indices of the turns to show (all, or one agent's).
    pub fn visible_turns(&self, filter: Option<&str>) -> Vec<usize> {
        match filter {
            None => (0..self.turns.len()).collect(),
            Some(agent) => (0..self.turns.len())
                .filter(|&i| self.turns[i].agent == agent)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Verb;
    use crate::exec::ActionStatus;
    use crate::permission::Authority;

    #[test]
    fn events_build_turns_with_live_action_status() {
        let mut m = Model::new();
        m.apply(
            &Event::TurnStarted {
                agent: "ada".into(),
                kind: PromptKind::Response,
                pass: 1,
            },
            0,
        );
        m.apply(
            &Event::Token {
                agent: "ada".into(),
                text: "Posting.\n".into(),
            },
            0,
        );
        m.apply(
            &Event::Token {
                agent: "ada".into(),
                text: "/post bluesky \"hi\"".into(),
            },
            0,
        );
        assert_eq!(m.turns[0].text, "Posting.\n/post bluesky \"hi\"");
        m.apply(
            &Event::ReplyFinished {
                agent: "ada".into(),
                pass: 1,
                text: "Posting.\n/post bluesky \"hi\"".into(),
            },
            0,
        );
        m.apply(
            &Event::ActionParsed {
                agent: "ada".into(),
                action_id: "ada-1-1:1:1".into(),
                verb: Verb::Post,
                op: None,
                canonical: "/post bluesky \"hi\"".into(),
                span: Span::new(9, 27),
                cancelled: false,
            },
            0,
        );
        let bell = m.apply(
            &Event::PermissionRequested {
                agent: "ada".into(),
                action_id: Some("ada-1-1:1:1".into()),
                id: "r1".into(),
                verb: Verb::Post,
                op: None,
                canonical: "/post bluesky \"hi\"".into(),
                waiting_on: Authority::Partner,
                reason: "r".into(),
            },
            0,
        );
        assert!(bell);
        assert_eq!(
            m.turns[0].actions[0].state,
            ActionState::Waiting {
                id: "r1".into(),
                on: "partner".into()
            }
        );
        m.apply(
            &Event::ActionExecuted {
                agent: "ada".into(),
                action_id: Some("ada-1-1:1:1".into()),
                verb: Verb::Post,
                op: None,
                // Reports carry the resolved line, which may differ from the
                // parsed one: the id is what ties them together.
                canonical: "/post bluesky \"hi there\"".into(),
                status: ActionStatus::Executed,
                result: "queued".into(),
                trace_id: None,
                system_error: false,
            },
            0,
        );
        assert_eq!(m.turns[0].actions[0].state.label(), "✓ queued");
    }
}
