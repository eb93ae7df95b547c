//! The safety layer: a command read by the shell reading
//! ([`super::syntax`]) and each command it would run classified `blocked`,
//! `high`, `medium` or `low`, with the reasons. The command line's level
//! is its most dangerous command's; `sudo` raises a command's level by one
//! (a blocked one stays blocked). What cannot be read is at least `high`,
//! and its words are still checked for what would be blocked.

mod rules;
mod system;
mod tables;

use serde::Serialize;

use super::syntax::{self, Invocation, Reading};

/// How dangerous a command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads, or changes little and only the partner's own files.
    Low,
    /// Changes files, packages, services or processes.
    Medium,
    /// Deletes or overwrites much, changes the system, or cannot be read.
    High,
    /// Never run: destroys the system or data, gives the machine away, or
    /// reads secrets.
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

/// One finding about one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub risk: Risk,
    pub reason: String,
}

pub(crate) fn finding(risk: Risk, reason: impl Into<String>) -> Finding {
    Finding {
        risk,
        reason: reason.into(),
    }
}

/// Classifies `command`.
pub fn assess(command: &str) -> Assessment {
    let reading = syntax::read(command);
    let mut findings = Vec::new();
    for inv in &reading.invocations {
        findings.extend(judge(inv, &reading));
    }
    if let Some(why) = &reading.unreadable {
        findings.push(finding(
            Risk::High,
            format!("it could not be read as shell: {why}"),
        ));
        findings.extend(fallback(command));
    }
    if command.trim().is_empty() {
        findings.push(finding(Risk::High, "there is no command"));
    }
    combine(findings)
}

/// Every finding about one command, its elevation applied.
fn judge(inv: &Invocation, reading: &Reading) -> Vec<Finding> {
    let mut found = rules::findings(inv, reading);
    if found.is_empty() {
        found.push(finding(Risk::Low, String::new()));
    }
    if inv.elevated {
        for f in &mut found {
            f.risk = f.risk.raised();
        }
        found.push(finding(
            Risk::Medium,
            format!("`{}` runs as root (sudo)", inv.name()),
        ));
    }
    found
}

/// The words of a command that could not be read, split at the shell's
/// operators and checked as plain commands (so that what would be
/// blocked is still blocked).
fn fallback(command: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let cleaned: String = command
        .chars()
        .map(|c| {
            if matches!(
                c,
                ';' | '|' | '&' | '(' | ')' | '{' | '}' | '`' | '\n' | '<' | '>'
            ) {
                '\n'
            } else {
                c
            }
        })
        .collect();
    for segment in cleaned.lines().take(syntax::MAX_INVOCATIONS) {
        let words = shlex::split(segment)
            .unwrap_or_else(|| segment.split_whitespace().map(str::to_string).collect());
        let mut words: Vec<&str> = words.iter().map(String::as_str).collect();
        // Quote-less reading of what brush could not: the same rules.
        while words.first().is_some_and(|w| {
            matches!(
                *w,
                "sudo"
                    | "doas"
                    | "env"
                    | "nohup"
                    | "exec"
                    | "command"
                    | "if"
                    | "then"
                    | "else"
                    | "elif"
                    | "do"
                    | "while"
                    | "until"
                    | "!"
                    | "time"
                    | "fi"
                    | "done"
            )
        }) {
            words.remove(0);
        }
        if words.is_empty() {
            continue;
        }
        let text = shlex::try_join(words.iter().copied()).unwrap_or_default();
        let reading = syntax::read(&text);
        if reading.unreadable.is_none() {
            for inv in &reading.invocations {
                out.extend(
                    rules::findings(inv, &reading)
                        .into_iter()
                        .filter(|f| f.risk == Risk::Blocked),
                );
            }
        }
    }
    if looks_like_fork_bomb(command) {
        out.push(finding(
            Risk::Blocked,
            "a fork bomb: a function that starts itself over and over",
        ));
    }
    out
}

/// `:(){ :|:& };:` and its renamings, read from the text.
fn looks_like_fork_bomb(command: &str) -> bool {
    let squeezed: String = command.chars().filter(|c| !c.is_whitespace()).collect();
    command.match_indices("()").any(|(at, _)| {
        let name = command[..at]
            .rsplit(|c: char| c.is_whitespace() || ";&|(){}".contains(c))
            .next()
            .unwrap_or("");
        !name.is_empty() && squeezed.contains(&format!("{name}|{name}"))
    })
}

/// The level of the worst finding, and every reason once, worst first.
fn combine(mut findings: Vec<Finding>) -> Assessment {
    findings.sort_by_key(|f| std::cmp::Reverse(f.risk));
    let risk = findings.first().map_or(Risk::Low, |f| f.risk);
    let mut reasons: Vec<String> = Vec::new();
    for f in findings {
        if !f.reason.is_empty() && !reasons.contains(&f.reason) && reasons.len() < 16 {
            reasons.push(f.reason);
        }
    }
    Assessment { risk, reasons }
}
