//! Keys, pastes and the mouse. An open overlay takes keys first; then the
//! keymap turns keys into actions. Console-wide actions (focus, help, the
//! command line, quit) work everywhere; decisions go to the queue only
//! while its requests are on screen and never during a replay; everything
//! else goes to the focused pane — a key acts on what it visibly refers
//! to. A paste is text for the open prompt or editor, never keys.

use crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};

use super::overlay::{Confirmed, Overlay};
use super::{App, Command};
use crate::backend::BackendOp;
use crate::keymap::{Action, KeyChord, Lookup};
use crate::panes::{Component, Pane, PromptPurpose};
use crate::prompt::Prompt;

/// Actions that decide, or choose what to decide.
fn is_decision(action: Action) -> bool {
    matches!(
        action,
        Action::Approve
            | Action::ApproveAlways
            | Action::Deny
            | Action::DenyWithReason
            | Action::DenyAlways
            | Action::Escalate
            | Action::EditAction
            | Action::NextRequest
            | Action::PrevRequest
    )
}

impl App {
    /// Handles one key.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Command> {
        if let Some(commands) = self.overlay_key(key) {
            return commands;
        }
        self.pending_keys.push(KeyChord::from_event(&key));
        match self.keymap.lookup(&self.pending_keys) {
            Lookup::Pending => Vec::new(),
            Lookup::None => {
                self.pending_keys.clear();
                Vec::new()
            }
            Lookup::Action(action) => {
                self.pending_keys.clear();
                self.act(action)
            }
        }
    }

    /// Handles pasted text: it goes into the open prompt or editor as text;
    /// with none open it is ignored (never read as keys).
    pub fn on_paste(&mut self, text: &str) -> Vec<Command> {
        match &mut self.overlay {
            Overlay::Prompt(line) => line.prompt.line.insert(text),
            Overlay::Editor(editor) => {
                editor.area.insert_str(text);
            }
            _ => self.warn(format!(
                "pasted text ignored ({} chars): open a prompt or the editor first",
                text.chars().count()
            )),
        }
        Vec::new()
    }

    /// True when decisions can be made now: no replay, and the queue (with
    /// its selected request's detail) on screen.
    pub fn decisions_visible(&self) -> bool {
        self.replay.is_none() && self.current_areas().shows(Pane::Pending)
    }

    /// Performs an action.
    pub fn act(&mut self, action: Action) -> Vec<Command> {
        self.notice = None;
        match action {
            Action::FocusNext => self.cycle_focus(true),
            Action::FocusPrev => self.cycle_focus(false),
            Action::Zoom => self.zoom = !self.zoom,
            Action::Help => self.overlay = Overlay::help(),
            Action::CommandLine => self.open_prompt(PromptPurpose::Command),
            Action::ShellPrompt => {
                // The command line, already on `!`: a shell command or a
                // request in words, through the parse gate.
                self.overlay = Overlay::Prompt(super::overlay::PromptLine {
                    purpose: PromptPurpose::Command,
                    prompt: Prompt::new("!"),
                });
            }
            Action::Quit => return self.quit(),
            Action::UndoDecision => self.undo_decision(),
            Action::Rules => return self.open_rules(),
            Action::Notifications => {
                self.model.unseen = 0;
                self.overlay = Overlay::log();
            }
            Action::Message => self.message_prompt(),
            Action::FilterAgent if self.focus != Pane::Memory => self.next_agent_filter(),
            action if is_decision(action) => return self.decide_key(action),
            action => {
                let effects = match self.focus {
                    Pane::Turns => self.turns.act(action, &self.model),
                    Pane::Pending => self.queue.act(action, &self.model),
                    Pane::Memory => self.memory.act(action, &self.model),
                    Pane::Trace => self.trace.act(action, &self.model),
                    Pane::Replay => match &mut self.replay {
                        Some(r) => r.act(action, &self.model),
                        None => None,
                    },
                };
                match effects {
                    Some(effects) => {
                        let mut commands = self.apply(effects);
                        commands.extend(self.replay_memory_if_moved());
                        return commands;
                    }
                    None if action == Action::Back => return self.back(),
                    None => self.explain(action),
                }
            }
        }
        Vec::new()
    }

    /// `m`: a message to the agent the turns are filtered to, or the first.
    fn message_prompt(&mut self) {
        let agent = self
            .turns
            .agent
            .clone()
            .or_else(|| self.model.agents.first().map(|a| a.name.clone()));
        match agent {
            Some(agent) => self.open_prompt(PromptPurpose::Message(agent)),
            None => self.warn("no agent to message"),
        }
    }

    /// The turns and the trace filtered to the next agent (after the last,
    /// to none).
    fn next_agent_filter(&mut self) {
        let names = self.agent_names();
        let next = match &self.turns.agent {
            None => names.first().cloned(),
            Some(current) => names.iter().skip_while(|n| *n != current).nth(1).cloned(),
        };
        self.turns.agent = next.clone();
        self.trace.agent = next;
        self.turns.follow();
        self.trace.selected = None;
    }

    /// A decision key: sent to the queue where the request is shown, and
    /// refused (saying why) in a replay or where no request is shown.
    fn decide_key(&mut self, action: Action) -> Vec<Command> {
        if self.replay.is_some() {
            self.warn("replay: decisions are off here (Esc leaves the replay)");
            return Vec::new();
        }
        if !self.decisions_visible() {
            self.warn(
                "decisions are made in the Pending pane, where the request is shown (Tab moves there)",
            );
            return Vec::new();
        }
        let effects = self.queue.act(action, &self.model).unwrap_or_default();
        self.apply(effects)
    }

    /// Esc with nothing else to close: leave the replay, or unzoom.
    pub(super) fn back(&mut self) -> Vec<Command> {
        if self.replay.is_some() {
            self.close_replay();
        } else if self.zoom {
            self.zoom = false;
        }
        Vec::new()
    }

    /// Says where a key that does nothing in the focused pane works.
    pub(super) fn explain(&mut self, action: Action) {
        let keys = self.keymap.keys_for(action).unwrap_or_default();
        let home = match action {
            Action::EditBlock | Action::UndoBlock => Some(Pane::Memory),
            Action::StepForward
            | Action::StepBack
            | Action::PlayPause
            | Action::Faster
            | Action::Slower => Some(Pane::Replay),
            Action::Follow | Action::PrevAction | Action::NextAction => Some(Pane::Turns),
            _ => None,
        };
        match home {
            Some(Pane::Replay) if self.replay.is_none() => self.warn(format!(
                "{keys} steps a replay: open one with :open trace FILE"
            )),
            Some(pane) => self.warn(format!(
                "{keys} works in the {} pane (Tab moves there)",
                pane.title()
            )),
            None => {}
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

    pub(super) fn quit(&mut self) -> Vec<Command> {
        if !self.memory.drafts.is_empty() {
            self.overlay = Overlay::confirm(
                format!(
                    "{} unsaved draft(s) will be lost. Quit anyway?",
                    self.memory.drafts.len()
                ),
                Confirmed::Quit,
            );
            return Vec::new();
        }
        let mut commands = self.flush_held();
        commands.push(Command::Quit);
        commands
    }

    pub(super) fn open_prompt(&mut self, purpose: PromptPurpose) {
        self.overlay = Overlay::prompt(purpose);
    }

    pub(super) fn open_rules(&mut self) -> Vec<Command> {
        self.overlay = Overlay::Rules(Default::default());
        vec![Command::Op(BackendOp::Host(partner_protocol::Op::Rules))]
    }

    /// Leaves the replay: the live queue, memory and turns come back.
    pub fn close_replay(&mut self) {
        if self.replay.take().is_some() {
            if self.focus == Pane::Replay {
                self.focus = Pane::Turns;
            }
            if self.trace_only {
                // Nothing runs behind these panes: never call them live.
                self.say("left the replay: this console was opened for the trace alone, and nothing runs in it; q quits");
            } else {
                self.say("left the replay: the panes are live again");
            }
        }
    }

    /// Handles the mouse: a click focuses the pane under it (and selects a
    /// row in lists); the wheel scrolls the pane under the pointer.
    pub fn on_mouse(&mut self, mouse: MouseEvent) -> Vec<Command> {
        if self.typing() || !matches!(self.overlay, Overlay::None) {
            return Vec::new();
        }
        let areas = self.current_areas();
        let hit = areas.pane_at(mouse.column, mouse.row);
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(tabs) = areas.tabs
                    && tabs.contains(ratatui::layout::Position::new(mouse.column, mouse.row))
                {
                    let index =
                        usize::from(mouse.column.saturating_sub(tabs.x) / super::layout::TAB_WIDTH);
                    if let Some(p) = self.panes().get(index) {
                        self.focus = *p;
                    }
                    return Vec::new();
                }
                if let Some((pane, rect)) = hit {
                    self.focus = pane;
                    let row = usize::from(mouse.row.saturating_sub(rect.y + 1));
                    let effects = match pane {
                        Pane::Pending if self.replay.is_none() => {
                            self.queue.click(row, &self.model)
                        }
                        Pane::Memory => self.memory.click(row, &self.model),
                        Pane::Trace => self.trace.click(row, &self.model),
                        _ => Vec::new(),
                    };
                    return self.apply(effects);
                }
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                if let Some((pane, _)) = hit {
                    self.focus = pane;
                }
                let up = matches!(mouse.kind, MouseEventKind::ScrollUp);
                let action = if up { Action::Up } else { Action::Down };
                let mut commands = Vec::new();
                for _ in 0..3 {
                    if self.focus == Pane::Pending && self.replay.is_none() {
                        let effects = self.queue.act(action, &self.model).unwrap_or_default();
                        commands.extend(self.apply(effects));
                    } else {
                        commands.extend(self.act(action));
                    }
                }
                return commands;
            }
            _ => {}
        }
        Vec::new()
    }
}
