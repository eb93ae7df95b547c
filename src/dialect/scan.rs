//! Finds the actions in a turn, line by line: code fences are skipped,
//! markdown list markers and whole-line bold/italic wrappers are looked
//! through, `/do /verb` and legacy `[[…]]` commands are found mid-line, and
//! cancellation phrases after an action cancel it.

use super::action::ParsedAction;
use super::cancel::has_cancel_phrase;
use super::legacy::parse_legacy;
use super::lexer::line_end;
use super::link::{LinkParser, ParsedAt};
use super::span::Span;
use super::turn::{ParsedTurn, Segment, SegmentKind};

/// Top-level directories: a line starting `/usr …` is a path, not an action.
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
    "run",
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

/// End of the verb word starting at `start`: `[A-Za-z][A-Za-z0-9_-]*`.
/// Returns `start` when there is no such word.
pub(crate) fn verb_word_end(src: &str, start: usize, limit: usize) -> usize {
    let bytes = src.as_bytes();
    if start >= limit || !bytes[start].is_ascii_alphabetic() {
        return start;
    }
    let mut end = start + 1;
    while end < limit
        && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b'-')
    {
        end += 1;
    }
    end
}

fn skip_blanks(bytes: &[u8], mut pos: usize, limit: usize) -> usize {
    while pos < limit && matches!(bytes[pos], b' ' | b'\t') {
        pos += 1;
    }
    pos
}

/// True when `/word` at `slash` looks like the start of an action rather
/// than a path (`/usr/bin`, `/notes.txt`).
pub(crate) fn slash_starts_action(src: &str, slash: usize, limit: usize) -> bool {
    let bytes = src.as_bytes();
    if bytes.get(slash) != Some(&b'/') {
        return false;
    }
    let end = verb_word_end(src, slash + 1, limit);
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
            return slash_starts_action(src, i + w, inner_end).then_some((i + w, inner_end));
        }
    }
    slash_starts_action(src, i, line_end).then_some((i, line_end))
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
    marks: Vec<(Span, SegmentKind, usize)>,
    last: Last,
    /// End of the line the last action or error finished on.
    last_line_end: usize,
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
                self.marks
                    .push((parsed.span, SegmentKind::Action, self.turn.actions.len()));
                self.last = Last::Action(self.turn.actions.len());
                self.turn.actions.push(action);
            }
            Err(errors) => {
                self.marks
                    .push((parsed.span, SegmentKind::Invalid, self.turn.errors.len()));
                self.last = Last::Error;
                self.turn.errors.extend(errors);
            }
        }
        self.last_line_end = line_end(
            self.src,
            parsed.span.end.saturating_sub(1).max(parsed.span.start),
        );
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

    /// Scans a prose line for `/do /verb` and `[[LEGACY]]` outside inline
    /// code. Returns where scanning should resume (past a multi-line action).
    fn inline(&mut self, line_start: usize, line_end_at: usize) -> usize {
        let bytes = self.src.as_bytes();
        let mut in_code = false;
        let mut prose_from = line_start;
        let mut i = line_start;
        while i < line_end_at {
            match bytes[i] {
                b'`' => in_code = !in_code,
                b'/' if !in_code
                    && self.src[i..line_end_at].starts_with("/do ")
                    && (i == line_start || matches!(bytes[i - 1], b' ' | b'\t' | b'(')) =>
                {
                    let next = skip_blanks(bytes, i + 3, line_end_at);
                    if slash_starts_action(self.src, next, line_end_at) {
                        self.prose(prose_from, i);
                        let parsed = self.parser.parse_at(self.src, i, line_end_at, false);
                        let end = parsed.span.end;
                        self.record(parsed);
                        return end;
                    }
                }
                b'[' if !in_code && bytes.get(i + 1) == Some(&b'[') => {
                    if let Some(parsed) = parse_legacy(self.parser, self.src, i, line_end_at) {
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

    fn run(mut self) -> ParsedTurn {
        let src = self.src;
        let len = src.len();
        let mut fence: Option<(u8, usize)> = None;
        let mut line_start = 0;
        while line_start < len {
            let le = line_end(src, line_start);
            let line = &src[line_start..le];
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
            let resume = if let Some((slash, limit)) = action_start(src, line_start, le) {
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

    fn finish(mut self) -> ParsedTurn {
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
        self.turn
    }
}

/// Parses every action in `src`.
pub(crate) fn scan_turn(parser: &LinkParser<'_>, src: &str) -> ParsedTurn {
    Scanner {
        parser,
        src,
        turn: ParsedTurn::default(),
        marks: Vec::new(),
        last: Last::Nothing,
        last_line_end: 0,
    }
    .run()
}
