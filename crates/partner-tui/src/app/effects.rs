//! What changes the console besides keys: the effects panes ask for, a
//! decision's undo window, the runtime's events, the backend's replies,
//! and the clock (held decisions going out, refreshes, replay playing).

use super::overlays::{Confirmed, Editor, Merge, Overlay};
use super::{App, Command, UNDO_WINDOW};
use crate::backend::{Op, Reply, SaveOutcome};
use crate::model::NoticeKind;
use crate::panes::{EditTarget, Effect, Held, Pane, ReplayPane};
use crate::prompt::Prompt;
use partner_core::clock::Millis;
use partner_runtime::Event;

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
                } => {
                    self.overlay = Overlay::Confirm {
                        question,
                        on_yes: Confirmed::Decide { id, decision },
                    }
                }
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
                Effect::Prompt(purpose) => {
                    self.overlay = Overlay::Prompt {
                        purpose,
                        prompt: Prompt::default(),
                    }
                }
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
                self.overlay = Overlay::Rules {
                    rules: Vec::new(),
                    selected: 0,
                };
                vec![Command::Op(Op::RevokeRule { id })]
            }
            Confirmed::Quit => {
                let mut commands = self.flush_held();
                commands.push(Command::Quit);
                commands
            }
            Confirmed::Learn { words, action } => {
                vec![Command::Op(Op::Learn { words, action })]
            }
            Confirmed::RunCommand(command) => self.run_confirmed(command),
            Confirmed::Forget(id) => {
                self.overlay = Overlay::Learned {
                    rules: Vec::new(),
                    selected: 0,
                };
                vec![Command::Op(Op::Forget { id })]
            }
        }
    }

    /// Holds a decision for the undo window (sending one held before).
    fn hold(&mut self, id: String, decision: partner_policy::Decision) -> Vec<Command> {
        if !self.connection.reaches() {
            // Nobody would receive it: refused now, not three seconds on.
            self.warn(format!(
                "{id} not decided: the {}; decide again once it is back",
                self.connection.label()
            ));
            return Vec::new();
        }
        let commands = self.flush_held();
        self.queue.decided(&id, &self.model);
        let name = decision.name().replace('_', " ");
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
                let op = Op::Decide {
                    id: held.id.clone(),
                    decision: held.decision.clone(),
                };
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
                    partner_policy::Decision::ApproveAlways
                        | partner_policy::Decision::DenyAlways(_)
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

    /// Applies a backend reply.
    pub fn on_reply(&mut self, reply: Reply) -> Vec<Command> {
        let mut commands = Vec::new();
        match reply {
            Reply::CommandPlan(plan) => self.on_command_plan(plan),
            Reply::CommandRan(view) => self.on_command_ran(view),
            Reply::Agents(rows) => {
                for row in rows {
                    match self.model.agents.iter_mut().find(|a| a.name == row.name) {
                        Some(a) => *a = row,
                        None => self.model.agents.push(row),
                    }
                }
                self.model.agents.sort_by(|a, b| a.name.cmp(&b.name));
                self.fresh.memory = true;
            }
            Reply::Pending(pending, previews) => {
                let arrived: Vec<String> = pending
                    .iter()
                    .filter(|r| !self.model.pending.iter().any(|old| old.id == r.id))
                    .map(|r| {
                        format!(
                            "{} arrived ({} · {})",
                            r.id,
                            r.agent,
                            crate::model::first_line(&r.canonical, 48)
                        )
                    })
                    .collect();
                let selected_before = self.queue.selected.clone();
                self.model.pending = pending;
                self.model.previews = previews;
                if let Some(notice) = self.queue.refreshed(&self.model) {
                    self.warn(notice);
                } else if let Some(selected) = selected_before
                    && !arrived.is_empty()
                    && self.queue.selected.as_deref() == Some(selected.as_str())
                {
                    // The selection stays where it was: say what came, so a
                    // key meant for the newcomer is not taken for it.
                    self.say(format!(
                        "{}; {selected} is still selected",
                        arrived.join(", ")
                    ));
                }
                if let Some(held) = &self.held
                    && !self.model.pending.iter().any(|r| r.id == held.id)
                {
                    let id = held.id.clone();
                    self.held = None;
                    self.warn(format!(
                        "{id} was decided elsewhere meanwhile; your decision was not sent"
                    ));
                }
            }
            Reply::Trace(records, next, restart) => {
                self.fresh.trace_after = next.max(self.fresh.trace_after);
                self.model.receive_trace(records, restart);
            }
            Reply::OlderTrace(filter, before, page) => {
                self.model.receive_older_trace(&filter, before, page);
            }
            Reply::OlderTraceFailed(filter, before, why) => {
                self.warn(format!("could not read older trace records: {why}"));
                self.model.older_trace_failed(&filter, before, why);
            }
            Reply::Blocks(agent, list) => {
                if Some(&agent) == self.memory.agent(&self.model).as_ref() {
                    self.model.blocks = list;
                    self.memory.refreshed(&self.model);
                    if let Some(b) = self.memory.selected_block(&self.model.blocks) {
                        commands.push(Command::Op(Op::LoadHistory {
                            agent,
                            label: b.label.clone(),
                        }));
                    }
                }
            }
            Reply::History(agent, label, list) => {
                let shown = self.memory.agent(&self.model) == Some(agent)
                    && self
                        .memory
                        .selected_block(&self.model.blocks)
                        .is_some_and(|b| b.label == label);
                if shown {
                    self.model.history = list;
                }
            }
            Reply::LearnedRules(rules) => {
                if let Overlay::Learned { selected, .. } = &self.overlay {
                    let selected = (*selected).min(rules.len().saturating_sub(1));
                    self.overlay = Overlay::Learned { rules, selected };
                }
            }
            Reply::Learned(outcome) => match outcome {
                Ok(text) => self.say(text),
                Err(e) => self.warn(e),
            },
            Reply::Index(status) => {
                self.model.index = status;
            }
            Reply::Hits { query, found } => {
                let (hits, note, failed) = match found {
                    Ok((hits, note)) => (hits, note, None),
                    Err(e) => (Vec::new(), None, Some(e)),
                };
                self.model.hits = hits;
                self.model.hits_note = note;
                self.model.hits_failed = failed;
                self.model.hits_for = Some(query);
                self.memory.hit = 0;
            }
            Reply::Rules(rules) => {
                if let Overlay::Rules { selected, .. } = &self.overlay {
                    let selected = (*selected).min(rules.len().saturating_sub(1));
                    self.overlay = Overlay::Rules { rules, selected };
                }
            }
            Reply::Decided { id, outcome } => {
                let editing = matches!(
                    &self.overlay,
                    Overlay::Editor(Editor { target: EditTarget::Action { id: e }, .. }) if *e == id
                );
                match outcome {
                    Ok(text) => {
                        if editing {
                            self.overlay = Overlay::None;
                            // The partner's own decision: the queue moves
                            // on, it does not report the request as lost.
                            self.queue.decided(&id, &self.model);
                        }
                        self.say(text);
                        // The partner fixed an action read from plain
                        // words: offer to learn what those words mean.
                        if let Some((offer_id, words, action)) = self.learn_offer.take()
                            && offer_id == id
                        {
                            self.overlay = Overlay::Confirm {
                                question: format!(
                                    "Learn that \"{words}\" means {action}? Agents' words like these will be proposed as it."
                                ),
                                on_yes: Confirmed::Learn { words, action },
                            };
                        }
                    }
                    Err(e) => {
                        if let Overlay::Editor(editor) = &mut self.overlay
                            && editing
                        {
                            editor.error = Some(e);
                            editor.waiting = false;
                        } else {
                            self.warn(format!("{id}: {e}"));
                        }
                    }
                }
                self.fresh.pending = true;
            }
            Reply::Saved {
                agent,
                label,
                outcome,
            } => {
                let editing = matches!(
                    &self.overlay,
                    Overlay::Editor(Editor { target: EditTarget::Block { agent: a, label: l, .. }, .. })
                        if *a == agent && *l == label
                );
                match outcome {
                    SaveOutcome::Saved(text) => {
                        self.memory.drafts.remove(&(agent.clone(), label.clone()));
                        if editing {
                            self.overlay = Overlay::None;
                        }
                        self.say(format!("saved: {text}"));
                        commands.push(Command::Op(Op::LoadMemory { agent }));
                    }
                    SaveOutcome::Conflict(theirs) => {
                        let ours = self
                            .memory
                            .draft(&agent, &label)
                            .map(|d| d.text.clone())
                            .unwrap_or_default();
                        self.overlay = Overlay::Merge(Merge {
                            agent: agent.clone(),
                            label,
                            ours,
                            theirs,
                        });
                        commands.push(Command::Op(Op::LoadMemory { agent }));
                    }
                    SaveOutcome::Failed(e) => {
                        if let Overlay::Editor(editor) = &mut self.overlay
                            && editing
                        {
                            editor.error = Some(format!("not saved: {e} (your edit is kept)"));
                            editor.waiting = false;
                        } else {
                            self.warn(format!("{label} not saved: {e}; your draft is kept (✎)"));
                        }
                    }
                }
            }
            Reply::Replay(opened) => {
                let records = opened.records.clone();
                self.replay = Some(ReplayPane::new(opened.path, opened.records));
                self.fresh.replay_asked = None;
                self.focus = Pane::Replay;
                self.say("replay: n/p step, Space plays, +/- speed, Esc leaves; decisions are off");
                commands.push(Command::Op(Op::VerifyReplay(records)));
                // The memory as it was before the first step, not as it is.
                commands.extend(self.replay_memory_if_moved());
            }
            Reply::Verified(divergence) => {
                if let Some(r) = &mut self.replay {
                    r.state.divergence = divergence;
                    r.state.verified = true;
                }
            }
            Reply::ReplayMemory(step, list, diff) => {
                if let Some(r) = &mut self.replay {
                    r.memory = Some((step, list));
                    r.diff = diff.map(|d| (step, d));
                }
            }
            Reply::Notice(text) => self.say(text),
            Reply::Lisp(view) => {
                // The answer replaces "evaluating…": the status line says
                // how it went.
                if view.failed {
                    self.warn(format!("{}: failed (Esc closes)", view.title));
                } else {
                    self.say(format!("{}: done (Esc closes)", view.title));
                }
                self.overlay = super::overlays::Overlay::Lisp(view);
            }
            Reply::Failed(text) => {
                self.model
                    .notify(self.now, None, NoticeKind::Error, text.clone());
                self.warn(text);
            }
        }
        commands
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
        vec![Command::Op(Op::ReplayMemory {
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
            commands.push(Command::Op(Op::LoadPending));
            commands.push(Command::Op(Op::LoadIndex));
        }
        if std::mem::take(&mut self.fresh.trace) {
            commands.push(Command::Op(Op::LoadTrace {
                after: self.fresh.trace_after,
            }));
        }
        if let Some((filter, before)) = self.trace.wants_older(&mut self.model) {
            commands.push(Command::Op(Op::LoadOlderTrace { filter, before }));
        }
        if std::mem::take(&mut self.fresh.memory)
            && let Some(agent) = self.memory.agent(&self.model)
        {
            commands.push(Command::Op(Op::LoadMemory { agent }));
        }
        if let Some(r) = &mut self.replay
            && r.advance(elapsed)
        {
            commands.extend(self.replay_memory_if_moved());
        }
        commands
    }
}
