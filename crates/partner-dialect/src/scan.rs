//! Finds the actions in a turn, line by line: code fences, HTML comments
//! (invisible when rendered) and `<pre>`/`<code>` elements are skipped, a
//! strict verb in an indented code block does not act,
//! markdown list markers and whole-line bold/italic wrappers are looked
//! through, `/do /verb` and legacy `[[…]]` commands are found mid-line, and
//! cancellation phrases after an action cancel it.

use super::action::ParsedAction;
use super::cancel::has_cancel_phrase;
use super::error::{ParseError, ParseErrorKind};
use super::legacy::parse_legacy;
use super::lexer::line_end;
use super::link::{LinkParser, ParsedAt};
use super::matcher::match_verb;
use super::parser::MAX_ACTIONS;
use super::span::Span;
use super::turn::{ParsedTurn, Segment, SegmentKind};
pub(crate) use super::verb_word::{verb_end, verb_word_end};
use super::verbs::{Strictness, VerbTable};

/// Top-level directories: a line starting `/usr …` is a path, not an action
/// (`/run` is the shell verb's alias; `/run/user` is still a path).
const ROOT_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib64",
    "mnt",
    "opt",
    "proc",
    "root",
    "sbin",
    "srv",
    "sys",
    "tmp",
    "usr",
    "var",
    "Users",
    "Applications",
    "Library",
    "Volumes",
    "private",
];

/// Whole-line wrappers, longest first.
const WRAPPERS: &[&str] = &["***", "**", "__", "*", "_"];

fn skip_blanks(bytes: &[u8], mut pos: usize, limit: usize) -> usize {
    while pos < limit && matches!(bytes[pos], b' ' | b'\t') {
        pos += 1;
    }
    pos
}

/// True when `/word` at `slash` looks like the start of an action rather
/// than a path (`/usr/bin`, `/notes.txt`).
pub(crate) fn slash_starts_action(
    src: &str,
    slash: usize,
    limit: usize,
    verbs: &VerbTable,
) -> bool {
    let bytes = src.as_bytes();
    if bytes.get(slash) != Some(&b'/') {
        return false;
    }
    let end = verb_end(src, slash + 1, limit, verbs);
    if end == slash + 1 {
        return false;
    }
    if ROOT_DIRS.contains(&&src[slash + 1..end]) {
        return false;
    }
    match bytes.get(end) {
        _ if end >= limit => true,
        Some(b'/' | b'\\') => false,
        Some(b'.') => !bytes
            .get(end + 1)
            .is_some_and(|b| b.is_ascii_alphanumeric()),
        _ => true,
    }
}

/// If the line `line_start..line_end` starts an action, returns the offset
/// of its `/` and where the action's first line ends (before a wrapper's
/// closing `**`).
pub(crate) fn action_start(
    src: &str,
    line_start: usize,
    line_end: usize,
    verbs: &VerbTable,
) -> Option<(usize, usize)> {
    let bytes = src.as_bytes();
    let mut i = skip_blanks(bytes, line_start, line_end);
    if i >= line_end {
        return None;
    }
    // A list marker: `- `, `* `, `+ `, `1. `, `2) `.
    if matches!(bytes[i], b'-' | b'*' | b'+')
        && bytes.get(i + 1).is_some_and(|b| *b == b' ' || *b == b'\t')
    {
        i = skip_blanks(bytes, i + 2, line_end);
    } else if bytes[i].is_ascii_digit() {
        let mut j = i;
        while j < line_end && bytes[j].is_ascii_digit() {
            j += 1;
        }
        if j < line_end
            && matches!(bytes[j], b'.' | b')')
            && bytes.get(j + 1).is_some_and(|b| *b == b' ' || *b == b'\t')
        {
            i = skip_blanks(bytes, j + 2, line_end);
        }
    }
    if i >= line_end {
        return None;
    }
    let mut trimmed_end = line_end;
    while trimmed_end > i && matches!(bytes[trimmed_end - 1], b' ' | b'\t' | b'\r') {
        trimmed_end -= 1;
    }
    for wrapper in WRAPPERS {
        let w = wrapper.len();
        if src[i..].starts_with(wrapper)
            && bytes.get(i + w) == Some(&b'/')
            && trimmed_end >= i + 2 * w + 2
            && src[..trimmed_end].ends_with(wrapper)
        {
            let inner_end = trimmed_end - w;
            return slash_starts_action(src, i + w, inner_end, verbs).then_some((i + w, inner_end));
        }
    }
    slash_starts_action(src, i, line_end, verbs).then_some((i, line_end))
}

/// A code fence opener or closer: ``` or ~~~ (three or more), after up to
/// three spaces. Returns the fence character and run length.
fn fence_marker(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let bytes = trimmed.as_bytes();
    let c = *bytes.first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let run = bytes.iter().take_while(|b| **b == c).count();
    (run >= 3).then_some((c, run))
}

