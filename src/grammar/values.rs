//! Building a parse's value from what it captured: the value expression
//! evaluated over the captures it reads, nested rules' values made on
//! demand — and what that counted (captures read, wildcard characters,
//! where entity-typed captures landed).

use std::rc::Rc;

use super::expr::{Expr, eval};
use super::matcher::{Captured, IdNode, ValNode};
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

/// The value of a rule: its expression, or its one captured value.
/// `partial` names the capture being completed (it may be missing).
pub(super) fn make_value(
    node: Option<&Expr>,
    ids: Option<&Rc<IdNode>>,
    values: &Option<Rc<ValNode>>,
    path: &str,
    stat: &mut Stat,
    partial: Option<u32>,
) -> Value {
    if stat.depth >= MAX_VALUE_DEPTH {
        return Value::Undefined;
    }
    stat.depth += 1;
    let value = make_value_here(node, ids, values, path, stat, partial);
    stat.depth -= 1;
    value
}

fn make_value_here(
    node: Option<&Expr>,
    ids: Option<&Rc<IdNode>>,
    values: &Option<Rc<ValNode>>,
    path: &str,
    stat: &mut Stat,
    partial: Option<u32>,
) -> Value {
    match node {
        None => match ids {
            Some(id) if id.prev.is_none() => matched_value(id, values, path, stat, partial),
            _ => Value::Undefined,
        },
        Some(e) => eval(e, path, &mut |name, at| {
            let mut node = ids;
            while let Some(n) = node {
                if n.name.as_deref() == Some(name) {
                    return matched_value(n, values, at, stat, partial);
                }
                node = n.prev.as_ref();
            }
            Value::Undefined
        }),
    }
}

const BASIC: &[&str] = &["string", "wildcard", "word", "number"];

fn matched_value(
    id: &IdNode,
    values: &Option<Rc<ValNode>>,
    path: &str,
    stat: &mut Stat,
    partial: Option<u32>,
) -> Value {
    if Some(id.id) == partial
        || (partial.is_none() && id.type_name.as_deref().is_some_and(|t| !BASIC.contains(&t)))
    {
        stat.names.push(path.to_string());
    }
    let mut entry = values.as_ref();
    while let Some(e) = entry {
        if e.id == id.id {
            break;
        }
        entry = e.prev.as_ref();
    }
    let Some(entry) = entry else {
        return Value::Undefined;
    };
    match &entry.value {
        Captured::Nested(node, ids) => {
            make_value(node.as_deref(), ids.as_ref(), values, path, stat, partial)
        }
        Captured::Str(text) => {
            stat.count += 1;
            if entry.wildcard {
                stat.chars += utf16_len(text);
            }
            Value::String(text.clone())
        }
        Captured::Num(n) => {
            stat.count += 1;
            Value::Number(*n)
        }
        Captured::Undefined => Value::Undefined,
    }
}
