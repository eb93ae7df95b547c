//! The body of a `/batch {`: one action per line up to a line holding
//! only `}` (perhaps with a marker for the whole batch).

use super::action::{ParsedAction, PartKind};
use super::error::{ParseError, ParseErrorKind};
use super::lexer::{Token, TokenKind, line_end};
use super::link::{LinkParser, ParsedAt, mark_members, skip_blanks, take_marker};
use super::scan::action_start;
use super::span::Span;

impl LinkParser<'_> {
    /// Parses the lines of a `/batch {` body up to the closing `}`.
    pub(crate) fn parse_batch(&self, src: &str, mut head: ParsedAction) -> ParsedAt {
        let bytes = src.as_bytes();
        let start = head.span.start;
        let opener_ok = head.content.as_deref() == Some("{") && head.refs.is_empty();
        let open_line_end = line_end(src, head.span.end);
        if !opener_ok {
            let span = head.span;
            return ParsedAt {
                result: Err(vec![ParseError::new(
                    ParseErrorKind::MissingArgument {
                        verb: "batch".into(),
                        what: "a `{` at the end of its line, then one action per line and a closing `}`".into(),
                        example: "/batch {\n/recall project_notes\n/search conversations about project\n}".into(),
                    },
                    span,
                )]),
                span,
            };
        }
        head.content = None;
        for p in head.parts.iter_mut() {
            if p.kind == PartKind::Content {
                p.kind = PartKind::Brace;
            }
        }
        let mut errors = Vec::new();
        let mut line_start = open_line_end + 1;
        while line_start <= src.len() && open_line_end < src.len() {
            let le = line_end(src, line_start);
            let first = skip_blanks(bytes, line_start, le);
            let line = src[first..le].trim_end();
            if let Some(after) = line.strip_prefix('}') {
                return close_batch(head, start, first, after, errors);
            }
            if let Some((slash, limit)) = action_start(src, line_start, le, self.table) {
                let inner = self.parse_at(src, slash, limit, true);
                match inner.result {
                    Ok(action) => head.batch.push(action),
                    Err(errs) => errors.extend(errs),
                }
                let next = line_end(src, inner.span.end.max(line_start));
                if next >= src.len() {
                    break;
                }
                line_start = next + 1;
                continue;
            }
            if le >= src.len() {
                break;
            }
            line_start = le + 1;
        }
        let span = Span::new(start, src.len().max(start));
        errors.insert(
            0,
            ParseError::new(
                ParseErrorKind::Unclosed {
                    what: "/batch {".into(),
                    closer: "a line holding only }".into(),
                },
                head.span,
            ),
        );
        ParsedAt {
            result: Err(errors),
            span,
        }
    }
}

/// A batch whose closing `}` is at `first` (with `after` the rest of its
/// line: perhaps a marker for the whole batch): the batch, or every error
/// its members had, or the error of an empty one.
fn close_batch(
    mut head: ParsedAction,
    start: usize,
    first: usize,
    after: &str,
    errors: Vec<ParseError>,
) -> ParsedAt {
    head.parts.push(super::action::Part {
        kind: PartKind::Brace,
        span: Span::new(first, first + 1),
    });
    let mut end = first + 1;
    let after_trim = after.trim();
    if !after_trim.is_empty() {
        let word_start = first + 1 + (after.len() - after.trim_start().len());
        let mut toks = vec![Token {
            kind: TokenKind::Word,
            span: Span::new(word_start, word_start + after_trim.len()),
            value: std::borrow::Cow::Borrowed(after_trim),
        }];
        if let Some((marker, note, mspan)) = take_marker(&mut toks) {
            head.marker = Some(marker);
            head.marker_note = note;
            head.parts.push(super::action::Part {
                kind: PartKind::Marker,
                span: mspan,
            });
            end = mspan.end;
        }
    }
    head.span = Span::new(start, end);
    let span = head.span;
    if !errors.is_empty() {
        return ParsedAt {
            result: Err(errors),
            span,
        };
    }
    if head.batch.is_empty() {
        return ParsedAt {
            result: Err(vec![ParseError::new(
                ParseErrorKind::MissingArgument {
                    verb: "batch".into(),
                    what: "at least one action inside the braces".into(),
                    example: "/batch {\n/recall project_notes\n}".into(),
                },
                span,
            )]),
            span,
        };
    }
    mark_members(&mut head);
    ParsedAt {
        result: Ok(head),
        span,
    }
}
