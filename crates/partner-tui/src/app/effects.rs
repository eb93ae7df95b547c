//! What changes the console besides keys: the effects panes ask for, a
//! decision's undo window, the runtime's events and the clock (held
//! decisions going out, refreshes, replay playing). The backend's replies
//! are `replies`.

use super::overlay::{Confirmed, Editor, Overlay};
use super::{App, Command, UNDO_WINDOW};
use crate::backend::BackendOp;
use crate::panes::{EditTarget, Effect, Held, Pane};

use partner_core::clock::Millis;
use partner_protocol::Event;

/// How often what other processes changed is read again.
pub const REFRESH_EVERY: Millis = 2_000;

/// When the console last read what might have changed, and what it knows
/// is stale.
#[derive(Debug, Clone, Default)]
pub struct Freshness {
    /// The last trace record read.
    pub trace_after: u64,
    /// The queue needs reading.
    pub pending: bool,
    /// The trace needs reading.
    pub trace: bool,
    /// The memory pane's blocks need reading.
    pub memory: bool,
    /// When everything was last read.
    pub last_refresh: Millis,
    /// The replay step whose memory was asked for.
    pub replay_asked: Option<(usize, String)>,
}

impl App {
    /// Carries out what a pane asked for.
    pub(super) fn apply(&mut self, effects: Vec<Effect>) -> Vec<Command> {
        let mut commands = Vec::new();
        for effect in effects {
            match effect {
                Effect::Op(op) => commands.push(Command::Op(op)),
                Effect::Decide { id, decision } => commands.extend(self.hold(id, decision)),
                Effect::Confirm {
                    question,
                    id,
                    decision,
                } => self.overlay = Overlay::confirm(question, Confirmed::Decide { id, decision }),
                Effect::Edit { target, text } => {
                    let original = match &target {
                        EditTarget::Block { agent, label, .. } => self
                            .model
                            .blocks
                            .iter()
                            .find(|b| &b.label == label && &b.agent == agent)
                            .map(|b| b.value.clone())
                            .unwrap_or_default(),
                        EditTarget::Action { .. } => text.clone(),
                    };
                    if matches!(target, EditTarget::Block { .. }) {
                        self.focus = Pane::Memory;
                    }
                    self.overlay = Overlay::Editor(Editor::new(target, &text, original));
                }
                Effect::Prompt(purpose) => self.overlay = Overlay::prompt(purpose),
                Effect::Notice(text) => self.warn(text),
                Effect::Focus(pane) => {
                    self.focus = pane;
                    if self.zoom {
                        self.zoom = false;
                    }
                }
                Effect::SelectRequest(id) => self.queue.select(&id),
                Effect::SelectRecord(id) => self.trace.selected = Some(id),
            }
        }
        commands
    }

    /// A yes to a confirmation.
    pub(super) fn confirmed(&mut self, on_yes: Confirmed) -> Vec<Command> {
        match on_yes {
            Confirmed::Decide { id, decision } => self.hold(id, decision),
            Confirmed::RevokeRule(id) => {
                self.overlay = Overlay::Rules(Default::default());
                vec![Command::Op(BackendOp::Host(
                    partner_protocol::Op::RevokeRule { id },
                ))]
            }
            Confirmed::Quit => {
                let mut commands = self.flush_held();
                commands.push(Command::Quit);
                commands
            }
            Confirmed::Learn { words, action } => {
                vec![Command::Op(BackendOp::Host(partner_protocol::Op::Learn {
                    words,
                    action,
                }))]
            }
            Confirmed::RunCommand(command) => self.run_confirmed(command),
            Confirmed::Forget(id) => {
                self.overlay = Overlay::Learned(Default::default());
                vec![Command::Op(BackendOp::Host(partner_protocol::Op::Forget {
                    id,
                }))]
            }
        }
    }

    /// Holds a decision for the undo window (sending one held before).
    fn hold(&mut self, id: String, decision: partner_protocol::wire::Decision) -> Vec<Command> {
        self.hold_spec(id, decision)
    }

    /// Holds a decision as it will be sent — an edited approval too — for
    /// the undo window (sending one held before).
    pub(super) fn hold_spec(
        &mut self,
        id: String,
        decision: partner_protocol::wire::Decision,
    ) -> Vec<Command> {
        if !self.connection.reaches() {
            // Nobody would receive it: refused now, not three seconds on.
            self.warn(format!(
                "{id} not decided: {}; decide again once it answers",
                self.connection.why_not()
            ));
            return Vec::new();
        }
        let commands = self.flush_held();
        self.queue.decided(&id, &self.model);
        let name = crate::panes::decision_name(&decision);
        let keys = self
            .keymap
            .keys_for(crate::keymap::Action::UndoDecision)
            .unwrap_or_else(|| "U".into());
        self.say(format!(
            "{name} {id} in {}s — {keys} takes it back",
            UNDO_WINDOW / 1000
        ));
        self.held = Some(Held {
            id,
            decision,
            until: self.now + UNDO_WINDOW,
        });
        commands
    }

