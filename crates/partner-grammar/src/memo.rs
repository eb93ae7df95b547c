//! What completion remembers of the rules it has entered, as the
//! reference's matcher does (its memoization is on by default, and it
//! changes what completion offers, not only how fast).
//!
//! The first time a rule set is entered at a place (the byte, the spacing
//! that may lead, whether a wildcard is open, whether its value is
//! wanted), every way through it is explored, and the entry is closed once
//! the search has come back below it. From then on, entering it at the same
//! place again either fails at once (no alternative reached its end the
//! first time) or — when none of the first time's ways were cut short by an
//! open wildcard or a repetition — takes only the ways that reach its end:
//! the parses stopped inside it were offered the first time and are not
//! offered again. So a track-name property reached by three paths that
//! enter the same rule at the same place is listed once, as the reference
//! lists it.

use std::collections::HashMap;

use super::parse::Spacing;
use super::state::{Arena, Ids, Link, NIL, State};
use super::work::Work;

/// Where a rule set is entered, as far as what it can match is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Place {
    /// The rule set, by address.
    pub rules: usize,
    pub index: usize,
    /// The spacing that may come before its first word.
    pub lead: Spacing,
    /// A wildcard is open before it.
    pub wild: bool,
    /// Its value is wanted.
    pub require: bool,
    /// It is its alternative's only part and gives it its value.
    pub carrier: bool,
}

/// What entering a rule set at a place found the first time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// No alternative reached its end.
    Failed,
    /// Some did, with nothing open before it.
    Succeeded,
}

/// How a rule set is to be entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// It failed here before: do not enter.
    Refused,
    /// Entered here before: only the ways that reach its end count.
    Again,
    /// First time here (or one that cannot be taken again): explore it,
    /// noting what it finds in this entry.
    First(Link),
}

/// An entry being explored.
#[derive(Debug, Clone, Copy)]
struct Open {
    place: Place,
    /// The stack's height when it was entered: closed once the search
    /// is back below it.
    height: usize,
    /// Some alternative reached its end.
    finished: bool,
    /// Its successes may not be taken again (a wildcard open before it,
    /// a repetition, or a rule that keeps no values).
    once: bool,
}

/// The entries of one completion.
#[derive(Debug, Default)]
pub(super) struct Memo {
    known: HashMap<Place, Outcome>,
    entries: Vec<Open>,
    /// The entries not yet closed, innermost last.
    open: Vec<Link>,
}

/// Most places remembered: past it, rules are explored every time.
const MAX_KNOWN: usize = 1 << 16;

impl Memo {
    /// How to enter rule set at `place`; `once` when its successes may not
    /// be taken again; `height` is the stack's height now.
    pub(super) fn enter(&mut self, place: Place, repeat: bool, once: bool, height: usize) -> Entry {
        match self.known.get(&place).copied() {
            Some(Outcome::Failed) => return Entry::Refused,
            Some(Outcome::Succeeded) if !repeat && !place.wild => return Entry::Again,
            _ => {}
        }
        if self.entries.len() >= MAX_KNOWN {
            return Entry::First(NIL);
        }
        let at = self.entries.len() as Link;
        self.entries.push(Open {
            place,
            height,
            finished: false,
            once,
        });
        self.open.push(at);
        Entry::First(at)
    }

    /// An alternative of entry `at` reached its end.
    pub(super) fn finished(&mut self, at: Link) {
        if let Some(e) = self.entries.get_mut(at as usize) {
            e.finished = true;
        }
    }

    /// Moves the open entries' heights (the stack lost states below them).
    pub(super) fn rebase(&mut self, new_height: impl Fn(usize) -> usize) {
        for &at in &self.open {
            let e = &mut self.entries[at as usize];
            e.height = new_height(e.height);
        }
    }

    /// Closes the entries whose search is over, now that the stack is
    /// `height` high and the state that was running is done.
    pub(super) fn close(&mut self, height: usize) {
        while let Some(&at) = self.open.last() {
            let e = self.entries[at as usize];
            if e.height < height {
                break;
            }
            self.open.pop();
            let outcome = match (e.finished, e.once) {
                (false, _) => Outcome::Failed,
                (true, false) => Outcome::Succeeded,
                (true, true) => continue,
            };
            let room = self.known.len() < MAX_KNOWN;
            match self.known.get_mut(&e.place) {
                Some(known) if outcome == Outcome::Failed => *known = outcome,
                Some(_) => {}
                None if room => {
                    self.known.insert(e.place, outcome);
                }
                None => {}
            }
        }
    }
}

/// When completing, how the memo says to enter this rule part (see
/// `memo`); none when matching.
pub(super) fn remembered<'g>(
    state: &State<'g>,
    entry: super::matcher::Entry<'g>,
    require: bool,
    work: &mut Work<'g>,
) -> Option<Entry> {
    let lead = state.leading_spacing(&work.arena);
    let height = work.arena.stack.len();
    let memo = work.memo.as_mut()?;
    let place = Place {
        rules: std::ptr::from_ref(entry.rules) as usize,
        index: state.index,
        lead,
        wild: state.wild.is_some(),
        require,
        carrier: entry.var.is_none() && state.value.is_none() && entry.alone,
    };
    let once = entry.repeat || state.wild.is_some() || matches!(state.ids, Ids::Off);
    Some(memo.enter(place, entry.repeat, once, height))
}

/// True when the state stopped inside a rule set entered again where it
/// was entered before (completion offers nothing from there).
pub(super) fn inside_again(state: &State<'_>, arena: &Arena<'_>) -> bool {
    let mut frame = arena.frame(state.parent);
    while let Some(f) = frame {
        if f.again {
            return true;
        }
        frame = arena.frame(f.parent);
    }
    false
}
