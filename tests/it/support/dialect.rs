//! The dialect parser as the table tests use it: known blocks, and helpers
//! that parse a line to its canonical forms or its first error.

use partner::dialect::{BlockRegistry, DialectParser, ParsedTurn};

pub fn parser() -> DialectParser {
    let mut blocks = BlockRegistry::new();
    for label in ["project_notes", "meeting_notes", "old_project"] {
        blocks.add(label, false);
    }
    for label in ["persona", "human", "scratch"] {
        blocks.add(label, true);
    }
    DialectParser::new().with_blocks(blocks)
}

pub fn parse(src: &str) -> ParsedTurn {
    parser().parse(src)
}

pub fn canon(src: &str) -> Vec<String> {
    let turn = parse(src);
    assert!(
        turn.errors.is_empty(),
        "{src:?} gave errors: {:?}",
        turn.errors
    );
    turn.actions.iter().map(|a| a.canonical()).collect()
}

pub fn check_table(rows: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (input, expected) in rows {
        let turn = parse(input);
        let got: Vec<String> = turn.actions.iter().map(|a| a.canonical()).collect();
        if !turn.errors.is_empty() || got != vec![expected.to_string()] {
            failures.push(format!(
                "  {input:?}\n    expected {expected:?}\n    got      {got:?} errors {:?}",
                turn.errors.iter().map(|e| e.message()).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

pub fn first_error(src: &str) -> String {
    let turn = parse(src);
    assert!(
        turn.actions.is_empty(),
        "{src:?} should yield no action, got {:?}",
        turn.actions
    );
    turn.errors
        .first()
        .unwrap_or_else(|| panic!("{src:?} should fail"))
        .message()
}
