//! The legacy command form `[[NAME: args]]` of the prompt-types seed. Only
//! its six commands exist in this form — `[[SEARCH: q]]`, `[[REMIND: when |
//! what]]`, `[[COMPLETE: id | note]]`, `[[DISMISS: id]]`,
//! `[[LIST_INTENTIONS]]` and `[[PULSE:10m]]` — so no bracket form can
//! approve, deny, halt or escalate anything, and no alias works in
//! brackets. The scanner only looks for them in plain prose: never inside
//! quotes, parentheses, inline code, code fences or `> ` quote lines.

use super::action::{Part, PartKind};
use super::error::{ParseError, ParseErrorKind};
use super::lexer::lex_link;
use super::link::{LinkParser, ParsedAt, take_marker};
use super::span::Span;
use super::verbs::Verb;

/// The legacy commands and the verbs they stand for.
pub const LEGACY_COMMANDS: &[(&str, Verb)] = &[
    ("SEARCH", Verb::Search),
    ("REMIND", Verb::Remind),
    ("COMPLETE", Verb::Complete),
    ("DISMISS", Verb::Dismiss),
    ("LIST_INTENTIONS", Verb::Intentions),
    ("PULSE", Verb::Pulse),
];

/// Longest name a legacy command can have; longer runs of capitals are prose.
const MAX_NAME: usize = 32;

/// The legacy names closest to `name` (edit distance at most 2).
fn near_names(name: &str) -> Vec<String> {
    let mut near: Vec<(usize, &str)> = LEGACY_COMMANDS
        .iter()
        .map(|(n, _)| (strsim::levenshtein(name, n), *n))
        .filter(|(d, _)| *d <= 2)
        .collect();
    near.sort();
    near.into_iter().map(|(_, n)| format!("[[{n}]]")).collect()
}

/// Tries to parse a legacy command whose `[[` is at `open`; the line ends at
/// `limit`, and `close_before` is where the line's last `]]` starts (no
/// command can close after it). `None` means the brackets are ordinary
/// prose: a wiki link. Any other name with a colon is an error that lists
/// the six commands, and never an action.
pub(crate) fn parse_legacy(
    parser: &LinkParser<'_>,
    src: &str,
    open: usize,
    limit: usize,
    close_before: Option<usize>,
) -> Option<ParsedAt> {
    let name_start = open + 2;
    let name_end = name_end(src.as_bytes(), name_start, limit)?;
    let colon = src.as_bytes().get(name_end) == Some(&b':');
    if !colon && !src[name_end..limit].starts_with("]]") {
        return None;
    }
    let args_start = if colon { name_end + 1 } else { name_end };
    // The line's last `]]` bounds every search, so a line full of `[[X:`
    // without closers is read once, not once per opener.
    let close = match close_before {
        Some(last) if last >= args_start => src[args_start..last + 2]
            .find("]]")
            .map(|i| args_start + i)?,
        _ => return None,
    };
    let span = Span::new(open, close + 2);
    let name = &src[name_start..name_end];
    let verb_span = Span::new(name_start, name_end);
    let Some((_, verb)) = LEGACY_COMMANDS.iter().find(|(n, _)| *n == name) else {
        if !colon {
            return None;
        }
        let suggestions = near_names(name);
        return Some(ParsedAt {
            result: Err(vec![ParseError::new(
                ParseErrorKind::UnknownLegacyCommand {
                    name: name.to_string(),
                    suggestions,
                },
                span,
            )]),
            span,
        });
    };
    let entries = parser.table.entries_of(verb);
    if entries.is_empty() {
        return None;
    }
    let result = lex_link(src, args_start, close, close, parser.table).and_then(|lexed| {
        let mut tokens = lexed.tokens;
        let marker = take_marker(&mut tokens);
        let action =
            parser.interpret(src, &entries, verb.name(), verb_span, &tokens, false, span)?;
        Ok(as_legacy(action, marker, open, close))
    });
    Some(ParsedAt {
        result: result.map_err(|e| vec![ParseError::new(e.kind, span)]),
        span,
    })
}

/// Where a legacy command's name (capitals and `_`, starting with a
/// capital, at most `MAX_NAME` bytes) that starts at `start` ends; `None`
/// when there is no such name.
fn name_end(bytes: &[u8], start: usize, limit: usize) -> Option<usize> {
    let mut end = start;
    while end < limit
        && end - start <= MAX_NAME
        && (bytes[end].is_ascii_uppercase() || bytes[end] == b'_')
    {
        end += 1;
    }
    let named = end > start && end - start <= MAX_NAME && bytes[start].is_ascii_uppercase();
    named.then_some(end)
}

/// The action read from a legacy command between the brackets at `open`
/// and `close`: marked legacy, with its marker and both brackets as parts.
fn as_legacy(
    mut action: crate::ParsedAction,
    marker: Option<(crate::Marker, Option<String>, Span)>,
    open: usize,
    close: usize,
) -> crate::ParsedAction {
    action.legacy = true;
    if let Some((marker, note, marker_span)) = marker {
        action.marker = Some(marker);
        action.marker_note = note;
        action.parts.push(Part {
            kind: PartKind::Marker,
            span: marker_span,
        });
    }
    action.parts.push(Part {
        kind: PartKind::LegacyBracket,
        span: Span::new(open, open + 2),
    });
    action.parts.push(Part {
        kind: PartKind::LegacyBracket,
        span: Span::new(close, close + 2),
    });
    action.parts.sort_by_key(|p| p.span.start);
    action
}
