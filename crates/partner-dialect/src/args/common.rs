//! Helpers shared by the per-verb argument parsers.

use super::super::action::{ParsedAction, Part, PartKind, RefKind, RefSlot, Reference};
use super::super::blocks::BlockRegistry;
use super::super::error::ParseErrorKind;
use super::super::lexer::{Token, TokenKind};
use super::super::span::Span;

/// Everything an argument parser needs about one chain link.
pub struct LinkInput<'a, 't> {
    /// The whole turn.
    pub src: &'a str,
    /// The link's argument tokens, marker removed.
    pub tokens: &'t [Token<'a>],
    /// The op implied by the alias the agent used (`forget` → delete).
    pub alias_op: Option<super::super::action::ActionOp>,
    /// True for the second and later links of a chain.
    pub in_chain: bool,
    /// Known block labels.
    pub blocks: &'t BlockRegistry,
}

/// Recognises a whole-argument reference.
pub fn reference(word: &str) -> Option<RefKind> {
    if let Some(rest) = word.strip_prefix('@') {
        return match rest.to_ascii_lowercase().as_str() {
            "last" => Some(RefKind::Last),
            "last.message" => Some(RefKind::LastMessage),
            "last.output" => Some(RefKind::LastOutput),
            "thread" => Some(RefKind::Thread),
            "parent" => Some(RefKind::Parent),
            _ => rest
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .filter(|uri| !uri.is_empty())
                .map(|uri| RefKind::Uri(uri.to_string())),
        };
    }
    match word {
        "that" | "this" | "it" | "That" | "This" | "It" => {
            Some(RefKind::Implicit(word.to_ascii_lowercase()))
        }
        _ => None,
    }
}

/// Adds a highlight part.
pub fn part(action: &mut ParsedAction, kind: PartKind, span: Span) {
    action.parts.push(Part { kind, span });
}

/// The span from the first to the last token.
pub fn span_of(tokens: &[Token<'_>]) -> Span {
    match (tokens.first(), tokens.last()) {
        (Some(a), Some(b)) => a.span.join(b.span),
        _ => Span::default(),
    }
}

/// Text of a run of tokens: a lone quoted token's value, otherwise the raw
/// bytes from the first token to the last (a trailing block quote is added
/// as its own lines).
pub fn text_of(src: &str, tokens: &[Token<'_>]) -> String {
    match tokens {
        [] => String::new(),
        [one] => one.value.to_string(),
        [init @ .., last] if last.kind == TokenKind::BlockQuote => {
            format!("{}\n{}", span_of(init).slice(src), last.value)
        }
        _ => span_of(tokens).slice(src).to_string(),
    }
}

/// Sets `content` (or a content reference) from `tokens`. Returns false
/// when there were no tokens.
pub fn set_content(action: &mut ParsedAction, src: &str, tokens: &[Token<'_>]) -> bool {
    if tokens.is_empty() {
        return false;
    }
    if let [one] = tokens
        && one.kind == TokenKind::Word
        && let Some(kind) = reference(&one.value)
    {
        action.refs.push(Reference {
            kind,
            slot: RefSlot::Content,
            span: one.span,
        });
        part(action, PartKind::Reference, one.span);
        return true;
    }
    let text = text_of(src, tokens);
    if text.trim().is_empty() {
        return false;
    }
    action.content = Some(text);
    part(action, PartKind::Content, span_of(tokens));
    true
}

/// True for a word that can name a block: letters, digits, `_`, `-`, `.`,
/// starting with a letter or digit.
pub fn is_label_word(token: &Token<'_>) -> bool {
    token.kind == TokenKind::Word
        && token
            .value
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric())
        && token
            .value
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A request or intention id: `r12`, `req-3`, `#4`, `[abc]`. Bare words
/// count only when they contain a digit, so `/deny too risky` is a reason.
pub fn request_id(token: &Token<'_>) -> Option<String> {
    if token.kind != TokenKind::Word {
        return None;
    }
    let word = token.value.as_ref();
    if let Some(inner) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
        let ok = !inner.is_empty() && !inner.contains(['[', ']']);
        return ok.then(|| inner.to_string());
    }
    let id_chars = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
    };
    if let Some(inner) = word.strip_prefix('#') {
        return id_chars(inner).then(|| inner.to_string());
    }
    (id_chars(word) && word.chars().any(|c| c.is_ascii_digit()) && !word.starts_with(['-', '.']))
        .then(|| word.to_string())
}

/// Any word as an id (`[…]` and `#` stripped), for verbs whose first
/// argument is always an id.
pub fn any_id(token: &Token<'_>) -> String {
    request_id(token).unwrap_or_else(|| token.value.to_string())
}

/// Strips a leading `@` from a target word.
pub fn strip_at(word: &str) -> String {
    let w = word.strip_prefix('@').unwrap_or(word);
    w.strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(w)
        .to_string()
}

/// A missing-argument error.
pub fn missing(verb: &str, what: &str, example: &str) -> ParseErrorKind {
    ParseErrorKind::MissingArgument {
        verb: verb.into(),
        what: what.into(),
        example: example.into(),
    }
}

/// An invalid-argument error.
pub fn invalid(verb: &str, message: impl Into<String>) -> ParseErrorKind {
    ParseErrorKind::InvalidArgument {
        verb: verb.into(),
        message: message.into(),
    }
}

/// True when a word looks like a web address.
pub fn looks_like_url(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("www.") {
        return true;
    }
    let host = lower.split('/').next().unwrap_or("");
    let labels: Vec<&str> = host.split('.').collect();
    labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && labels
            .last()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}