    /// Sends the held decision now.
    pub fn flush_held(&mut self) -> Vec<Command> {
        match self.held.take() {
            Some(held) => {
                let op = BackendOp::Host(partner_protocol::Op::Decide {
                    request: held.id.clone(),
                    decision: held.decision.clone(),
                });
                self.last_sent = Some(held);
                vec![Command::Op(op)]
            }
            None => Vec::new(),
        }
    }

    /// Takes back the held decision; once it was sent, says what remains.
    pub(super) fn undo_decision(&mut self) {
        if let Some(held) = self.held.take() {
            self.queue.undecided(&held.id);
            self.queue.select(&held.id);
            self.say(format!(
                "taken back: {} still waits for a decision",
                held.id
            ));
            return;
        }
        match &self.last_sent {
            Some(sent) => {
                let id = sent.id.clone();
                let rule = matches!(
                    sent.decision,
                    partner_protocol::wire::Decision::ApproveAlways
                        | partner_protocol::wire::Decision::DenyAlways(_)
                );
                if rule {
                    self.warn(format!(
                        "{id} was already decided; its standing rule stays until revoked: R lists the rules"
                    ));
                } else {
                    self.warn(format!(
                        "{id} was already decided and sent; it cannot be taken back"
                    ));
                }
            }
            None => self.warn("no decision to take back"),
        }
    }

    /// Applies a runtime event; true when the bell should ring.
    pub fn on_event(&mut self, event: &Event) -> Vec<Command> {
        let bell = self.model.apply(event, self.now);
        match event {
            Event::PermissionRequested { .. } | Event::PermissionDecided { .. } => {
                self.fresh.pending = true
            }
            Event::ActionExecuted { .. } => {
                self.fresh.pending = true;
                self.fresh.trace = true;
            }
            Event::MemoryChanged { agent, .. }
                if Some(agent.clone()) == self.memory.agent(&self.model) =>
            {
                self.fresh.memory = true;
            }
            Event::AgentState { .. } | Event::AgentHalted { .. }
                if self.memory.agent.is_none() && self.model.blocks.is_empty() =>
            {
                self.fresh.memory = true;
            }
            // A problem of partner's own (the daemon gone, an embedder
            // down): on the status line, not only among the notifications.
            Event::Error {
                agent: None,
                message,
            } => self.warn(message.clone()),
            _ => {}
        }
        if bell {
            vec![Command::Bell]
        } else {
            Vec::new()
        }
    }

    /// Asks for the memory as at the replay's step, when it moved.
    pub(super) fn replay_memory_if_moved(&mut self) -> Vec<Command> {
        let (Some(replay), Some(agent)) = (&self.replay, self.memory.agent(&self.model)) else {
            return Vec::new();
        };
        let key = (replay.state.step, agent.clone());
        if self.fresh.replay_asked.as_ref() == Some(&key) {
            return Vec::new();
        }
        self.fresh.replay_asked = Some(key);
        vec![Command::Op(BackendOp::ReplayMemory {
            records: replay.state.records.clone(),
            step: replay.state.step,
            agent,
        })]
    }

    /// The clock moved to `now` (`elapsed` seconds since the last tick):
    /// held decisions go out, stale data is read again, a replay plays.
    pub fn tick(&mut self, now: Millis, elapsed: f64) -> Vec<Command> {
        self.now = now;
        let mut commands = Vec::new();
        if self.held.as_ref().is_some_and(|h| now >= h.until) {
            commands.extend(self.flush_held());
        }
        if now - self.fresh.last_refresh >= REFRESH_EVERY {
            // Other processes (a shell, another console) change things too.
            self.fresh.last_refresh = now;
            self.fresh.pending = true;
            self.fresh.trace = true;
            self.fresh.memory = true;
        }
        if std::mem::take(&mut self.fresh.pending) {
            commands.push(Command::Op(BackendOp::Host(partner_protocol::Op::Queue)));
            commands.push(Command::Op(BackendOp::Host(partner_protocol::Op::Index)));
        }
        if std::mem::take(&mut self.fresh.trace) {
            commands.push(Command::Op(BackendOp::Host(partner_protocol::Op::Trace {
                after: self.fresh.trace_after,
            })));
        }
        if let Some((filter, before)) = self.trace.wants_older(&mut self.model) {
            commands.push(Command::Op(BackendOp::Host(
                partner_protocol::Op::OlderTrace { filter, before },
            )));
        }
        if std::mem::take(&mut self.fresh.memory)
            && let Some(agent) = self.memory.agent(&self.model)
        {
            commands.push(Command::Op(BackendOp::Host(partner_protocol::Op::Blocks {
                agent,
            })));
        }
        if let Some(r) = &mut self.replay
            && r.advance(elapsed)
        {
            commands.extend(self.replay_memory_if_moved());
        }
        commands
    }
}
