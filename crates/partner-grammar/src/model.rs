//! The compiled form of a grammar: the start rule's alternatives, each a
//! sequence of parts (literal words, wildcards, numbers, nested rules),
//! with what each alternative can begin with, for skipping alternatives
//! that cannot start where they would.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use super::dispatch::Dispatch;
use super::expr::Expr;
use super::needs::{Needs, Nested};
use super::parse::Spacing;
use super::text::literal_at;

/// A compiled grammar: the start rule's alternatives.
#[derive(Debug, Clone)]
pub struct Grammar {
    /// The top-level alternatives.
    pub rules: Arc<RuleSet>,
    /// The entity types it imports.
    pub entities: Vec<String>,
    /// What is odd but allowed: unused rules and imports, a rule whose
    /// variables make no value (`file(line,col): warning: …`).
    pub warnings: Vec<String>,
    /// The alternatives matching starts from (see `entry`).
    pub(super) entry: Arc<RuleSet>,
}

/// The alternatives of one rule (shared by every reference to it).
#[derive(Debug, Default)]
pub struct RuleSet {
    /// The rule's name (none for a group).
    pub name: Option<String>,
    rules: OnceLock<Vec<Rule>>,
    /// For each alternative, what it can begin with: lets the matcher skip
    /// alternatives that cannot start at the current place.
    firsts: OnceLock<Vec<Start>>,
    /// The same, as a table from a place's first two bytes to the
    /// alternatives that may begin there (at most 64 alternatives).
    dispatch: OnceLock<Option<Dispatch>>,
    /// The words each alternative cannot match without (none when no
    /// alternative needs any).
    needs: OnceLock<Option<Needs>>,
}

/// What an alternative can begin with.
#[derive(Debug, Clone)]
pub(super) enum Start {
    /// One of these words, and nothing else.
    Words(FirstWords),
    /// One of these words, or nothing at all (then it is whatever follows
    /// the rule, which the alternative cannot know).
    Nullable(Vec<String>),
    /// Anything: a wildcard or a number may come first.
    Any,
}

/// The words an alternative must begin with (lowercase), sorted so that
/// the few that could begin at a place are found by binary search on the
/// place's first two bytes.
#[derive(Debug, Clone)]
pub struct FirstWords {
    /// ASCII words, sorted.
    pub(super) ascii: Vec<String>,
    /// Words with other characters (case folding may change their bytes):
    /// always checked.
    pub(super) other: Vec<String>,
    /// Bit `b` set when an ASCII word begins with byte `b`.
    firsts: u128,
}

impl FirstWords {
    pub(super) fn new(words: Vec<String>) -> Self {
        let (mut ascii, mut other): (Vec<String>, Vec<String>) = words
            .into_iter()
            .filter(|w| !w.is_empty())
            .partition(|w| w.is_ascii());
        ascii.sort();
        ascii.dedup();
        other.sort();
        other.dedup();
        let firsts = ascii.iter().fold(0, |m, w| m | 1u128 << w.as_bytes()[0]);
        FirstWords {
            ascii,
            other,
            firsts,
        }
    }

    /// True when one of the words begins at byte `at` of `s`
    /// (case-insensitively).
    pub fn any_at(&self, s: &str, at: usize) -> bool {
        if !self.other.is_empty() && self.other.iter().any(|w| literal_at(s, at, w).is_some()) {
            return true;
        }
        let bytes = s.as_bytes();
        let Some(b0) = bytes.get(at).map(u8::to_ascii_lowercase) else {
            return false;
        };
        if !b0.is_ascii() || self.firsts & (1u128 << b0) == 0 {
            return false;
        }
        let lo = self.ascii.partition_point(|w| w.as_bytes()[0] < b0);
        let n = self.ascii[lo..].partition_point(|w| w.as_bytes()[0] == b0);
        let same_first = &self.ascii[lo..lo + n];
        // A one-letter word sorts first among those it begins.
        if same_first.first().is_some_and(|w| w.len() == 1) {
            return true;
        }
        let Some(b1) = bytes.get(at + 1).map(u8::to_ascii_lowercase) else {
            return false;
        };
        let lo = same_first.partition_point(|w| w.as_bytes()[1] < b1);
        same_first[lo..]
            .iter()
            .take_while(|w| w.as_bytes()[1] == b1)
            .any(|w| literal_at(s, at, w).is_some())
    }

