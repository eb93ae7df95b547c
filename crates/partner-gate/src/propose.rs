//! From a request in words to a proposed command, without a model when
//! the system says enough: `run gimp` → `gimp` when it is on `PATH`, →
//! `sudo apt install gimp` when it is available but missing; `start nginx`
//! → `sudo systemctl start nginx` for an inactive unit. Otherwise the
//! calling agent's model proposes, given the context in a short prompt
//! ([`model_prompt`]). A text that already is a command on this system is
//! taken as it is ("native until foreign").

use serde::Serialize;

use super::context::{Context, PackageState, Probe, gather};
use super::extract::extract_script;
use super::intent::{Intent, IntentKind, analyze};
use super::safety::{Assessment, assess};

/// What the gate proposes for a request.
#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    /// The request's intent.
    pub intent: Intent,
    /// What the system said about its target.
    pub context: Option<Context>,
    /// The command proposed, when one could be without a model.
    pub command: Option<String>,
    /// The command's safety.
    pub safety: Option<Assessment>,
    /// Why there is no command, or what to know about it.
    pub note: String,
}

/// Builtins and keywords that are commands without being on `PATH`.
const BUILTINS: &[&str] = &[
    "cd", "echo", "export", "source", ".", "type", "alias", "set", "unset", "ulimit", "umask",
    "history", "jobs", "for", "if", "while", "test", "[",
];

/// Proposes a command for `text`.
pub fn propose(text: &str, probe: &dyn Probe) -> Proposal {
    if let Some(written) = as_written(text, probe) {
        return written;
    }
    let mut intent = analyze(text);
    // A few words naming a thing ("picture editor"): the program for it.
    if intent.intent.is_none()
        && intent
            .target
            .as_deref()
            .is_some_and(|t| t.split_whitespace().count() <= 4)
        && !text.trim_end().ends_with('?')
    {
        intent.intent = Some(IntentKind::Run);
    }
    let Some(kind) = intent.intent else {
        return without(
            intent,
            None,
            "the request's intent is not clear; the model proposes",
        );
    };
    let Some(target) = intent.target.clone() else {
        if kind == IntentKind::Update {
            let command = if probe.executable("apt").is_some() || probe.executable("dnf").is_none()
            {
                "sudo apt update && sudo apt upgrade"
            } else {
                "sudo dnf upgrade"
            };
            return with(intent, None, command.into(), "updates every package");
        }
        return without(
            intent,
            None,
            "the request names nothing to act on; the model proposes",
        );
    };
    let ctx = gather(probe, &target);
    let installer = if probe.executable("dnf").is_some() && probe.executable("apt").is_none() {
        "dnf"
    } else {
        "apt"
    };
    match plan(kind, &intent.verb, &target, &ctx, installer) {
        Ok((command, note)) => with(intent, Some(ctx), command, &note),
        Err(note) => without(intent, Some(ctx), &note),
    }
}

/// The text as a command in its own right, when it is one: a known
/// program or builtin, or shell syntax, and not words asking for
/// something ("install gimp" asks for an install; `install -m 644 a b` is
/// one).
fn as_written(text: &str, probe: &dyn Probe) -> Option<Proposal> {
    let extracted = extract_script(text);
    let command = extracted.command.as_deref()?;
    let first = command.split_whitespace().next().unwrap_or("");
    let known = BUILTINS.contains(&first)
        || first == "sudo"
        || probe.executable(super::syntax::base_name(first)).is_some();
    let syntax = shell_syntax(command);
    let asks = reads_as_words(command) || (analyze(text).intent.is_some() && !syntax);
    (!asks && (known || syntax)).then(|| Proposal {
        intent: analyze(""),
        context: None,
        safety: Some(assess(command)),
        command: Some(command.to_string()),
        note: "the text is a command".into(),
    })
}

