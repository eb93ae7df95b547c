//! What the console shows, kept up to date from the runtime's events and
//! from background reads of the database: the turns as they stream, each
//! action's live status, the pending queue, memory, the trace and the
//! agents' states.

mod apply;
mod entries;
mod trace;

use std::collections::{HashMap, VecDeque};

pub use entries::{
    ActionEntry, ActionState, AgentLine, MAX_NOTIFICATIONS, NoticeKind, Notification, TurnEntry,
    first_line,
};
pub use trace::{MAX_OLDER, MAX_TRACE, OlderTrace};

use partner_core::clock::Millis;
use partner_protocol::PromptKind;
use partner_protocol::RunState;
use partner_protocol::wire::HybridHit;
use partner_protocol::wire::IndexStatus;
use partner_protocol::wire::PendingRequest;
use partner_protocol::wire::TraceRecord;
use partner_protocol::wire::{Block, BlockVersion};

/// Most turns kept; older ones are dropped (they stay in the database and
/// the trace).
pub const MAX_TURNS: usize = 100_000;

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
    /// The action each request waits for, by request id (so a frame finds
    /// it without walking the history).
    waiting: HashMap<String, String>,
    /// The pending queue, oldest first.
    pub pending: Vec<PendingRequest>,
    /// Agents and their states.
    pub agents: Vec<AgentLine>,
    /// Blocks of the agent shown in the memory pane.
    pub blocks: Vec<Block>,
    /// History of the selected block.
    pub history: Vec<BlockVersion>,
    /// Memory search results, best first.
    pub hits: Vec<HybridHit>,
    /// How the last search went when it could not use meaning.
    pub hits_note: Option<String>,
    /// The words the held hits answer (none while a search runs).
    pub hits_for: Option<String>,
    /// Why the search `hits_for` names could not run.
    pub hits_failed: Option<String>,
    /// How far search by meaning has caught up (none without an embedder).
    pub index: Option<IndexStatus>,
    /// The newest trace records (at most [`MAX_TRACE`]), oldest first.
    pub trace: Vec<TraceRecord>,
    /// Older trace records read for the trace pane's filter.
    pub trace_older: Option<OlderTrace>,
    /// Requests that arrived for the partner since the last bell.
    pub new_for_partner: usize,
    /// The memory change each waiting request would make and the command
    /// each would run, by request id.
    pub previews: crate::backend::Previews,
    /// Errors, flags, halts and timeouts, oldest first.
    pub notifications: VecDeque<Notification>,
    /// Notifications the partner has not looked at.
    pub unseen: usize,
    /// How each request that left the queue was decided (`approve once by
    /// agent:anchor`), by id.
    pub departed: HashMap<String, String>,
    /// How many of the oldest turns were dropped (see [`MAX_TURNS`]): a
    /// turn's index plus this is its place in the whole session.
    pub dropped: usize,
}

impl Model {
    /// An empty model.
    pub fn new() -> Self {
        Model::default()
    }

