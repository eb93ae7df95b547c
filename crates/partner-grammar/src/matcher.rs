//! The matcher: every parse of a request, in the reference's order. One
//! state walks the parts of a rule left to right over the request's
//! characters; each fork (another alternative, skipping an optional part,
//! another repetition, a longer wildcard) leaves a copy on a stack that is
//! resumed last-in first-out — a depth-first search of the parse forest.
//! Values are built only for a complete parse, from the captures the
//! parse's value expression reads, which is also what the statistics
//! count (captures used, wildcard characters, entity-typed properties).

use super::find::find_bounded;
use super::joins::Ending;
use super::memo;
use super::model::{Grammar, Part, RuleSet};
use super::parse::Spacing;
use super::parses::Found;
pub(super) use super::state::{Arena, Captured, Frame, Ids, LastPart, NIL, Origin, State};
use super::text::{boundary_ok, match_words, next_number, number_at, skip_seps, wildcard_text};
use super::value::Value;
use super::viable::{bits_down, first_bits, may_start};
pub(super) use super::work::Work;

/// One parse of a request.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchResult {
    /// The value the grammar gives it.
    pub value: Value,
    /// Captures read to make the value (skipped optional ones not counted).
    pub matched_value_count: usize,
    /// Characters (UTF-16 units) captured by wildcards that were read.
    pub wildcard_char_count: usize,
    /// Where entity-typed wildcards landed in the value (`parameters.date`).
    pub entity_wildcard_property_names: Vec<String>,
}

/// How a kind of fork is explored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Every way (the default).
    #[default]
    Exhaustive,
    /// The first way that succeeds: shortest wildcard, taking an optional
    /// part, repeating greedily.
    First,
    /// The other first way: skipping an optional part, stopping a
    /// repetition early.
    Other,
}

/// Match options, as the reference names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchOptions {
    /// `wildcardPolicy`: `exhaustive` or `shortest` (`First`).
    pub wildcard: Policy,
    /// `optionalPolicy`: `exhaustive`, `preferTake` (`First`), `preferSkip` (`Other`).
    pub optional: Policy,
    /// `repeatPolicy`: `exhaustive`, `greedy` (`First`), `nonGreedy` (`Other`).
    pub repeat: Policy,
}

/// Most states one match may visit, and most parses it returns: a hostile
/// grammar or request ends early instead of running away.
pub const MAX_STEPS: usize = 2_000_000;
pub(super) const MAX_RESULTS: usize = 10_000;

/// The states matching `request` starts from, first rule on top (rules
/// that cannot begin the request are left out).
fn initial_states_for<'g>(grammar: &'g Grammar, request: &str, work: &mut Work<'g>) {
    let set: &RuleSet = grammar.entry();
    let rules = set.rules();
    // Separators may lead unless an alternative's spacing is `none`; the
    // table answers for both (it may let more through, never fewer).
    if let Some(d) = set.dispatch() {
        // Only the alternatives the table lets through, last first.
        let mask = work.needs_met(request, set, d.mask_at(request, 0, true));
        for i in bits_down(mask & first_bits(rules.len())) {
            work.arena.stack.push(State::start(set, i));
        }
        return;
    }
    for i in (0..rules.len()).rev() {
        if may_start(request, 0, set.firsts(i), rules[i].spacing != Spacing::None) {
            work.arena.stack.push(State::start(set, i));
        }
    }
}

/// The states a grammar's matching starts from, first rule on top.
pub(super) fn initial_states<'g>(grammar: &'g Grammar, stack: &mut Vec<State<'g>>) {
    let set: &RuleSet = &grammar.rules;
    stack.extend((0..set.rules().len()).rev().map(|i| State::start(set, i)));
}

/// Every parse of `request`, in the reference's order.
pub fn match_grammar(grammar: &Grammar, request: &str, options: &MatchOptions) -> Vec<MatchResult> {
    let mut work = Work::new(*options, true);
    initial_states_for(grammar, request, &mut work);
    let exhaustive = *options == MatchOptions::default();
    let may_join = exhaustive && super::joins::joins_on();
    let mut found = Found {
        results: Vec::new(),
        request,
    };
    loop {
        if may_join && !work.joins && work.steps >= super::joins::JOIN_AFTER {
            // Long enough to be worth sharing searches in.
            work.joins = true;
            work.arena.joins.set_on(true);
        }
        let height = work.arena.stack.len();
        work.arena.twins.close(height, found.results.len());
        work.arena.joins.close(height, found.results.len());
        let Some(mut state) = work.pop() else {
            break;
        };
        if let Some((from, to)) = work.arena.twins.replay(height - 1) {
            // A skipped fork whose search a path that became the same as
            // it has made: the parses it would find, again.
            if found.copy(&mut work.arena, from, to) {
                break;
            }
            work.found = found.results.len();
            continue;
        }
        let joined = work
            .arena
            .joins_start(&state, height - 1, found.results.len());
        if let Some((start, from, to)) = joined {
            // A search already made from a state the same as this one but
            // for its captures: its parses, with this state's captures.
            #[cfg(test)]
            super::joins::tests::SHARED.with(|c| c.set(c.get() + to - from));
            let full = found.rebase(&mut work, &start, &state, from..to);
            work.found = found.results.len();
            if full || work.exhausted() {
                break;
            }
            continue;
        }
        if run(&mut state, request, &mut work) && finalize(&mut state, request, &mut work.arena) {
            let ending = Ending {
                value: state.value,
                ids: state.id_list(),
                values: state.values,
            };
            let full = found.push(&mut work.arena, ending);
            work.found = found.results.len();
            work.succeeded();
            if full {
                break;
            }
        }
        if work.exhausted() {
            break;
        }
    }
    found.results
}

