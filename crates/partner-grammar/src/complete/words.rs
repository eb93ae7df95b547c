//! Reading a literal's words as far as a prefix goes: how many of them it
//! holds, where a completion of the literal would go, and a keyword begun
//! at the end of a wildcard's text.

use super::super::parse::Spacing;
use super::super::text::{
    boundary_ok, char_at, char_before, is_sep, literal_at, requires_sep, skip_seps, wildcard_text,
};
use super::Direction;

/// How far a literal's words go from a place.
pub(super) struct Greedy {
    /// Words matched.
    pub n: usize,
    /// Where the last matched word ends.
    pub end: usize,
    /// Where the word before it ended (the place itself for the first).
    pub prev: usize,
}

/// Greedy word-by-word match of `words` from byte `i`; the first word may
/// follow separators unless `tight`.
pub(super) fn greedily(s: &str, i: usize, words: &[String], mode: Spacing, tight: bool) -> Greedy {
    let (mut index, mut prev, mut n) = (i, i, 0);
    for (k, word) in words.iter().enumerate() {
        let found = if k == 0 {
            if tight {
                literal_at(s, index, word)
            } else {
                first_after_seps(s, index, word)
            }
        } else if mode == Spacing::None {
            literal_at(s, index, word)
        } else {
            let need = words[k - 1]
                .chars()
                .next_back()
                .zip(word.chars().next())
                .is_some_and(|(a, b)| requires_sep(a, b, mode));
            after_seps(s, index, word, need)
        };
        let Some(end) = found else { break };
        if !boundary_ok(s, end, mode) {
            break;
        }
        prev = index;
        index = end;
        n += 1;
    }
    Greedy {
        n,
        end: index,
        prev,
    }
}

/// `word` after as few separators as it takes (a lazy `[sep]*?`).
fn first_after_seps(s: &str, mut at: usize, word: &str) -> Option<usize> {
    loop {
        if let Some(e) = literal_at(s, at, word) {
            return Some(e);
        }
        match char_at(s, at) {
            Some(c) if is_sep(c) => at += c.len_utf8(),
            _ => return None,
        }
    }
}

/// `word` after the longest run of separators that lets it match (a
/// greedy `[sep]*`, or `[sep]+` when `need`).
fn after_seps(s: &str, mut at: usize, word: &str, need: bool) -> Option<usize> {
    let mut cuts = vec![at];
    for c in s[at..].chars() {
        if !is_sep(c) {
            break;
        }
        at += c.len_utf8();
        cuts.push(at);
    }
    cuts.iter()
        .enumerate()
        .rev()
        .filter(|(n, _)| !need || *n > 0)
        .find_map(|(_, &cut)| literal_at(s, cut, word))
}

/// Where a literal's completion goes, and the word to offer there.
pub(super) struct Partial {
    pub at: usize,
    pub word: String,
}

/// A literal read as far as the prefix allows from byte `i`: the next word
/// and where it goes — or, backward, the last word matched and where it
/// began, when nothing after it commits it (`end_of_match`: where a match
/// that went on ended; a word reaching it may be backed over). None when
/// the whole literal matched (forward). `tight`: no separators may lead.
pub(super) fn partial_string(
    s: &str,
    i: usize,
    words: &[String],
    mode: Spacing,
    dir: Direction,
    end_of_match: Option<usize>,
    tight: bool,
) -> Option<Partial> {
    let g = greedily(s, i, words, mode, tight);
    let could_back_up = g.n > 0
        && (mode == Spacing::None
            || end_of_match.is_some_and(|e| g.end >= e)
            || skip_seps(s, g.end) == g.end);
    if dir == Direction::Backward && could_back_up {
        return Some(Partial {
            at: g.prev,
            word: words[g.n - 1].clone(),
        });
    }
    if g.n >= words.len() {
        return None;
    }
    Some(Partial {
        at: g.end,
        word: words[g.n].clone(),
    })
}

/// The keyword's words read from `start` to the end of the prefix, the
/// last of them begun but not finished: where its completion goes and the
/// word.
fn keyword_from(s: &str, start: usize, words: &[String], mode: Spacing) -> Option<Partial> {
    let g = greedily(s, start, words, mode, false);
    if g.n >= words.len() {
        return None;
    }
    if g.n > 0 && g.end == s.len() {
        return Some(Partial {
            at: s.len(),
            word: words[g.n].clone(),
        });
    }
    let word = &words[g.n];
    let mut rest = &s[g.end..];
    if g.n > 0 && mode != Spacing::None {
        let trimmed = rest.trim_start_matches(is_sep);
        if trimmed.len() < rest.len() {
            rest = trimmed;
        } else if words[g.n - 1]
            .chars()
            .next_back()
            .zip(word.chars().next())
            .is_some_and(|(a, b)| requires_sep(a, b, mode))
        {
            return None;
        }
    }
    let begun = utf16(rest) < utf16(word)
        && word.to_lowercase().starts_with(&rest.to_lowercase())
        && (!rest.is_empty() || g.n > 0);
    begun.then(|| Partial {
        at: s.len() - rest.len(),
        word: word.clone(),
    })
}

fn utf16(s: &str) -> usize {
    s.encode_utf16().count()
}

/// A keyword begun at the end of a wildcard's text that starts at
/// `start`: the latest place it may begin where the wildcard still holds
/// something before it.
pub(super) fn partial_in_wildcard(
    s: &str,
    start: usize,
    words: &[String],
    mode: Spacing,
) -> Option<Partial> {
    let first = words.first()?.chars().next()?;
    let places = s
        .char_indices()
        .map(|(i, _)| i)
        .filter(|&i| i > start)
        .rev();
    for at in places {
        let before = char_before(s, at)?;
        if mode != Spacing::None && !is_sep(before) && requires_sep(before, first, mode) {
            continue;
        }
        let Some(found) = keyword_from(s, at, words, mode) else {
            continue;
        };
        if wildcard_text(s, start, at, mode).is_some() {
            return Some(found);
        }
    }
    None
}

/// `at` moved back over the separators before it, not below `floor`.
pub(super) fn strip_trailing_seps(s: &str, mut at: usize, floor: usize) -> usize {
    while at > floor {
        match char_before(s, at) {
            Some(c) if is_sep(c) => at -= c.len_utf8(),
            _ => break,
        }
    }
    at
}

/// True when the text from `from` to `to` is separators only (and not
/// empty).
pub(super) fn separators_only(s: &str, from: usize, to: usize) -> bool {
    to > from && skip_seps(s, from) >= to
}
