//! The snippet FTS5's `snippet(table, col, char(2), char(3), '…', 12)`
//! gives for a row, made here from the row's text and the search's terms
//! (one token each), step for step as FTS5 makes it: the window of twelve
//! tokens scoring best (1,000 for each term's first hit in it, 1 for each
//! hit after, or a sentence's start with a bonus), centred on its hits,
//! its hits marked, an ellipsis where text was cut. Asking FTS5 instead
//! costs a full query per hit (its cursor seeks every segment of every
//! term), most of a keyword search's time.

use std::ops::Range;

use super::tokenizer::Tokenizer;
use crate::memory::search::{MARK_END, MARK_START};

/// Tokens a snippet shows.
const WINDOW: i64 = 12;
/// What stands for text a snippet leaves out.
const ELLIPSIS: &str = "…";

/// A token of the text: its term and where it was read.
struct Token {
    term: Box<[u8]>,
    at: Range<usize>,
}

/// The snippet of `text` for `phrases` (each one token), as FTS5 makes it;
/// `None` when the text does not hold every phrase (`any`: one of them),
/// so is no hit.
pub(crate) fn snippet(
    tokenizer: &mut Tokenizer,
    text: &str,
    phrases: &[Box<[u8]>],
    any: bool,
) -> Option<String> {
    let mut tokens = Vec::new();
    tokenizer.tokens(text, false, &mut |term, at| {
        tokens.push(Token {
            term: term.into(),
            at,
        })
    });
    // Every hit, by position then phrase (FTS5's order).
    let hits: Vec<(usize, i64)> = tokens
        .iter()
        .enumerate()
        .flat_map(|(pos, t)| {
            phrases
                .iter()
                .enumerate()
                .filter(move |(_, p)| **p == t.term)
                .map(move |(phrase, _)| (phrase, pos as i64))
        })
        .collect();
    let held = |p: usize| hits.iter().any(|h| h.0 == p);
    let matches = if any {
        (0..phrases.len()).any(held)
    } else {
        (0..phrases.len()).all(held)
    };
    if !matches {
        return None;
    }
    let starts = sentence_starts(text, &tokens);
    let size = tokens.len() as i64;
    let start = best_start(&hits, &starts, phrases.len(), size);
    Some(highlighted(text, &tokens, &hits, start, size))
}

/// The positions of tokens that begin a sentence: the first, and each one
/// after white space that follows a `.` or `:`.
fn sentence_starts(text: &str, tokens: &[Token]) -> Vec<i64> {
    let bytes = text.as_bytes();
    let mut starts = Vec::new();
    for (pos, t) in tokens.iter().enumerate() {
        if pos == 0 {
            starts.push(0);
            continue;
        }
        let before = &bytes[..t.at.start.min(bytes.len())];
        let spaces = before
            .iter()
            .rev()
            .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        let c = before.len().checked_sub(spaces + 1).map(|i| before[i]);
        if spaces > 0 && matches!(c, Some(b'.' | b':')) {
            starts.push(pos as i64);
        }
    }
    starts
}

/// The score of the window of [`WINDOW`] tokens from `from`, and where a
/// window centred on its hits would start.
fn score(hits: &[(usize, i64)], phrases: usize, size: i64, from: i64) -> (i64, i64) {
    let mut seen = vec![false; phrases];
    let (mut score, mut first, mut last) = (0, -1, 0);
    for &(phrase, pos) in hits {
        if pos >= from && pos < from + WINDOW {
            score += if seen[phrase] { 1 } else { 1000 };
            seen[phrase] = true;
            if first < 0 {
                first = pos;
            }
            last = pos + 1;
        }
    }
    let mut adjusted = first - (WINDOW - (last - first)) / 2;
    if adjusted + WINDOW > size {
        adjusted = size - WINDOW;
    }
    (score, adjusted.max(0))
}

/// The first token of the best window.
fn best_start(hits: &[(usize, i64)], starts: &[i64], phrases: usize, size: i64) -> i64 {
    let (mut best, mut best_start) = (0, 0);
    for &(_, pos) in hits {
        let (s, adjusted) = score(hits, phrases, size, pos);
        if s > best {
            best = s;
            best_start = adjusted;
        }
        if !starts.is_empty() && size > WINDOW {
            let mut j = 0;
            while j + 1 < starts.len() && starts[j + 1] <= pos {
                j += 1;
            }
            if starts[j] < pos {
                let (s, _) = score(hits, phrases, size, starts[j]);
                let s = s + if starts[j] == 0 { 120 } else { 100 };
                if s > best {
                    best = s;
                    best_start = starts[j];
                }
            }
        }
    }
    best_start
}

/// Runs of hits (positions), overlapping ones joined, in order.
fn runs(hits: &[(usize, i64)]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for &(_, pos) in hits {
        match out.last_mut() {
            Some(run) if pos <= run.1 => run.1 = run.1.max(pos),
            _ => out.push((pos, pos)),
        }
    }
    out
}

/// The window of `tokens` from `start`, its hits marked.
fn highlighted(
    text: &str,
    tokens: &[Token],
    hits: &[(usize, i64)],
    start: i64,
    size: i64,
) -> String {
    let end = start + WINDOW - 1;
    let runs = runs(hits);
    let mut run = runs.iter().position(|r| r.0 >= start).unwrap_or(runs.len());
    let current = |run: usize| runs.get(run).copied().unwrap_or((-1, -1));
    let mut out = String::new();
    if start > 0 {
        out.push_str(ELLIPSIS);
    }
    let (mut off, mut open) = (0usize, false);
    let piece = |from: usize, to: usize| text.get(from..to.max(from)).unwrap_or("");
    for (pos, t) in tokens.iter().enumerate() {
        let pos = pos as i64;
        if pos < start || pos > end {
            continue;
        }
        if start > 0 && pos == start {
            off = t.at.start;
        }
        let (run_start, run_end) = current(run);
        if open && (pos <= run_start || run_start < 0) && t.at.start > off {
            out.push(MARK_END);
            open = false;
        }
        if pos == run_start && !open {
            out.push_str(piece(off, t.at.start));
            out.push(MARK_START);
            off = t.at.start;
            open = true;
        }
        if pos == run_end {
            if !open {
                out.push(MARK_START);
                open = true;
            }
            out.push_str(piece(off, t.at.end));
            off = t.at.end;
            run += 1;
        }
        if pos == end {
            let (run_start, _) = current(run);
            if open {
                if run_start >= 0 && pos >= run_start {
                    out.push_str(piece(off, t.at.end));
                    off = t.at.end;
                }
                out.push(MARK_END);
                open = false;
            }
            out.push_str(piece(off, t.at.end));
            off = t.at.end;
        }
    }
    if open {
        out.push(MARK_END);
    }
    if end >= size - 1 {
        out.push_str(piece(off, text.len()));
    } else {
        out.push_str(ELLIPSIS);
    }
    out
}