/// The byte range of a wildcard's text from `a` to `b` (separators at its
/// ends trimmed), when it holds any.
fn wildcard_span(s: &str, a: usize, b: usize, mode: Spacing) -> Option<Captured<'static>> {
    let text = wildcard_text(s, a, b, mode)?;
    let start = text.as_ptr() as usize - s.as_ptr() as usize;
    Some(Captured::Span(start as u32, (start + text.len()) as u32))
}

/// Ends a state at the end of the request: a pending wildcard takes the
/// rest, and only separators may remain (nothing at all in `none`).
pub(super) fn finalize<'g>(state: &mut State<'g>, s: &str, arena: &mut Arena<'g>) -> bool {
    if let Some((start, id)) = state.wild {
        let Some(span) = wildcard_span(s, start, s.len(), state.spacing) else {
            return false;
        };
        state.wild = None;
        state.index = s.len();
        if let Some(id) = id {
            state.add_with_id(arena, id, span, true);
        }
    }
    if state.index < s.len() {
        if state.spacing == Spacing::None {
            return false;
        }
        if skip_seps(s, state.index) < s.len() {
            return false;
        }
    }
    true
}

/// Leaves a finished nested rule for its parent; false at the top. A
/// repeated rule leaves a copy that repeats it (when `repeat`).
pub(super) fn finish_nested<'g>(
    state: &mut State<'g>,
    work: &mut Work<'g>,
    repeat: bool,
    partial: bool,
) -> bool {
    let Some(parent) = work.arena.frame(state.parent).copied() else {
        return false;
    };
    if !partial
        && parent.memo != NIL
        && let Some(memo) = &mut work.memo
    {
        memo.finished(parent.memo);
    }
    let (ids, value) = (state.ids, state.value);
    state.parent = parent.parent;
    let parent_parts = parent
        .set
        .rules()
        .get(parent.alt)
        .map_or(0, |r| r.parts.len());
    if !matches!(parent.ids, Ids::Off)
        && (parent.var.is_some() || parent.value.is_some() || parent_parts != 1)
    {
        state.value = parent.value;
        state.ids = parent.ids;
        if let Some(var) = parent.var {
            let list = match ids {
                Ids::On(list) => list,
                Ids::Off => NIL,
            };
            if list != NIL || value.is_some() || !partial {
                state.add_value(&mut work.arena, Some(var), Captured::Nested(value, list));
            }
        }
    }
    state.set = parent.set;
    state.alt = parent.alt;
    state.part = parent.part;
    state.spacing = parent.spacing;
    if let Some(again_at) = parent.repeat_part
        && repeat
        && state.index > parent.repeat_start
    {
        let mut again = *state;
        again.part = again_at;
        again.in_repeat = true;
        if work.options.repeat == Policy::First {
            // Greedy: repeat first, stop later.
            let stop = std::mem::replace(state, again);
            work.push(stop, Origin::Repeat);
        } else {
            work.push(again, Origin::Repeat);
        }
    }
    true
}

/// Takes a pending wildcard's text up to `end`, moving on to `next`; a
/// copy that keeps looking for a longer capture is left for later, unless
/// `longer` says there is none to find.
fn capture<'g>(
    state: &mut State<'g>,
    s: &str,
    end: usize,
    next: usize,
    work: &mut Work<'g>,
    longer: bool,
) -> bool {
    let Some((start, id)) = state.wild else {
        return false;
    };
    let Some(span) = wildcard_span(s, start, end, state.spacing) else {
        return false;
    };
    state.index = next;
    if longer {
        work.push(*state, Origin::Wildcard);
    }
    state.wild = None;
    if let Some(id) = id {
        state.add_with_id(&mut work.arena, id, span, true);
    }
    true
}

