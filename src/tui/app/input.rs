//! Keys and the mouse: keys go through an open prompt or editor first,
//! then the keymap (with multi-key sequences); typed prompts and console
//! commands become intents; clicks focus panes and pick rows.

use super::*;

impl App {
    /// Handles one key.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Intent> {
        match std::mem::take(&mut self.overlay) {
            Overlay::Input { purpose, mut text } => {
                match key.code {
                    KeyCode::Esc => {}
                    KeyCode::Enter => return self.submit(purpose, text),
                    KeyCode::Backspace => {
                        text.pop();
                        self.overlay = Overlay::Input { purpose, text };
                    }
                    KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                        text.push(c);
                        self.overlay = Overlay::Input { purpose, text };
                    }
                    _ => self.overlay = Overlay::Input { purpose, text },
                }
                return Vec::new();
            }
            Overlay::Editor {
                target,
                mut area,
                original,
            } => {
                let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
                match key.code {
                    KeyCode::Char('s') if ctrl => {
                        let value = area.lines().join("\n");
                        return match target {
                            EditTarget::Block { agent, label } => vec![Intent::SaveBlock {
                                agent,
                                label,
                                value,
                            }],
                            EditTarget::Action { id } => {
                                vec![Intent::ApproveEdited { id, text: value }]
                            }
                        };
                    }
                    KeyCode::Esc => {
                        let value = area.lines().join("\n");
                        if value != original {
                            self.notice = Some(
                                "edit kept as a draft: i reopens it, q asks before quitting".into(),
                            );
                            self.draft = Some((target, value));
                        }
                        return Vec::new();
                    }
                    _ => {
                        area.input(key);
                        self.overlay = Overlay::Editor {
                            target,
                            area,
                            original,
                        };
                        return Vec::new();
                    }
                }
            }
            Overlay::Help => {
                if !matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q')
                ) {
                    self.overlay = Overlay::Help;
                }
                return Vec::new();
            }
            Overlay::ConfirmQuit => {
                return match key.code {
                    KeyCode::Char('y') | KeyCode::Char('Y') => vec![Intent::Quit],
                    _ => Vec::new(),
                };
            }
            Overlay::None => {}
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

    pub(super) fn submit(&mut self, purpose: InputPurpose, text: String) -> Vec<Intent> {
        let text = text.trim().to_string();
        match purpose {
            InputPurpose::DenyReason(id) => vec![Intent::Decide {
                id,
                decision: Decision::Deny((!text.is_empty()).then_some(text)),
            }],
            InputPurpose::Command if text.is_empty() => Vec::new(),
            InputPurpose::Command => {
                let agents: Vec<String> =
                    self.model.agents.iter().map(|a| a.name.clone()).collect();
                match parse_command(&text, &agents) {
                    Ok(command) => self.run_command(command),
                    Err(message) => {
                        self.notice = Some(message);
                        Vec::new()
                    }
                }
            }
            InputPurpose::Search => {
                self.memory_search = (!text.is_empty()).then(|| text.clone());
                if text.is_empty() {
                    Vec::new()
                } else {
                    vec![Intent::Search(text)]
                }
            }
            InputPurpose::Message(agent) if !text.is_empty() => {
                vec![Intent::SendMessage { agent, text }]
            }
            InputPurpose::Message(_) => Vec::new(),
        }
    }

    /// Carries out a parsed command line: console state here, the rest as
    /// intents for the driver.
    pub(super) fn run_command(&mut self, command: ConsoleCommand) -> Vec<Intent> {
        match command {
            ConsoleCommand::OpenTrace(path) => return vec![Intent::OpenTrace(path)],
            ConsoleCommand::Quit => return self.act(Action::Quit),
            ConsoleCommand::FilterVerb(verb) => {
                self.trace_verb = Some(verb);
                self.trace_sel = 0;
                self.focus = Pane::Trace;
            }
            ConsoleCommand::FilterOutcome(outcome) => {
                self.trace_outcome = Some(outcome);
                self.trace_sel = 0;
                self.focus = Pane::Trace;
            }
            ConsoleCommand::FilterClear => {
                self.trace_verb = None;
                self.trace_outcome = None;
                self.agent_filter = None;
            }
            ConsoleCommand::Step(n) => match &mut self.replay {
                Some(r) => {
                    r.step = n.min(r.records.len());
                    self.focus = Pane::Replay;
                }
                None => self.notice = Some("no replay is open: :open trace FILE".into()),
            },
            ConsoleCommand::Control { agents, control } => {
                return vec![Intent::Control { agents, control }];
            }
            ConsoleCommand::Message { agent, text } => {
                return vec![Intent::SendMessage { agent, text }];
            }
            ConsoleCommand::Action(text) => return vec![Intent::RunAction(text)],
        }
        Vec::new()
    }

    pub(super) fn open_editor(&mut self, target: EditTarget, text: String) {
        let text = match &self.draft {
            Some((t, draft)) if *t == target => draft.clone(),
            _ => text,
        };
        let original = match &target {
            EditTarget::Block { .. } => self
                .selected_block()
                .map(|b| b.value.clone())
                .unwrap_or_default(),
            EditTarget::Action { .. } => text.clone(),
        };
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        let area = TextArea::new(lines);
        self.overlay = Overlay::Editor {
            target,
            area: Box::new(area),
            original,
        };
    }

    /// row in lists); the wheel scrolls.
    /// Handles the mouse: a click focuses the pane under it (and selects a
    pub fn on_mouse(&mut self, mouse: MouseEvent, size: Rect) -> Vec<Intent> {
        if self.typing() {
            return Vec::new();
        }
        let at = Position::new(mouse.column, mouse.row);
        let areas = self.areas(size);
        let hit = areas.panes.iter().find(|(_, r)| r.contains(at)).copied();
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(tabs) = areas.tabs
                    && tabs.contains(at)
                {
                    let panes = self.panes();
                    let index = usize::from(mouse.column.saturating_sub(tabs.x)) / 12;
                    if let Some(p) = panes.get(index) {
                        self.focus = *p;
                    }
                    return Vec::new();
                }
                if let Some((pane, rect)) = hit {
                    self.focus = pane;
                    let row = usize::from(mouse.row.saturating_sub(rect.y + 1));
                    match pane {
                        Pane::Pending if row < self.model.pending.len() => self.pending_sel = row,
                        Pane::Trace => {
                            self.trace_sel = row.min(self.trace_rows().len().saturating_sub(1))
                        }
                        Pane::Memory if row < self.model.blocks.len() => {
                            self.block_sel = row;
                            return self.move_selection(0);
                        }
                        _ => {}
                    }
                }
            }
            MouseEventKind::ScrollUp => {
                if let Some((pane, _)) = hit {
                    self.focus = pane;
                }
                return self.move_selection(-3);
            }
            MouseEventKind::ScrollDown => {
                if let Some((pane, _)) = hit {
                    self.focus = pane;
                }
                return self.move_selection(3);
            }
            _ => {}
        }
        Vec::new()
    }
}