    fn agent_row(&mut self, agent: &str) -> &mut AgentLine {
        if let Some(i) = self.agents.iter().position(|a| a.name == agent) {
            return &mut self.agents[i];
        }
        self.agents.push(AgentLine {
            name: agent.to_string(),
            state: RunState::Idle,
            next_pulse_at: None,
            host: None,
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
                    from: None,
                    errors: Vec::new(),
                    time: now,
                    kind: PromptKind::Response,
                    pass: 1,
                    text: String::new(),
                    actions: Vec::new(),
                    done: false,
                    failed: None,
                    quiet_run: (1, now),
                });
                self.trim();
                let i = self.turns.len() - 1;
                self.current.insert(agent.to_string(), i);
                i
            }
        };
        &mut self.turns[index]
    }

    /// Folds an agent's turn that just said nothing into the quiet turn of
    /// the same agent and kind right before it, if there is one: a line
    /// with a count, instead of a screenful of "nothing to say".
    fn fold_quiet(&mut self, agent: &str) {
        let Some(&last) = self.current.get(agent) else {
            return;
        };
        if last + 1 != self.turns.len() || last == 0 || !self.turns[last].is_quiet() {
            return;
        }
        let (before, newest) = self.turns.split_at_mut(last);
        let previous = &mut before[last - 1];
        let newest = &newest[0];
        if previous.agent == newest.agent && previous.kind == newest.kind && previous.is_quiet() {
            previous.quiet_run = (previous.quiet_run.0 + 1, newest.time);
            self.turns.pop();
            self.current.remove(agent);
        }
    }

    /// The action with this id, if the console saw it parsed.
    fn action_mut(&mut self, action_id: Option<&String>) -> Option<&mut ActionEntry> {
        let &(turn, index) = self.actions.get(action_id?)?;
        self.turns.get_mut(turn)?.actions.get_mut(index)
    }

    /// The turns to show (all, or one agent's), newest first, lazily: a
    /// frame reads only as many as fit.
    pub fn turns_newest_first<'a>(
        &'a self,
        filter: Option<&'a str>,
    ) -> impl Iterator<Item = (usize, &'a TurnEntry)> + 'a {
        self.turns
            .iter()
            .enumerate()
            .rev()
            .filter(move |(_, t)| filter.is_none_or(|a| t.agent == a))
    }

    /// The plain words the action waiting as request `id` was proposed
    /// from, if it was.
    pub fn proposed_words(&self, id: &str) -> Option<String> {
        let (_, action) = self.waiting_action(id)?;
        action.proposed_from.clone()
    }

    /// The turn and the action that request `id` waits for, while the
    /// console holds that turn.
    pub fn waiting_action(&self, id: &str) -> Option<(&TurnEntry, &ActionEntry)> {
        let &(turn, index) = self.actions.get(self.waiting.get(id)?)?;
        let turn = self.turns.get(turn)?;
        let action = turn.actions.get(index)?;
        match &action.state {
            ActionState::Waiting { id: waiting, .. } if waiting == id => Some((turn, action)),
            _ => None,
        }
    }

    /// The turn holding the action with this id, while the console holds
    /// that turn.
    pub fn turn_of_action(&self, action_id: &str) -> Option<&TurnEntry> {
        self.turns.get(self.actions.get(action_id)?.0)
    }

    /// A line a reply echoed from the agent's instructions: one
    /// notification for the lines of one reply (they come together),
    /// bounded.
    fn echoed(&mut self, agent: &str, line: &str, now: Millis) {
        const MOST: usize = 4096;
        if let Some(last) = self.notifications.back_mut()
            && last.kind == NoticeKind::Echo
            && last.agent.as_deref() == Some(agent)
            && now - last.time < 5_000
        {
            if last.text.len() + line.len() < MOST {
                last.text.push('\n');
                last.text.push_str(line);
            }
            return;
        }
        self.notify(
            now,
            Some(agent),
            NoticeKind::Echo,
            format!("echoed its own instructions; read as text, not run:\n{line}"),
        );
    }

    /// Keeps a notification (the oldest go past [`MAX_NOTIFICATIONS`]).
    pub fn notify(&mut self, time: Millis, agent: Option<&str>, kind: NoticeKind, text: String) {
        if self.notifications.len() >= MAX_NOTIFICATIONS {
            self.notifications.pop_front();
        }
        self.notifications.push_back(Notification {
            time,
            agent: agent.map(str::to_string),
            kind,
            text,
        });
        // The `!` count is for what went wrong or was flagged; a status
        // message kept whole was already on screen.
        if kind != NoticeKind::Status {
            self.unseen = (self.unseen + 1).min(MAX_NOTIFICATIONS);
        }
    }

    /// Drops the oldest tenth of the turns once there are more than
    /// [`MAX_TURNS`], keeping the indices of turns and actions true.
    fn trim(&mut self) {
        if self.turns.len() <= MAX_TURNS {
            return;
        }
        let drop = MAX_TURNS / 10;
        self.turns.drain(..drop);
        self.dropped += drop;
        self.current.retain(|_, i| {
            if *i >= drop {
                *i -= drop;
                true
            } else {
                false
            }
        });
        self.actions.retain(|_, (turn, _)| {
            if *turn >= drop {
                *turn -= drop;
                true
            } else {
                false
            }
        });
        let actions = &self.actions;
        self.waiting
            .retain(|_, action| actions.contains_key(action));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_dialect::{Span, Verb};
    use partner_protocol::ActionStatus;
    use partner_protocol::Event;
    use partner_protocol::wire::Authority;

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
                flagged: false,
            },
            0,
        );
        assert_eq!(m.turns[0].actions[0].state.label(), "✓ queued");
    }
}