fn match_str<'g>(state: &mut State<'g>, s: &str, words: &'g [String], work: &mut Work<'g>) -> bool {
    let lead = state.leading_spacing(&work.arena) != Spacing::None;
    let mode = state.spacing;
    let whole = state.value.is_none() && state.parts().len() == 1;
    if state.wild.is_some() {
        let mut from = state.index;
        while let Some((start, end)) = find_bounded(s, from, words, mode, lead) {
            from = if end > start { end } else { end + 1 };
            // The copy that looks for a longer capture starts from `end`;
            // when matching, it is not left if its search would find no
            // place to end at.
            let longer = !work.prune || find_bounded(s, end, words, mode, lead).is_some();
            if capture(state, s, start, end, work, longer) {
                if whole && !matches!(state.ids, Ids::Off) {
                    state.add_value(&mut work.arena, None, Captured::Words(words));
                }
                if !work.prune {
                    state.last = Some(LastPart::Str {
                        start,
                        words,
                        after_wildcard: true,
                        mode,
                    });
                }
                return true;
            }
        }
        return false;
    }
    let Some(end) = match_words(s, state.index, words, mode, lead) else {
        return false;
    };
    if !boundary_ok(s, end, mode) {
        return false;
    }
    if whole && !matches!(state.ids, Ids::Off) {
        state.add_value(&mut work.arena, None, Captured::Words(words));
    }
    if !work.prune {
        state.last = Some(LastPart::Str {
            start: state.index,
            words,
            after_wildcard: false,
            mode,
        });
    }
    state.index = end;
    true
}

#[inline(never)]
fn match_num<'g>(
    state: &mut State<'g>,
    s: &str,
    var: Option<&'g str>,
    work: &mut Work<'g>,
) -> bool {
    let lead = state.leading_spacing(&work.arena) != Spacing::None;
    let mode = state.spacing;
    if state.wild.is_some() {
        let mut from = state.index;
        loop {
            let Some((n, start, end)) = next_number(s, from, lead) else {
                return false;
            };
            from = end;
            if !boundary_ok(s, end, mode) {
                continue;
            }
            // As for words: no copy where no longer capture could end.
            let longer = !work.prune || number_follows(s, end, mode, lead);
            if capture(state, s, start, end, work, longer) {
                if let Some(id) = state.add_id(&mut work.arena, var, false) {
                    state.add_with_id(&mut work.arena, id, Captured::Num(n), false);
                    state.last = Some(LastPart::Num {
                        start,
                        id,
                        after_wildcard: true,
                    });
                }
                return true;
            }
        }
    }
    let Some((n, _, end)) = number_at(s, state.index, lead) else {
        return false;
    };
    if !boundary_ok(s, end, mode) {
        return false;
    }
    if let Some(id) = state.add_id(&mut work.arena, var, false) {
        state.add_with_id(&mut work.arena, id, Captured::Num(n), false);
        state.last = Some(LastPart::Num {
            start: state.index,
            id,
            after_wildcard: false,
        });
    }
    state.index = end;
    true
}

/// Whether a number ending at a word boundary comes at or after `from`
/// (where a longer capture before a number could end).
#[inline(never)]
fn number_follows(s: &str, mut from: usize, mode: Spacing, lead: bool) -> bool {
    while let Some((_, _, end)) = next_number(s, from, lead) {
        if boundary_ok(s, end, mode) {
            return true;
        }
        from = end;
    }
    false
}

/// Advances a state as far as it goes; true when its rule is complete (at
/// the top), false when it cannot go on.
pub(super) fn run<'g>(state: &mut State<'g>, s: &str, work: &mut Work<'g>) -> bool {
    loop {
        work.steps += 1;
        if work.exhausted() {
            return false;
        }
        let parts = state.parts();
        let parts_len = parts.len();
        if state.part >= parts_len {
            if !finish_nested(state, work, true, false) {
                return true;
            }
            if state.twin != NIL {
                let height = work.arena.stack.len();
                work.arena.twins.arrived(state, height, work.found);
            }
            if state.part < state.parts().len()
                && state.wild.is_none()
                && !boundary_ok(s, state.index, state.spacing)
            {
                return false;
            }
            continue;
        }
        let part: &'g Part = &parts[state.part];
        let no_skip = std::mem::take(&mut state.no_skip);
        if part.optional() && !state.in_repeat && !no_skip && offer_skip(state, part, work) {
            continue;
        }
        match part {
            Part::Str(words) => {
                if !match_str(state, s, words, work) {
                    return false;
                }
            }
            Part::Num { var, .. } => {
                if !match_num(state, s, var.as_deref(), work) {
                    return false;
                }
            }
            Part::Wild { var, entity, .. } => {
                if state.wild.is_some() {
                    return false;
                }
                let id = state.add_id(&mut work.arena, var.as_deref(), *entity);
                state.wild = Some((state.index, id));
                if work.joins {
                    // A place where readings of the beginning meet: the
                    // search from here starts afresh, to be shared.
                    state.part += 1;
                    work.push(*state, Origin::Wildcard);
                    return false;
                }
            }
            Part::Rules {
                rules, var, repeat, ..
            } => {
                let entry = Entry {
                    rules,
                    var: var.as_deref(),
                    repeat: *repeat,
                    alone: parts_len == 1,
                };
                if !enter_rules(state, s, entry, work) {
                    return false;
                }
                continue;
            }
        }
        state.part += 1;
    }
}

