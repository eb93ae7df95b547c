//! Parses one action starting at its `/`: the verb, each chain link's
//! arguments and marker, and a `/batch { … }` body.

use super::action::{ParsedAction, PartKind};
use super::args::LinkInput;
use super::blocks::BlockRegistry;
use super::error::{ParseError, ParseErrorKind};
use super::lexer::{Token, lex_link, line_end};
pub(crate) use super::markers::{mark_members, take_marker};
use super::matcher::match_verb;
use super::scan::{verb_end, verb_word_end};
use super::span::Span;
use super::verbs::{PhraseEntry, Strictness, VerbTable};

/// The outcome of parsing the action at one slash.
pub(crate) struct ParsedAt {
    /// The action, or the errors that stopped it.
    pub result: Result<ParsedAction, Vec<ParseError>>,
    /// Every byte the action (or failed action) covers.
    pub span: Span,
}

/// End of the line holding the `}` that closes a batch opened on the line
/// containing `from` (or the end of the turn when none does).
fn batch_body_end(src: &str, from: usize) -> usize {
    let mut line_start = line_end(src, from) + 1;
    while line_start < src.len() {
        let le = line_end(src, line_start);
        if src[line_start..le].trim_start().starts_with('}') {
            return le;
        }
        line_start = le + 1;
    }
    src.len()
}

/// A character glued to the end of a verb word that makes it no verb:
/// anything that is neither ASCII nor whitespace (zero-width and other
/// invisible characters, combining marks, letters of other scripts).
fn glued_char(src: &str, word_end: usize) -> Option<char> {
    src[word_end..]
        .chars()
        .next()
        .filter(|c| !c.is_ascii() && !c.is_whitespace())
}

/// Describes a glued character for the error message.
fn describe_char(c: char) -> String {
    let code = c as u32;
    let invisible = matches!(code,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0xE0000..=0xE0FFF);
    let combining = matches!(code,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A
        | 0x064B..=0x065F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF
        | 0xFE20..=0xFE2F);
    if invisible {
        format!("an invisible character (U+{code:04X})")
    } else if combining {
        format!("a combining mark (U+{code:04X})")
    } else {
        format!("the character '{c}' (U+{code:04X})")
    }
}

/// Parses actions for one turn with a verb table and known blocks.
pub(crate) struct LinkParser<'p> {
    pub table: &'p VerbTable,
    pub blocks: &'p BlockRegistry,
}

/// Chooses between the verbs an alias shared by several verbs can mean:
/// the first whose shape claims the argument (`remember` a working block
/// is `/context`, `get` a URL is `/fetch`), else the first.
fn choose_entry<'e>(
    table: &VerbTable,
    entries: &'e [PhraseEntry],
    input: &LinkInput<'_, '_>,
) -> &'e PhraseEntry {
    if entries.len() > 1
        && let Some(claimed) = entries
            .iter()
            .find(|e| table.spec(e.spec).shape.claims(input))
    {
        return claimed;
    }
    &entries[0]
}

/// The line after the one ending at `limit`, when it opens a code fence:
/// its start (after blanks) and end.
fn fence_on_next_line(src: &str, limit: usize) -> Option<(usize, usize)> {
    let rest = src.get(limit..)?;
    let start = limit + rest.find('\n')? + 1;
    let end = line_end(src, start);
    let at = skip_blanks(src.as_bytes(), start, end);
    let line = src.get(at..end)?;
    (line.starts_with("```") || line.starts_with("~~~")).then_some((at, end))
}

pub(crate) fn skip_blanks(bytes: &[u8], mut pos: usize, limit: usize) -> usize {
    while pos < limit && matches!(bytes[pos], b' ' | b'\t') {
        pos += 1;
    }
    pos
}

/// One link before its arguments are interpreted.
struct RawLink<'a> {
    start: usize,
    do_prefix: Option<Span>,
    verb_span: Span,
    written: &'a str,
    verb: Result<super::matcher::VerbMatch, ParseErrorKind>,
    tokens: Vec<Token<'a>>,
    end: usize,
}

/// Most links one chain may have: a longer one is a single error (no
/// agent needs more, and each link is an action someone may have to judge).
pub const MAX_CHAIN_LINKS: usize = 32;

