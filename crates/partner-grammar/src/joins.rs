//! Searches that arrive where another already went. Different readings of
//! a request's beginning often go on the same way: in
//! `send email to $(to) with subject $(subject) …` every length of `to`
//! that stops before `with` leads to the same search for the rest. A state
//! taken off the stack is a search's start; when a later one is the same
//! in everything the search reads (place in the request, rule, part, open
//! wildcard, the frames around it, the variables named so far) and differs
//! only in what its variables captured, the parses it would find are the
//! earlier search's, each with its own captures in front. Those are built
//! from what the earlier parses captured after their start, put on top of
//! this state's captures, in the order the search would have found them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::expr::Expr;
use super::state::{Arena, Ids, Link, NIL, State, emptied};

/// How a parse ended: the top rule's value, its variables and captures.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ending<'g> {
    pub value: Option<&'g Expr>,
    pub ids: Link,
    pub values: Link,
}

/// A search started from `start`, and the parses it found (`from..to`).
#[derive(Debug, Clone, Copy)]
struct Search<'g> {
    start: State<'g>,
    key: u64,
    from: usize,
    to: usize,
    /// The stack's height under its start: the search is done when the
    /// stack is back to it.
    floor: usize,
}

/// The searches of one match: those still going (innermost last) and
/// those done, and how each parse found so far ended.
#[derive(Debug, Default)]
pub(super) struct Joins<'g> {
    on: bool,
    going: Vec<Search<'g>>,
    done: Vec<Search<'g>>,
    /// The last search done with each key, by its place in `done`.
    by_key: HashMap<u64, u32, BuildHasherDefault<Folded>>,
    /// One a parse, in the order found.
    pub endings: Vec<Ending<'g>>,
    scratch: Vec<Link>,
}

/// The buffers of a `Joins`, emptied, kept for the next match.
#[derive(Default)]
pub(super) struct JoinBuffers {
    going: Vec<Search<'static>>,
    done: Vec<Search<'static>>,
    by_key: HashMap<u64, u32, BuildHasherDefault<Folded>>,
    endings: Vec<Ending<'static>>,
    scratch: Vec<Link>,
}

/// Hashes a key that is already well mixed: as it is.
#[derive(Default)]
pub(super) struct Folded(u64);

