//! The backend's replies: each kind of answer applied to the model, the
//! panes and the overlays, one method each.

use super::overlay::{Confirmed, Editor, Merge, Overlay};
use super::{App, Command};
use crate::backend::{BackendOp, Reply, SaveOutcome};
use crate::model::AgentLine;
use crate::model::NoticeKind;
use crate::panes::{EditTarget, Pane, ReplayPane};
use partner_protocol::wire::HybridHit;
use partner_protocol::wire::{Block, BlockVersion};
use partner_protocol::wire::{PendingRequest, StandingRule};

impl App {
    /// Applies a backend reply; what it asks for next.
    pub fn on_reply(&mut self, reply: Reply) -> Vec<Command> {
        match reply {
            Reply::CommandPlan(plan) => self.on_command_plan(plan),
            Reply::CommandRan(view) => self.on_command_ran(view),
            Reply::Agents(rows) => self.on_agents(rows),
            Reply::Pending(pending, previews) => self.on_pending(pending, previews),
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
            Reply::Blocks(agent, list) => return self.on_blocks(agent, list),
            Reply::History(agent, label, list) => self.on_history(agent, label, list),
            Reply::LearnedRules(rules) => {
                if let Overlay::Learned(list) = &mut self.overlay {
                    list.replace(rules);
                }
            }
            Reply::Learned(outcome) => match outcome {
                Ok(text) => self.say(text),
                Err(e) => self.warn(e),
            },
            Reply::Index(status) => self.model.index = status,
            Reply::Hits { query, found } => self.on_hits(query, found),
            Reply::Rules(rules) => self.on_rules(rules),
            Reply::Decided { id, outcome } => self.on_decided(id, outcome),
            Reply::Saved {
                agent,
                label,
                outcome,
            } => return self.on_saved(agent, label, outcome),
            Reply::Replay(opened) => {
                let records = opened.records.clone();
                self.replay = Some(ReplayPane::new(opened.path, opened.records));
                self.fresh.replay_asked = None;
                self.focus = Pane::Replay;
                self.say("replay: n/p step, Space plays, +/- speed, Esc leaves; decisions are off");
                let mut commands = vec![Command::Op(BackendOp::VerifyReplay(records))];
                // The memory as it was before the first step, not as it is.
                commands.extend(self.replay_memory_if_moved());
                return commands;
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
                self.overlay = Overlay::Lisp(view);
            }
            Reply::Failed(text) => {
                self.model
                    .notify(self.now, None, NoticeKind::Error, text.clone());
                self.warn(text);
            }
        }
        Vec::new()
    }

    /// The agents as they are now, in name order.
    fn on_agents(&mut self, rows: Vec<AgentLine>) {
        for row in rows {
            match self.model.agents.iter_mut().find(|a| a.name == row.name) {
                Some(a) => *a = row,
                None => self.model.agents.push(row),
            }
        }
        self.model.agents.sort_by(|a, b| a.name.cmp(&b.name));
        self.fresh.memory = true;
    }

    /// The queue as it is now: newcomers are announced when the selection
    /// stays on another request, and a held decision whose request was
    /// decided elsewhere is dropped, saying so.
    fn on_pending(&mut self, pending: Vec<PendingRequest>, previews: crate::backend::Previews) {
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
            // The selection stays where it was: say what came, so a key
            // meant for the newcomer is not taken for it.
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

    /// An agent's blocks, when that agent is the one shown; the selected
    /// block's versions are asked for.
    fn on_blocks(&mut self, agent: String, list: Vec<Block>) -> Vec<Command> {
        if Some(&agent) != self.memory.agent(&self.model).as_ref() {
            return Vec::new();
        }
        self.model.blocks = list;
        self.memory.refreshed(&self.model);
        match self.memory.selected_block(&self.model.blocks) {
            Some(b) => vec![Command::Op(BackendOp::Host(
                partner_protocol::Op::History {
                    agent,
                    label: b.label.clone(),
                },
            ))],
            None => Vec::new(),
        }
    }

    /// A block's versions, when that block is the one shown.
    fn on_history(&mut self, agent: String, label: String, list: Vec<BlockVersion>) {
        let shown = self.memory.agent(&self.model) == Some(agent)
            && self
                .memory
                .selected_block(&self.model.blocks)
                .is_some_and(|b| b.label == label);
        if shown {
            self.model.history = list;
        }
    }

    /// A memory search's answer, kept with the words it answers.
    fn on_hits(&mut self, query: String, found: Result<(Vec<HybridHit>, Option<String>), String>) {
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

    /// The standing rules, into their list when it is open.
    fn on_rules(&mut self, rules: Vec<StandingRule>) {
        if let Overlay::Rules(list) = &mut self.overlay {
            list.replace(rules);
        }
    }

    /// How a decision went: the editor it came from closes (or shows the
    /// error), and a fix of an action read from plain words offers to
    /// learn what those words mean.
    fn on_decided(&mut self, id: String, outcome: Result<String, String>) {
        let editing = matches!(
            &self.overlay,
            Overlay::Editor(Editor { target: EditTarget::Action { id: e }, .. }) if *e == id
        );
        match outcome {
            Ok(text) => {
                if editing {
                    self.overlay = Overlay::None;
                    // The partner's own decision: the queue moves on, it
                    // does not report the request as lost.
                    self.queue.decided(&id, &self.model);
                }
                self.say(text);
                if let Some((offer_id, words, action)) = self.learn_offer.take()
                    && offer_id == id
                {
                    self.overlay = Overlay::confirm(
                        format!(
                            "Learn that \"{words}\" means {action}? Agents' words like these will be proposed as it."
                        ),
                        Confirmed::Learn { words, action },
                    );
                }
            }
            Err(e) => {
                if let Overlay::Editor(editor) = &mut self.overlay
                    && editing
                {
                    editor.error = Some(e);
                    editor.waiting = false;
                } else if let Some(text) = self.edited_and_refused(&id) {
                    // An edit refused once sent: back in the editor, with
                    // why, to be fixed or left.
                    let original = self
                        .model
                        .pending
                        .iter()
                        .find(|r| r.id == id)
                        .map(|r| r.canonical.clone())
                        .unwrap_or_default();
                    let mut editor = Editor::new(EditTarget::Action { id }, &text, original);
                    editor.error = Some(e);
                    self.overlay = Overlay::Editor(editor);
                } else {
                    self.warn(format!("{id}: {e}"));
                }
            }
        }
        self.fresh.pending = true;
    }

    /// The text of the edited approval of `id` this console sent last, when
    /// it did and nothing else is open (to reopen it on a refusal).
    fn edited_and_refused(&self, id: &str) -> Option<String> {
        match (&self.last_sent, &self.overlay) {
            (Some(sent), Overlay::None) if sent.id == id => match &sent.decision {
                partner_protocol::wire::Decision::ApproveEdited(text) => Some(text.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// How saving a block went: saved (the draft goes), a conflict (the
    /// merge opens) or failed (the edit is kept).
    fn on_saved(&mut self, agent: String, label: String, outcome: SaveOutcome) -> Vec<Command> {
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
                vec![Command::Op(BackendOp::Host(partner_protocol::Op::Blocks {
                    agent,
                }))]
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
                vec![Command::Op(BackendOp::Host(partner_protocol::Op::Blocks {
                    agent,
                }))]
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
                Vec::new()
            }
        }
    }
}