impl<'p> LinkParser<'p> {
    /// Parses the action whose `/` is at `slash`; the line it is on ends at
    /// `line_limit` (before any markdown wrapper closer).
    pub(crate) fn parse_at(
        &self,
        src: &str,
        slash: usize,
        line_limit: usize,
        in_batch: bool,
    ) -> ParsedAt {
        let Chain {
            head,
            chain,
            errors,
            arrows,
            read,
            end,
        } = self.read_chain(src, slash, line_limit);
        let span = Span::new(slash, end);
        if read > MAX_CHAIN_LINKS {
            // Read to its end, so that none of its links is taken for an
            // action of its own; built no further than the bound.
            return ParsedAt {
                result: Err(vec![ParseError::new(
                    ParseErrorKind::ChainTooLong {
                        max: MAX_CHAIN_LINKS,
                    },
                    span,
                )]),
                span,
            };
        }
        if !errors.is_empty() {
            let links = usize::from(head.is_some()) + chain.len();
            return ParsedAt {
                result: Err(in_chain(errors, links, &arrows)),
                span,
            };
        }
        let Some(mut head) = head else {
            return ParsedAt {
                result: Err(vec![ParseError::new(ParseErrorKind::DoWithoutAction, span)]),
                span,
            };
        };
        head.chain = chain;
        for arrow in arrows {
            head.parts.push(super::action::Part {
                kind: PartKind::ChainArrow,
                span: arrow,
            });
        }
        head.span = span;
        if head.shape.holds_actions() || head.chain.iter().any(|l| l.shape.holds_actions()) {
            let misplaced = if !head.chain.is_empty() {
                Some(ParseErrorKind::InvalidArgument {
                    verb: "batch".into(),
                    message: "a batch cannot be part of a chain".into(),
                })
            } else if in_batch {
                Some(ParseErrorKind::NestedBatch)
            } else {
                None
            };
            if let Some(kind) = misplaced {
                // The body belongs to the failed batch, not to the turn.
                let span = Span::new(slash, batch_body_end(src, span.end));
                return ParsedAt {
                    result: Err(vec![ParseError::new(kind, span)]),
                    span,
                };
            }
            return self.parse_batch(src, head);
        }
        ParsedAt {
            result: Ok(head),
            span,
        }
    }

    /// Reads the links of a chain from the `/` at `slash` (each link
    /// built, up to [`MAX_CHAIN_LINKS`]): the first apart from the rest, as
    /// most actions are one link and then no vector is allocated.
    fn read_chain(&self, src: &str, slash: usize, line_limit: usize) -> Chain {
        let mut head: Option<ParsedAction> = None;
        let mut chain: Vec<ParsedAction> = Vec::new();
        let mut errors: Vec<ParseError> = Vec::new();
        let mut arrows: Vec<Span> = Vec::new();
        let mut read = 0usize;
        let mut pos = slash;
        let mut limit = line_limit;
        let mut end = slash + 1;
        loop {
            let (raw, next) = match self.read_link(src, pos, limit) {
                Ok(read) => read,
                Err((err, err_end)) => {
                    end = end.max(err_end);
                    errors.push(err);
                    break;
                }
            };
            end = end.max(raw.end);
            read += 1;
            if read <= MAX_CHAIN_LINKS {
                let index = usize::from(head.is_some()) + chain.len() + errors.len();
                match self.build_link(src, raw, index > 0) {
                    Ok(action) if head.is_none() => head = Some(action),
                    Ok(action) => chain.push(action),
                    Err(err) => errors.push(err),
                }
            }
            match next {
                Some(next) => {
                    arrows.push(next.arrow);
                    pos = next.slash;
                    limit = next.line_limit;
                }
                None => break,
            }
        }
        Chain {
            head,
            chain,
            errors,
            arrows,
            read,
            end,
        }
    }