/// The quote a prose line is inside of, by the character that closes it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum QuoteClose {
    /// `"…"`.
    Straight,
    /// `“…”`.
    Curly,
    /// `„…“` (or `„…”`).
    Low,
    /// `«…»`.
    Guillemet,
}

impl QuoteClose {
    fn opened_by(c: char) -> Option<Self> {
        match c {
            '\u{201C}' => Some(QuoteClose::Curly),
            '\u{201E}' => Some(QuoteClose::Low),
            '\u{00AB}' => Some(QuoteClose::Guillemet),
            _ => None,
        }
    }

    fn closes(self, c: char) -> bool {
        match self {
            QuoteClose::Straight => false,
            QuoteClose::Curly => c == '\u{201D}',
            QuoteClose::Low => c == '\u{201C}' || c == '\u{201D}',
            QuoteClose::Guillemet => c == '\u{00BB}',
        }
    }
}

/// An HTML region whose text is not read for actions: a comment (invisible
/// when rendered) or a `<pre>`/`<code>` element (code, like a fence).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hidden {
    Comment,
    Pre,
    Code,
}

impl Hidden {
    fn tags(self) -> (&'static str, &'static str) {
        match self {
            Hidden::Comment => ("<!--", "-->"),
            Hidden::Pre => ("<pre", "</pre>"),
            Hidden::Code => ("<code", "</code>"),
        }
    }

    /// Where on `line` (lowercased) the region opens, if it does.
    fn open_at(self, line: &str) -> Option<usize> {
        let lower = line.to_ascii_lowercase();
        let (open, _) = self.tags();
        lower.match_indices(open).map(|(at, _)| at).find(|&at| {
            // `<pre>` or `<pre …>`, not `<preview>`.
            self == Hidden::Comment || lower[at + open.len()..].starts_with(['>', ' ', '\t'])
        })
    }

    /// The region a line opens and does not close on the same line.
    fn opened_in(line: &str) -> Option<Hidden> {
        // Every region opens with `<`; most lines have none.
        memchr::memchr(b'<', line.as_bytes())?;
        [Hidden::Comment, Hidden::Pre, Hidden::Code]
            .into_iter()
            .filter_map(|h| h.open_at(line).map(|at| (at, h)))
            .min_by_key(|(at, _)| *at)
            .filter(|(at, h)| !h.closed_in(&line[*at..]))
            .map(|(_, h)| h)
    }

    /// True when `line` closes the region.
    fn closed_in(self, line: &str) -> bool {
        line.to_ascii_lowercase().contains(self.tags().1)
    }
}

/// What the nearest preceding item was, for cancellation.
#[derive(Clone, Copy)]
enum Last {
    Nothing,
    Action(usize),
    Error,
}

struct Scanner<'s, 'p> {
    parser: &'s LinkParser<'p>,
    src: &'s str,
    turn: ParsedTurn,
    /// Actions found, kept or not (past the bound only the last is kept).
    found: usize,
    marks: Vec<(Span, SegmentKind, usize)>,
    last: Last,
    /// End of the line the last action or error finished on.
    last_line_end: usize,
    /// True once `last_line_end` has been looked up.
    line_known: bool,
}

fn cancel_all(action: &mut ParsedAction) {
    action.cancelled = true;
    for inner in action.chain.iter_mut().chain(action.batch.iter_mut()) {
        cancel_all(inner);
    }
}

impl Scanner<'_, '_> {
    fn record(&mut self, parsed: ParsedAt) {
        match parsed.result {
            Ok(action) => {
                // Past the bound the reply runs none of its actions: what
                // is kept is how many there were and where the last ends.
                self.found += 1;
                let index = if self.turn.actions.len() > MAX_ACTIONS {
                    let last = self.turn.actions.len() - 1;
                    self.turn.actions[last] = action;
                    last
                } else {
                    self.turn.actions.push(action);
                    self.turn.actions.len() - 1
                };
                self.marks.push((parsed.span, SegmentKind::Action, index));
                self.last = Last::Action(index);
            }
            Err(errors) => {
                self.marks
                    .push((parsed.span, SegmentKind::Invalid, self.turn.errors.len()));
                self.last = Last::Error;
                self.turn.errors.extend(errors);
            }
        }
        let pos = parsed.span.end.saturating_sub(1).max(parsed.span.start);
        // Actions are recorded in order, so one found on the line already
        // looked up shares its end: a line of many commands is read once.
        if !(self.line_known && pos <= self.last_line_end) {
            self.last_line_end = line_end(self.src, pos);
            self.line_known = true;
        }
    }

