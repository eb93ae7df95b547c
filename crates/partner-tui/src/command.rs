//! The console's command line (`:`): what the partner typed, parsed into a
//! [`ConsoleCommand`] before anything runs, so that a typo or an unknown
//! agent is a message on the status line rather than a command sent to
//! nobody.

use std::path::PathBuf;
use std::time::Duration;

use partner_dialect::parse_interval;

/// One line typed at the console's `:` prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsoleCommand {
    /// `:open trace FILE` (or `:open FILE`): replay a trace file.
    OpenTrace(PathBuf),
    /// `:replay`: the running constellation's own trace, from its database.
    ReplayLive,
    /// `:q` / `:quit`.
    Quit,
    /// `:close`: leave the replay.
    Close,
    /// `:rules`: the standing rules.
    Rules,
    /// Show the phrasings the partner taught (`x` forgets one).
    Learned,
    /// `:log`: the notifications.
    Log,
    /// `:help`.
    Help,
    /// `:filter verb NAME`.
    FilterVerb(String),
    /// `:filter outcome NAME` (one of [`OUTCOMES`]).
    FilterOutcome(String),
    /// `:filter` / `:filter clear`: drop every filter.
    FilterClear,
    /// `:step N`: jump the replay to step N.
    Step(usize),
    /// `:pulse AGENT`, `:halt [AGENT|all]`, `:resume [AGENT|all]`,
    /// `:pulse AGENT 30m`.
    Control {
        /// The agents it applies to (every agent for a bare `:halt`).
        agents: Vec<String>,
        /// What to do to them.
        control: AgentControl,
    },
    /// `:msg AGENT TEXT`: a message from the partner.
    Message {
        /// The agent.
        agent: String,
        /// The message.
        text: String,
    },
    /// `:/recall …`: a dialect action run as the agent in view.
    Action(String),
    /// `:lisp EXPR` (with `state` bound to the agent in view's state) or
    /// `:lisp tool NAME ARGS` (a dry run of a tool).
    Lisp(String),
    /// `!df -h`, `!install gimp`: the partner's own command (or request in
    /// words), run as the partner once its risk is confirmed.
    Shell(String),
    /// `:output`: the last command's output again.
    Output,
}

/// What the partner can do to a running agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentControl {
    /// Start a pulse now.
    PulseNow,
    /// Pulse on a new interval.
    SetPulse(Duration),
    /// Stop it, cancelling what it is generating (an emergency stop).
    Halt,
    /// Let a halted agent run again.
    Resume,
}

impl AgentControl {
    /// The protocol's operation that does this to `agent`.
    pub fn op(self, agent: String) -> partner_protocol::Op {
        use partner_protocol::Op;
        match self {
            AgentControl::PulseNow => Op::Pulse { agent },
            AgentControl::SetPulse(every) => Op::SetPulse {
                agent,
                seconds: partner_core::clock::TimeSpan::saturating(every),
            },
            AgentControl::Halt => Op::Halt {
                agent,
                reason: "halted by the partner".into(),
            },
            AgentControl::Resume => Op::Resume { agent },
        }
    }
}

/// The commands, for the error shown on anything else.
const COMMANDS: &str = "pulse AGENT [EVERY], halt [AGENT], resume [AGENT], msg AGENT TEXT, \
     rules, learned, log, output, lisp EXPR, !COMMAND, open trace FILE, replay, close, filter verb|outcome|clear, step N, help, quit, or a /dialect action";

/// The outcomes a trace can be filtered by.
pub const OUTCOMES: &[&str] = &["executed", "denied", "failed", "cancelled", "timed_out"];

/// The command words, for completion.
pub const COMMAND_WORDS: &[&str] = &[
    "pulse", "halt", "resume", "msg", "rules", "learned", "log", "output", "lisp", "open", "trace",
    "replay", "close", "filter", "verb", "outcome", "clear", "step", "help", "quit", "all",
];

