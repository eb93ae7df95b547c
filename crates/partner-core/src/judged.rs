//! A shell command as judged before it runs — its risk and why, and the
//! partner's own command's plan — as values: the gate (`partner-gate`)
//! makes them, and the protocol carries them to whoever shows them.

use serde::Serialize;

/// How dangerous a command is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Only reads, with programs and options known to be read-only, and
    /// reaches no secret.
    Low,
    /// Changes files, packages, services or processes in known ways.
    Medium,
    /// Deletes or overwrites much, changes the system, or runs code
    /// partner cannot read.
    High,
    /// Never run: destroys the system or data, cuts the machine off,
    /// gives it away, or reads or sends secrets.
    Blocked,
}

impl Risk {
    /// Its name, as `partner gate check` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
            Risk::Blocked => "blocked",
        }
    }

    /// One level up (`sudo`); `blocked` stays.
    pub fn raised(self) -> Risk {
        match self {
            Risk::Low => Risk::Medium,
            Risk::Medium | Risk::High => Risk::High,
            Risk::Blocked => Risk::Blocked,
        }
    }
}

crate::wire_name_eq!(Risk, as_str);

/// A command's level and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Assessment {
    /// The level.
    pub risk: Risk,
    /// Why, most serious first, each once.
    pub reasons: Vec<String>,
}

impl Assessment {
    /// True when the command may never run.
    pub fn blocked(&self) -> bool {
        self.risk == Risk::Blocked
    }
}

/// A command the partner asked for, judged before it runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandPlan {
    /// What the partner typed.
    pub asked: String,
    /// The command that would run, or why none could be proposed.
    pub command: Result<String, String>,
    /// How a request in words became the command (what the system said).
    pub proposal: Option<String>,
    /// Its risk and why (none without a command).
    pub assessment: Option<Assessment>,
    /// How it would run: `sandbox: …` or `NOT SANDBOXED: …`.
    pub sandbox: String,
}

impl CommandPlan {
    /// A request for which no command could be proposed: why.
    pub fn unproposed(asked: &str, why: impl Into<String>) -> Self {
        CommandPlan {
            asked: asked.to_string(),
            command: Err(why.into()),
            proposal: None,
            assessment: None,
            sandbox: String::new(),
        }
    }

    /// The command, when it may run once the partner confirms; otherwise
    /// why it will not (blocked, or there is no command).
    pub fn runnable(&self) -> Result<&str, String> {
        let command = self
            .command
            .as_deref()
            .map_err(|why| format!("nothing to run for \"{}\": {why}", self.asked))?;
        match &self.assessment {
            Some(a) if a.risk == Risk::Blocked => Err(format!(
                "blocked, not run: `{command}`: {}",
                a.reasons.join("; ")
            )),
            _ => Ok(command),
        }
    }

    /// The question the partner answers before it runs: the command, its
    /// risk and reasons, and how it would run.
    pub fn question(&self) -> String {
        let command = self.command.as_deref().unwrap_or(&self.asked);
        let mut text = format!("Run `{command}` as you?");
        if let Some(p) = &self.proposal {
            text.push_str(&format!(" ({p})"));
        }
        if let Some(a) = &self.assessment {
            text.push_str(&format!(" risk {}", a.risk.as_str().to_uppercase()));
            if !a.reasons.is_empty() {
                text.push_str(": ");
                text.push_str(&a.reasons.join("; "));
            }
            text.push('.');
        }
        if !self.sandbox.is_empty() {
            text.push(' ');
            text.push_str(&self.sandbox);
        }
        text
    }
}