impl Hasher for Folded {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Most searches one match remembers.
const MAX_SEARCHES: usize = 2048;

/// Most frames around a state that `key` reads (`same` reads them all).
const KEY_FRAMES: usize = 4;

/// The fields a search reads, folded into one number (equal states give
/// equal numbers; `same` decides).
fn key(arena: &Arena<'_>, s: &State<'_>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |v: u64| h = (h ^ v).wrapping_mul(0x0100_0000_01b3).rotate_left(5);
    mix(std::ptr::from_ref(s.set) as u64);
    mix(s.alt as u64);
    mix(s.part as u64);
    mix(s.index as u64);
    let mut frame = arena.frame(s.parent);
    for _ in 0..KEY_FRAMES {
        let Some(f) = frame else { break };
        mix(std::ptr::from_ref(f.set) as u64 ^ (f.part as u64) << 48 ^ (f.alt as u64) << 40);
        frame = arena.frame(f.parent);
    }
    mix(u64::from(s.next_id));
    mix(s.wild.map_or(u64::MAX, |(at, id)| {
        (at as u64) << 33 | u64::from(id.unwrap_or(u32::MAX))
    }));
    mix(s.value.map_or(0, |e| std::ptr::from_ref(e) as u64));
    mix(u64::from(s.in_repeat) | u64::from(s.no_skip) << 1 | (s.spacing as u64) << 2);
    h
}

/// True when the variables named in lists `a` and `b` are the same, in the
/// same order.
fn same_ids(arena: &Arena<'_>, mut a: Link, mut b: Link) -> bool {
    loop {
        if a == b {
            return true;
        }
        let (Some(x), Some(y)) = (arena.id(a), arena.id(b)) else {
            return false;
        };
        if x.id != y.id || x.entity != y.entity || x.name != y.name {
            return false;
        }
        (a, b) = (x.prev, y.prev);
    }
}

/// True when the rules around two states (frame lists `a` and `b`) are
/// the same and will be left the same way.
fn same_frames(arena: &Arena<'_>, mut a: Link, mut b: Link) -> bool {
    loop {
        if a == b {
            return true;
        }
        let (Some(x), Some(y)) = (arena.frame(a), arena.frame(b)) else {
            return false;
        };
        let ids = match (x.ids, y.ids) {
            (Ids::Off, Ids::Off) => true,
            (Ids::On(p), Ids::On(q)) => same_ids(arena, p, q),
            _ => false,
        };
        let same = std::ptr::eq(x.set, y.set)
            && x.alt == y.alt
            && x.part == y.part
            && same_expr(x.value, y.value)
            && x.var == y.var
            && x.repeat_part == y.repeat_part
            && x.repeat_start == y.repeat_start
            && x.spacing == y.spacing
            && x.memo == y.memo
            && x.again == y.again
            && ids;
        if !same {
            return false;
        }
        (a, b) = (x.parent, y.parent);
    }
}

fn same_expr(a: Option<&Expr>, b: Option<&Expr>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}

/// True when searches from `a` and `b` go the same way.
fn same(arena: &Arena<'_>, a: &State<'_>, b: &State<'_>) -> bool {
    let ids = match (a.ids, b.ids) {
        (Ids::Off, Ids::Off) => true,
        (Ids::On(x), Ids::On(y)) => same_ids(arena, x, y),
        _ => false,
    };
    std::ptr::eq(a.set, b.set)
        && a.alt == b.alt
        && a.part == b.part
        && a.index == b.index
        && a.next_id == b.next_id
        && a.wild == b.wild
        && a.in_repeat == b.in_repeat
        && a.no_skip == b.no_skip
        && a.spacing == b.spacing
        && same_expr(a.value, b.value)
        && ids
        && same_frames(arena, a.parent, b.parent)
}

impl<'g> Joins<'g> {
    /// Remembering searches (`on`) or not, over buffers kept from an
    /// earlier match.
    pub(super) fn reuse(kept: JoinBuffers, on: bool) -> Self {
        let mut by_key = kept.by_key;
        by_key.clear();
        Joins {
            on,
            going: emptied(kept.going),
            done: emptied(kept.done),
            by_key,
            endings: emptied(kept.endings),
            scratch: emptied(kept.scratch),
        }
    }

    /// Its buffers, emptied, for keeping.
    pub(super) fn into_buffers(self) -> JoinBuffers {
        JoinBuffers {
            going: emptied(self.going),
            done: emptied(self.done),
            by_key: if self.by_key.capacity() > 1 << 14 {
                HashMap::default()
            } else {
                self.by_key
            },
            endings: emptied(self.endings),
            scratch: emptied(self.scratch),
        }
    }

    /// Turns remembering on or off.
    pub(super) fn set_on(&mut self, on: bool) {
        self.on = on;
    }

    /// Before a state is taken off a stack `height` high: the searches
    /// that are done are remembered, with the parses they found.
    pub(super) fn close(&mut self, height: usize, found: usize) {
        while let Some(last) = self.going.last() {
            if height > last.floor {
                break;
            }
            let mut search = *last;
            self.going.pop();
            search.to = found;
            if self.done.len() < MAX_SEARCHES {
                self.by_key.insert(search.key, self.done.len() as u32);
                self.done.push(search);
            }
        }
    }
}

impl<'g> Arena<'g> {
    /// A state taken off the stack (leaving it `floor` high) starts a
    /// search: the earlier search it is the same as, if one is done (its
    /// start and its parses), else none (and this one is remembered).
    pub(super) fn joins_start(
        &mut self,
        state: &State<'g>,
        floor: usize,
        found: usize,
    ) -> Option<(State<'g>, usize, usize)> {
        if !self.joins.on || state.twin != NIL {
            return None;
        }
        let k = key(self, state);
        if let Some(&at) = self.joins.by_key.get(&k)
            && let Some(s) = self.joins.done.get(at as usize)
            && same(self, &s.start, state)
        {
            return Some((s.start, s.from, s.to));
        }
        self.joins.going.push(Search {
            start: *state,
            key: k,
            from: found,
            to: found,
            floor,
        });
        None
    }

