//! The built-in number and position words (`<Cardinal>`, `<Ordinal>`), as
//! TypeAgent's built-in entities read them: each form in a table with the
//! value it gives and how many parses it has, and the quantity words a
//! completion offers after "a".

use partner::grammar::{
    Direction, LoadOptions, MatchOptions, NoFiles, complete, load_grammar, match_grammar,
};

const GRAMMAR: &str = r#"
import { Cardinal, Ordinal };
<Start> = play track $(n:<Cardinal>) -> { count: n }
        | play the $(n:<Ordinal>) track -> { position: n };
"#;

fn grammar() -> partner::grammar::Grammar {
    let options = LoadOptions {
        enable_value_expressions: true,
        start_value_required: false,
        ..Default::default()
    };
    load_grammar("numbers.agr", GRAMMAR, &options, &NoFiles).unwrap()
}

#[test]
fn number_and_position_words_read_as_the_reference_reads_them() {
    let g = grammar();
    // (request, the property, its value, parses: 0 for "one or more", the
    // count where the reference's is known)
    let table: &[(&str, &str, f64, usize)] = &[
        ("play track a couple", "count", 2.0, 1),
        ("play track a pair", "count", 2.0, 1),
        ("play track a few", "count", 3.0, 1),
        ("play track several", "count", 4.0, 1),
        ("play track a handful", "count", 5.0, 1),
        ("play track half a dozen", "count", 6.0, 1),
        ("play track a dozen", "count", 12.0, 1),
        ("play track a score", "count", 20.0, 1),
        ("play track a thousand", "count", 1000.0, 1),
        ("play track three thousand", "count", 3000.0, 1),
        // "one hundred" is both "(a | one) hundred" and "N hundred".
        ("play track one hundred", "count", 100.0, 0),
        ("play track three hundred and five", "count", 305.0, 1),
        ("play track two thousand four hundred", "count", 2400.0, 1),
        ("play track twenty one", "count", 21.0, 1),
        ("play track 7", "count", 7.0, 1),
        ("play the first track", "position", 1.0, 1),
        ("play the twelfth track", "position", 12.0, 1),
        ("play the one hundred and first track", "position", 101.0, 1),
        ("play the two hundredth track", "position", 200.0, 1),
        ("play the thousandth track", "position", 1000.0, 1),
        // The hyphen is optional and a separator: two readings, as the
        // reference gives.
        ("play the twenty-first track", "position", 21.0, 2),
    ];
    for (request, property, value, parses) in table {
        let found = match_grammar(&g, request, &MatchOptions::default());
        if *parses == 0 {
            assert!(!found.is_empty(), "{request}");
        } else {
            assert_eq!(found.len(), *parses, "{request}: {found:?}");
        }
        for m in &found {
            let json = m.value.to_json();
            assert_eq!(json[property].as_f64(), Some(*value), "{request}: {json}");
        }
    }
    // Not a position the reference knows.
    assert!(match_grammar(&g, "play the last track", &MatchOptions::default()).is_empty());
}

#[test]
fn after_a_the_quantity_words_are_offered() {
    let g = grammar();
    let c = complete(
        &g,
        "play track a ",
        Direction::Forward,
        None,
        &MatchOptions::default(),
    );
    let mut words: Vec<String> = c
        .groups
        .iter()
        .flat_map(|g| g.completions.iter().cloned())
        .collect();
    words.sort();
    words.dedup();
    for w in [
        "couple", "dozen", "few", "handful", "hundred", "pair", "score", "thousand",
    ] {
        assert!(
            words.iter().any(|x| x == w),
            "{w} is not offered: {words:?}"
        );
    }
    assert!(!words.iter().any(|x| x == "last"), "{words:?}");
}

/// Single quotes: a phrase of words by default (what a grammar's author
/// means: `'send' 'an' 'email'` matches "send an email"), the quotes part
/// of the literal in TypeAgent's reading, chosen with `quotes`.
#[test]
fn quotes_are_words_by_default_and_literal_for_conformance() {
    use partner::grammar::Quotes;
    let text = "<Start> = 'send' 'an' 'email' -> \"email\";";
    let load = |quotes| {
        let options = LoadOptions {
            quotes,
            ..LoadOptions::default()
        };
        load_grammar("email.agr", text, &options, &NoFiles).unwrap()
    };
    let words = load(Quotes::Phrase);
    assert_eq!(
        match_grammar(&words, "send an email", &MatchOptions::default()).len(),
        1
    );
    let literal = load(Quotes::Literal);
    assert!(match_grammar(&literal, "send an email", &MatchOptions::default()).is_empty());
    assert_eq!(
        match_grammar(&literal, "'send' 'an' 'email'", &MatchOptions::default()).len(),
        1
    );
}
