//! The matcher: every parse of a request, in the reference's order. One
//! state walks the parts of a rule left to right over the request's
//! characters; each fork (another alternative, skipping an optional part,
//! another repetition, a longer wildcard) leaves a copy on a stack that is
//! resumed last-in first-out — a depth-first search of the parse forest.
//! Values are built only for a complete parse, from the captures the
//! parse's value expression reads, which is also what the statistics
//! count (captures used, wildcard characters, entity-typed properties).

use std::rc::Rc;
use std::sync::Arc;

use super::expr::Expr;
use super::model::{Grammar, Part, RuleSet};
use super::parse::Spacing;
use super::text::{
    boundary_ok, char_at, find_words, literal_at, match_words, number_at, skip_seps, wildcard_text,
};
use super::value::Value;

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
const MAX_RESULTS: usize = 10_000;

#[derive(Debug)]
pub(super) struct IdNode {
    pub name: Option<Arc<str>>,
    pub id: u32,
    pub type_name: Option<Arc<str>>,
    pub prev: Option<Rc<IdNode>>,
}

/// Which values a rule keeps: none (`Off`), or a list (possibly empty).
#[derive(Debug, Clone)]
pub(super) enum Ids {
    Off,
    On(Option<Rc<IdNode>>),
}

#[derive(Debug, Clone)]
pub(super) enum Captured {
    Str(String),
    Num(f64),
    Undefined,
    Nested(Option<Arc<Expr>>, Option<Rc<IdNode>>),
}

#[derive(Debug)]
pub(super) struct ValNode {
    pub id: u32,
    pub value: Captured,
    pub wildcard: bool,
    pub prev: Option<Rc<ValNode>>,
}

#[derive(Debug)]
pub(super) struct Frame<'g> {
    pub set: &'g RuleSet,
    pub alt: usize,
    pub value: Option<Arc<Expr>>,
    pub part: usize,
    pub var: Option<Arc<str>>,
    pub ids: Ids,
    pub parent: Option<Rc<Frame<'g>>>,
    pub repeat_part: Option<usize>,
    /// Where the current repetition began: one that read nothing is the
    /// last (an empty repetition would repeat forever).
    pub repeat_start: usize,
    pub spacing: Spacing,
}

/// Why a state was left for later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    Start,
    Alternation,
    Optional,
    Repeat,
    Wildcard,
}

/// What was matched last, for backward completion.
#[derive(Debug, Clone)]
pub(super) enum LastPart {
    Str {
        start: usize,
        words: Arc<Vec<String>>,
        after_wildcard: bool,
    },
    Num {
        after_wildcard: bool,
    },
}

#[derive(Debug, Clone)]
pub(super) struct State<'g> {
    pub set: &'g RuleSet,
    pub alt: usize,
    pub value: Option<Arc<Expr>>,
    pub part: usize,
    pub ids: Ids,
    pub next_id: u32,
    pub values: Option<Rc<ValNode>>,
    pub parent: Option<Rc<Frame<'g>>>,
    pub in_repeat: bool,
    pub spacing: Spacing,
    pub index: usize,
    pub wild: Option<(usize, Option<u32>)>,
    pub origin: Origin,
    pub last: Option<LastPart>,
    /// Resumed to take an optional part whose skip was tried first.
    pub no_skip: bool,
}

impl<'g> State<'g> {
    pub(super) fn parts(&self) -> &[Part] {
        self.set
            .rules()
            .get(self.alt)
            .map_or(&[], |r| r.parts.as_slice())
    }

    fn add_id(&mut self, name: Option<&Arc<str>>, type_name: Option<&Arc<str>>) -> Option<u32> {
        let Ids::On(list) = &self.ids else {
            return None;
        };
        let id = self.next_id;
        self.next_id += 1;
        self.ids = Ids::On(Some(Rc::new(IdNode {
            name: name.cloned(),
            id,
            type_name: type_name.cloned(),
            prev: list.clone(),
        })));
        Some(id)
    }

    fn add_with_id(&mut self, id: u32, value: Captured, wildcard: bool) {
        self.values = Some(Rc::new(ValNode {
            id,
            value,
            wildcard,
            prev: self.values.take(),
        }));
    }

    fn add_value(&mut self, name: Option<&Arc<str>>, value: Captured) {
        if let Some(id) = self.add_id(name, None) {
            self.add_with_id(id, value, false);
        }
    }

