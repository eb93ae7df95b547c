//! The compiled form of a grammar: the start rule's alternatives, each a
//! sequence of parts (literal words, wildcards, numbers, nested rules),
//! with what each alternative can begin with, for skipping alternatives
//! that cannot start where they would.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use super::expr::Expr;
use super::parse::Spacing;

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
}

/// The alternatives of one rule (shared by every reference to it).
#[derive(Debug, Default)]
pub struct RuleSet {
    /// The rule's name (none for a group).
    pub name: Option<String>,
    rules: OnceLock<Vec<Rule>>,
    /// For each alternative, the words it can begin with (lowercase), or
    /// `None` when it may begin otherwise (a wildcard, a number, an
    /// optional part): lets the matcher skip alternatives that cannot start
    /// at the current place.
    firsts: OnceLock<Vec<Option<Vec<String>>>>,
}

impl RuleSet {
    /// The alternatives.
    pub fn rules(&self) -> &[Rule] {
        self.rules.get().map_or(&[], Vec::as_slice)
    }

    /// The words alternative `i` can begin with, when they are known.
    pub fn firsts(&self, i: usize) -> Option<&[String]> {
        self.firsts.get()?.get(i)?.as_deref()
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
        };
        if let Some(r) = rules {
            let _ = set.rules.set(r);
        }
        set
    }
}

/// Deepest nesting followed when working out first words.
const MAX_FIRSTS_DEPTH: usize = 256;

/// The words a sequence of parts can begin with: through optional groups
/// to what follows them; unknown (`None`) when a wildcard or number may
/// come first, or the whole sequence may match nothing.
fn sequence_firsts(parts: &[Part], visiting: &mut HashSet<usize>) -> Option<Vec<String>> {
    let mut words = Vec::new();
    for part in parts {
        match part {
            Part::Str(w) => {
                words.push(w.first()?.to_lowercase());
                return Some(words);
            }
            Part::Rules {
                rules, optional, ..
            } => {
                for f in compute_firsts(rules, visiting) {
                    words.extend(f?);
                }
                if !optional {
                    return Some(words);
                }
            }
            Part::Wild { .. } | Part::Num { .. } => return None,
        }
    }
    None
}

/// Works out every rule set's first words, once all rules are bound.
pub(super) fn compute_firsts(
    set: &Arc<RuleSet>,
    visiting: &mut HashSet<usize>,
) -> Vec<Option<Vec<String>>> {
    if let Some(done) = set.firsts.get() {
        return done.clone();
    }
    // Very deep nesting (a hostile compiled grammar): not known, never
    // skipped, and no deeper recursion.
    if visiting.len() > MAX_FIRSTS_DEPTH {
        return vec![None; set.rules().len()];
    }
    let key = Arc::as_ptr(set) as usize;
    if !visiting.insert(key) {
        // Recursion: not known (never skipped).
        return vec![None; set.rules().len()];
    }
    let mut out = Vec::new();
    for rule in set.rules() {
        out.push(sequence_firsts(&rule.parts, visiting));
    }
    // Walk inner sets too, so every group has its firsts.
    for rule in set.rules() {
        for part in &rule.parts {
            if let Part::Rules { rules, .. } = part {
                compute_firsts(rules, visiting);
            }
        }
    }
    visiting.remove(&key);
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
