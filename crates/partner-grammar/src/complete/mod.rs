//! Completion: what may come next after a prefix. Every rule is matched as
//! far as the prefix allows; where each stops says what to offer — the
//! next word of a literal, or a property to fill for a wildcard — and only
//! the candidates that consumed the most of the prefix are kept. Backward
//! completion backs up to the last matched word so it can be reconsidered.

use super::expr::Path;
use super::matcher::{
    Captures, LastPart, MatchOptions, Stat, State, Work, finalize, finish_nested, initial_states,
    make_value, run,
};
use super::model::{Grammar, Part};
use super::parse::Spacing;
use super::text::{
    boundary_ok, char_at, is_sep, literal_at, requires_sep, skip_seps, wildcard_text,
};

mod result;

use result::{Candidate, Kind, build, mode_name};
pub use result::{Completion, Direction, Group, Property};

/// Greedy word-by-word match of `words` from byte `i`: how many matched,
/// where the last one ended and where the one before it ended.
fn words_greedily(s: &str, i: usize, words: &[String], mode: Spacing) -> (usize, usize, usize) {
    let (mut index, mut prev, mut n) = (i, i, 0);
    for (k, word) in words.iter().enumerate() {
        let mut at = index;
        let found = if mode == Spacing::None {
            literal_at(s, at, word)
        } else if k == 0 {
            loop {
                if let Some(e) = literal_at(s, at, word) {
                    break Some(e);
                }
                match char_at(s, at) {
                    Some(c) if is_sep(c) => at += c.len_utf8(),
                    _ => break None,
                }
            }
        } else {
            let need = words[k - 1]
                .chars()
                .next_back()
                .zip(word.chars().next())
                .is_some_and(|(a, b)| requires_sep(a, b, mode));
            // Longest separator run first, as a greedy `[sep]*` would try.
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
        };
        let Some(end) = found else { break };
        if !boundary_ok(s, end, mode) {
            break;
        }
        prev = index;
        index = end;
        n += 1;
    }
    (n, index, prev)
}

/// A literal matched word by word from byte `i`: where its completion
/// goes and the word (the next one; backward, the last one matched when
/// nothing commits it). The caller filters by what follows.
fn partial_word(
    s: &str,
    i: usize,
    words: &[String],
    mode: Spacing,
    dir: Direction,
) -> Option<(usize, String)> {
    let (n, end, prev) = words_greedily(s, i, words, mode);
    let could_back_up = n > 0 && (mode == Spacing::None || skip_seps(s, end) == end);
    if dir == Direction::Backward && could_back_up {
        return Some((prev, words[n - 1].clone()));
    }
    if n >= words.len() {
        return None;
    }
    Some((end, words[n].clone()))
}

/// True when the last part matched was found by scanning past a wildcard
/// (its place is not settled).
fn last_after_wildcard(state: &State<'_>) -> bool {
    matches!(
        state.last,
        Some(
            LastPart::Str {
                after_wildcard: true,
                ..
            } | LastPart::Num {
                after_wildcard: true,
                ..
            }
        )
    )
}

fn property<'g>(
    state: &State<'g>,
    id: u32,
    at_mode: Spacing,
    work: &mut Work<'g>,
    prefix: &str,
) -> Property {
    let mut temp = *state;
    while finish_nested(&mut temp, work, false, true) {}
    let mut stat = Stat::default();
    let captures = Captures {
        arena: &work.arena,
        values: temp.values,
        request: prefix,
    };
    let value = make_value(
        temp.value,
        temp.id_list(),
        captures,
        &Path::Root,
        &mut stat,
        Some(id),
    );
    Property {
        value,
        names: stat.names,
        separator_mode: mode_name(at_mode),
    }
}

/// What may follow `prefix`.
pub fn complete(
    grammar: &Grammar,
    prefix: &str,
    direction: Direction,
    min_prefix: Option<usize>,
    options: &MatchOptions,
) -> Completion {
    let mut work = Work::new(*options, false);
    initial_states(grammar, &mut work.arena.stack);
    let mut candidates: Vec<Candidate> = Vec::new();
    let backward = direction == Direction::Backward;
    while let Some(mut state) = work.pop() {
        let complete_rule = run(&mut state, prefix, &mut work);
        if work.exhausted() {
            break;
        }
        let mode = state.spacing;
        let lead_mode = state.leading_spacing(&work.arena);
        let at_end = state.index >= prefix.len();
        if complete_rule {
            let mut done = state;
            if finalize(&mut done, prefix, &mut work.arena) {
                // An exact match: both directions back up to what was
                // matched last, so it can be reconsidered.
                if let Some(c) = back_up(&state, prefix, &mut work) {
                    candidates.push(c);
                }
                continue;
            }
            // A wildcard at the end with nothing in it yet.
            if let Some((start, Some(id))) = state.wild
                && wildcard_text(prefix, start, prefix.len(), mode).is_none()
            {
                let back = backward && at_end;
                candidates.push(empty_wildcard(&state, prefix, (start, id), back, &mut work));
            }
            continue;
        }
        let Some(part) = state.parts().get(state.part) else {
            continue;
        };
        let mut clean = state;
        let finalized = finalize(&mut clean, prefix, &mut work.arena);
        match (part, state.wild) {
            (Part::Str(words), Some((start, id))) if finalized => {
                let wild = (start, id);
                keyword_after_wildcard(
                    &state,
                    prefix,
                    words,
                    wild,
                    backward,
                    &mut work,
                    &mut candidates,
                );
            }
            (_, Some((start, Some(id)))) => {
                let back = backward && at_end;
                candidates.push(empty_wildcard(&state, prefix, (start, id), back, &mut work));
            }
            (Part::Str(words), None) => {
                if finalized && backward && at_end && state.last.is_some() {
                    if let Some(c) = back_up(&state, prefix, &mut work) {
                        candidates.push(c);
                    }
                } else if let Some((at, word)) =
                    partial_word(prefix, state.index, words, mode, direction)
                {
                    let mode = if at == state.index { lead_mode } else { mode };
                    candidates.push(Candidate {
                        at,
                        kind: Kind::Word(word),
                        mode,
                        after_wildcard: false,
                        range: None,
                        partial: false,
                    });
                }
            }
            _ => {}
        }
    }
    build(candidates, prefix, min_prefix, direction)
}

