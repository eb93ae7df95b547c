//! Keys while an overlay is open: the help and notifications scroll, a
//! confirmation takes y or anything else, the rules list revokes, the merge
//! view chooses, the prompt and the editor take text.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::overlays::{Confirmed, Editor, Overlay};
use super::{App, Command};
use crate::backend::Op;
use crate::panes::{EditTarget, PromptPurpose};
use crate::prompt::Edit;

impl App {
    /// Keys for the open overlay; `None` when no overlay is open.
    pub(super) fn overlay_key(&mut self, key: KeyEvent) -> Option<Vec<Command>> {
        let code = key.code;
        let commands = match std::mem::take(&mut self.overlay) {
            Overlay::None => return None,
            Overlay::Lisp(mut view) => {
                if view.key(code) {
                    self.overlay = Overlay::Lisp(view);
                }
                Vec::new()
            }
            Overlay::Output(view) => self.output_key(view, code),
            Overlay::Help { scroll } => self.help_key(scroll, code),
            Overlay::Log { scroll, open } => self.log_key(scroll, open, code),
            Overlay::Confirm { on_yes, .. } => {
                if matches!(code, KeyCode::Char('y' | 'Y')) {
                    return Some(self.confirmed(on_yes));
                }
                self.say("not done");
                Vec::new()
            }
            Overlay::Learned { rules, selected } => self.learned_key(rules, selected, code),
            Overlay::Rules { rules, selected } => self.rules_key(rules, selected, code),
            Overlay::Merge(merge) => self.merge_key(merge, code),
            Overlay::Prompt { purpose, prompt } => self.prompt_key(purpose, prompt, key),
            Overlay::Editor(editor) => self.editor_key(editor, key),
        };
        Some(commands)
    }

    /// The help scrolls; Esc, `?` or `q` closes it.
    fn help_key(&mut self, scroll: usize, code: KeyCode) -> Vec<Command> {
        let max = super::overlays::help_max_scroll(self, self.size);
        let scroll = scroll.min(max);
        self.overlay = match code {
            KeyCode::Esc | KeyCode::Char('?' | 'q') => Overlay::None,
            KeyCode::Down | KeyCode::Char('j') => Overlay::Help {
                scroll: (scroll + 1).min(max),
            },
            KeyCode::Up | KeyCode::Char('k') => Overlay::Help {
                scroll: scroll.saturating_sub(1),
            },
            KeyCode::PageDown | KeyCode::Char(' ') => Overlay::Help {
                scroll: (scroll + 10).min(max),
            },
            KeyCode::End => Overlay::Help { scroll: max },
            KeyCode::PageUp => Overlay::Help {
                scroll: scroll.saturating_sub(10),
            },
            KeyCode::Home => Overlay::Help { scroll: 0 },
            _ => Overlay::Help { scroll },
        };
        Vec::new()
    }