    /// The spacing that governs separators before the current part: the
    /// rule's own, or for a nested rule's first part, the nearest ancestor
    /// with a part before the reference (else the top rule's).
    pub(super) fn leading_spacing(&self) -> Spacing {
        if self.part != 0 {
            return self.spacing;
        }
        let mut frame = self.parent.as_deref();
        while let Some(f) = frame {
            if f.part > 1 || f.parent.is_none() {
                return f.spacing;
            }
            frame = f.parent.as_deref();
        }
        self.spacing
    }
}

/// True when one of `firsts` (when known) can begin at byte `index`,
/// after separators when `lead`.
fn may_start(s: &str, index: usize, firsts: Option<&[String]>, lead: bool) -> bool {
    let Some(words) = firsts else {
        return true;
    };
    let mut at = index;
    loop {
        // First bytes first: most words cannot begin here at all.
        let here = s.as_bytes().get(at).map(u8::to_ascii_lowercase);
        if words.iter().any(|w| {
            let first = w.as_bytes().first().copied();
            (first.is_some_and(|f| !f.is_ascii()) || first == here)
                && literal_at(s, at, w).is_some()
        }) {
            return true;
        }
        if !lead {
            return false;
        }
        match char_at(s, at) {
            Some(c) if super::text::is_sep(c) => at += c.len_utf8(),
            _ => return false,
        }
    }
}

/// The states matching `request` starts from, first rule on top (rules
/// that cannot begin the request are left out).
pub(super) fn initial_states_for<'g>(grammar: &'g Grammar, request: &str) -> Vec<State<'g>> {
    let rules = grammar.rules.rules();
    initial_states(grammar)
        .into_iter()
        .filter(|st| {
            may_start(
                request,
                0,
                grammar.rules.firsts(st.alt),
                rules[st.alt].spacing != Spacing::None,
            )
        })
        .collect()
}

/// The states a grammar's matching starts from, first rule on top.
pub(super) fn initial_states(grammar: &Grammar) -> Vec<State<'_>> {
    let rules = grammar.rules.rules();
    (0..rules.len())
        .rev()
        .map(|i| State {
            set: &grammar.rules,
            alt: i,
            value: rules[i].value.clone(),
            part: 0,
            ids: Ids::On(None),
            next_id: 0,
            values: None,
            parent: None,
            in_repeat: false,
            spacing: rules[i].spacing,
            index: 0,
            wild: None,
            origin: Origin::Start,
            last: None,
            no_skip: false,
        })
        .collect()
}

/// The stack of states left for later, with the options that prune it.
pub(super) struct Work<'g> {
    pub stack: Vec<State<'g>>,
    pub options: MatchOptions,
    pub steps: usize,
    /// Skip alternatives that cannot begin where they would start (not
    /// when completing: their partial matches are what completion offers).
    pub prune: bool,
}

impl<'g> Work<'g> {
    pub(super) fn push(&mut self, mut state: State<'g>, origin: Origin) {
        state.origin = origin;
        self.stack.push(state);
    }

    /// After a success, drops the forks of every axis that stops at its
    /// first success.
    pub(super) fn succeeded(&mut self) {
        let o = self.options;
        self.stack.retain(|s| match s.origin {
            Origin::Wildcard => o.wildcard == Policy::Exhaustive,
            Origin::Optional => o.optional == Policy::Exhaustive,
            Origin::Repeat => o.repeat == Policy::Exhaustive,
            Origin::Start | Origin::Alternation => true,
        });
    }
}

/// Every parse of `request`, in the reference's order.
pub fn match_grammar(grammar: &Grammar, request: &str, options: &MatchOptions) -> Vec<MatchResult> {
    let mut work = Work {
        stack: initial_states_for(grammar, request),
        options: *options,
        steps: 0,
        prune: true,
    };
    let mut results = Vec::new();
    while let Some(mut state) = work.stack.pop() {
        if run(&mut state, request, &mut work) && finalize(&mut state, request) {
            let mut stat = Stat::default();
            let value = make_value(
                state.value.as_deref(),
                state_ids(&state),
                &state.values,
                "",
                &mut stat,
                None,
            );
            results.push(MatchResult {
                value,
                matched_value_count: stat.count,
                wildcard_char_count: stat.chars,
                entity_wildcard_property_names: stat.names,
            });
            work.succeeded();
            if results.len() >= MAX_RESULTS {
                break;
            }
        }
        if work.steps > MAX_STEPS {
            break;
        }
    }
    results
}

