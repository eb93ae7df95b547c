//! How the queue shows a command waiting for the partner (a request whose
//! handler says it runs one, as `/shell` does): the
//! command highlighted, its risk and the reasons, what it was proposed
//! for and what the system said; and which decisions it cannot take (a
//! blocked command is never approved; a shell command is approved one at
//! a time; where the kernel cannot sandbox it, approving asks once more).
//! The executor refuses the same; the console says so before sending
//! anything. The judgement is the backend's, made where the command
//! would run ([`CommandPreview`]).

use ratatui::text::{Line, Span};

use crate::backend::CommandPreview;
use crate::theme::Theme;
use partner_protocol::wire::{Decision, PendingRequest, Risk};

/// How a command that cannot be fully sandboxed is described: the
/// backend's words as they are when they name what is missing (`PARTLY
/// SANDBOXED (no namespaces (…)): …`, `NOT SANDBOXED: …`), else as not
/// sandboxed, for why.
fn missing_walls(why: &str) -> String {
    const HEADS: [&str; 3] = ["NOT SANDBOXED", "PARTLY SANDBOXED", "NOT RUNNABLE HERE"];
    if HEADS.iter().any(|h| why.starts_with(h)) {
        why.to_string()
    } else {
        format!("NOT SANDBOXED ({why})")
    }
}

/// The question asked once more before a shell request is approved
/// where one of the sandbox's walls is missing: which, and what that lets
/// it do.
pub(super) fn unsandboxed_question(
    r: &PendingRequest,
    command: Option<&CommandPreview>,
    decision: &Decision,
) -> Option<String> {
    let command = command?;
    if *decision != Decision::ApproveOnce {
        return None;
    }
    command.sandbox.as_ref().err().map(|why| {
        let shown = missing_walls(why);
        let risk = if shown.starts_with("PARTLY") {
            "the walls that stand still hold, the missing ones do not"
        } else {
            "it could write anywhere you can and reach the network"
        };
        format!("{} would run {shown}: {risk}. Approve it anyway?", r.id)
    })
}

/// Why the console will not send `decision` for `r`, when it will not.
pub(super) fn refusal(
    r: &PendingRequest,
    command: Option<&CommandPreview>,
    decision: &Decision,
) -> Option<String> {
    let command = command?;
    let approving = matches!(
        decision,
        Decision::ApproveOnce | Decision::ApproveAlways | Decision::ApproveFor(_)
    );
    if approving && command.assessment.blocked() {
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
    command: Option<&CommandPreview>,
) -> Vec<Line<'static>> {
    let Some(preview) = command else {
        return Vec::new();
    };
    let (command, a) = (preview.line.as_str(), &preview.assessment);
    let label = |text: &str| Span::styled(format!("{text:<9}"), theme.style("ui.dim"));
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
        let (text, style) = match &preview.sandbox {
            Ok(plan) => (plan.clone(), "ui.ok"),
            Err(why) => (missing_walls(why), "ui.error"),
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