/// The command for an intent of `kind` on `target`, with what the system
/// said that makes it the one (or why there is none).
fn plan(
    kind: IntentKind,
    verb: &str,
    target: &str,
    ctx: &Context,
    installer: &str,
) -> Result<(String, String), String> {
    let installed = matches!(ctx.package, Some(PackageState::Installed(_)));
    let available = matches!(ctx.package, Some(PackageState::Available(_)));
    match kind {
        IntentKind::Run => match (
            &ctx.executable,
            available,
            ctx.similar
                .iter()
                .filter(|s| s.whole)
                .find_map(|s| s.command.clone()),
        ) {
            (Some(_), _, _) => Ok((target.to_string(), format!("{target} is installed"))),
            (None, true, _) => Ok((
                format!("sudo {installer} install {target}"),
                format!("{target} is available but not installed"),
            )),
            (None, false, Some(cmd)) => Ok((cmd.clone(), format!("{cmd} matches \"{target}\""))),
            _ => Err(format!("{target} was not found on this system")),
        },
        IntentKind::Install if installed || ctx.executable.is_some() => {
            Err(format!("{target} is already installed"))
        }
        IntentKind::Install if available => Ok((
            format!("sudo {installer} install {target}"),
            format!("{target} is available"),
        )),
        IntentKind::Install => Err(format!("no package named {target} was found")),
        IntentKind::Remove if installed => Ok((
            format!("sudo {installer} remove {target}"),
            format!("{target} is installed"),
        )),
        IntentKind::Remove => Err(format!("{target} is not an installed package")),
        IntentKind::ServiceStart | IntentKind::ServiceStop | IntentKind::ServiceConfig => {
            service_plan(kind, verb, target, ctx)
        }
        IntentKind::Update if installed => Ok((
            format!("sudo {installer} install --only-upgrade {target}"),
            format!("{target} is installed"),
        )),
        IntentKind::Update => Err(format!("{target} is not an installed package")),
        IntentKind::Check => match (&ctx.unit, installed) {
            (Some(_), _) => Ok((
                format!("systemctl status {target}"),
                "it is a service".into(),
            )),
            (None, true) => Ok((format!("dpkg -s {target}"), "it is a package".into())),
            _ => Err(format!("nothing named {target} was found to check")),
        },
    }
}

/// Starting, stopping or configuring a service: `systemctl` for a unit in
/// the state the request needs, `pkill` for a program that is no service.
fn service_plan(
    kind: IntentKind,
    verb: &str,
    target: &str,
    ctx: &Context,
) -> Result<(String, String), String> {
    match &ctx.unit {
        Some(u) => {
            let action = match (kind, verb) {
                (IntentKind::ServiceStart, "restart" | "reload") => verb.to_string(),
                (IntentKind::ServiceStart, _) => "start".into(),
                (IntentKind::ServiceStop, _) => "stop".into(),
                (_, v) => v.to_string(),
            };
            if action == "start" && u.active == "active" {
                Err(format!("{target} is already active"))
            } else if action == "stop" && u.active != "active" {
                Err(format!("{target} is not running ({})", u.active))
            } else {
                Ok((
                    format!("sudo systemctl {action} {target}"),
                    format!("{target} is a systemd service, currently {}", u.active),
                ))
            }
        }
        // "kill firefox": a program, not a service; its processes.
        None if kind == IntentKind::ServiceStop && ctx.executable.is_some() => Ok((
            format!("pkill -x {target}"),
            format!("{target} is a program, not a service: its processes are stopped"),
        )),
        None => Err(format!("{target} is not a service on this system")),
    }
}

/// True for a line written in the shell's own syntax: options, paths,
/// numbers, variables, globs, assignments or operators.
fn shell_syntax(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or("");
    first.contains('/')
        || line.contains(['|', ';', '>', '<', '&', '`'])
        || words.any(|w| {
            w.starts_with('-')
                || w.contains(['/', '=', '$', '*', '.', '~'])
                || w.chars().all(|c| c.is_ascii_digit())
        })
}

/// True for a line that begins with a program's name but speaks to
/// somebody ("make my wallpaper blue", "open the door for me"): no options,
/// no paths, and a pronoun or "please" among its words.
fn reads_as_words(line: &str) -> bool {
    const SPOKEN: &[&str] = &[
        "my", "me", "please", "your", "our", "i", "you", "us", "mine",
    ];
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() >= 2
        && words[1..]
            .iter()
            .all(|w| !w.starts_with('-') && !w.contains(['/', '=', '.', '$', '*']))
        && words.iter().any(|w| {
            SPOKEN.contains(
                &w.to_lowercase()
                    .trim_matches(|c: char| !c.is_alphanumeric()),
            )
        })
}

fn with(intent: Intent, context: Option<Context>, command: String, note: &str) -> Proposal {
    Proposal {
        intent,
        context,
        safety: Some(assess(&command)),
        command: Some(command),
        note: note.to_string(),
    }
}

fn without(intent: Intent, context: Option<Context>, note: &str) -> Proposal {
    Proposal {
        intent,
        context,
        command: None,
        safety: None,
        note: note.to_string(),
    }
}

/// The short prompt that asks a model for the command, with the context.
pub fn model_prompt(request: &str, context: Option<&Context>) -> String {
    let ctx = context
        .map(Context::for_model)
        .unwrap_or_else(|| "System Context:\n- nothing known".into());
    format!(
        "Propose one shell command for this machine.\n{ctx}\nRequest: {request}\nReply with the command alone as `/shell COMMAND`, or say why no safe command does it. The partner approves it before it runs."
    )
}
