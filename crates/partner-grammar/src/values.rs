//! Building a parse's value from what it captured: the value expression
//! evaluated over the captures it reads, nested rules' values made on
//! demand — and what that counted (captures read, wildcard characters,
//! where entity-typed captures landed).

use crate::value::Text;

use super::expr::{Expr, Path, eval, same_text};
use super::state::{Arena, Captured, IdNode, Link, NIL};
use super::value::{Value, utf16_len};

/// What building a value counted.
#[derive(Debug, Default)]
pub(super) struct Stat {
    pub count: usize,
    pub chars: usize,
    pub names: Vec<String>,
    /// How deep nested rule values go now.
    depth: usize,
}

/// Deepest nesting of rule values built (a parse of a deeply recursive
/// grammar gives `undefined` below it instead of exhausting the stack).
const MAX_VALUE_DEPTH: usize = 256;

/// Where a parse's captures are: the arena, its list of values, and the
/// request the spans point into.
#[derive(Clone, Copy)]
pub(super) struct Captures<'a, 'g> {
    pub arena: &'a Arena<'g>,
    pub values: Link,
    pub request: &'a str,
}

/// The value of a rule: its expression, or its one captured value.
/// `partial` names the capture being completed (it may be missing).
pub(super) fn make_value(
    node: Option<&Expr>,
    ids: Link,
    captures: Captures<'_, '_>,
    path: &Path<'_>,
    stat: &mut Stat,
    partial: Option<u32>,
) -> Value {
    if stat.depth >= MAX_VALUE_DEPTH {
        return Value::Undefined;
    }
    stat.depth += 1;
    let value = make_value_here(node, ids, captures, path, stat, partial);
    stat.depth -= 1;
    value
}

fn make_value_here(
    node: Option<&Expr>,
    ids: Link,
    captures: Captures<'_, '_>,
    path: &Path<'_>,
    stat: &mut Stat,
    partial: Option<u32>,
) -> Value {
    let arena = captures.arena;
    match node {
        None => match arena.id(ids) {
            Some(id) if id.prev == NIL => matched_value(id, captures, path, stat, partial),
            _ => Value::Undefined,
        },
        Some(e) => eval(e, path, &mut |name, at| {
            let mut node = arena.id(ids);
            while let Some(n) = node {
                if n.name.is_some_and(|n| same_text(n, name)) {
                    return matched_value(n, captures, at, stat, partial);
                }
                node = arena.id(n.prev);
            }
            Value::Undefined
        }),
    }
}

fn matched_value(
    id: &IdNode<'_>,
    captures: Captures<'_, '_>,
    path: &Path<'_>,
    stat: &mut Stat,
    partial: Option<u32>,
) -> Value {
    if Some(id.id) == partial || (partial.is_none() && id.entity) {
        stat.names.push(path.to_string());
    }
    let arena = captures.arena;
    let mut entry = arena.value(captures.values);
    while let Some(e) = entry {
        if e.id == id.id {
            break;
        }
        entry = arena.value(e.prev);
    }
    let Some(entry) = entry else {
        return Value::Undefined;
    };
    match entry.value {
        Captured::Nested(node, ids) => make_value(node, ids, captures, path, stat, partial),
        Captured::Span(a, b) => {
            let text = captures.request.get(a as usize..b as usize).unwrap_or("");
            stat.count += 1;
            if entry.wildcard {
                stat.chars += utf16_len(text);
            }
            Value::String(Text::from(text))
        }
        Captured::Words(words) => {
            stat.count += 1;
            Value::String(Text::from(words.join(" ")))
        }
        Captured::Num(n) => {
            stat.count += 1;
            Value::Number(n)
        }
        Captured::Undefined => Value::Undefined,
    }
}
