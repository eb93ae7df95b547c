//! A value as an indented tree, one line per node, for a person reading
//! it in a terminal: lists and maps open up, a pattern shows its Subject
//! on one line and its elements below.

use pattern_core::Pattern;

use super::codec::gram_of;
use super::value::{PatternSubject, Value};

/// The value as at most `max` lines, indented two spaces per level; a
/// last line says how many were left out.
pub fn tree(v: &Value, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut left = 0usize;
    walk(v, 0, None, &mut out, max, &mut left);
    if left > 0 {
        out.push(format!("… {left} more lines"));
    }
    out
}

fn push(out: &mut Vec<String>, max: usize, left: &mut usize, line: String) -> bool {
    if out.len() < max {
        out.push(line);
        true
    } else {
        *left += 1;
        false
    }
}

fn walk(
    v: &Value,
    level: usize,
    key: Option<String>,
    out: &mut Vec<String>,
    max: usize,
    left: &mut usize,
) {
    let pad = "  ".repeat(level);
    let head = key.map_or_else(String::new, |k| format!("{k} "));
    match v {
        Value::List(s) if !s.items.is_empty() => {
            push(
                out,
                max,
                left,
                format!("{pad}{head}list of {}", s.items.len()),
            );
            for item in &s.items {
                walk(item, level + 1, None, out, max, left);
            }
        }
        Value::Map(t) if !t.entries.is_empty() => {
            push(
                out,
                max,
                left,
                format!("{pad}{head}map of {}", t.entries.len()),
            );
            for (k, item) in &t.entries {
                walk(item, level + 1, Some(k.to_string()), out, max, left);
            }
        }
        Value::Pattern(t) => pattern(&t.pattern, level, &head, out, max, left),
        other => {
            push(out, max, left, format!("{pad}{head}{other}"));
        }
    }
}

fn pattern(
    p: &PatternSubject,
    level: usize,
    head: &str,
    out: &mut Vec<String>,
    max: usize,
    left: &mut usize,
) {
    // Iterative: a pattern may be as deep as the value bound allows.
    let mut stack: Vec<(&PatternSubject, usize)> = vec![(p, level)];
    let mut first = true;
    while let Some((node, depth)) = stack.pop() {
        let subject = gram_of(&Pattern::point(node.value.clone()));
        let pad = "  ".repeat(depth);
        let lead = if first { head } else { "" };
        first = false;
        push(out, max, left, format!("{pad}{lead}{subject}"));
        for e in node.elements.iter().rev() {
            stack.push((e, depth + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Lisp;

    #[test]
    fn values_open_up_as_trees() {
        let v = Lisp::new()
            .eval_str("(list 1 {a: (list 2 3)} (pattern-with \"r\" (list (pattern 4))))")
            .unwrap();
        assert_eq!(
            super::tree(&v, 100),
            vec![
                "list of 3",
                "  1",
                "  map of 1",
                "    a: list of 2",
                "      2",
                "      3",
                "  (:String {text: \"r\"})",
                "    (:Number {value: 4})",
            ]
        );
        assert_eq!(super::tree(&v, 2).last().unwrap(), "… 6 more lines");
    }
}
