//! Patterns: building them (`pattern`, `pattern-with`), reading their
//! structure (value, elements, length = direct elements, size = all nodes,
//! depth with atomic = 0, values in pre-order), searching them with a
//! predicate (pre-order, the root included), and the Subject of a pattern
//! (labels, identity, properties) — how tools read and write state.

use super::{Primitive, pattern_arg, predicate, prim, seq, string, test};
use crate::codec;
use crate::error::{LispError, LispResult};
use crate::eval::Machine;
use crate::subject::{decoration, decoration_value, from_property, property};
use crate::value::{PatternSubject, Value};
use pattern_core::{Pattern, Symbol};

pub(super) static PRIMITIVES: &[Primitive] = &[
    prim!(
        "pattern",
        1,
        Some(1),
        pattern,
        "An atomic pattern decorated with a value."
    ),
    prim!(
        "pattern-with",
        2,
        Some(2),
        pattern_with,
        "(pattern-with value elements): a pattern with elements."
    ),
    prim!(
        "pattern-set-elements",
        2,
        Some(2),
        set_elements,
        "(pattern-set-elements p elements): p's decoration, kept as it is, with new elements."
    ),
    prim!(
        "pattern-value",
        1,
        Some(1),
        value,
        "A pattern's decoration as a value."
    ),
    prim!(
        "pattern-elements",
        1,
        Some(1),
        elements,
        "A pattern's direct elements."
    ),
    prim!(
        "pattern-length",
        1,
        Some(1),
        length,
        "How many direct elements."
    ),
    prim!(
        "pattern-size",
        1,
        Some(1),
        size,
        "How many nodes, the pattern included."
    ),
    prim!(
        "pattern-depth",
        1,
        Some(1),
        depth,
        "Deepest nesting (an atomic pattern is 0)."
    ),
    prim!(
        "pattern-values",
        1,
        Some(1),
        values,
        "Every node's decoration value, in pre-order."
    ),
    prim!(
        "pattern-find",
        2,
        Some(2),
        find,
        "The first node (pre-order) a predicate accepts, or ()."
    ),
    prim!(
        "pattern-any?",
        2,
        Some(2),
        any,
        "Whether a predicate accepts some node."
    ),
    prim!(
        "pattern-all?",
        2,
        Some(2),
        all,
        "Whether a predicate accepts every node."
    ),
    prim!(
        "value->pattern",
        1,
        Some(1),
        to_pattern,
        "Any value serialized as a pattern."
    ),
    prim!(
        "pattern->value",
        1,
        Some(1),
        from_pattern,
        "A serialized value read back from its pattern."
    ),
    prim!(
        "subject-labels",
        1,
        Some(1),
        labels,
        "A pattern's labels, as a set of strings."
    ),
    prim!(
        "subject-id",
        1,
        Some(1),
        identity,
        "A pattern's identity (\"\" when it has none)."
    ),
    prim!(
        "subject-get",
        2,
        Some(3),
        get,
        "(subject-get p key [default]): a property of a pattern."
    ),
    prim!(
        "subject-set",
        3,
        Some(3),
        set,
        "(subject-set p key value): the pattern with a property set."
    ),
    prim!(
        "subject-with-labels",
        2,
        Some(2),
        with_labels,
        "(subject-with-labels p labels): the pattern relabelled."
    ),
    prim!(
        "subject-with-id",
        2,
        Some(2),
        with_id,
        "(subject-with-id p id): the pattern with an identity."
    ),
];

fn pattern(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Value::pattern(Pattern::point(decoration(&args[0], "pattern")?))
}

/// Argument 2 of `who`: a list of patterns, the elements of a new one.
fn elements_arg(m: &mut Machine<'_>, who: &str, v: &Value) -> LispResult<Vec<PatternSubject>> {
    let list = seq(who, 1, v)?;
    let mut elements = Vec::with_capacity(list.items.len());
    for item in &list.items {
        match item {
            Value::Pattern(t) => elements.push(t.pattern.clone()),
            other => return Err(LispError::expected(who, 2, "a list of patterns", other)),
        }
    }
    m.charge(elements.len() as u64)?;
    Ok(elements)
}

fn pattern_with(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let elements = elements_arg(m, "pattern-with", &args[1])?;
    Value::pattern(Pattern::pattern(
        decoration(&args[0], "pattern-with")?,
        elements,
    ))
}

fn set_elements(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let p = pattern_arg("pattern-set-elements", 0, &args[0])?;
    let elements = elements_arg(m, "pattern-set-elements", &args[1])?;
    Value::pattern(Pattern::pattern(p.value.clone(), elements))
}

