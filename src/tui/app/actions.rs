//! What each keymap action does: moving focus and selection, deciding
//! the selected request, editing, filtering, stepping the replay.

use super::*;

impl App {
    pub(super) fn decide(&mut self, decision: Decision) -> Vec<Intent> {
        match self.selected_request() {
            Some(r) => vec![Intent::Decide {
                id: r.id.clone(),
                decision,
            }],
            None => {
                self.notice = Some("no request is waiting".into());
                Vec::new()
            }
        }
    }

    pub(super) fn cycle_focus(&mut self, forward: bool) {
        let panes = self.panes();
        let i = panes.iter().position(|p| *p == self.focus).unwrap_or(0);
        let n = panes.len();
        self.focus = panes[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
    }

    pub(super) fn move_selection(&mut self, delta: isize) -> Vec<Intent> {
        let step = |v: usize, len: usize| -> usize {
            if len == 0 {
                return 0;
            }
            (v as isize + delta).clamp(0, len as isize - 1) as usize
        };
        match self.focus {
            Pane::Turns => {
                if delta < 0 {
                    self.turn_scroll = self.turn_scroll.saturating_add(delta.unsigned_abs());
                    self.follow = false;
                } else {
                    self.turn_scroll = self.turn_scroll.saturating_sub(delta as usize);
                    if self.turn_scroll == 0 {
                        self.follow = true;
                    }
                }
            }
            Pane::Pending => self.pending_sel = step(self.pending_sel, self.model.pending.len()),
            Pane::Memory => {
                self.block_sel = step(self.block_sel, self.model.blocks.len());
                if let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block()) {
                    return vec![Intent::LoadHistory {
                        agent,
                        label: b.label.clone(),
                    }];
                }
            }
            Pane::Trace => self.trace_sel = step(self.trace_sel, self.trace_rows().len()),
            Pane::Replay => self.replay_step(delta),
        }
        Vec::new()
    }

    /// Moves the replay by `delta` steps.
    pub fn replay_step(&mut self, delta: isize) {
        if let Some(r) = &mut self.replay {
            r.step = (r.step as isize + delta).clamp(0, r.records.len() as isize) as usize;
        }
    }

    /// Performs an action.
    pub fn act(&mut self, action: Action) -> Vec<Intent> {
        self.notice = None;
        match action {
            Action::Approve => return self.decide(Decision::ApproveOnce),
            Action::ApproveAlways => return self.decide(Decision::ApproveAlways),
            Action::Deny => return self.decide(Decision::Deny(None)),
            Action::Escalate => return self.decide(Decision::Escalate(None)),
            Action::DenyWithReason => {
                if let Some(r) = self.selected_request() {
                    self.overlay = Overlay::Input {
                        purpose: InputPurpose::DenyReason(r.id.clone()),
                        text: String::new(),
                    };
                }
            }
            Action::EditAction => {
                if let Some(r) = self.selected_request() {
                    let (id, text) = (r.id.clone(), r.canonical.clone());
                    self.open_editor(EditTarget::Action { id }, text);
                }
            }
            Action::NextRequest => {
                self.pending_sel =
                    (self.pending_sel + 1).min(self.model.pending.len().saturating_sub(1))
            }
            Action::PrevRequest => self.pending_sel = self.pending_sel.saturating_sub(1),
            Action::FocusNext => self.cycle_focus(true),
            Action::FocusPrev => self.cycle_focus(false),
            Action::Zoom => self.zoom = !self.zoom,
            Action::Search => {
                self.focus = Pane::Memory;
                self.overlay = Overlay::Input {
                    purpose: InputPurpose::Search,
                    text: String::new(),
                };
            }
            Action::CommandLine => {
                self.overlay = Overlay::Input {
                    purpose: InputPurpose::Command,
                    text: String::new(),
                }
            }
            Action::Help => self.overlay = Overlay::Help,
            Action::Quit => {
                if self.draft.is_some() {
                    self.overlay = Overlay::ConfirmQuit;
                } else {
                    return vec![Intent::Quit];
                }
            }
            Action::Up => return self.move_selection(-1),
            Action::Down => return self.move_selection(1),
            Action::PageUp => return self.move_selection(-10),
            Action::PageDown => return self.move_selection(10),
            Action::Top => return self.move_selection(-1_000_000),
            Action::Bottom => {
                if self.focus == Pane::Turns {
                    self.turn_scroll = 0;
                    self.follow = true;
                } else {
                    return self.move_selection(1_000_000);
                }
            }
            Action::Select => {
                if self.focus == Pane::Memory
                    && let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block())
                {
                    return vec![Intent::LoadHistory {
                        agent,
                        label: b.label.clone(),
                    }];
                }
            }
            Action::Back => {
                self.zoom = false;
                self.memory_search = None;
                self.model.hits.clear();
            }
            Action::EditBlock => {
                if let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block()) {
                    let target = EditTarget::Block {
                        agent,
                        label: b.label.clone(),
                    };
                    let value = b.value.clone();
                    self.focus = Pane::Memory;
                    self.open_editor(target, value);
                }
            }
            Action::UndoBlock => {
                if let (Some(agent), Some(b)) = (self.memory_agent(), self.selected_block()) {
                    return vec![Intent::UndoBlock {
                        agent,
                        label: b.label.clone(),
                    }];
                }
            }
            Action::Follow => {
                self.follow = !self.follow;
                if self.follow {
                    self.turn_scroll = 0;
                }
            }
            Action::FilterAgent => {
                let names = self.agent_names();
                if self.focus == Pane::Memory {
                    let current = self.memory_agent();
                    let i = names
                        .iter()
                        .position(|n| Some(n) == current.as_ref())
                        .map_or(0, |i| (i + 1) % names.len().max(1));
                    if let Some(next) = names.get(i) {
                        self.memory_agent = Some(next.clone());
                        self.block_sel = 0;
                        return vec![Intent::LoadMemory {
                            agent: next.clone(),
                        }];
                    }
                } else {
                    self.agent_filter = match &self.agent_filter {
                        None => names.first().cloned(),
                        Some(current) => names.iter().skip_while(|n| *n != current).nth(1).cloned(),
                    };
                    self.turn_scroll = 0;
                    self.trace_sel = 0;
                }
            }
            Action::StepForward => self.replay_step(1),
            Action::StepBack => self.replay_step(-1),
            Action::PlayPause => {
                if let Some(r) = &mut self.replay {
                    r.playing = !r.playing;
                }
            }
            Action::Faster => {
                if let Some(r) = &mut self.replay {
                    r.speed = (r.speed * 2.0).min(64.0);
                }
            }
            Action::Slower => {
                if let Some(r) = &mut self.replay {
                    r.speed = (r.speed / 2.0).max(0.25);
                }
            }
            Action::Message => {
                let agent = self
                    .agent_filter
                    .clone()
                    .or_else(|| self.model.agents.first().map(|a| a.name.clone()));
                if let Some(agent) = agent {
                    self.overlay = Overlay::Input {
                        purpose: InputPurpose::Message(agent),
                        text: String::new(),
                    };
                }
            }
        }
        Vec::new()
    }
}
