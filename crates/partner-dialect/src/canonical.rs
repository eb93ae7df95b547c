//! The canonical form: one dialect line per action that parses back to the
//! same action. Content is always quoted (with `\n`, `\t`, `\"` and `\\`
//! escapes); labels and ids are bare words where that is unambiguous.

use super::action::ParsedAction;
use super::args::reference;

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
pub fn bare_ok(word: &str) -> bool {
    !word.is_empty()
        && !word.chars().any(|c| {
            c.is_whitespace() || matches!(c, '"' | '\u{201C}' | '\u{201D}' | '|' | '`' | '~')
        })
        && !word.starts_with(['@', '+', '-', '>', '<', '?', '!', '.', '[', '#', '{', '}'])
        && reference(word).is_none()
}

/// A label or source id: bare when safe, quoted otherwise.
pub fn label(word: &str) -> String {
    if bare_ok(word) {
        word.to_string()
    } else {
        quote(word)
    }
}

/// A person, agent or domain after `@`.
pub fn at(word: &str) -> String {
    if bare_ok(word) {
        format!("@{word}")
    } else {
        format!("@[{word}]")
    }
}

/// A request or intention id.
pub fn id(word: &str) -> String {
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
pub fn request(word: &str) -> String {
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
pub fn content(action: &ParsedAction) -> Option<String> {
    if let Some(r) = action.content_ref() {
        return Some(r.kind.canonical());
    }
    action.content.as_deref().map(quote)
}

/// Writes one piece of a link after a space.
pub fn push(out: &mut String, piece: impl AsRef<str>) {
    out.push(' ');
    out.push_str(piece.as_ref());
}

/// Writes the content slot (a reference or quoted text), if filled.
pub fn push_content(out: &mut String, action: &ParsedAction) {
    if let Some(c) = content(action) {
        push(out, c);
    }
}

/// Writes the target, if any, as `how` writes it.
pub fn push_target(out: &mut String, action: &ParsedAction, how: fn(&str) -> String) {
    if let Some(t) = &action.target {
        push(out, how(t));
    }
}

/// One link, without its chain.
fn link(action: &ParsedAction) -> String {
    let mut out = format!("/{}", action.verb.name());
    action.shape.write(action, &mut out);
    if let Some(marker) = action.marker {
        match &action.marker_note {
            Some(note) => push(&mut out, format!("?{note}")),
            None => push(&mut out, marker.sigil()),
        }
    }
    out
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