/// Offers the path that skips an optional part (pushed for later, or —
/// when skipping is preferred — taken now with the taking path pushed);
/// true when the state was replaced by the skip and the loop goes on.
#[inline]
fn offer_skip<'g>(state: &mut State<'g>, part: &'g Part, work: &mut Work<'g>) -> bool {
    let mut skip = *state;
    skip.part += 1;
    if let Some(v) = part.var() {
        skip.add_value(&mut work.arena, Some(v), Captured::Undefined);
    }
    if work.options.optional == Policy::Other {
        // Prefer skipping: take later (without offering the skip again
        // when resumed).
        let mut take = std::mem::replace(state, skip);
        take.no_skip = true;
        work.push(take, Origin::Optional);
        return true;
    }
    work.push(skip, Origin::Optional);
    // Only a rule that may match nothing can bring the taking path back to
    // where the skipping copy starts.
    if let Part::Rules {
        rules,
        repeat: false,
        var: None,
        ..
    } = part
        && rules.may_be_empty()
    {
        let at = work.arena.stack.len() - 1;
        state.twin = work.arena.twins.fork(&skip, at);
    }
    false
}

/// A rule part being entered: its set, the variable it fills, whether it
/// repeats, and whether it is its alternative's only part.
#[derive(Clone, Copy)]
pub(super) struct Entry<'g> {
    pub rules: &'g RuleSet,
    pub var: Option<&'g str>,
    pub repeat: bool,
    pub alone: bool,
}

/// Enters a rule part: a frame to come back to, then the first
/// alternative that can begin here goes on and the other viable ones are
/// pushed (last first); false when none can begin here.
#[inline]
fn enter_rules<'g>(state: &mut State<'g>, s: &str, entry: Entry<'g>, work: &mut Work<'g>) -> bool {
    let Entry {
        rules,
        var,
        repeat,
        alone,
    } = entry;
    let children = rules.rules();
    if children.is_empty() {
        return false;
    }
    let require =
        !matches!(state.ids, Ids::Off) && (var.is_some() || (state.value.is_none() && alone));
    let (memo, again) = match memo::remembered(state, entry, require, work) {
        Some(memo::Entry::Refused) => return false,
        Some(memo::Entry::Again) => (NIL, true),
        Some(memo::Entry::First(at)) => (at, false),
        None => (NIL, false),
    };
    let frame = Frame {
        set: state.set,
        alt: state.alt,
        value: state.value,
        part: state.part + 1,
        var,
        ids: state.ids,
        parent: state.parent,
        repeat_part: repeat.then_some(state.part),
        repeat_start: state.index,
        spacing: state.spacing,
        memo,
        again,
    };
    state.set = rules;
    state.part = 0;
    state.ids = if require { Ids::On(NIL) } else { Ids::Off };
    state.parent = work.arena.push_frame(frame);
    state.in_repeat = false;
    // Only the alternatives that can begin here.
    let lead = state.leading_spacing(&work.arena) != Spacing::None;
    let viable = work.viable(s, rules, state.index, state.wild.is_some(), lead);
    let base = *state;
    let mut fork = |i: usize| {
        let mut other = base;
        other.alt = i;
        other.value = children[i].value.as_deref();
        other.spacing = children[i].spacing;
        work.push(other, Origin::Alternation);
    };
    let first = if let Some(mask) = viable.mask(children.len()) {
        // The others, last first, then the first goes on.
        if mask == 0 {
            return false;
        }
        let first = mask.trailing_zeros() as usize;
        bits_down(mask & !(1 << first)).for_each(&mut fork);
        first
    } else {
        let Some(first) = (0..children.len()).find(|&i| viable.has(i)) else {
            return false;
        };
        (first + 1..children.len())
            .rev()
            .filter(|&i| viable.has(i))
            .for_each(&mut fork);
        first
    };
    state.alt = first;
    state.value = children[first].value.as_deref();
    state.spacing = children[first].spacing;
    true
}

pub(super) use super::values::{Captures, Stat, make_value};
