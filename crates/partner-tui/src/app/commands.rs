//! What the prompt's lines do: a deny reason, a search in the focused
//! pane, a message, or a `:` command parsed and carried out.

use super::overlay::{Confirmed, Overlay};
use super::{App, Command};
use crate::backend::BackendOp;
use crate::command::{ConsoleCommand, OUTCOMES, parse_command};
use crate::completion::{GrammarCompleter, Names, PathCompleter};
use crate::keymap::Action;
use crate::panes::{Effect, Pane, PromptPurpose};
use crate::prompt::{Completer, WordCompleter};

impl App {
    /// What Tab completes in a prompt: on the `:` line, the console's
    /// command grammar with what is running now; elsewhere agent names.
    pub(super) fn completer(&self, purpose: &PromptPurpose) -> Box<dyn Completer> {
        if *purpose == PromptPurpose::Command {
            let names = Names {
                agents: self.agent_names(),
                verbs: self.verb_words.clone(),
                blocks: self.model.blocks.iter().map(|b| b.label.clone()).collect(),
                requests: self.model.pending.iter().map(|r| r.id.clone()).collect(),
                outcomes: OUTCOMES.iter().map(|w| (*w).to_string()).collect(),
            };
            let grammar = GrammarCompleter::new(&names);
            if grammar.ready() {
                return Box::new(PathCompleter {
                    rest: grammar,
                    home: std::env::var_os("HOME").map(std::path::PathBuf::from),
                });
            }
        }
        Box::new(WordCompleter {
            words: self.agent_names(),
        })
    }

    /// A prompt's line was entered.
    pub(super) fn submit(&mut self, purpose: PromptPurpose, text: String) -> Vec<Command> {
        let text = text.trim().to_string();
        match purpose {
            PromptPurpose::DenyReason { id, always } => {
                self.deny_with_reason(id, always, (!text.is_empty()).then_some(text))
            }
            PromptPurpose::Command if text.is_empty() => Vec::new(),
            PromptPurpose::Command => self.command_line(&text),
            PromptPurpose::SearchMemory => {
                if text.is_empty() {
                    self.memory.search = None;
                    return Vec::new();
                }
                self.memory.search = Some(text.clone());
                self.memory.hit = 0;
                // Until its answer comes, nothing held answers it.
                self.model.hits.clear();
                self.model.hits_for = None;
                self.model.hits_failed = None;
                vec![Command::Op(BackendOp::Host(partner_protocol::Op::Search {
                    query: text,
                }))]
            }
            PromptPurpose::SearchTurns => {
                if let Some(notice) = self.turns.find(&self.model, &text) {
                    self.say(notice);
                }
                Vec::new()
            }
            PromptPurpose::SearchTrace => {
                self.trace.search = (!text.is_empty()).then_some(text);
                self.trace.selected = None;
                Vec::new()
            }
            PromptPurpose::Message(agent) if !text.is_empty() => {
                self.say(format!("sending to {agent}…"));
                vec![Command::Op(BackendOp::Host(
                    partner_protocol::Op::Message { agent, text },
                ))]
            }
            PromptPurpose::Message(_) => Vec::new(),
        }
    }

    /// A denial with the partner's reason; denying always asks first
    /// (it makes a standing rule).
    fn deny_with_reason(
        &mut self,
        id: String,
        always: bool,
        reason: Option<String>,
    ) -> Vec<Command> {
        if !always {
            return self.apply(vec![Effect::Decide {
                id,
                decision: partner_protocol::wire::Decision::Deny(reason),
            }]);
        }
        let scope = self
            .model
            .pending
            .iter()
            .find(|r| r.id == id)
            .map(crate::panes::rule_scope)
            .unwrap_or_default();
        self.overlay = Overlay::confirm(
            format!(
                "Deny {id} and make a standing rule: from now on {scope} is refused without asking?"
            ),
            Confirmed::Decide {
                id,
                decision: partner_protocol::wire::Decision::DenyAlways(reason),
            },
        );
        Vec::new()
    }

    /// A `:` line: a command, or plain words that read as an action,
    /// offered on the line to run with Enter or change first.
    fn command_line(&mut self, text: &str) -> Vec<Command> {
        let agents: Vec<String> = self.model.agents.iter().map(|a| a.name.clone()).collect();
        let message = match parse_command(text, &agents) {
            Ok(command) => return self.run_command(command),
            Err(message) => message,
        };
        let proposal = self
            .proposer
            .get_or_init(|| partner_dialect::proposals::Proposer::new(&[]).ok())
            .as_ref()
            .and_then(|p| p.propose(text.trim_start_matches(':')));
        match proposal {
            Some(action) => {
                self.say(format!(
                    "Enter runs it, or change it first: read as {action}"
                ));
                self.overlay = Overlay::Prompt(super::overlay::PromptLine {
                    purpose: PromptPurpose::Command,
                    prompt: crate::prompt::Prompt::new(&action),
                });
            }
            None => self.warn(message),
        }
        Vec::new()
    }

