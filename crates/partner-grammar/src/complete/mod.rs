//! Completion: what may come next after a prefix, answered as the
//! reference answers it. Every parse is followed as far as the prefix
//! allows (remembering rules already entered at a place, as the reference
//! does — see `memo`); where each stops says what to offer — the next word
//! of a literal, a property to fill for a wildcard, or (backward, or after
//! an exact match) what was matched last, offered again — and only the
//! candidates that reach farthest into the prefix are kept (`collect`).

use super::expr::Path;
use super::matcher::{
    Captures, LastPart, MatchOptions, Policy, Stat, State, Work, finalize, finish_nested,
    initial_states, make_value, run,
};
use super::memo::inside_again;
use super::model::{Grammar, Part};
use super::parse::Spacing;
use super::text::skip_seps;

mod collect;
mod result;
mod words;

use collect::{AtEnd, Fixed, Gathered, Offer, Ranged};
use result::mode_name;
pub use result::{Completion, Direction, Group, Property};
use words::partial_string;

/// A pending wildcard: where it began and the variable it fills.
type Wild = Option<(usize, Option<u32>)>;

/// The value a property would complete, with `id` the wildcard to fill.
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
    let mut found = Gathered::new(prefix, direction, min_prefix);
    let shortest = options.wildcard == Policy::First;
    while let Some(mut state) = work.pop() {
        let matched = run(&mut state, prefix, &mut work);
        if work.exhausted() {
            break;
        }
        if !matched && inside_again(&state, &work.arena) {
            continue;
        }
        let saved = state.wild;
        let mut done = state;
        if finalize(&mut done, prefix, &mut work.arena) {
            let mut stop = Stop {
                found: &mut found,
                work: &mut work,
                prefix,
            };
            if matched {
                stop.exact(&done, &state, saved);
            } else {
                stop.clean(&done, &state, saved);
            }
            work.succeeded();
        } else {
            Stop {
                found: &mut found,
                work: &mut work,
                prefix,
            }
            .dirty(&state, matched);
            if shortest && saved.is_some_and(|(start, _)| skip_seps(prefix, start) >= prefix.len())
            {
                work.succeeded();
            }
        }
    }
    found.settle();
    found.answer()
}

/// Where one parse stopped, and what it offers.
struct Stop<'a, 'p, 'g> {
    found: &'a mut Gathered<'p, 'g>,
    work: &'a mut Work<'g>,
    prefix: &'p str,
}

impl<'g> Stop<'_, '_, 'g> {
    fn backward(&self) -> bool {
        self.found.direction == Direction::Backward
    }

    /// Offers the property of wildcard `id` at `at`.
    fn property(&mut self, state: &State<'g>, id: u32, at: usize, mode: Spacing, after: bool) {
        let (work, prefix) = (&mut *self.work, self.prefix);
        self.found
            .property(at, mode, after, || property(state, id, mode, work, prefix));
    }

    /// A complete parse (`done`, its pending wildcard `saved` taken from
    /// `before`): what it matched last, offered again.
    fn exact(&mut self, done: &State<'g>, before: &State<'g>, saved: Wild) {
        if done.last.is_some() || saved.is_some_and(|w| w.1.is_some()) {
            let end = (done.index < self.prefix.len()).then_some(done.index);
            self.back_up(before, saved, end);
        } else {
            self.found.reach(done.index);
        }
    }

    /// A parse that took the prefix cleanly and wants more.
    fn clean(&mut self, done: &State<'g>, before: &State<'g>, saved: Wild) {
        let next = done.parts().get(done.part);
        let wild = saved.and_then(|(start, id)| Some((start, id?)));
        let at_end = done.index >= self.prefix.len();
        let deferred = match (wild, next) {
            (Some((start, _)), Some(Part::Str(words))) if at_end => {
                self.found.at_end.push(AtEnd {
                    start,
                    words,
                    mode: done.spacing,
                });
                true
            }
            _ => false,
        };
        if self.backward() && at_end && (wild.is_some() || done.last.is_some()) {
            self.back_up(before, saved, None);
            if let Some((start, id)) = wild
                && matches!(next, Some(Part::Wild { .. } | Part::Num { .. }))
            {
                let property = property(before, id, done.spacing, self.work, self.prefix);
                self.found.ranged.push(Ranged::Property {
                    start,
                    mode: done.spacing,
                    property,
                });
            }
        } else if let Some(Part::Str(words)) = next
            && !deferred
        {
            let lead = done.leading_spacing(&self.work.arena);
            let dir = self.found.direction;
            let (mode, at) = (done.spacing, done.index);
            self.found
                .literal(lead, mode, words, wild.is_some(), at, dir, None);
        }
    }

    /// A parse that could not take the prefix cleanly.
    fn dirty(&mut self, state: &State<'g>, matched: bool) {
        let lead = state.leading_spacing(&self.work.arena);
        if let Some((start, Some(id))) = state.wild {
            let reconsider = state
                .last
                .is_some_and(|l| after_wildcard(&l) || state.index >= self.prefix.len());
            if !(self.backward() && reconsider && self.back_up(state, None, None)) {
                self.property(state, id, start, lead, false);
            }
            return;
        }
        if matched {
            return;
        }
        let Some(Part::Str(words)) = state.parts().get(state.part) else {
            return;
        };
        let dir = self.found.direction;
        let (mode, at) = (state.spacing, state.index);
        self.found.literal(lead, mode, words, false, at, dir, None);
        if self.backward() {
            let tight = lead == Spacing::None;
            if let Some(p) = partial_string(
                self.prefix,
                at,
                words,
                mode,
                Direction::Forward,
                None,
                tight,
            ) {
                let shadow = Fixed {
                    mode: if p.at == at { lead } else { mode },
                    offer: Offer::Word(p.word),
                    after_wildcard: false,
                    backup: false,
                };
                self.found.shadows.push((p.at, shadow));
            }
        }
    }

    /// What was matched last, offered again: a wildcard that took the end
    /// (its property, at its start), the last matched number's property,
    /// or the last word of the last literal; false when there is nothing
    /// to back up over.
    fn back_up(&mut self, state: &State<'g>, saved: Wild, end: Option<usize>) -> bool {
        let part_start = match state.last {
            Some(LastPart::Str { start, .. } | LastPart::Num { start, .. }) => Some(start),
            None => None,
        };
        let lead = state.leading_spacing(&self.work.arena);
        if let Some((start, Some(id))) = saved
            && part_start.is_none_or(|p| start >= p)
        {
            self.property(state, id, start, lead, false);
            return true;
        }
        match state.last {
            Some(LastPart::Str {
                start,
                words,
                after_wildcard,
                mode,
            }) => {
                let back = Direction::Backward;
                let offered =
                    self.found
                        .literal(lead, mode, words, after_wildcard, start, back, end);
                if !offered {
                    self.found.reach(state.index);
                }
                offered
            }
            Some(LastPart::Num {
                start,
                id,
                after_wildcard,
            }) => {
                self.property(state, id, start, lead, after_wildcard);
                true
            }
            None => false,
        }
    }
}

/// True when the part was found by scanning past a wildcard.
fn after_wildcard(last: &LastPart<'_>) -> bool {
    match last {
        LastPart::Str { after_wildcard, .. } | LastPart::Num { after_wildcard, .. } => {
            *after_wildcard
        }
    }
}