fn value(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    decoration_value(&pattern_arg("pattern-value", 0, &args[0])?.value)
}

fn elements(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let p = pattern_arg("pattern-elements", 0, &args[0])?;
    m.charge(p.elements.len() as u64)?;
    Value::list(
        p.elements
            .iter()
            .map(|e| Value::pattern(e.clone()))
            .collect::<LispResult<_>>()?,
    )
}

fn length(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::Int(
        pattern_arg("pattern-length", 0, &args[0])?.elements.len() as i64,
    ))
}

/// Every node, pre-order (iterative: no recursion over the tree).
fn nodes(p: &PatternSubject) -> Vec<&PatternSubject> {
    let mut out = Vec::new();
    let mut stack = vec![p];
    while let Some(n) = stack.pop() {
        out.push(n);
        stack.extend(n.elements.iter().rev());
    }
    out
}

fn size(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let n = nodes(pattern_arg("pattern-size", 0, &args[0])?).len();
    m.charge(n as u64 / 8)?;
    Ok(Value::Int(n as i64))
}

fn depth(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    pattern_arg("pattern-depth", 0, &args[0])?;
    // A pattern value is one level deeper than its pattern (`Value::pattern`).
    Ok(Value::Int(args[0].depth() as i64 - 1))
}

fn values(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let all = nodes(pattern_arg("pattern-values", 0, &args[0])?);
    m.charge(all.len() as u64)?;
    Value::list(
        all.into_iter()
            .map(|n| decoration_value(&n.value))
            .collect::<LispResult<_>>()?,
    )
}

fn search(m: &mut Machine<'_>, who: &str, args: &[Value], want: bool) -> LispResult<Option<Value>> {
    let p = pattern_arg(who, 0, &args[0])?;
    predicate(who, 1, &args[1])?;
    for n in nodes(p) {
        let node = Value::pattern(n.clone())?;
        if test(m, who, &args[1], node.clone())? == want {
            return Ok(Some(node));
        }
    }
    Ok(None)
}

fn find(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(search(m, "pattern-find", args, true)?.unwrap_or_else(Value::nil))
}

fn any(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(
        search(m, "pattern-any?", args, true)?.is_some(),
    ))
}

fn all(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::Bool(
        search(m, "pattern-all?", args, false)?.is_none(),
    ))
}

fn to_pattern(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Value::pattern(codec::to_pattern(&args[0], m.globals)?)
}

fn from_pattern(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    codec::from_pattern(pattern_arg("pattern->value", 0, &args[0])?)
}

fn labels(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let p = pattern_arg("subject-labels", 0, &args[0])?;
    Value::set(
        p.value
            .labels
            .iter()
            .map(|l| crate::value::Key::Str(l.as_str().into()))
            .collect(),
    )
}

fn identity(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::str(
        pattern_arg("subject-id", 0, &args[0])?
            .value
            .identity
            .0
            .as_str(),
    ))
}

fn key_name<'v>(who: &str, v: &'v Value) -> LispResult<&'v str> {
    match v {
        Value::Keyword(k) => Ok(k),
        other => string(who, 1, other),
    }
}

fn get(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let p = pattern_arg("subject-get", 0, &args[0])?;
    let k = key_name("subject-get", &args[1])?;
    match p.value.properties.get(k) {
        Some(v) => from_property(v),
        None => Ok(args.get(2).cloned().unwrap_or_else(Value::nil)),
    }
}

fn set(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let p = pattern_arg("subject-set", 0, &args[0])?;
    let k = key_name("subject-set", &args[1])?;
    let v = property(&args[2], "subject-set")?;
    let mut out = p.clone();
    out.value.properties.insert(k.to_string(), v);
    Value::pattern(out)
}

fn with_labels(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let p = pattern_arg("subject-with-labels", 0, &args[0])?;
    let labels = match &args[1] {
        Value::Set(s) => s.iter().map(|k| k.value()).collect::<Vec<_>>(),
        Value::List(s) => s.items.clone(),
        other => {
            return Err(LispError::expected(
                "subject-with-labels",
                2,
                "a set or list of strings",
                other,
            ));
        }
    };
    let mut out = p.clone();
    out.value.labels.clear();
    for l in &labels {
        out.value
            .labels
            .insert(string("subject-with-labels", 1, l)?.to_string());
    }
    Value::pattern(out)
}

fn with_id(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let p = pattern_arg("subject-with-id", 0, &args[0])?;
    let mut out = p.clone();
    out.value.identity = Symbol(string("subject-with-id", 1, &args[1])?.to_string());
    Value::pattern(out)
}