    /// Reads the verb and tokens of one link. On an error that hides where
    /// the link ends (an unclosed block), returns the error and the end.
    #[allow(clippy::type_complexity)]
    fn read_link<'a>(
        &self,
        src: &'a str,
        slash: usize,
        limit: usize,
    ) -> Result<(RawLink<'a>, Option<super::lexer::NextLink>), (ParseError, usize)> {
        let bytes = src.as_bytes();
        let (verb_slash, do_prefix, word_end) = after_do(src, slash, limit, self.table)?;
        let first = &src[verb_slash + 1..word_end];
        if let Some(c) = glued_char(src, word_end) {
            return Err((
                ParseError::new(
                    ParseErrorKind::HiddenCharacter {
                        written: format!("{first}<U+{:04X}>", c as u32),
                        what: describe_char(c),
                    },
                    Span::new(slash, limit.max(word_end)),
                ),
                limit,
            ));
        }
        let following = self.following_words(src, first, word_end, limit);
        let words: Vec<&str> = following.iter().map(|(w, _)| *w).collect();
        let verb = match_verb(self.table, first, &words);
        let verb_end = match &verb {
            Ok(m) if m.words > 1 => following[m.words - 2].1,
            _ => word_end,
        };
        let mut args_start = verb_end;
        if bytes.get(args_start) == Some(&b':') {
            args_start += 1;
        }
        let located = |e: ParseError| {
            // An unclosed block runs to the end of the turn, as in markdown,
            // so the turn is read once and not once per later line.
            let end = match e.kind {
                ParseErrorKind::Unclosed { .. } => src.len(),
                _ => line_end(src, e.span.start),
            };
            (e, end.max(limit))
        };
        let mut lexed = lex_link(src, args_start, limit, src.len(), self.table).map_err(located)?;
        // `/shell` alone on its line takes the fenced block that follows.
        let shell = matches!(&verb, Ok(m) if !m.entries.is_empty()
            && m.entries.iter().all(|e| self.table.spec(e.spec).shape.verbatim()));
        if shell
            && lexed.tokens.is_empty()
            && let Some((start, end)) = fence_on_next_line(src, limit)
        {
            lexed = lex_link(src, start, end, src.len(), self.table).map_err(located)?;
        }
        let end = lexed
            .tokens
            .iter()
            .map(|t| t.span.end)
            .max()
            .unwrap_or(args_start)
            .max(args_start);
        Ok((
            RawLink {
                start: slash,
                do_prefix,
                verb_span: Span::new(verb_slash, verb_end),
                written: &src[verb_slash + 1..verb_end],
                verb,
                tokens: lexed.tokens,
                end,
            },
            lexed.next,
        ))
    }

    /// Up to a few words after the verb word on the same line, for
    /// multi-word aliases (`remind me`), with where each ends; none when
    /// no alias starts with the word.
    fn following_words<'a>(
        &self,
        src: &'a str,
        first: &str,
        word_end: usize,
        limit: usize,
    ) -> Vec<(&'a str, usize)> {
        let bytes = src.as_bytes();
        let mut following: Vec<(&str, usize)> = Vec::new();
        let mut at = word_end;
        let may_be_phrase = first.contains(['_', '-'])
            || if first.bytes().any(|b| b.is_ascii_uppercase()) {
                self.table.starts_phrase(&first.to_ascii_lowercase())
            } else {
                self.table.starts_phrase(first)
            };
        while may_be_phrase && following.len() + 1 < self.table.max_words() {
            let s = skip_blanks(bytes, at, limit);
            if s == at || s >= limit {
                break;
            }
            let e = verb_word_end(src, s, limit);
            if e == s || (e < limit && !matches!(bytes[e], b' ' | b'\t' | b'\r')) && e != limit {
                break;
            }
            following.push((&src[s..e], e));
            at = e;
        }
        following
    }

    fn build_link(
        &self,
        src: &str,
        raw: RawLink<'_>,
        in_chain: bool,
    ) -> Result<ParsedAction, ParseError> {
        let span = Span::new(raw.start, raw.end);
        let matched = raw.verb.map_err(|k| ParseError::new(k, span))?;
        // A decision is never a step of a chain: only a strict verb at the
        // start of its own line decides anything.
        if in_chain
            && let Some(spec) = matched
                .entries
                .iter()
                .map(|e| self.table.spec(e.spec))
                .find(|spec| spec.strictness == Strictness::Strict)
        {
            return Err(ParseError::new(
                ParseErrorKind::StrictVerbInChain {
                    verb: spec.verb.name().to_string(),
                },
                span,
            ));
        }
        let mut tokens = raw.tokens;
        // A shell command's last word is its own (`ls .`), not a marker:
        // a shell command always asks the partner anyway.
        let shell = !matched.entries.is_empty()
            && matched
                .entries
                .iter()
                .all(|e| self.table.spec(e.spec).shape.verbatim());
        let marker = if shell {
            None
        } else {
            take_marker(&mut tokens)
        };
        let written = if raw.written.contains(char::is_whitespace) {
            raw.written.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            raw.written.to_string()
        };
        let mut action = self.interpret(
            src,
            &matched.entries,
            &written,
            raw.verb_span,
            &tokens,
            in_chain,
            span,
        )?;
        if let Some(do_span) = raw.do_prefix {
            action.parts.insert(
                0,
                super::action::Part {
                    kind: PartKind::DoPrefix,
                    span: do_span,
                },
            );
        }
        if let Some((marker, note, marker_span)) = marker {
            action.marker = Some(marker);
            action.marker_note = note;
            action.parts.push(super::action::Part {
                kind: PartKind::Marker,
                span: marker_span,
            });
        }
        action.parts.sort_by_key(|p| p.span.start);
        Ok(action)
    }

    /// Turns a matched verb and its argument tokens into an action.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn interpret(
        &self,
        src: &str,
        entries: &[PhraseEntry],
        written: &str,
        verb_span: Span,
        tokens: &[Token<'_>],
        in_chain: bool,
        span: Span,
    ) -> Result<ParsedAction, ParseError> {
        let probe = LinkInput {
            src,
            tokens,
            alias_op: None,
            in_chain,
            blocks: self.blocks,
        };
        let entry = choose_entry(self.table, entries, &probe);
        let input = LinkInput {
            alias_op: entry.op,
            ..probe
        };
        let verb = self.table.spec(entry.spec).verb.clone();
        let shape = self.table.spec(entry.spec).shape;
        let mut action = ParsedAction::with_shape(verb, written, span, shape);
        action.parts.push(super::action::Part {
            kind: PartKind::Verb,
            span: verb_span,
        });
        shape
            .parse(&input, &mut action)
            .map_err(|k| ParseError::new(k, span))?;
        Ok(action)
    }
}

