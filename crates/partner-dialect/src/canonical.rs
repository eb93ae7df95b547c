//! The canonical form: one dialect line per action that parses back to the
//! same action. Content is always quoted (with `\n`, `\t`, `\"` and `\\`
//! escapes); labels and ids are bare words where that is unambiguous.

use super::action::{Op, ParsedAction};
use super::args::{looks_like_url, reference};
use super::verbs::Signature;

/// Quotes text as a `"…"` string with escapes, so it stays on one line.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// True when `word` can be written bare and still read back as one word.
fn bare_ok(word: &str) -> bool {
    !word.is_empty()
        && !word.chars().any(|c| {
            c.is_whitespace() || matches!(c, '"' | '\u{201C}' | '\u{201D}' | '|' | '`' | '~')
        })
        && !word.starts_with(['@', '+', '-', '>', '<', '?', '!', '.', '[', '#', '{', '}'])
        && reference(word).is_none()
}

/// A label or source id: bare when safe, quoted otherwise.
fn label(word: &str) -> String {
    if bare_ok(word) {
        word.to_string()
    } else {
        quote(word)
    }
}

/// A person, agent or domain after `@`.
fn at(word: &str) -> String {
    if bare_ok(word) {
        format!("@{word}")
    } else {
        format!("@[{word}]")
    }
}

/// A request or intention id.
fn id(word: &str) -> String {
    let digit = word.chars().any(|c| c.is_ascii_digit());
    let id_chars = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    if digit && id_chars && bare_ok(word) {
        word.to_string()
    } else if !word.is_empty()
        && !word.contains(|c: char| c.is_whitespace() || c == '[' || c == ']')
    {
        format!("[{word}]")
    } else {
        quote(word)
    }
}

/// A request id: `r12` bare, anything else in brackets (so it reads back
/// as the same id and never as a guess).
fn request(word: &str) -> String {
    let plain = word
        .strip_prefix('r')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    if plain {
        word.to_string()
    } else if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
    {
        format!("[{word}]")
    } else {
        quote(word)
    }
}

/// The content slot: a reference, quoted text, or nothing.
fn content(action: &ParsedAction) -> Option<String> {
    if let Some(r) = action.content_ref() {
        return Some(r.kind.canonical());
    }
    action.content.as_deref().map(quote)
}

fn push(out: &mut String, piece: impl AsRef<str>) {
    out.push(' ');
    out.push_str(piece.as_ref());
}

fn push_content(out: &mut String, action: &ParsedAction) {
    if let Some(c) = content(action) {
        push(out, c);
    }
}

fn push_target(out: &mut String, action: &ParsedAction, f: fn(&str) -> String) {
    if let Some(t) = &action.target {
        push(out, f(t));
    }
}

/// One link, without its chain.
fn link(action: &ParsedAction) -> String {
    let mut out = format!("/{}", action.verb.name());
    push_arguments(&mut out, action);
    if let Some(marker) = action.marker {
        match &action.marker_note {
            Some(note) => push(&mut out, format!("?{note}")),
            None => push(&mut out, marker.sigil()),
        }
    }
    out
}

/// The action's arguments, laid out as its verb's signature writes them.
fn push_arguments(o: &mut String, action: &ParsedAction) {
    match action.verb.signature() {
        Signature::Recall => match action.op {
            Some(Op::Search) | None => push_content(o, action),
            Some(op) => {
                push(o, op.as_str());
                push_target(o, action, label);
                push_content(o, action);
            }
        },
        Signature::Context => context_arguments(o, action),
        Signature::Search => search_arguments(o, action),
        Signature::Send => {
            if let Some(domain) = &action.domain {
                push(o, at(domain));
            }
            push_target(o, action, at);
            push_content(o, action);
        }
        Signature::Reply => {
            if let Some(r) = action.target_ref() {
                push(o, r.kind.canonical());
            }
            push_content(o, action);
        }
        Signature::Post => {
            push_target(o, action, label);
            push_content(o, action);
        }
        Signature::Dm | Signature::Tell => {
            push_target(o, action, at);
            push_content(o, action);
        }
        Signature::Fetch => fetch_arguments(o, action),
        Signature::Data => {
            push(o, action.op.unwrap_or(Op::List).as_str());
            push_target(o, action, label);
            push_content(o, action);
        }
        Signature::Decision | Signature::IdAndReason => {
            push_target(o, action, request);
            push_content(o, action);
            if action.verb.signature() == Signature::Decision && action.op == Some(Op::Always) {
                push(o, "always");
            }
        }
        Signature::Complete | Signature::Dismiss => {
            push_target(o, action, id);
            push_content(o, action);
        }
        Signature::Remind => remind_arguments(o, action),
        Signature::Pulse => {
            if let Some(c) = &action.content {
                push(o, c);
            }
        }
        Signature::Shell => shell_arguments(o, action),
        Signature::Batch => {
            o.push_str(" {");
            for inner in &action.batch {
                o.push('\n');
                o.push_str(&canonical(inner));
            }
            o.push_str("\n}");
        }
        Signature::Web | Signature::Calc | Signature::Uncertain | Signature::Text => {
            push_content(o, action)
        }
    }
}

/// `/context [op] label [archival label] ["old" ->] "text"`.
fn context_arguments(o: &mut String, action: &ParsedAction) {
    if let Some(op) = action.op {
        push(o, op.as_str());
    }
    push_target(o, action, label);
    if let Some(other) = &action.other {
        push(o, label(other));
    }
    if let Some(old) = &action.old {
        push(o, quote(old));
        push(o, "->");
    }
    push_content(o, action);
}

/// `/search [in DOMAIN] query [> time] [role:NAME]`.
fn search_arguments(o: &mut String, action: &ParsedAction) {
    if let Some(domain) = &action.domain {
        push(o, format!("in {domain}"));
    }
    push_content(o, action);
    if let Some(time) = &action.time {
        push(o, time.canonical());
    }
    if let Some(role) = &action.role {
        push(o, format!("role:{role}"));
    }
}

/// `/fetch URL [html|continue]`, or `/fetch continue`; a URL that would
/// not read back bare is bracketed.
fn fetch_arguments(o: &mut String, action: &ParsedAction) {
    match action.op {
        Some(Op::Continue) if action.target.is_none() => push(o, "continue"),
        op => {
            if let Some(url) = &action.target {
                if looks_like_url(url) && bare_ok(url) {
                    push(o, url);
                } else {
                    push(o, format!("@[{url}]"));
                }
            }
            match op {
                Some(Op::Html) => push(o, "html"),
                Some(Op::Continue) => push(o, "continue"),
                _ => {}
            }
        }
    }
}

/// `/remind "when" ["text" | | reference]`.
fn remind_arguments(o: &mut String, action: &ParsedAction) {
    if let Some(when) = &action.when {
        push(o, quote(when));
    }
    if action.content_ref().is_some() {
        push(o, "|");
    }
    push_content(o, action);
}

/// `/shell COMMAND`; a command of several lines in a fence, which keeps
/// every line of it in the action.
fn shell_arguments(o: &mut String, action: &ParsedAction) {
    if let Some(c) = &action.content {
        if c.contains('\n') {
            o.push_str(&format!(" ```\n{c}\n```"));
        } else {
            push(o, c);
        }
    }
}

/// The canonical dialect text of an action, its chain included.
pub fn canonical(action: &ParsedAction) -> String {
    let mut out = link(action);
    for next in &action.chain {
        out.push_str(" -> ");
        out.push_str(&link(next));
    }
    out
}