    /// The earlier search's parse `at` (which started from `start`), as
    /// `state`'s: what it captured after its start, on top of `state`'s
    /// captures.
    pub(super) fn rebase(&mut self, at: usize, start: &State<'g>, state: &State<'g>) -> Ending<'g> {
        let end = self.joins.endings[at];
        let mut scratch = std::mem::take(&mut self.joins.scratch);
        scratch.clear();
        let mut link = end.values;
        while link != start.values {
            let Some(node) = self.value(link) else { break };
            scratch.push(link);
            link = node.prev;
        }
        let mut top = state.values;
        for &l in scratch.iter().rev() {
            if let Some(&node) = self.value(l) {
                top = self.push_value(node, top);
            }
        }
        self.joins.scratch = scratch;
        Ending { values: top, ..end }
    }
}

/// Steps after which a match shares its searches (a short one would
/// spend more remembering them than it saves).
pub(super) const JOIN_AFTER: usize = 32;

/// Whether tests match with searches remembered (they compare both ways).
#[cfg(test)]
pub(super) fn joins_on() -> bool {
    !tests::OFF.with(std::cell::Cell::get)
}

#[cfg(not(test))]
pub(super) fn joins_on() -> bool {
    true
}

#[cfg(test)]
pub(super) mod tests {
    use crate::{LoadOptions, MatchOptions, NoFiles, Quotes, load_grammar, match_grammar};

    thread_local! {
        /// Set to match without sharing searches.
        pub(crate) static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Parses built from a shared search, so far.
        pub(crate) static SHARED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Every parse, with searches shared and without; and how many were
    /// built from a shared search.
    fn both(text: &str, input: &str) -> (Vec<crate::MatchResult>, Vec<crate::MatchResult>, usize) {
        let options = LoadOptions {
            enable_value_expressions: true,
            start_value_required: true,
            quotes: Quotes::Literal,
        };
        let g = load_grammar("t.agr", text, &options, &NoFiles).expect("the grammar loads");
        SHARED.with(|c| c.set(0));
        let on = match_grammar(&g, input, &MatchOptions::default());
        let shared = SHARED.with(std::cell::Cell::get);
        OFF.with(|o| o.set(true));
        let off = match_grammar(&g, input, &MatchOptions::default());
        OFF.with(|o| o.set(false));
        (on, off, shared)
    }

    #[test]
    fn shared_searches_find_the_parses_a_search_would_in_its_order() {
        let mail = "<Start> = <send>;\n\
            <send> = <Send> $(to:string) <Subj> $(subject:string) <Body> $(body:string) $(cc:<Cc>)? $(a:<Att>)? -> { to, subject, body, cc, a } \
            | <Send> $(to:string) <Body> $(body:string) <Subj> $(subject:string) $(cc:<Cc>)? -> { to, subject, body, cc };\n\
            <Send> = (please)? (send (an | a)? email | email) (to | for)?;\n\
            <Subj> = with (the | a)? subject | subject (is)?;\n\
            <Body> = (and | with)? (saying | body)?;\n\
            <Cc> = (cc | copy) $(cc:string) -> cc;\n\
            <Att> = (with | attach) $(x:string) -> x;";
        let cases = [
            (
                mail,
                "send email to lunch plans with the subject the report with body the report cc the report",
            ),
            (
                mail,
                "please email for a b with subject c d saying e f copy g with h",
            ),
            (
                mail,
                "send an email to x y subject is with a with b with c with d",
            ),
            (
                "<Start> = $(a:wildcard) and $(b:wildcard) and $(c:wildcard) -> [a, b, c];",
                "x and y and z and w and v and u",
            ),
            (
                "<Start> = (<N>)+ $(rest:wildcard) -> rest;\n<N> = $(n:number) (and)? -> n;",
                "1 and 2 and 3 and 4 and four",
            ),
        ];
        let mut shared_any = 0;
        for (text, input) in cases {
            let (on, off, shared) = both(text, input);
            assert!(!off.is_empty(), "{input}: matches");
            assert_eq!(on, off, "{input}");
            shared_any += shared;
        }
        assert!(
            shared_any > 0,
            "some parses were built from a shared search"
        );
    }
}
