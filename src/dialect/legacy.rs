//! The legacy command form `[[NAME: args]]` (`[[SEARCH: q]]`,
//! `[[REMIND: when | what]]`, `[[PULSE:10m]]`, `[[LIST_INTENTIONS]]`…),
//! mapped onto dialect verbs. Any verb or alias in capitals works.

use super::action::{Part, PartKind};
use super::error::{ParseError, ParseErrorKind};
use super::lexer::lex_link;
use super::link::{LinkParser, ParsedAt};
use super::span::Span;
use super::verbs::normalize_phrase;

/// Tries to parse a legacy command whose `[[` is at `open`; the line ends at
/// `limit`. `None` means the brackets are ordinary prose (a wiki link).
pub(crate) fn parse_legacy(
    parser: &LinkParser<'_>,
    src: &str,
    open: usize,
    limit: usize,
) -> Option<ParsedAt> {
    let bytes = src.as_bytes();
    let name_start = open + 2;
    let mut name_end = name_start;
    while name_end < limit && (bytes[name_end].is_ascii_uppercase() || bytes[name_end] == b'_') {
        name_end += 1;
    }
    if name_end == name_start || !bytes[name_start].is_ascii_uppercase() {
        return None;
    }
    let colon = bytes.get(name_end) == Some(&b':');
    if !colon && !src[name_end..limit].starts_with("]]") {
        return None;
    }
    let args_start = if colon { name_end + 1 } else { name_end };
    let close = src[args_start..limit].find("]]").map(|i| args_start + i)?;
    let span = Span::new(open, close + 2);
    let name = &src[name_start..name_end];
    let verb_span = Span::new(name_start, name_end);
    let Some(entries) = parser.table.lookup(&normalize_phrase(name)) else {
        if !colon {
            return None;
        }
        let suggestions =
            match super::matcher::match_verb(parser.table, &name.to_ascii_lowercase(), &[]) {
                Ok(m) => vec![parser.table.spec(m.entries[0].spec).verb.name().to_string()],
                Err(ParseErrorKind::UnknownVerb { suggestions, .. }) => suggestions,
                Err(_) => Vec::new(),
            };
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
    let result = lex_link(src, args_start, close, close).and_then(|lexed| {
        let mut action = parser.interpret(
            src,
            entries,
            &name.to_ascii_lowercase(),
            verb_span,
            &lexed.tokens,
            false,
            span,
        )?;
        action.legacy = true;
        action.parts.push(Part {
            kind: PartKind::LegacyBracket,
            span: Span::new(open, open + 2),
        });
        action.parts.push(Part {
            kind: PartKind::LegacyBracket,
            span: Span::new(close, close + 2),
        });
        action.parts.sort_by_key(|p| p.span.start);
        Ok(action)
    });
    Some(ParsedAt {
        result: result.map_err(|e| vec![ParseError::new(e.kind, span)]),
        span,
    })
}
