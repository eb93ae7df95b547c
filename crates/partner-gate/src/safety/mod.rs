//! The safety layer: a command read by the shell reading
//! ([`super::syntax`]) and each command it would run classified `blocked`,
//! `high`, `medium` or `low`, with the reasons. The line's level is its
//! most dangerous command's; `sudo` raises a command's level by one (a
//! blocked one stays blocked).
//!
//! `low` is earned, not assumed: a command is low only when its program is
//! on the allow-list and used in a read-only way ([`allow`]), none of its
//! paths could reach a secret ([`reads`]) and nothing in it runs code
//! partner cannot read ([`code`]). A program partner does not know runs
//! code partner cannot read, so it is at least `high`; the text such code
//! is given is still searched for what would be blocked ([`scan`]).
//! Deletions and overwrites are judged after expansion against the real
//! file system ([`rules`], through [`super::expand`] and
//! [`super::protected`]).

mod allow;
mod code;
mod reads;
mod repo;
mod rules;
mod scan;
mod system;
mod tables;

pub use super::scene::Scene;
use super::syntax::{self, Invocation, Reading};

pub use partner_core::judged::{Assessment, Risk};

/// One finding about one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub risk: Risk,
    pub reason: String,
    /// The file it writes, when the finding is about one.
    pub writes: Option<std::path::PathBuf>,
}

pub(crate) fn finding(risk: Risk, reason: impl Into<String>) -> Finding {
    Finding {
        risk,
        reason: reason.into(),
        writes: None,
    }
}

/// The files `command` would write, as far as it can be read (for
/// saying which of them a sandbox stops).
pub fn written_in(command: &str, scene: &Scene) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for path in findings_in(command, scene, 0)
        .into_iter()
        .filter_map(|f| f.writes)
    {
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The reason every finding about code partner cannot read starts with.
pub(crate) const OPAQUE: &str = "runs code partner cannot read";

/// What the rules see besides the command they judge.
pub(crate) struct Cx<'a> {
    /// The whole reading (pipelines, substitutions).
    pub reading: &'a Reading,
    /// Where it would run.
    pub scene: &'a Scene,
    /// The command line as written.
    pub line: &'a str,
    /// How deep in scans of embedded text (bounded).
    pub depth: usize,
}

/// Classifies `command` as it would run here (this process's home and
/// working directory).
pub fn assess(command: &str) -> Assessment {
    assess_in(command, &Scene::current())
}

/// Classifies `command` as it would run in `scene`.
pub fn assess_in(command: &str, scene: &Scene) -> Assessment {
    combine(findings_in(command, scene, 0))
}

/// Every finding about a command line.
pub(crate) fn findings_in(command: &str, scene: &Scene, depth: usize) -> Vec<Finding> {
    let reading = syntax::read(command);
    let cx = Cx {
        reading: &reading,
        scene,
        line: command,
        depth,
    };
    let mut findings = Vec::new();
    for inv in &reading.invocations {
        findings.extend(judge(inv, &cx));
    }
    findings.extend(rules::line(&cx));
    if reading.floods {
        findings.push(finding(
            Risk::Blocked,
            "starts processes in the background without end (an endless loop with `&`)",
        ));
    }
    if let Some(why) = &reading.unreadable {
        findings.push(finding(
            Risk::High,
            format!("it could not be read as shell: {why}"),
        ));
        findings.extend(scan::blocked_in(&[command.to_string()], &cx));
        let squeezed: String = command.chars().filter(|c| !c.is_whitespace()).collect();
        if squeezed.contains("for((;;))") && command.contains('&') && !command.contains("&&") {
            findings.push(finding(
                Risk::Blocked,
                "starts processes in the background without end (an endless loop with `&`)",
            ));
        }
        if looks_like_fork_bomb(command) {
            findings.push(finding(
                Risk::Blocked,
                "a fork bomb: a function that starts itself over and over",
            ));
        }
    }
    if command.trim().is_empty() {
        findings.push(finding(Risk::High, "there is no command"));
    }
    findings
}

/// Every finding about one command, its elevation applied.
fn judge(inv: &Invocation, cx: &Cx) -> Vec<Finding> {
    let mut found = rules::findings(inv, cx);
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
