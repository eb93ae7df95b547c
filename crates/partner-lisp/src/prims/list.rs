//! Lists: building, taking apart, and the higher-order walks (`map`,
//! `filter`, `fold`), plus the type tests a program without truthiness
//! needs.

use super::{Primitive, int, prim, seq, test};
use crate::error::{LispError, LispResult};
use crate::eval::Machine;
use crate::value::Value;

pub(super) static PRIMITIVES: &[Primitive] = &[
    prim!(
        "cons",
        2,
        Some(2),
        cons,
        "A list with an item put in front."
    ),
    prim!(
        "car",
        1,
        Some(1),
        car,
        "The first item of a non-empty list."
    ),
    prim!(
        "cdr",
        1,
        Some(1),
        cdr,
        "All but the first item of a non-empty list."
    ),
    prim!("list", 0, None, list, "A list of the arguments."),
    prim!(
        "length",
        1,
        Some(1),
        length,
        "Items in a list, map or set; characters in a string."
    ),
    prim!("append", 0, None, append, "Lists joined end to end."),
    prim!("reverse", 1, Some(1), reverse, "A list backwards."),
    prim!("nth", 2, Some(2), nth, "The item at a 0-based index."),
    prim!("map", 2, Some(2), map, "A function applied to each item."),
    prim!(
        "filter",
        2,
        Some(2),
        filter,
        "The items a predicate accepts."
    ),
    prim!(
        "fold",
        3,
        Some(3),
        fold,
        "(fold f init list): (f acc item) over the items, left to right."
    ),
    prim!(
        "empty?",
        1,
        Some(1),
        empty,
        "Whether a list, map, set or string is empty."
    ),
    prim!("list?", 1, Some(1), is_list, "Whether a value is a list."),
    prim!(
        "number?",
        1,
        Some(1),
        is_number,
        "Whether a value is a number."
    ),
    prim!(
        "string?",
        1,
        Some(1),
        is_string,
        "Whether a value is a string."
    ),
    prim!(
        "boolean?",
        1,
        Some(1),
        is_boolean,
        "Whether a value is a boolean."
    ),
    prim!(
        "keyword?",
        1,
        Some(1),
        is_keyword,
        "Whether a value is a keyword."
    ),
    prim!("map?", 1, Some(1), is_map, "Whether a value is a map."),
    prim!("set?", 1, Some(1), is_set, "Whether a value is a set."),
    prim!(
        "pattern?",
        1,
        Some(1),
        is_pattern,
        "Whether a value is a pattern."
    ),
    prim!(
        "procedure?",
        1,
        Some(1),
        is_procedure,
        "Whether a value is a closure or primitive."
    ),
];

fn cons(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let rest = seq("cons", 1, &args[1])?;
    m.charge(rest.items.len() as u64 / 8)?;
    let mut items = Vec::with_capacity(rest.items.len() + 1);
    items.push(args[0].clone());
    items.extend(rest.items.iter().cloned());
    Value::list(items)
}

fn non_empty<'v>(who: &str, v: &'v Value) -> LispResult<&'v [Value]> {
    let s = seq(who, 0, v)?;
    if s.items.is_empty() {
        return Err(LispError::expected(who, 1, "a non-empty list", v));
    }
    Ok(&s.items)
}

fn car(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(non_empty("car", &args[0])?[0].clone())
}

fn cdr(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let items = non_empty("cdr", &args[0])?;
    m.charge(items.len() as u64 / 8)?;
    Value::list(items[1..].to_vec())
}

fn list(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Value::list(args.to_vec())
}

fn length(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let n = match &args[0] {
        Value::List(s) => s.items.len(),
        Value::Map(t) => t.entries.len(),
        Value::Set(s) => s.len(),
        Value::Str(s) => s.chars().count(),
        other => {
            return Err(LispError::expected(
                "length",
                1,
                "a list, map, set or string",
                other,
            ));
        }
    };
    Ok(Value::Int(n as i64))
}

fn append(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let mut items = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let s = seq("append", i, a)?;
        if items.len() + s.items.len() > crate::value::MAX_ITEMS {
            return Err(crate::value::too_many(items.len() + s.items.len()));
        }
        items.extend(s.items.iter().cloned());
    }
    m.charge(items.len() as u64 / 8)?;
    Value::list(items)
}

fn reverse(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = seq("reverse", 0, &args[0])?;
    m.charge(s.items.len() as u64 / 8)?;
    Value::list(s.items.iter().rev().cloned().collect())
}

fn nth(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = seq("nth", 0, &args[0])?;
    let i = int("nth", 1, &args[1])?;
    usize::try_from(i)
        .ok()
        .and_then(|i| s.items.get(i))
        .cloned()
        .ok_or_else(|| {
            LispError::expected(
                "nth",
                2,
                &format!("an index from 0 to {}", s.items.len() as i64 - 1),
                &args[1],
            )
        })
}

fn map(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = seq("map", 1, &args[1])?;
    let mut out = Vec::with_capacity(s.items.len());
    for item in &s.items {
        out.push(m.apply(&args[0], vec![item.clone()], "map", 1)?);
    }
    Value::list(out)
}

fn filter(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    super::predicate("filter", 0, &args[0])?;
    let s = seq("filter", 1, &args[1])?;
    let mut out = Vec::new();
    for item in &s.items {
        if test(m, "filter", &args[0], item.clone())? {
            out.push(item.clone());
        }
    }
    Value::list(out)
}

fn fold(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = seq("fold", 2, &args[2])?;
    let mut acc = args[1].clone();
    for item in &s.items {
        acc = m.apply(&args[0], vec![acc, item.clone()], "fold", 1)?;
    }
    Ok(acc)
}

fn empty(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(match &args[0] {
        Value::List(s) => s.items.is_empty(),
        Value::Map(t) => t.entries.is_empty(),
        Value::Set(s) => s.is_empty(),
        Value::Str(s) => s.is_empty(),
        other => {
            return Err(LispError::expected(
                "empty?",
                1,
                "a list, map, set or string",
                other,
            ));
        }
    }))
}

fn is_list(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::List(_))))
}
fn is_number(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::Int(_) | Value::Dec(_))))
}
fn is_string(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::Str(_))))
}
fn is_boolean(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::Bool(_))))
}
fn is_keyword(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::Keyword(_))))
}
fn is_map(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::Map(_))))
}
fn is_set(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::Set(_))))
}
fn is_pattern(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(a[0], Value::Pattern(_))))
}
fn is_procedure(_: &mut Machine<'_>, a: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(matches!(
        a[0],
        Value::Closure(_) | Value::Primitive(_)
    )))
}