/// Parses one command line; `agents` are the agents running now.
pub fn parse_command(text: &str, agents: &[String]) -> Result<ConsoleCommand, String> {
    let text = text.trim().trim_start_matches(':').trim();
    if let Some(command) = prefixed(text) {
        return command;
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    Ok(match words.as_slice() {
        ["q" | "quit"] => ConsoleCommand::Quit,
        ["close"] => ConsoleCommand::Close,
        ["rules"] => ConsoleCommand::Rules,
        ["learned"] => ConsoleCommand::Learned,
        ["log"] => ConsoleCommand::Log,
        ["output"] => ConsoleCommand::Output,
        ["help"] => ConsoleCommand::Help,
        ["filter", rest @ ..] => filter(rest)?,
        ["step", n] => ConsoleCommand::Step(
            n.parse()
                .map_err(|_| format!("'{n}' is not a step number"))?,
        ),
        ["pulse" | "halt" | "resume" | "msg", ..] => agent_command(&words, text, agents)?,
        [] => return Err(format!("commands: {COMMANDS}")),
        _ => return Err(format!("unknown command '{text}': try {COMMANDS}")),
    })
}

/// The commands told by what they start with: a dialect action (`/`),
/// the partner's own command (`!`), `lisp`, `replay`, `open trace`.
fn prefixed(text: &str) -> Option<Result<ConsoleCommand, String>> {
    if text.starts_with('/') {
        return Some(Ok(ConsoleCommand::Action(text.to_string())));
    }
    // `!df -h`, `!install a picture editor`: through the parse gate, for
    // the partner to confirm, never into the agents' queue.
    if let Some(shell) = text.strip_prefix('!') {
        let shell = shell.trim();
        if shell.is_empty() {
            return Some(Err(
                "write a command or a request after !: !df -h, !install gimp".into(),
            ));
        }
        return Some(Ok(ConsoleCommand::Shell(shell.to_string())));
    }
    if let Some(rest) = text.strip_prefix("lisp") {
        let rest = rest.trim();
        if rest.is_empty() {
            return Some(Err(
                "lisp takes an expression, or tool NAME ARGS: lisp (pattern-size state)".into(),
            ));
        }
        if text.starts_with("lisp ") {
            return Some(Ok(ConsoleCommand::Lisp(rest.to_string())));
        }
    }
    if text == "replay" {
        return Some(Ok(ConsoleCommand::ReplayLive));
    }
    if matches!(text, "open" | "open trace") {
        return Some(Err(
            "open trace takes a file: open trace FILE (:replay replays this constellation's own trace)"
                .into(),
        ));
    }
    text.strip_prefix("open trace ")
        .or_else(|| text.strip_prefix("open "))
        .map(|path| Ok(ConsoleCommand::OpenTrace(PathBuf::from(path.trim()))))
}

/// `filter verb NAME`, `filter outcome NAME`, `filter clear`.
fn filter(words: &[&str]) -> Result<ConsoleCommand, String> {
    Ok(match words {
        [] | ["clear"] => ConsoleCommand::FilterClear,
        ["verb", verb] => ConsoleCommand::FilterVerb(verb.trim_start_matches('/').into()),
        ["outcome", outcome] if OUTCOMES.contains(outcome) => {
            ConsoleCommand::FilterOutcome(outcome.to_string())
        }
        ["outcome", outcome] => {
            return Err(format!(
                "no outcome '{outcome}' (outcomes: {}); :filter clear drops every filter",
                OUTCOMES.join(", ")
            ));
        }
        _ => {
            return Err(
                "filter takes: verb NAME, outcome NAME, or clear (which drops every filter)".into(),
            );
        }
    })
}

/// `pulse`, `halt`, `resume` and `msg`: the agents named must be running.
fn agent_command(words: &[&str], text: &str, agents: &[String]) -> Result<ConsoleCommand, String> {
    let agent = |name: &str| -> Result<String, String> {
        if agents.iter().any(|a| a == name) {
            Ok(name.to_string())
        } else if agents.is_empty() {
            Err(format!("no agent named '{name}': no agents are running"))
        } else {
            Err(format!(
                "no agent named '{name}' (agents: {})",
                agents.join(", ")
            ))
        }
    };
    let every_agent = || -> Result<Vec<String>, String> {
        if agents.is_empty() {
            Err("no agents are running".into())
        } else {
            Ok(agents.to_vec())
        }
    };
    let control = |agents: Vec<String>, control| ConsoleCommand::Control { agents, control };
    Ok(match words {
        ["pulse", name] => control(vec![agent(name)?], AgentControl::PulseNow),
        ["pulse", name, every @ ..] => {
            let every = every.join(" ");
            // `off` (as in partner.toml) stops the pulse.
            let interval = if every == "off" {
                std::time::Duration::ZERO
            } else {
                parse_interval(&every).ok_or_else(|| {
                    format!("'{every}' is not an interval like 10m or 1h 30m, or off")
                })?
            };
            control(vec![agent(name)?], AgentControl::SetPulse(interval))
        }
        ["halt"] | ["halt", "all"] => control(every_agent()?, AgentControl::Halt),
        ["halt", name] => control(vec![agent(name)?], AgentControl::Halt),
        ["resume"] | ["resume", "all"] => control(every_agent()?, AgentControl::Resume),
        ["resume", name] => control(vec![agent(name)?], AgentControl::Resume),
        ["msg", name, _, ..] => {
            let agent = agent(name)?;
            let rest = text["msg".len()..].trim_start();
            ConsoleCommand::Message {
                agent,
                text: rest[name.len()..].trim().to_string(),
            }
        }
        ["msg", ..] => return Err("msg takes an agent and the message: msg sage hello".into()),
        _ => return Err(format!("unknown command '{text}': try {COMMANDS}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agents() -> Vec<String> {
        vec!["anchor".into(), "scout".into()]
    }

    #[test]
    fn bare_halt_stops_every_agent() {
        assert_eq!(
            parse_command(":halt", &agents()),
            Ok(ConsoleCommand::Control {
                agents: agents(),
                control: AgentControl::Halt
            })
        );
        assert_eq!(
            parse_command("resume all", &agents()),
            Ok(ConsoleCommand::Control {
                agents: agents(),
                control: AgentControl::Resume
            })
        );
    }

    #[test]
    fn unknown_agents_are_named_with_the_ones_there_are() {
        assert_eq!(
            parse_command("halt scuot", &agents()),
            Err("no agent named 'scuot' (agents: anchor, scout)".into())
        );
        assert_eq!(
            parse_command("halt", &[]),
            Err("no agents are running".into())
        );
    }

    #[test]
    fn pulse_off_is_accepted_as_in_the_config() {
        assert_eq!(
            parse_command("pulse anchor off", &agents()),
            Ok(ConsoleCommand::Control {
                agents: vec!["anchor".into()],
                control: AgentControl::SetPulse(std::time::Duration::ZERO),
            })
        );
    }

    #[test]
    fn pulse_intervals_and_messages() {
        assert_eq!(
            parse_command("pulse anchor 1h 30m", &agents()),
            Ok(ConsoleCommand::Control {
                agents: vec!["anchor".into()],
                control: AgentControl::SetPulse(Duration::from_secs(5400))
            })
        );
        assert!(
            parse_command("pulse anchor soon", &agents())
                .unwrap_err()
                .contains("'soon' is not an interval")
        );
        assert_eq!(
            parse_command("msg scout  scout, look at  the notes", &agents()),
            Ok(ConsoleCommand::Message {
                agent: "scout".into(),
                text: "scout, look at  the notes".into()
            })
        );
    }

    #[test]
    fn console_commands_and_actions() {
        let a = agents();
        assert_eq!(
            parse_command("open trace /tmp/t.jsonl", &a),
            Ok(ConsoleCommand::OpenTrace("/tmp/t.jsonl".into()))
        );
        assert_eq!(
            parse_command("/recall project notes", &a),
            Ok(ConsoleCommand::Action("/recall project notes".into()))
        );
        assert_eq!(
            parse_command(":!df -h", &a),
            Ok(ConsoleCommand::Shell("df -h".into()))
        );
        assert!(parse_command("!  ", &a).is_err());
        assert_eq!(
            parse_command("filter verb /post", &a),
            Ok(ConsoleCommand::FilterVerb("post".into()))
        );
        assert_eq!(parse_command("step 12", &a), Ok(ConsoleCommand::Step(12)));
        assert!(
            parse_command("filter outcome sucess", &a)
                .unwrap_err()
                .contains(":filter clear"),
            "an unknown outcome is refused, saying how to clear"
        );
        assert_eq!(parse_command("close", &a), Ok(ConsoleCommand::Close));
        assert!(parse_command("step x", &a).unwrap_err().contains("'x'"));
        assert!(
            parse_command("teleport", &a)
                .unwrap_err()
                .starts_with("unknown command 'teleport'")
        );
    }
}
