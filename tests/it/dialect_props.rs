//! Property tests: the parser never panics, its spans are in bounds and
//! ordered, the segments partition the turn, and every action's canonical
//! form parses back to the same action.

use partner::dialect::{BlockRegistry, DialectParser, ParsedAction, ParsedTurn, SegmentKind};
use proptest::prelude::*;

fn parser() -> DialectParser {
    let mut blocks = BlockRegistry::new();
    for label in ["project_notes", "meeting_notes", "archive_2024"] {
        blocks.add(label, false);
    }
    for label in ["persona", "scratch"] {
        blocks.add(label, true);
    }
    DialectParser::new().with_blocks(blocks)
}

/// Pieces of the dialect and of the prose around it, to build turns that
/// exercise the parser far more than random bytes do.
const FRAGMENTS: &[&str] = &[
    "/recall",
    "/search",
    "/post",
    "/tell",
    "/context",
    "/remember",
    "/get",
    "/batch {",
    "}",
    "/do ",
    "/aprove",
    "/send",
    "/fetch",
    "/pulse",
    "/remind",
    "/deny",
    "/approve",
    "/calc",
    "/data",
    "/reply",
    "/note",
    "/forget",
    "/look up",
    "/search web",
    "/summarize",
    "/halt",
    "/cancel",
    "/escalate",
    "/usr/bin",
    "/complete",
    "/dismiss",
    "/intentions",
    "/web",
    "/dm",
    " ",
    " ",
    " ",
    "\n",
    "\n",
    "\"",
    "\"\"\"",
    "```",
    "~~~",
    "> ",
    "->",
    " -> /",
    "@last",
    "@last.output",
    "@thread",
    "@[x y]",
    "@agent",
    "@user",
    "@bluesky",
    "@anchor",
    "that",
    "it",
    "+",
    "-",
    "?",
    "?ask",
    "!",
    ".",
    "?public",
    "[[SEARCH:",
    "[[PULSE:",
    "[[LIST_INTENTIONS]]",
    "]]",
    "in archival",
    "everywhere",
    "> 2 weeks",
    "<3d",
    "role:user",
    "project_notes",
    "project notes",
    "notes",
    "persona",
    "scratch",
    "|",
    "always",
    "r1",
    "#7",
    "[abc]",
    "https://x.com",
    "example.org/a",
    "**",
    "_",
    "- ",
    "1. ",
    "never mind",
    "scratch that",
    "é",
    "🙂",
    "\t",
    "\r\n",
    "\\",
    "\\\"",
    "\u{201C}",
    "\u{201D}",
    "`",
    "{",
    "html",
    "continue",
    "list",
    "read",
    "insert",
    "append",
    "delete",
    "patch",
    "swap",
    "load",
    "archive",
    "replace",
    "10m",
    "1h 30m",
    "tomorrow",
    "hello world",
    "1/2",
    "I could",
];

fn fragment_turn() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            8 => prop::sample::select(FRAGMENTS).prop_map(str::to_string),
            1 => "\\PC{0,6}",
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn check_spans(src: &str, turn: &ParsedTurn) -> Result<(), TestCaseError> {
    let len = src.len();
    // Segments partition the turn, in order, on char boundaries.
    let mut at = 0;
    for seg in &turn.segments {
        prop_assert_eq!(
            seg.span.start,
            at,
            "segments leave a gap or overlap: {:?}",
            turn.segments
        );
        prop_assert!(seg.span.end > seg.span.start, "empty segment");
        prop_assert!(src.is_char_boundary(seg.span.start) && src.is_char_boundary(seg.span.end));
        match seg.kind {
            SegmentKind::Action => prop_assert!(seg.index.is_some_and(|i| i < turn.actions.len())),
            SegmentKind::Invalid => prop_assert!(seg.index.is_some_and(|i| i < turn.errors.len())),
            SegmentKind::Prose => prop_assert!(seg.index.is_none()),
        }
        at = seg.span.end;
    }
    prop_assert_eq!(at, len, "segments do not reach the end");
    let action_segments = turn
        .segments
        .iter()
        .filter(|s| s.kind == SegmentKind::Action)
        .count();
    prop_assert_eq!(action_segments, turn.actions.len());
    // Actions are ordered and disjoint; their parts lie inside them.
    let mut last_end = 0;
    for action in &turn.actions {
        prop_assert!(
            action.span.start >= last_end,
            "actions overlap or are out of order"
        );
        prop_assert!(action.span.end <= len);
        last_end = action.span.end;
        for link in action.all_links() {
            prop_assert!(link.span.start >= action.span.start && link.span.end <= action.span.end);
            for part in &link.parts {
                prop_assert!(
                    part.span.start >= action.span.start && part.span.end <= action.span.end,
                    "part {:?} outside action {:?}",
                    part,
                    action.span
                );
                prop_assert!(
                    src.is_char_boundary(part.span.start) && src.is_char_boundary(part.span.end)
                );
            }
            for r in &link.refs {
                prop_assert!(r.span.end <= len && r.span.start <= r.span.end);
            }
        }
    }
    for error in &turn.errors {
        prop_assert!(error.span.start <= error.span.end && error.span.end <= len);
        prop_assert!(!error.message().is_empty());
    }
    Ok(())
}