    /// Carries out a parsed command line.
    pub(super) fn run_command(&mut self, command: ConsoleCommand) -> Vec<Command> {
        match command {
            ConsoleCommand::ReplayLive => {
                return vec![Command::Op(BackendOp::OpenReplay(
                    std::path::PathBuf::from(&self.db),
                ))];
            }
            ConsoleCommand::OpenTrace(path) => {
                return vec![Command::Op(BackendOp::OpenReplay(
                    std::path::PathBuf::from(&path),
                ))];
            }
            ConsoleCommand::Close => {
                if self.replay.is_some() {
                    self.close_replay();
                } else {
                    self.warn("no replay is open");
                }
            }
            ConsoleCommand::Quit => return self.act(Action::Quit),
            ConsoleCommand::Rules => return self.open_rules(),
            ConsoleCommand::Learned => {
                self.overlay = Overlay::Learned(Default::default());
                return vec![Command::Op(BackendOp::Host(partner_protocol::Op::Learned))];
            }
            ConsoleCommand::Log => return self.act(Action::Notifications),
            ConsoleCommand::Shell(text) => return self.plan_command(text),
            ConsoleCommand::Output => self.show_output(),
            ConsoleCommand::Help => self.overlay = Overlay::help(),
            ConsoleCommand::FilterVerb(verb) => self.filter_verb(verb),
            ConsoleCommand::FilterOutcome(outcome) => {
                self.trace.outcome = Some(outcome);
                self.trace.selected = None;
                self.focus = Pane::Trace;
            }
            ConsoleCommand::FilterClear => self.clear_filters(),
            ConsoleCommand::Step(n) => match &mut self.replay {
                Some(r) => {
                    r.state.step = n.min(r.state.records.len());
                    self.focus = Pane::Replay;
                    return self.replay_memory_if_moved();
                }
                None => self.warn("no replay is open: :open trace FILE"),
            },
            ConsoleCommand::Control { agents, control } => return self.control(agents, control),
            ConsoleCommand::Message { agent, text } => {
                self.say(format!("sending to {agent}…"));
                return vec![Command::Op(BackendOp::Host(
                    partner_protocol::Op::Message { agent, text },
                ))];
            }
            ConsoleCommand::Lisp(text) => match self.acting_agent() {
                Some(agent) => {
                    self.say(format!("evaluating against {agent}'s state…"));
                    return vec![Command::Op(BackendOp::Host(partner_protocol::Op::Lisp {
                        agent,
                        text,
                    }))];
                }
                None => {
                    self.warn("no agent's state to read: pick one with F or in the memory pane")
                }
            },
            ConsoleCommand::Action(text) => match self.acting_agent() {
                Some(agent) => {
                    self.say(format!("running as {agent}…"));
                    return vec![Command::Op(BackendOp::Host(partner_protocol::Op::Run {
                        agent,
                        text,
                    }))];
                }
                None => self.warn("no agent to act for: pick one with F or in the memory pane"),
            },
        }
        Vec::new()
    }

    /// `:filter verb V`: only a verb the dialect or the trace knows.
    fn filter_verb(&mut self, verb: String) {
        let known = partner_dialect::BUILTIN_VERBS
            .iter()
            .any(|v| v.verb.name() == verb)
            || self.model.trace.iter().any(|r| r.verb == verb);
        if !known {
            self.warn(format!(
                "no verb '{verb}' in the dialect or the trace; :filter clear drops every filter"
            ));
            return;
        }
        self.trace.verb = Some(verb);
        self.trace.selected = None;
        self.focus = Pane::Trace;
    }

    /// `:filter clear`: every filter of the trace and turns dropped.
    fn clear_filters(&mut self) {
        self.trace.verb = None;
        self.trace.outcome = None;
        self.trace.search = None;
        self.trace.agent = None;
        self.turns.agent = None;
        self.say("filters cleared");
    }

    /// Pulses, re-times, halts or resumes `agents`: said as asked, and the
    /// host's answer says when it is done.
    fn control(
        &mut self,
        agents: Vec<String>,
        control: crate::command::AgentControl,
    ) -> Vec<Command> {
        use crate::command::AgentControl;
        let who = agents.join(", ");
        self.say(match control {
            AgentControl::PulseNow => format!("pulsing {who}…"),
            AgentControl::SetPulse(every) if every.is_zero() => {
                format!("turning {who}'s pulse off…")
            }
            AgentControl::SetPulse(every) => format!(
                "setting {who} to pulse every {}…",
                crate::panes::human_duration(every.as_millis() as i64)
            ),
            AgentControl::Halt => format!("halting {who}…"),
            AgentControl::Resume => format!("resuming {who}…"),
        });
        agents
            .into_iter()
            .map(|agent| Command::Op(BackendOp::Host(control.op(agent))))
            .collect()
    }
}