    /// The notifications: a list to scroll, or one opened whole.
    fn log_key(&mut self, scroll: usize, open: bool, code: KeyCode) -> Vec<Command> {
        let max = self.model.notifications.len().saturating_sub(1);
        let list = |scroll: usize| Overlay::Log {
            scroll: scroll.min(max),
            open: false,
        };
        self.overlay = match code {
            KeyCode::Esc | KeyCode::Char('q' | '!') if open => list(scroll),
            KeyCode::Esc | KeyCode::Char('q' | '!') => Overlay::None,
            KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') if !open => Overlay::Log {
                scroll,
                open: !self.model.notifications.is_empty(),
            },
            KeyCode::Enter | KeyCode::Left | KeyCode::Char('h') => list(scroll),
            KeyCode::Down | KeyCode::Char('j') => list(scroll + 1),
            KeyCode::Up | KeyCode::Char('k') => list(scroll.saturating_sub(1)),
            KeyCode::PageDown => list(scroll + 10),
            KeyCode::PageUp => list(scroll.saturating_sub(10)),
            _ => Overlay::Log { scroll, open },
        };
        Vec::new()
    }

    /// The learned phrasings: select, or forget one (after asking).
    fn learned_key(
        &mut self,
        rules: Vec<partner_store::memory::learned::LearnedRule>,
        selected: usize,
        code: KeyCode,
    ) -> Vec<Command> {
        let last = rules.len().saturating_sub(1);
        match code {
            KeyCode::Esc | KeyCode::Char('q') => {}
            KeyCode::Down | KeyCode::Char('j') => {
                self.overlay = Overlay::Learned {
                    selected: (selected + 1).min(last),
                    rules,
                };
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.overlay = Overlay::Learned {
                    selected: selected.saturating_sub(1),
                    rules,
                };
            }
            KeyCode::Char('x' | 'd') | KeyCode::Delete if !rules.is_empty() => {
                let rule = &rules[selected.min(last)];
                self.overlay = Overlay::Confirm {
                    question: format!(
                        "Forget that \"{}\" means {}? Agents' words like these will no longer be proposed as it.",
                        rule.words, rule.action
                    ),
                    on_yes: Confirmed::Forget(rule.id),
                };
            }
            _ => self.overlay = Overlay::Learned { rules, selected },
        }
        Vec::new()
    }

    /// The standing rules: select, or revoke one (after asking).
    fn rules_key(
        &mut self,
        rules: Vec<partner_policy::StandingRule>,
        selected: usize,
        code: KeyCode,
    ) -> Vec<Command> {
        match code {
            KeyCode::Esc | KeyCode::Char('q') => Vec::new(),
            KeyCode::Down | KeyCode::Char('j') => {
                self.overlay = Overlay::Rules {
                    selected: (selected + 1).min(rules.len().saturating_sub(1)),
                    rules,
                };
                Vec::new()
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.overlay = Overlay::Rules {
                    selected: selected.saturating_sub(1),
                    rules,
                };
                Vec::new()
            }
            KeyCode::Char('x' | 'd') | KeyCode::Delete => {
                if let Some(rule) = rules.get(selected) {
                    let scope = rule.scope();
                    self.overlay = Overlay::Confirm {
                        question: format!(
                            "Revoke rule #{} ({} {}'s /{scope})? Such requests will be asked again.",
                            rule.id, rule.effect, rule.agent
                        ),
                        on_yes: Confirmed::RevokeRule(rule.id),
                    };
                } else {
                    self.overlay = Overlay::Rules { rules, selected };
                }
                Vec::new()
            }
            _ => {
                self.overlay = Overlay::Rules { rules, selected };
                Vec::new()
            }
        }
    }

    /// A block that changed while edited: save mine, take theirs, edit
    /// again, or keep the draft.
    fn merge_key(&mut self, merge: super::overlays::Merge, code: KeyCode) -> Vec<Command> {
        let key_agent = (merge.agent.clone(), merge.label.clone());
        match code {
            KeyCode::Char('o') => {
                if let Some(d) = self.memory.drafts.get_mut(&key_agent) {
                    d.base_version = merge.theirs.version;
                }
                vec![Command::Op(Op::SaveBlock {
                    agent: merge.agent,
                    label: merge.label,
                    value: merge.ours,
                    base_version: merge.theirs.version,
                })]
            }
            KeyCode::Char('t') => {
                self.memory.drafts.remove(&key_agent);
                self.say(format!("kept their {}: your draft is dropped", merge.label));
                vec![Command::Op(Op::LoadMemory { agent: merge.agent })]
            }
            KeyCode::Char('e') => {
                let target = EditTarget::Block {
                    agent: merge.agent.clone(),
                    label: merge.label.clone(),
                    base_version: merge.theirs.version,
                };
                if let Some(d) = self.memory.drafts.get_mut(&key_agent) {
                    d.base_version = merge.theirs.version;
                }
                self.overlay =
                    Overlay::Editor(Editor::new(target, &merge.ours, merge.theirs.value.clone()));
                Vec::new()
            }
            KeyCode::Esc => {
                self.say("your draft is kept: i reopens it");
                Vec::new()
            }
            _ => {
                self.overlay = Overlay::Merge(merge);
                Vec::new()
            }
        }
    }

    /// The one-line prompt takes text; Enter submits it.
    fn prompt_key(
        &mut self,
        purpose: PromptPurpose,
        mut prompt: crate::prompt::Prompt,
        key: KeyEvent,
    ) -> Vec<Command> {
        let completer = self.completer(&purpose);
        match prompt.key(key, &self.history, completer.as_ref()) {
            Edit::Submit => {
                let text = prompt.line.text().to_string();
                if purpose == PromptPurpose::Command {
                    self.history.push(&text);
                }
                return self.submit(purpose, text);
            }
            Edit::Cancel => {}
            _ => self.overlay = Overlay::Prompt { purpose, prompt },
        }
        Vec::new()
    }

    /// The editor takes text; Ctrl-S saves (or approves an edited
    /// action), Esc keeps a changed block as a draft.
    fn editor_key(&mut self, mut editor: Editor, key: KeyEvent) -> Vec<Command> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('s') if ctrl => {
                let value = editor.text();
                editor.error = None;
                editor.waiting = true;
                let op = match &editor.target {
                    EditTarget::Block {
                        agent,
                        label,
                        base_version,
                    } => {
                        // The draft is kept until the save succeeds.
                        self.memory.drafts.insert(
                            (agent.clone(), label.clone()),
                            crate::panes::Draft {
                                text: value.clone(),
                                base_version: *base_version,
                            },
                        );
                        Op::SaveBlock {
                            agent: agent.clone(),
                            label: label.clone(),
                            value,
                            base_version: *base_version,
                        }
                    }
                    EditTarget::Action { id } => {
                        self.learn_offer = self
                            .model
                            .proposed_words(id)
                            .map(|words| (id.clone(), words, value.trim().to_string()));
                        Op::Runtime(partner_protocol::Op::Decide {
                            request: id.clone(),
                            decision: partner_protocol::DecisionSpec::Edited { text: value },
                        })
                    }
                };
                self.overlay = Overlay::Editor(editor);
                return vec![Command::Op(op)];
            }
            KeyCode::Esc => {
                let value = editor.text();
                if let EditTarget::Block {
                    agent,
                    label,
                    base_version,
                } = &editor.target
                    && value != editor.original
                {
                    self.memory.drafts.insert(
                        (agent.clone(), label.clone()),
                        crate::panes::Draft {
                            text: value,
                            base_version: *base_version,
                        },
                    );
                    self.say(format!("{label}: kept as a draft (✎): i reopens it"));
                }
            }
            _ => {
                editor.area.input(key);
                self.overlay = Overlay::Editor(editor);
            }
        }
        Vec::new()
    }
}