    /// Prose text from `start` to `end`: checks it for cancellation.
    fn prose(&mut self, start: usize, end: usize) {
        if start >= end || start <= self.last_line_end {
            return;
        }
        if let Last::Action(index) = self.last
            && has_cancel_phrase(&self.src[start..end])
        {
            cancel_all(&mut self.turn.actions[index]);
            self.last = Last::Nothing;
        }
    }

    /// Scans a prose line for `/do /verb` and `[[LEGACY]]` commands in plain
    /// prose: not inside inline code, `"…"`, `“…”`, `«…»`, parentheses or a
    /// `> ` quote line, where the words are someone else's or an aside.
    /// Returns where scanning should resume (past a multi-line action).
    fn inline(&mut self, line_start: usize, line_end_at: usize) -> usize {
        let src = self.src;
        let bytes = src.as_bytes();
        let first = skip_blanks(bytes, line_start, line_end_at);
        if bytes.get(first) == Some(&b'>') {
            self.prose(line_start, line_end_at);
            return line_end_at;
        }
        // Only a `/do ` or a `[[` starts an action inside a line: a line
        // with neither (most prose) is prose without walking its bytes.
        if !starts_inline(&bytes[line_start..line_end_at]) {
            self.prose(line_start, line_end_at);
            return line_end_at;
        }
        // No legacy command can close after the line's last `]]`.
        let last_close =
            memchr::memmem::rfind(&bytes[line_start..line_end_at], b"]]").map(|i| line_start + i);
        let mut in_code = false;
        let mut quote: Option<QuoteClose> = None;
        let mut parens = 0usize;
        let mut prose_from = line_start;
        let mut i = line_start;
        while i < line_end_at {
            let b = bytes[i];
            if b >= 0x80 {
                let c = src[i..].chars().next().unwrap_or('\u{FFFD}');
                if !in_code {
                    match quote {
                        Some(close) if close.closes(c) => quote = None,
                        None => quote = QuoteClose::opened_by(c),
                        Some(_) => {}
                    }
                }
                i += c.len_utf8();
                continue;
            }
            let plain = !in_code && quote.is_none() && parens == 0;
            match b {
                b'`' => in_code = !in_code,
                b'"' if !in_code => {
                    quote = match quote {
                        Some(QuoteClose::Straight) => None,
                        None => Some(QuoteClose::Straight),
                        other => other,
                    }
                }
                b'(' if !in_code && quote.is_none() => parens += 1,
                b')' if !in_code && quote.is_none() => parens = parens.saturating_sub(1),
                b'/' if plain
                    && src[i..line_end_at].starts_with("/do ")
                    && i > line_start
                    && matches!(bytes[i - 1], b' ' | b'\t') =>
                {
                    let next = skip_blanks(bytes, i + 3, line_end_at);
                    if slash_starts_action(src, next, line_end_at, self.parser.table) {
                        self.prose(prose_from, i);
                        return self.do_action(i, next, line_end_at);
                    }
                }
                b'[' if plain && bytes.get(i + 1) == Some(&b'[') => {
                    if let Some(parsed) = parse_legacy(self.parser, src, i, line_end_at, last_close)
                    {
                        self.prose(prose_from, i);
                        let end = parsed.span.end;
                        self.record(parsed);
                        i = end;
                        prose_from = end;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.prose(prose_from, line_end_at);
        line_end_at
    }

    /// The action of a `/do ` at `at` whose verb's `/` is at `slash`,
    /// recorded; returns where it ends. A strict verb (an approval and
    /// the like) is never made mid-sentence: it is an error to the line's end.
    fn do_action(&mut self, at: usize, slash: usize, line_end_at: usize) -> usize {
        if let Some(verb) = self.strict_verb_at(slash, line_end_at) {
            let span = Span::new(at, line_end_at);
            self.record(ParsedAt {
                result: Err(vec![ParseError::new(
                    ParseErrorKind::StrictVerbMidLine { verb },
                    span,
                )]),
                span,
            });
            return line_end_at;
        }
        let parsed = self.parser.parse_at(self.src, at, line_end_at, false);
        let end = parsed.span.end;
        self.record(parsed);
        end
    }

    /// The strict verb (approve, deny, halt, escalate…) the word after the
    /// `/` at `slash` names or nearly names, if any.
    fn strict_verb_at(&self, slash: usize, limit: usize) -> Option<String> {
        let end = verb_end(self.src, slash + 1, limit, self.parser.table);
        let word = &self.src[slash + 1..end];
        let table = self.parser.table;
        match match_verb(table, word, &[]) {
            Ok(m) => m
                .entries
                .iter()
                .map(|e| table.spec(e.spec))
                .find(|spec| spec.strictness == Strictness::Strict)
                .map(|spec| spec.verb.name().to_string()),
            Err(ParseErrorKind::StrictVerbMisspelled { suggestion, .. }) => Some(suggestion),
            Err(_) => None,
        }
    }

    fn run(mut self) -> (ParsedTurn, usize) {
        let src = self.src;
        let len = src.len();
        let mut fence: Option<(u8, usize)> = None;
        let mut hidden: Option<Hidden> = None;
        let mut line_start = 0;
        while line_start < len {
            let le = line_end(src, line_start);
            let line = &src[line_start..le];
            // Inside an HTML comment or a `<pre>`/`<code>` element: nothing
            // acts until it closes.
            if let Some(h) = hidden {
                if h.closed_in(line) {
                    hidden = None;
                }
                line_start = le + 1;
                continue;
            }
            if let Some(h) = Hidden::opened_in(line) {
                hidden = Some(h);
                if let Some(at) = h.open_at(line)
                    && at > 0
                {
                    // What precedes the opening on its line is prose.
                    self.inline(line_start, line_start + at);
                }
                line_start = le + 1;
                continue;
            }
            if let Some((c, run)) = fence {
                if fence_marker(line).is_some_and(|(c2, r2)| c2 == c && r2 >= run)
                    && line.trim().bytes().all(|b| b == c)
                {
                    fence = None;
                }
                line_start = le + 1;
                continue;
            }
            if let Some(marker) = fence_marker(line) {
                fence = Some(marker);
                line_start = le + 1;
                continue;
            }
            let code_block = line.starts_with('\t') || line.starts_with("    ");
            let start = action_start(src, line_start, le, self.parser.table)
                .filter(|(slash, _)| !(code_block && self.strict_verb_at(*slash, le).is_some()));
            let resume = if let Some((slash, limit)) = start {
                let parsed = self.parser.parse_at(src, slash, limit, false);
                let end = parsed.span.end;
                self.record(parsed);
                end
            } else {
                self.inline(line_start, le)
            };
            line_start = line_end(src, resume.max(line_start)) + 1;
        }
        self.finish()
    }

    fn finish(mut self) -> (ParsedTurn, usize) {
        for (i, action) in self.turn.actions.iter_mut().enumerate() {
            action.number(vec![u16::try_from(i + 1).unwrap_or(u16::MAX)]);
        }
        let len = self.src.len();
        let mut segments = Vec::with_capacity(self.marks.len() * 2 + 1);
        let mut at = 0;
        for (span, kind, index) in std::mem::take(&mut self.marks) {
            let start = span.start.max(at);
            if start > at {
                segments.push(Segment {
                    kind: SegmentKind::Prose,
                    span: Span::new(at, start),
                    index: None,
                });
            }
            let end = span.end.min(len).max(start);
            if end > start {
                segments.push(Segment {
                    kind,
                    span: Span::new(start, end),
                    index: Some(index),
                });
            }
            at = end;
        }
        if at < len {
            segments.push(Segment {
                kind: SegmentKind::Prose,
                span: Span::new(at, len),
                index: None,
            });
        }
        self.turn.segments = segments;
        (self.turn, self.found)
    }
}

/// Parses every action in `src`: the turn, and how many actions it holds
/// (past [`MAX_ACTIONS`] the turn keeps only the first ones and the last).
pub(crate) fn scan_turn(parser: &LinkParser<'_>, src: &str) -> (ParsedTurn, usize) {
    Scanner {
        parser,
        src,
        turn: ParsedTurn::default(),
        found: 0,
        marks: Vec::new(),
        last: Last::Nothing,
        last_line_end: 0,
        line_known: false,
    }
    .run()
}

/// Whether a `/do ` or a `[[` is anywhere in `line`: only those start an
/// action inside a line, so a line with neither (most prose) is prose
/// without walking its bytes.
#[inline]
fn starts_inline(line: &[u8]) -> bool {
    memchr::memchr2_iter(b'/', b'[', line).any(|at| {
        let rest = &line[at..];
        rest.starts_with(b"/do ") || rest.starts_with(b"[[")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::BlockRegistry;
    use crate::verbs::VerbTable;

    /// A reply past the bound runs none of its actions, so the scanner
    /// keeps no more of them than it takes to know that (and where the
    /// last one ends), however many the reply holds: a megabyte of
    /// `[[PULSE:10m]]` once held 71,000 parsed actions.
    #[test]
    fn past_the_bound_the_scanner_counts_actions_without_keeping_them() {
        let table = VerbTable::builtin();
        let blocks = BlockRegistry::default();
        let parser = LinkParser {
            table: &table,
            blocks: &blocks,
        };
        let many = 10_000;
        let src = "[[PULSE:10m]] ".repeat(many);
        let (turn, found) = scan_turn(&parser, &src);
        assert_eq!(found, many);
        assert!(
            turn.actions.len() <= MAX_ACTIONS + 1,
            "{} actions kept",
            turn.actions.len()
        );
        let last = turn.actions.last().expect("the last action is kept");
        assert_eq!(last.span.end, src.len() - 1, "the last one's end");
    }
}