fn check_round_trip(parser: &DialectParser, action: &ParsedAction) -> Result<(), TestCaseError> {
    let again = parser.parse(&action.canonical());
    prop_assert!(
        again.errors.is_empty(),
        "canonical {:?} gave errors {:?}",
        action.canonical(),
        again.errors
    );
    prop_assert_eq!(
        again.actions.len(),
        1,
        "canonical {:?} gave {} actions",
        action.canonical(),
        again.actions.len()
    );
    let back = &again.actions[0];
    prop_assert!(
        back.same_meaning(action),
        "round trip changed the action:\n  canonical {:?}\n  first  {:?}\n  second {:?}",
        action.canonical(),
        action,
        back
    );
    prop_assert_eq!(back.canonical(), action.canonical());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics_and_spans_hold(src in "\\PC{0,200}") {
        let turn = parser().parse(&src);
        check_spans(&src, &turn)?;
    }

    #[test]
    fn dialect_fragments_never_panic_and_spans_hold(src in fragment_turn()) {
        let turn = parser().parse(&src);
        check_spans(&src, &turn)?;
    }

    #[test]
    fn canonical_forms_round_trip(src in fragment_turn()) {
        let parser = parser();
        let turn = parser.parse(&src);
        for action in &turn.actions {
            check_round_trip(&parser, action)?;
        }
    }
}

/// A platform named by a word that elsewhere refers to an earlier result
/// (`that`, `it`, `last`) is written back bare, as it was read (a random
/// case found it quoted, which reads as no platform at all).
#[test]
fn a_platform_named_like_a_reference_round_trips() {
    let parser = parser();
    for src in [
        "/post- that /recall",
        "/post it \"hi\"",
        "/post last \"hi\"",
    ] {
        let turn = parser.parse(src);
        for action in &turn.actions {
            check_round_trip(&parser, action).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        }
    }
}

/// Round trips of generated single actions: verb, argument shape, content
/// and marker chosen independently, so every verb is covered every run.
fn generated_action() -> impl Strategy<Value = String> {
    let verbs = prop::sample::select(vec![
        "recall",
        "recall insert",
        "recall append project_notes",
        "recall delete",
        "recall patch scratch",
        "context scratch +",
        "context replace persona",
        "context archive",
        "context load",
        "context swap scratch",
        "search",
        "search in archival",
        "search everywhere",
        "send @agent @entropy",
        "send @user",
        "reply",
        "post bluesky",
        "dm @alice",
        "tell @anchor",
        "fetch https://example.com",
        "fetch continue",
        "web",
        "calc",
        "data list",
        "data read inbox",
        "data search inbox",
        "approve r1",
        "deny r2",
        "escalate",
        "cancel",
        "halt",
        "summarize",
        "uncertain",
        "remind \"tonight\"",
        "complete 3",
        "dismiss 4",
        "intentions",
        "pulse 10m",
    ]);
    let content = prop_oneof![
        Just(String::new()),
        "[a-z ]{1,12}".prop_map(|s| s.trim().to_string()),
        "\\PC{1,12}".prop_map(|s| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))),
        Just("\"old\" -> \"new\"".to_string()),
        Just("@last.output".to_string()),
        Just("that".to_string()),
        Just("> 2 weeks role:user".to_string()),
        Just("always".to_string()),
    ];
    let marker = prop::sample::select(vec!["", " .", " ?", " ?ask", " !", " ?public"]);
    (verbs, content, marker).prop_map(|(v, c, m)| format!("/{v} {c}{m}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn generated_actions_round_trip(src in generated_action()) {
        let parser = parser();
        let turn = parser.parse(&src);
        check_spans(&src, &turn)?;
        for action in &turn.actions {
            check_round_trip(&parser, action)?;
        }
    }

    #[test]
    fn chains_round_trip(a in generated_action(), b in generated_action()) {
        let parser = parser();
        let src = format!("{a} -> {b}");
        let turn = parser.parse(&src);
        check_spans(&src, &turn)?;
        for action in &turn.actions {
            check_round_trip(&parser, action)?;
        }
    }
}