/// A wildcard that took the rest of the prefix, before a keyword: the
/// keyword may be begun at its end (a partial word), or comes next —
/// backward, the wildcard's property and the keyword from its start.
fn keyword_after_wildcard<'g>(
    state: &State<'g>,
    prefix: &str,
    words: &[String],
    (start, id): (usize, Option<u32>),
    backward: bool,
    work: &mut Work<'g>,
    candidates: &mut Vec<Candidate>,
) {
    let mode = state.spacing;
    // The wildcard took the rest: the keyword may be begun at
    // its end, or comes next.
    let partial = partial_in_wildcard(prefix, start, words, mode).map(|(at, w)| {
        if at < prefix.len() {
            (prefix[..at].trim_end_matches(is_sep).len().max(start), w)
        } else {
            (at, w)
        }
    });
    match (backward, partial, id) {
        // A keyword begun at the wildcard's end (backward, only one that
        // is not at the very end).
        (_, Some((at, word)), _) if !backward || at < prefix.len() => {
            candidates.push(Candidate {
                at,
                kind: Kind::Word(word),
                mode,
                after_wildcard: true,
                range: None,
                partial: true,
            });
        }
        (true, _, Some(id)) => {
            candidates.push(Candidate {
                at: start,
                kind: Kind::Property(property(state, id, mode, work, prefix)),
                mode,
                after_wildcard: false,
                range: None,
                partial: false,
            });
            candidates.push(Candidate {
                at: start,
                kind: Kind::Word(words[0].clone()),
                mode,
                after_wildcard: true,
                range: Some(start),
                partial: false,
            });
        }
        _ => {
            let end = prefix.trim_end_matches(is_sep).len().max(start);
            candidates.push(Candidate {
                at: end,
                kind: Kind::Word(words[0].clone()),
                mode,
                after_wildcard: true,
                range: Some(start),
                partial: false,
            });
        }
    }
}

/// A wildcard at `start` that holds nothing yet: its property, or
/// (`back`: backward, nothing after the last keyword) what was matched
/// before it, offered again.
fn empty_wildcard<'g>(
    state: &State<'g>,
    prefix: &str,
    (start, id): (usize, u32),
    back: bool,
    work: &mut Work<'g>,
) -> Candidate {
    if back && let Some(c) = back_up_before(state, prefix, work) {
        return c;
    }
    let mode = state.spacing;
    Candidate {
        at: start,
        kind: Kind::Property(property(state, id, mode, work, prefix)),
        mode,
        after_wildcard: last_after_wildcard(state),
        range: None,
        partial: false,
    }
}

/// What was matched last before a pending wildcard, offered again.
fn back_up_before<'g>(state: &State<'g>, prefix: &str, work: &mut Work<'g>) -> Option<Candidate> {
    let mut before = *state;
    before.wild = None;
    back_up(&before, prefix, work)
}

/// What was matched last, offered again: a wildcard that took the end
/// (its property, at its start), or the last word of the last literal.
fn back_up<'g>(state: &State<'g>, prefix: &str, work: &mut Work<'g>) -> Option<Candidate> {
    if let Some((start, Some(id))) = state.wild {
        return Some(Candidate {
            at: start,
            kind: Kind::Property(property(state, id, state.spacing, work, prefix)),
            mode: state.spacing,
            after_wildcard: false,
            range: None,
            partial: false,
        });
    }
    match state.last {
        Some(LastPart::Str {
            start,
            words,
            after_wildcard,
        }) => {
            let (n, _, prev) = words_greedily(prefix, start, words, state.spacing);
            let (at, word) = if n == 0 {
                (start, words[0].clone())
            } else {
                (prev, words[n - 1].clone())
            };
            Some(Candidate {
                at,
                kind: Kind::Word(word),
                mode: state.spacing,
                after_wildcard,
                range: None,
                partial: false,
            })
        }
        _ => None,
    }
}

/// A prefix of the keyword's first word at the end of a wildcard's text.
fn partial_in_wildcard(
    s: &str,
    start: usize,
    words: &[String],
    mode: Spacing,
) -> Option<(usize, String)> {
    let first = words[0].chars().next()?;
    let mut cands: Vec<usize> = s
        .char_indices()
        .map(|(i, _)| i)
        .filter(|i| *i > start)
        .collect();
    cands.reverse();
    for at in cands {
        let before = s[..at].chars().next_back()?;
        if mode != Spacing::None && !is_sep(before) && requires_sep(before, first, mode) {
            continue;
        }
        let (n, end, _) = words_greedily(s, at, words, mode);
        if n >= words.len() {
            continue;
        }
        let found = if n > 0 && end == s.len() {
            Some((s.len(), words[n].clone()))
        } else {
            let rest = &s[end..];
            let rest = if n > 0 {
                rest.trim_start_matches(is_sep)
            } else {
                rest
            };
            let word = &words[n];
            (!rest.is_empty()
                && rest.chars().count() < word.chars().count()
                && word.to_lowercase().starts_with(&rest.to_lowercase()))
            .then(|| (s.len() - rest.len(), word.clone()))
        };
        if let Some(f) = found
            && wildcard_text(s, start, at, mode).is_some()
        {
            return Some(f);
        }
    }
    None
}