    /// Every word, lowercase.
    pub fn words(&self) -> impl Iterator<Item = &String> {
        self.ascii.iter().chain(&self.other)
    }
}

impl RuleSet {
    /// The alternatives.
    pub fn rules(&self) -> &[Rule] {
        self.rules.get().map_or(&[], Vec::as_slice)
    }

    /// The words alternative `i` must begin with, when they are known.
    pub fn firsts(&self, i: usize) -> Option<&FirstWords> {
        match self.firsts.get()?.get(i)? {
            Start::Words(w) => Some(w),
            Start::Nullable(_) | Start::Any => None,
        }
    }

    /// True when an alternative may match nothing at all (as far as is
    /// known: an alternative not worked out counts as not).
    pub(super) fn may_be_empty(&self) -> bool {
        self.firsts
            .get()
            .is_some_and(|f| f.iter().any(|s| matches!(s, Start::Nullable(_))))
    }

    /// The table of which alternatives may begin where (none for more
    /// than 64 alternatives, or before first words are worked out).
    pub(super) fn dispatch(&self) -> Option<&Dispatch> {
        self.dispatch.get()?.as_ref()
    }

    /// The words alternatives need in a request, when any does.
    pub(super) fn needs(&self) -> Option<&Needs> {
        self.needs.get()?.as_ref().filter(|n| !n.is_empty())
    }

    /// Binds the alternatives of a named rule, once all rules exist (so
    /// rules may refer to each other in any order).
    pub(super) fn bind(&self, rules: Vec<Rule>) {
        let _ = self.rules.set(rules);
    }

    pub(super) fn new(name: Option<String>, rules: Option<Vec<Rule>>) -> Self {
        let set = RuleSet {
            name,
            rules: OnceLock::new(),
            firsts: OnceLock::new(),
            dispatch: OnceLock::new(),
            needs: OnceLock::new(),
        };
        if let Some(r) = rules {
            let _ = set.rules.set(r);
        }
        set
    }
}

/// Deepest nesting followed when working out first words.
const MAX_FIRSTS_DEPTH: usize = 256;

/// What a sequence of parts can begin with: its first literal's first
/// word, or through rules (and optional parts) to what follows them;
/// nullable when every part may match nothing, anything when a wildcard or
/// number may come first.
fn sequence_start(parts: &[Part], visiting: &mut HashSet<usize>) -> Start {
    let mut words = Vec::new();
    for part in parts {
        match part {
            Part::Str(w) => {
                let Some(first) = w.first() else {
                    return Start::Any;
                };
                words.push(first.to_lowercase());
                return Start::Words(FirstWords::new(words));
            }
            Part::Rules {
                rules, optional, ..
            } => {
                let mut nullable = *optional;
                for start in compute_firsts(rules, visiting) {
                    match start {
                        Start::Any => return Start::Any,
                        Start::Words(w) => words.extend(w.words().cloned()),
                        Start::Nullable(w) => {
                            words.extend(w);
                            nullable = true;
                        }
                    }
                }
                if !nullable {
                    return Start::Words(FirstWords::new(words));
                }
            }
            Part::Wild { .. } | Part::Num { .. } => return Start::Any,
        }
    }
    Start::Nullable(words)
}

