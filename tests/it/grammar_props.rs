//! Properties of completion the reference documents, over generated
//! grammars and inputs: it never panics and stays inside the input;
//! `directionSensitive` is exactly "something was matched"; and
//! completing the prefix a completion reports gives the same answer when
//! only separators followed it (truncated-forward idempotency).

use partner::grammar::{Direction, LoadOptions, MatchOptions, NoFiles, complete, load_grammar};
use proptest::prelude::*;

const WORDS: &[&str] = &["play", "music", "by", "the", "song", "now"];

fn item() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(WORDS).prop_map(str::to_string),
        1 => Just("$(x)".to_string()),
        1 => proptest::sample::select(WORDS).prop_map(|w| format!("({w})?")),
        1 => (proptest::sample::select(WORDS), proptest::sample::select(WORDS))
            .prop_map(|(a, b)| format!("({a} | {b})")),
    ]
}

fn alternative() -> impl Strategy<Value = String> {
    proptest::collection::vec(item(), 1..5).prop_map(|items| {
        // One wildcard per alternative keeps the grammar loadable.
        let mut seen = false;
        let items: Vec<String> = items
            .into_iter()
            .map(|i| {
                if i == "$(x)" {
                    if seen {
                        return "song".into();
                    }
                    seen = true;
                }
                i
            })
            .collect();
        format!("{} -> 1", items.join(" "))
    })
}

fn grammar() -> impl Strategy<Value = String> {
    proptest::collection::vec(alternative(), 1..4)
        .prop_map(|alts| format!("<Start> = {};", alts.join(" | ")))
}

fn input() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            proptest::sample::select(WORDS).prop_map(str::to_string),
            Just("pl".to_string()),
            Just("x".to_string()),
        ],
        0..5,
    )
    .prop_flat_map(|words| {
        let text = words.join(" ");
        (Just(text), any::<bool>())
    })
    .prop_map(|(text, space)| if space { format!("{text} ") } else { text })
}

fn groups(c: &partner::grammar::Completion) -> Vec<(String, Vec<String>)> {
    let mut g: Vec<(String, Vec<String>)> = c
        .groups
        .iter()
        .map(|g| {
            let mut w = g.completions.clone();
            w.sort();
            (g.separator_mode.to_string(), w)
        })
        .collect();
    g.sort();
    g
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, max_global_rejects: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn completion_is_bounded_and_direction_sensitive_when_it_matched(g in grammar(), text in input()) {
        let options = LoadOptions { enable_value_expressions: false, start_value_required: true, ..Default::default() };
        let Ok(grammar) = load_grammar("g.agr", &g, &options, &NoFiles) else { return Ok(()); };
        for direction in [Direction::Forward, Direction::Backward] {
            let c = complete(&grammar, &text, direction, None, &MatchOptions::default());
            prop_assert!(c.matched_prefix_length <= text.len());
            prop_assert_eq!(c.direction_sensitive, c.matched_prefix_length > 0);
            prop_assert_eq!(c.closed_set, c.properties.is_empty());
        }
    }

    #[test]
    fn completing_the_reported_prefix_forward_gives_the_same_words(g in grammar(), text in input()) {
        let options = LoadOptions { enable_value_expressions: false, start_value_required: true, ..Default::default() };
        let Ok(grammar) = load_grammar("g.agr", &g, &options, &NoFiles) else { return Ok(()); };
        let first = complete(&grammar, &text, Direction::Forward, None, &MatchOptions::default());
        // Where the position is pinned (no open wildcard boundary) and
        // what follows it is only separators: trailing separators are not
        // consumed, and must not change the answer either.
        prop_assume!(first.after_wildcard == "none");
        let cut = &text[..first.matched_prefix_length];
        prop_assume!(text[cut.len()..].chars().all(partner::grammar::is_separator));
        let again = complete(&grammar, cut, Direction::Forward, None, &MatchOptions::default());
        prop_assert_eq!(again.matched_prefix_length, first.matched_prefix_length, "grammar {} input {:?}", g, text);
        prop_assert_eq!(groups(&again), groups(&first), "grammar {} input {:?}", g, text);
    }
}