pub(super) fn state_ids<'a>(state: &'a State<'_>) -> Option<&'a Rc<IdNode>> {
    match &state.ids {
        Ids::On(list) => list.as_ref(),
        Ids::Off => None,
    }
}

/// Ends a state at the end of the request: a pending wildcard takes the
/// rest, and only separators may remain (nothing at all in `none`).
pub(super) fn finalize(state: &mut State<'_>, s: &str) -> bool {
    if let Some((start, id)) = state.wild {
        let Some(text) = wildcard_text(s, start, s.len(), state.spacing) else {
            return false;
        };
        let text = text.to_string();
        state.wild = None;
        state.index = s.len();
        if let Some(id) = id {
            state.add_with_id(id, Captured::Str(text), true);
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

/// Leaves a finished nested rule for its parent; false at the top.
pub(super) fn finish_nested<'g>(
    state: &mut State<'g>,
    work: Option<&mut Work<'g>>,
    partial: bool,
) -> bool {
    let Some(parent) = state.parent.clone() else {
        return false;
    };
    let (ids, value) = (state.ids.clone(), state.value.clone());
    state.parent = parent.parent.clone();
    let parent_parts = parent
        .set
        .rules()
        .get(parent.alt)
        .map_or(0, |r| r.parts.len());
    if !matches!(parent.ids, Ids::Off)
        && (parent.var.is_some() || parent.value.is_some() || parent_parts != 1)
    {
        state.value = parent.value.clone();
        state.ids = parent.ids.clone();
        if let Some(var) = &parent.var {
            let list = match ids {
                Ids::On(list) => list,
                Ids::Off => None,
            };
            if list.is_some() || value.is_some() || !partial {
                state.add_value(Some(var), Captured::Nested(value, list));
            }
        }
    }
    state.set = parent.set;
    state.alt = parent.alt;
    state.part = parent.part;
    state.spacing = parent.spacing;
    if let (Some(repeat), Some(work)) = (parent.repeat_part, work)
        && state.index > parent.repeat_start
    {
        let mut again = state.clone();
        again.part = repeat;
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
/// copy that keeps looking for a longer capture is left for later.
fn capture<'g>(
    state: &mut State<'g>,
    s: &str,
    end: usize,
    next: usize,
    work: &mut Work<'g>,
) -> bool {
    let Some((start, id)) = state.wild else {
        return false;
    };
    let Some(text) = wildcard_text(s, start, end, state.spacing) else {
        return false;
    };
    let text = text.to_string();
    state.index = next;
    work.push(state.clone(), Origin::Wildcard);
    state.wild = None;
    if let Some(id) = id {
        state.add_with_id(id, Captured::Str(text), true);
    }
    true
}

fn match_str<'g>(
    state: &mut State<'g>,
    s: &str,
    words: &Arc<Vec<String>>,
    work: &mut Work<'g>,
) -> bool {
    let lead = state.leading_spacing() != Spacing::None;
    let mode = state.spacing;
    if state.wild.is_some() {
        let mut from = state.index;
        while from <= s.len() {
            let Some((start, end)) = find_words(s, from, words, mode, lead) else {
                return false;
            };
            from = if end > start { end } else { end + 1 };
            if !boundary_ok(s, end, mode) {
                continue;
            }
            if capture(state, s, start, end, work) {
                if state.value.is_none()
                    && state.parts().len() == 1
                    && !matches!(state.ids, Ids::Off)
                {
                    state.add_value(None, Captured::Str(words.join(" ")));
                }
                if !work.prune {
                    state.last = Some(LastPart::Str {
                        start,
                        words: Arc::clone(words),
                        after_wildcard: true,
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
    if state.value.is_none() && state.parts().len() == 1 && !matches!(state.ids, Ids::Off) {
        state.add_value(None, Captured::Str(words.join(" ")));
    }
    if !work.prune {
        state.last = Some(LastPart::Str {
            start: state.index,
            words: Arc::clone(words),
            after_wildcard: false,
        });
    }
    state.index = end;
    true
}

fn match_num<'g>(
    state: &mut State<'g>,
    s: &str,
    var: Option<&Arc<str>>,
    work: &mut Work<'g>,
) -> bool {
    let lead = state.leading_spacing() != Spacing::None;
    let mode = state.spacing;
    if state.wild.is_some() {
        let mut from = state.index;
        loop {
            let mut at = from;
            let found = loop {
                if at > s.len() {
                    break None;
                }
                if let Some((n, _, end)) = number_at(s, at, lead) {
                    break Some((n, at, end));
                }
                match char_at(s, at) {
                    Some(c) => at += c.len_utf8(),
                    None => break None,
                }
            };
            let Some((n, start, end)) = found else {
                return false;
            };
            from = end;
            if !boundary_ok(s, end, mode) {
                continue;
            }
            if capture(state, s, start, end, work) {
                if let Some(id) = state.add_id(var, None) {
                    state.add_with_id(id, Captured::Num(n), false);
                    state.last = Some(LastPart::Num {
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
    if let Some(id) = state.add_id(var, None) {
        state.add_with_id(id, Captured::Num(n), false);
        state.last = Some(LastPart::Num {
            after_wildcard: false,
        });
    }
    state.index = end;
    true
}

/// Advances a state as far as it goes; true when its rule is complete (at
/// the top), false when it cannot go on.
pub(super) fn run<'g>(state: &mut State<'g>, s: &str, work: &mut Work<'g>) -> bool {
    loop {
        work.steps += 1;
        if work.steps > MAX_STEPS {
            return false;
        }
        let parts_len = state.parts().len();
        if state.part >= parts_len {
            if !finish_nested(state, Some(work), false) {
                return true;
            }
            if state.part < state.parts().len()
                && state.wild.is_none()
                && !boundary_ok(s, state.index, state.spacing)
            {
                return false;
            }
            continue;
        }
        let set: &'g RuleSet = state.set;
        let Some(part) = set
            .rules()
            .get(state.alt)
            .and_then(|r| r.parts.get(state.part))
        else {
            return false;
        };
        let no_skip = std::mem::take(&mut state.no_skip);
        if part.optional() && !state.in_repeat && !no_skip {
            let mut skip = state.clone();
            skip.part += 1;
            if let Some(v) = part.var() {
                skip.add_value(Some(v), Captured::Undefined);
            }
            if work.options.optional == Policy::Other {
                // Prefer skipping: take later (without offering the skip
                // again when resumed).
                let mut take = std::mem::replace(state, skip);
                take.no_skip = true;
                work.push(take, Origin::Optional);
                continue;
            }
            work.push(skip, Origin::Optional);
        }
        match part {
            Part::Str(words) => {
                if !match_str(state, s, words, work) {
                    return false;
                }
            }
            Part::Num { var, .. } => {
                if !match_num(state, s, var.as_ref(), work) {
                    return false;
                }
            }
            Part::Wild { var, type_name, .. } => {
                if state.wild.is_some() {
                    return false;
                }
                let id = state.add_id(var.as_ref(), Some(type_name));
                state.wild = Some((state.index, id));
            }
            Part::Rules {
                rules, var, repeat, ..
            } => {
                let children = rules.rules();
                if children.is_empty() {
                    return false;
                }
                let frame = Frame {
                    set: state.set,
                    alt: state.alt,
                    value: state.value.clone(),
                    part: state.part + 1,
                    var: var.clone(),
                    ids: state.ids.clone(),
                    parent: state.parent.clone(),
                    repeat_part: repeat.then_some(state.part),
                    repeat_start: state.index,
                    spacing: state.spacing,
                };
                let require = !matches!(state.ids, Ids::Off)
                    && (var.is_some() || (state.value.is_none() && parts_len == 1));
                state.set = rules;
                state.part = 0;
                state.ids = if require { Ids::On(None) } else { Ids::Off };
                state.parent = Some(Rc::new(frame));
                state.in_repeat = false;
                // Only the alternatives that can begin here.
                let lead = state.leading_spacing() != Spacing::None;
                let prune = work.prune && state.wild.is_none();
                let index = state.index;
                let viable = |i: usize| !prune || may_start(s, index, rules.firsts(i), lead);
                let Some(first) = (0..children.len()).find(|&i| viable(i)) else {
                    return false;
                };
                for i in (first + 1..children.len()).rev() {
                    if viable(i) {
                        let mut other = state.clone();
                        other.alt = i;
                        other.value = children[i].value.clone();
                        other.spacing = children[i].spacing;
                        work.push(other, Origin::Alternation);
                    }
                }
                state.alt = first;
                state.value = children[first].value.clone();
                state.spacing = children[first].spacing;
                continue;
            }
        }
        state.part += 1;
    }
}

pub(super) use super::values::{Stat, make_value};