/// Works out every rule set's first words, once all rules are bound.
pub(super) fn compute_firsts(set: &Arc<RuleSet>, visiting: &mut HashSet<usize>) -> Vec<Start> {
    if let Some(done) = set.firsts.get() {
        return done.clone();
    }
    // Very deep nesting (a hostile compiled grammar): not known, never
    // skipped, and no deeper recursion.
    if visiting.len() > MAX_FIRSTS_DEPTH {
        return vec![Start::Any; set.rules().len()];
    }
    let key = Arc::as_ptr(set) as usize;
    if !visiting.insert(key) {
        // Recursion: not known (never skipped).
        return vec![Start::Any; set.rules().len()];
    }
    let mut out = Vec::new();
    for rule in set.rules() {
        out.push(sequence_start(&rule.parts, visiting));
    }
    // Walk inner sets too, so every group has its firsts.
    for rule in set.rules() {
        for part in &rule.parts {
            if let Part::Rules { rules, .. } = part {
                compute_firsts(rules, visiting);
            }
        }
    }
    let needs = Needs::new(
        set.rules().iter().map(|r| r.parts.as_slice()),
        &out,
        &mut |part| match part {
            Part::Rules { rules, .. } => {
                let starts = compute_firsts(rules, visiting);
                // A rule being worked out (recursion) has none yet.
                let common = rules.needs.get().and_then(Option::as_ref);
                let common = common.map(|n| n.common().to_vec()).unwrap_or_default();
                Some(Nested { starts, common })
            }
            _ => None,
        },
    );
    visiting.remove(&key);
    let keep = !needs.is_empty() || !needs.common().is_empty();
    let _ = set.needs.set(keep.then_some(needs));
    let _ = set.dispatch.set(Dispatch::new(&out));
    let _ = set.firsts.set(out.clone());
    out
}

/// One alternative, compiled.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its parts, in order.
    pub parts: Vec<Part>,
    /// Its value expression.
    pub value: Option<Arc<Expr>>,
    /// How its parts are separated.
    pub spacing: Spacing,
}

/// A part of a rule.
#[derive(Debug, Clone)]
pub enum Part {
    /// Literal words, matched case-insensitively.
    Str(Arc<Vec<String>>),
    /// A wildcard capture (`string`, `wildcard`, `word` or an entity type).
    Wild {
        /// The variable.
        var: Option<Arc<str>>,
        /// The type named.
        type_name: Arc<str>,
        /// An entity type (not `string`, `wildcard`, `word` or `number`):
        /// where its capture lands in a value is reported.
        entity: bool,
        /// Followed by `?`.
        optional: bool,
    },
    /// A number.
    Num {
        /// The variable.
        var: Option<Arc<str>>,
        /// Followed by `?`.
        optional: bool,
    },
    /// A rule reference or group.
    Rules {
        /// The alternatives.
        rules: Arc<RuleSet>,
        /// The variable capturing its value.
        var: Option<Arc<str>>,
        /// `?` or `*`.
        optional: bool,
        /// `*` or `+`.
        repeat: bool,
    },
}

impl Part {
    /// A wildcard capture of `type_name`, knowing whether it is an entity.
    pub fn wildcard(var: Option<Arc<str>>, type_name: Arc<str>, optional: bool) -> Part {
        let entity = !matches!(&*type_name, "string" | "wildcard" | "word" | "number");
        Part::Wild {
            var,
            type_name,
            entity,
            optional,
        }
    }

    /// True for `?` parts (and `*` groups).
    pub fn optional(&self) -> bool {
        match self {
            Part::Str(_) => false,
            Part::Wild { optional, .. }
            | Part::Num { optional, .. }
            | Part::Rules { optional, .. } => *optional,
        }
    }

    /// The variable the part binds.
    pub fn var(&self) -> Option<&Arc<str>> {
        match self {
            Part::Str(_) => None,
            Part::Wild { var, .. } | Part::Num { var, .. } | Part::Rules { var, .. } => {
                var.as_ref()
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::FirstWords;

    /// First words made from `list`.
    pub(crate) fn words(list: &[&str]) -> FirstWords {
        FirstWords::new(list.iter().map(|w| w.to_string()).collect())
    }

    #[test]
    fn first_words_are_found_by_their_first_two_bytes() {
        let w = words(&["play", "pause", "p", "skip", "über", "select"]);
        assert!(w.any_at("Play it", 0));
        assert!(w.any_at("now PAUSE", 4));
        // A one-letter word begins wherever its letter does.
        assert!(w.any_at("px", 0));
        assert!(w.any_at("ÜBER alles", 0));
        assert!(!w.any_at("sel", 0), "a prefix of a word is not the word");
        assert!(!w.any_at("stop", 0));
        assert!(!w.any_at("play", 4), "nothing begins at the end");
        let none = words(&["skip", "select"]);
        assert!(!none.any_at("sa", 0));
        assert!(none.any_at("xSeLeCt", 1));
    }
}
