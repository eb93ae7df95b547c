//! The runtime's events applied to the console's model, one method per
//! kind of event that changes it.

use super::{ActionEntry, ActionState, Model, NoticeKind, TurnEntry};
use partner_core::clock::Millis;
use partner_protocol::ActionStatus;
use partner_protocol::PromptKind;
use partner_protocol::{Event, RunState, TeamNoticeKind};

impl Model {
    /// Applies one runtime event at time `now`. Returns true when the
    /// partner should hear a bell (a request now waits on them).
    pub fn apply(&mut self, event: &Event, now: Millis) -> bool {
        match event {
            Event::TurnStarted { agent, kind, pass } => {
                self.push_turn(agent, None, *kind, *pass, String::new(), now);
                self.current.insert(agent.clone(), self.turns.len() - 1);
            }
            Event::MessageReceived { agent, from, text } => {
                let kind = PromptKind::Response;
                self.push_turn(agent, Some(from.clone()), kind, 0, text.clone(), now);
            }
            Event::EchoIgnored { agent, text, .. } => self.echoed(agent, text, now),
            Event::ParseFailed {
                agent,
                span,
                message,
            } => {
                let turn = self.turn_of(agent, now);
                turn.errors.push((*span, message.clone()));
                self.notify(now, Some(agent), NoticeKind::Parse, message.clone());
            }
            Event::Token { agent, text } => self.turn_of(agent, now).text.push_str(text),
            Event::ReplyFinished { agent, text, .. } => {
                let turn = self.turn_of(agent, now);
                turn.text = text.clone();
                turn.done = true;
                self.fold_quiet(agent);
            }
            Event::ActionParsed { .. } => self.action_parsed(event, now),
            Event::PermissionRequested { .. } => return self.permission_requested(event),
            Event::PermissionDecided { .. } => self.permission_decided(event),
            Event::ActionExecuted { .. } => self.action_executed(event, now),
            Event::AgentState {
                agent,
                state,
                next_pulse_at,
                host,
            } => {
                let row = self.agent_row(agent);
                row.state = *state;
                row.next_pulse_at = *next_pulse_at;
                row.host = host.clone();
            }
            Event::AgentHalted { agent, reason } => {
                let row = self.agent_row(agent);
                row.state = RunState::Halted;
                row.next_pulse_at = None;
                self.current.remove(agent);
                self.notify(now, Some(agent), NoticeKind::Halt, reason.clone());
            }
            Event::TurnFailed { agent, message, .. } => {
                // The turn in progress is over, and says why.
                let turn = self.turn_of(agent, now);
                turn.done = true;
                turn.failed = Some(message.clone());
                self.current.remove(agent);
                self.notify(now, Some(agent), NoticeKind::Error, message.clone());
            }
            Event::Error { agent, message } => {
                self.notify(now, agent.as_deref(), NoticeKind::Error, message.clone());
            }
            Event::TeamNotice {
                host,
                agent,
                kind,
                message,
            } => {
                // Another daemon runs the agent: said here, as it is there.
                let notice = match kind {
                    TeamNoticeKind::Halted => NoticeKind::Halt,
                    TeamNoticeKind::TurnFailed | TeamNoticeKind::LeaseLost => NoticeKind::Error,
                };
                self.notify(now, Some(agent), notice, format!("on {host}: {message}"));
            }
            Event::ActionProposed { .. } => self.action_proposed(event, now),
            Event::PromptFitted { agent, summary, .. } => {
                self.notify(now, Some(agent), NoticeKind::Context, summary.clone());
            }
            Event::PulseFired { .. } | Event::MemoryChanged { .. } => {}
        }
        false
    }

    /// A new turn: one starting (`from` none), or a message received
    /// (done as it arrives).
    fn push_turn(
        &mut self,
        agent: &str,
        from: Option<String>,
        kind: PromptKind,
        pass: u32,
        text: String,
        now: Millis,
    ) {
        let done = from.is_some();
        self.turns.push(TurnEntry {
            agent: agent.to_string(),
            from,
            errors: Vec::new(),
            time: now,
            kind,
            pass,
            text,
            actions: Vec::new(),
            done,
            failed: None,
            quiet_run: (1, now),
        });
        self.trim();
    }

    /// An action read from the agent's turn, queued (or cancelled).
    fn action_parsed(&mut self, event: &Event, now: Millis) {
        let Event::ActionParsed {
            agent,
            action_id,
            canonical,
            span,
            cancelled,
            ..
        } = event
        else {
            return;
        };
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
            trace_id: None,
            proposed_from: None,
        });
        if let Some(&turn_index) = self.current.get(agent) {
            self.actions.insert(action_id.clone(), (turn_index, index));
        }
    }

    /// An action now waits on an authority; true when that is the partner.
    fn permission_requested(&mut self, event: &Event) -> bool {
        let Event::PermissionRequested {
            action_id,
            id,
            waiting_on,
            ..
        } = event
        else {
            return false;
        };
        if let Some(a) = self.action_mut(action_id.as_ref()) {
            a.state = ActionState::Waiting {
                id: id.clone(),
                on: waiting_on.to_string(),
            };
            if let Some(action_id) = action_id {
                self.waiting.insert(id.clone(), action_id.clone());
            }
        }
        if waiting_on.is_partner() {
            self.new_for_partner += 1;
            return true;
        }
        false
    }

    /// A request was decided: it leaves the waiting list (kept as departed,
    /// with who decided), and an approved action says by whom.
    fn permission_decided(&mut self, event: &Event) {
        let Event::PermissionDecided {
            action_id,
            id,
            decision,
            by,
            ..
        } = event
        else {
            return;
        };
        if *decision != partner_protocol::wire::DecisionKind::Escalate {
            self.waiting.remove(id);
            if self.departed.len() >= 10_000 {
                self.departed.clear();
            }
            self.departed.insert(
                id.clone(),
                format!("{} by {by}", decision.as_str().replace('_', " ")),
            );
        }
        if let Some(a) = self.action_mut(action_id.as_ref())
            && decision.approves()
        {
            a.state = ActionState::Approved { by: by.clone() };
        }
    }

    /// How an action ended: its state and trace record, and a notice for
    /// a system error, a timeout or an agent's flag of uncertainty.
    fn action_executed(&mut self, event: &Event, now: Millis) {
        let Event::ActionExecuted {
            agent,
            action_id,
            canonical,
            status,
            result,
            system_error,
            trace_id,
            flagged,
            ..
        } = event
        else {
            return;
        };
        if *system_error {
            let text = format!("{canonical}: {result}");
            self.notify(now, Some(agent), NoticeKind::System, text);
        } else if *status == ActionStatus::TimedOut {
            let text = format!("{canonical}: {result}");
            self.notify(now, Some(agent), NoticeKind::Timeout, text);
        } else if *flagged && *status == ActionStatus::Executed {
            self.notify(now, Some(agent), NoticeKind::Flag, canonical.clone());
        }
        if let Some(a) = self.action_mut(action_id.as_ref()) {
            a.trace_id = trace_id.clone();
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

    /// An action proposed from an agent's words, waiting for the partner.
    fn action_proposed(&mut self, event: &Event, now: Millis) {
        let Event::ActionProposed {
            agent,
            action_id,
            words,
            action,
        } = event
        else {
            return;
        };
        if let Some(a) = self.action_mut(Some(action_id)) {
            a.proposed_from = Some(words.clone());
        }
        self.notify(
            now,
            Some(agent),
            NoticeKind::Proposal,
            format!("{agent} said \"{words}\": proposed as {action}, waiting for you"),
        );
    }
}
