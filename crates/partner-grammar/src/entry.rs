//! Where matching starts. A start rule is mostly a list of references to
//! other rules (`<Start> = <Pause> | <Resume> | …`); an alternative that
//! only hands over to another rule — no variable, value, repetition or
//! spacing of its own — matches exactly what that rule's alternatives
//! match, in their order, with their values. Matching starts from those
//! alternatives instead, so it does not enter the start rule's layer
//! (a frame, a table lookup and a return per parse). Completion keeps the
//! start rule as written: what it reports depends on the nesting.

use std::collections::HashSet;
use std::sync::Arc;

use super::model::{Grammar, Part, Rule, RuleSet, compute_firsts};

/// References followed through, one inside another.
const MAX_DEPTH: usize = 8;

/// Most alternatives the set matching starts from may have (the tables
/// that skip alternatives hold a bit for each of 64).
const MAX_ALTERNATIVES: usize = 64;

impl Grammar {
    /// A compiled grammar, with the alternatives its matching starts from
    /// worked out (after every rule set's first words are).
    pub(super) fn new(rules: Arc<RuleSet>, entities: Vec<String>, warnings: Vec<String>) -> Self {
        let entry = entry_rules(&rules);
        Grammar {
            rules,
            entities,
            warnings,
            entry,
        }
    }

    /// The alternatives matching starts from.
    pub(super) fn entry(&self) -> &RuleSet {
        #[cfg(test)]
        if tests::OFF.with(std::cell::Cell::get) {
            return &self.rules;
        }
        &self.entry
    }
}

/// The start rule's alternatives, each that hands over to another rule
/// replaced by that rule's; the start rule itself when none does or there
/// would be too many.
fn entry_rules(start: &Arc<RuleSet>) -> Arc<RuleSet> {
    let mut out = Vec::new();
    let mut handed = false;
    for rule in start.rules() {
        handed |= expand(rule, 0, &mut out);
        if out.len() > MAX_ALTERNATIVES {
            return Arc::clone(start);
        }
    }
    if !handed {
        return Arc::clone(start);
    }
    let set = Arc::new(RuleSet::new(start.name.clone(), Some(out)));
    compute_firsts(&set, &mut HashSet::new());
    set
}

/// Adds `rule`, or the alternatives it hands over to (followed `depth`
/// references deep so far); true when it handed over.
fn expand(rule: &Rule, depth: usize, out: &mut Vec<Rule>) -> bool {
    match hands_over_to(rule) {
        Some(inner) if depth < MAX_DEPTH => {
            for r in inner.rules() {
                if out.len() > MAX_ALTERNATIVES {
                    break;
                }
                expand(r, depth + 1, out);
            }
            true
        }
        _ => {
            out.push(rule.clone());
            false
        }
    }
}

/// The rule `rule` is only a reference to, when matching it is matching
/// that rule's alternatives: one part, a plain reference, no value of its
/// own, and every alternative it refers to spaced as it is (the spacing
/// before a nested rule's first part and after its last is the
/// referring rule's).
fn hands_over_to(rule: &Rule) -> Option<&RuleSet> {
    let [
        Part::Rules {
            rules,
            var: None,
            optional: false,
            repeat: false,
        },
    ] = rule.parts.as_slice()
    else {
        return None;
    };
    let alternatives = rules.rules();
    let same_spacing = alternatives.iter().all(|r| r.spacing == rule.spacing);
    (rule.value.is_none() && !alternatives.is_empty() && same_spacing).then_some(&**rules)
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;

    use crate::{LoadOptions, MatchOptions, NoFiles, Policy, load_grammar, match_grammar};

    thread_local! {
        /// Set to match from the start rule as written.
        pub(crate) static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// (grammar, whether matching starts from other rules' alternatives)
    const GRAMMARS: [(&str, bool); 7] = [
        (
            "<Start> = <Schedule> | <Show>;\n<Schedule> = schedule $(x:wildcard) at $(t:word) -> { x, t } | book $(x:wildcard) -> { x };\n<Show> = show $(y:wildcard) -> y | $(n:number) items -> n | show me $(y:wildcard) -> y;",
            true,
        ),
        // Two references deep, a literal's own value, a default value.
        (
            "<Start> = <Mid> | stop;\n<Mid> = <Leaf> | go -> \"went\";\n<Leaf> = play $(x:wildcard) | play $(x:wildcard) by $(y:wildcard) -> { x, y };",
            true,
        ),
        // A referred rule spaced otherwise keeps its layer.
        (
            "<Start> = <Tight> | <Loose>;\n<Tight> [spacing=none] = ab $(x:wildcard) -> x;\n<Loose> = ab $(x:wildcard) -> x;",
            true,
        ),
        (
            "<Start> [spacing=required] = <Loose>;\n<Loose> = a b $(x:wildcard) -> x | a $(x:wildcard) -> x;",
            false,
        ),
        // A variable, a repetition or an option is the start rule's own.
        (
            "<Start> = $(v:<A>) -> { v } | (<A>)? done -> \"done\" | <A>+ -> \"many\";\n<A> = x $(n:number) -> n | y -> 0;",
            false,
        ),
        // A rule that refers to itself.
        (
            "<Start> = <Loop>;\n<Loop> = again <Loop> | end -> \"end\";",
            true,
        ),
        // Optional parts inside, which may match nothing.
        (
            "<Start> = <Opt>;\n<Opt> = (please)? (<Polite>)? call $(who:wildcard) (now)? -> who;\n<Polite> = kindly | do;",
            true,
        ),
    ];

    const INPUTS: [&str; 22] = [
        "schedule lunch at noon",
        "schedule lunch at noon at 3",
        "book a table",
        "show me the money",
        "show the money",
        "4 items",
        "play Yesterday",
        "play Yesterday by the Beatles by me",
        "go",
        "stop",
        "abfoo",
        "ab foo",
        "a b c",
        "abc",
        "x 4",
        "y done",
        "x 1 y x 2",
        "again again end",
        "end",
        "please kindly call mom now",
        "call  dad ",
        "",
    ];

    #[test]
    fn matching_from_referred_rules_never_changes_a_match() {
        let options = LoadOptions {
            enable_value_expressions: true,
            start_value_required: false,
            ..Default::default()
        };
        let policies = [
            MatchOptions::default(),
            MatchOptions {
                wildcard: Policy::First,
                optional: Policy::Other,
                repeat: Policy::First,
            },
        ];
        let mut parses = 0;
        for (text, handed) in GRAMMARS {
            let g = load_grammar("t.agr", text, &options, &NoFiles).expect("the grammar loads");
            assert_eq!(!Arc::ptr_eq(&g.entry, &g.rules), handed, "{text}");
            for input in INPUTS {
                for policy in &policies {
                    let from_entry = match_grammar(&g, input, policy);
                    OFF.with(|o| o.set(true));
                    let as_written = match_grammar(&g, input, policy);
                    OFF.with(|o| o.set(false));
                    assert_eq!(from_entry, as_written, "{text}\n{input:?} {policy:?}");
                    parses += as_written.len();
                }
            }
        }
        assert!(parses > 40, "the inputs match ({parses} parses)");
    }
}
