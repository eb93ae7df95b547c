//! How the queue shows a command waiting for the partner (a request whose
//! handler says it runs one, as `/shell` does): the
//! command highlighted, its risk and the reasons, what it was proposed
//! for and what the system said; and which decisions it cannot take (a
//! blocked command is never approved; a shell command is approved one at
//! a time; where the kernel cannot sandbox it, approving asks once more).
//! The executor refuses the same; the console says so before sending
//! anything.

use ratatui::text::{Line, Span};

use crate::theme::Theme;
use partner_gate::sandbox::{self, Support};
use partner_gate::{Assessment, Risk, Scene, assess_in};
use partner_policy::{Decision, PendingRequest};

/// Where the request would run: the working directory its handler
/// recorded, with this process's home.
fn scene(r: &PendingRequest) -> Scene {
    let scene = Scene::current();
    match r.action.workdir.as_deref() {
        Some(dir) => scene.in_dir(std::path::Path::new(dir)),
        None => scene,
    }
}

fn judged(r: &PendingRequest, command: &str) -> Assessment {
    assess_in(command, &scene(r))
}

/// How the request would run, as the process that runs it said when it
/// asked (`sandbox: …` or `NOT SANDBOXED: …` in its reason); this
/// console's own kernel and environment only for a reason without it.
fn sandbox_of(r: &PendingRequest, command: &str) -> Result<String, String> {
    // The handler writes it last, before any ` | ` proposal.
    let head = r.reason.split(" | ").next().unwrap_or("");
    let said = |marker: &str| {
        head.rfind(marker)
            .map(|at| head[at + marker.len()..].trim().to_string())
    };
    if let Some(why) = said("NOT SANDBOXED: ") {
        return Err(why);
    }
    if let Some(plan) = said("sandbox: ") {
        return Ok(plan);
    }
    match sandbox::support() {
        Support::Landlock(_) => {
            Ok(sandbox::Plan::for_command(command, &scene(r)).summary(&scene(r)))
        }
        Support::Missing(why) => Err(why),
    }
}

/// The question asked once more before a shell request is approved
/// where it cannot be sandboxed.
pub(super) fn unsandboxed_question(
    r: &PendingRequest,
    command: Option<&str>,
    decision: &Decision,
) -> Option<String> {
    let command = command?;
    if *decision != Decision::ApproveOnce {
        return None;
    }
    sandbox_of(r, command).err().map(|why| {
        format!(
            "{} would run NOT SANDBOXED ({why}): it could write anywhere you can and reach the network. Approve it anyway?",
            r.id
        )
    })
}

/// Why the console will not send `decision` for `r`, when it will not.
pub(super) fn refusal(
    r: &PendingRequest,
    command: Option<&str>,
    decision: &Decision,
) -> Option<String> {
    let command = command?;
    let approving = matches!(
        decision,
        Decision::ApproveOnce | Decision::ApproveAlways | Decision::ApproveFor(_)
    );
    if approving && judged(r, command).blocked() {
        return Some(format!(
            "{} is blocked and cannot be approved: d denies it, E edits it (nothing was decided)",
            r.id
        ));
    }
    if approving && *decision != Decision::ApproveOnce {
        return Some(format!(
            "shell commands are approved one at a time: a approves {} once (nothing was decided)",
            r.id
        ));
    }
    None
}

/// The lines describing a shell request (none for other requests).
pub(super) fn detail(
    theme: &Theme,
    r: &PendingRequest,
    command: Option<&str>,
) -> Vec<Line<'static>> {
    let Some(command) = command else {
        return Vec::new();
    };
    let label = |text: &str| Span::styled(format!("{text:<9}"), theme.style("ui.dim"));
    let a = judged(r, command);
    let risk_style = theme.style(match a.risk {
        Risk::Low => "ui.ok",
        Risk::Medium => "ui.waiting",
        Risk::High | Risk::Blocked => "ui.error",
    });
    let mut lines = Vec::new();
    for (i, line) in command.lines().enumerate() {
        let mut spans = vec![label(if i == 0 { "command" } else { "" })];
        spans.extend(highlight(theme, line));
        lines.push(Line::from(spans));
    }
    let verdict = match a.risk {
        Risk::Blocked => "BLOCKED: it cannot be approved (d denies, E edits)".to_string(),
        other => other.as_str().to_uppercase(),
    };
    lines.push(Line::from(vec![
        label("risk"),
        Span::styled(verdict, risk_style),
    ]));
    for reason in &a.reasons {
        lines.push(Line::from(vec![
            label(""),
            Span::styled(format!("· {reason}"), theme.style("ui.text")),
        ]));
    }
    if a.risk != Risk::Blocked {
        let (text, style) = match sandbox_of(r, command) {
            Ok(plan) => (plan, "ui.ok"),
            Err(why) => (format!("NOT SANDBOXED: {why}"), "ui.error"),
        };
        lines.push(Line::from(vec![
            label("sandbox"),
            Span::styled(text, theme.style(style)),
        ]));
    }
    if let Some(p) = r.action.proposal.as_deref() {
        let mut parts = p.split("; ");
        if let Some(first) = parts.next() {
            lines.push(Line::from(vec![
                label("context"),
                Span::styled(first.to_string(), theme.style("ui.text")),
            ]));
        }
        for part in parts {
            lines.push(Line::from(vec![
                label(""),
                Span::styled(format!("- {part}"), theme.style("ui.text")),
            ]));
        }
    }
    lines
}

/// A command line with programs, options, operators and quoted text in
/// their own styles.
fn highlight(theme: &Theme, line: &str) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut command_next = true;
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            out.push(Span::raw(" "));
        }
        let role = if matches!(
            word,
            "|" | "||" | "&&" | ";" | "&" | ">" | ">>" | "<" | "2>&1"
        ) {
            command_next = !word.starts_with(['>', '<', '2']);
            "dialect.chain"
        } else if word.starts_with(['"', '\'']) {
            "dialect.content"
        } else if word.starts_with('-') {
            "dialect.marker"
        } else if command_next && !word.is_empty() {
            command_next = matches!(word, "sudo" | "env" | "nice" | "nohup" | "time" | "xargs");
            "dialect.verb"
        } else {
            "dialect.argument"
        };
        out.push(Span::styled(word.to_string(), theme.style(role)));
    }
    out
}