/// Where the verb of a link at `slash` is written: past a `/do ` prefix
/// (which must be followed by an action), with the prefix's span and the
/// verb word's end.
fn after_do(
    src: &str,
    slash: usize,
    limit: usize,
    verbs: &VerbTable,
) -> Result<(usize, Option<Span>, usize), (ParseError, usize)> {
    let bytes = src.as_bytes();
    let word_end = verb_end(src, slash + 1, limit, verbs);
    if !src[slash + 1..word_end].eq_ignore_ascii_case("do") {
        return Ok((slash, None, word_end));
    }
    let next = skip_blanks(bytes, word_end, limit);
    if next > word_end
        && next < limit
        && bytes[next] == b'/'
        && verb_word_end(src, next + 1, limit) > next + 1
    {
        Ok((
            next,
            Some(Span::new(slash, next)),
            verb_end(src, next + 1, limit, verbs),
        ))
    } else {
        Err((
            ParseError::new(ParseErrorKind::DoWithoutAction, Span::new(slash, word_end)),
            limit,
        ))
    }
}

/// The links of a chain as read: the first, the rest, the errors, the
/// arrows between them, how many links were read and where the last ends.
struct Chain {
    head: Option<ParsedAction>,
    chain: Vec<ParsedAction>,
    errors: Vec<ParseError>,
    arrows: Vec<Span>,
    read: usize,
    end: usize,
}

/// A chain's errors, each saying which link it is in (when there is more
/// than one link).
fn in_chain(errors: Vec<ParseError>, links: usize, arrows: &[Span]) -> Vec<ParseError> {
    let chained = links + errors.len() > 1 || !arrows.is_empty();
    if !chained {
        return errors;
    }
    errors
        .into_iter()
        .map(|e| {
            let index = 1 + arrows.partition_point(|a| a.start < e.span.start);
            ParseError::new(
                ParseErrorKind::InChain {
                    index,
                    inner: Box::new(e.kind),
                },
                e.span,
            )
        })
        .collect()
}
