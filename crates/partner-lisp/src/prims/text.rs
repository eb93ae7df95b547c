//! Strings: joining, measuring (in characters), cutting, comparing,
//! searching, splitting, and numbers as text.

use super::{Primitive, int, prim, seq, string};
use crate::error::{LispError, LispResult};
use crate::eval::Machine;
use crate::value::{Value, decimal_text};

pub(super) static PRIMITIVES: &[Primitive] = &[
    prim!(
        "string-append",
        0,
        None,
        append,
        "Strings joined end to end."
    ),
    prim!("string-length", 1, Some(1), length, "Length in characters."),
    prim!(
        "substring",
        3,
        Some(3),
        substring,
        "Characters from start (inclusive) to end (exclusive)."
    ),
    prim!("string=?", 2, None, same, "Strings equal."),
    prim!(
        "string-contains?",
        2,
        Some(2),
        contains,
        "Whether the first string contains the second."
    ),
    prim!(
        "string-split",
        2,
        Some(2),
        split,
        "Pieces between separators (characters for \"\")."
    ),
    prim!(
        "string-join",
        2,
        Some(2),
        join,
        "A list of strings joined with a separator."
    ),
    prim!(
        "number->string",
        1,
        Some(1),
        number_to_string,
        "A number as text."
    ),
    prim!(
        "string->number",
        1,
        Some(1),
        string_to_number,
        "Text as a number, or #f."
    ),
    prim!("string-upcase", 1, Some(1), upcase, "Upper case."),
    prim!("string-downcase", 1, Some(1), downcase, "Lower case."),
];

fn append(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        out.push_str(string("string-append", i, a)?);
        if out.len() > crate::value::MAX_STRING {
            break;
        }
    }
    m.charge(out.len() as u64 / 64)?;
    Value::text(out)
}

fn length(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Ok(Value::Int(
        string("string-length", 0, &args[0])?.chars().count() as i64,
    ))
}

fn substring(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = string("substring", 0, &args[0])?;
    let len = s.chars().count() as i64;
    let start = int("substring", 1, &args[1])?;
    let end = int("substring", 2, &args[2])?;
    if !(0..=len).contains(&start) {
        return Err(LispError::expected(
            "substring",
            2,
            &format!("a start from 0 to {len}"),
            &args[1],
        ));
    }
    if !(start..=len).contains(&end) {
        return Err(LispError::expected(
            "substring",
            3,
            &format!("an end from {start} to {len}"),
            &args[2],
        ));
    }
    let out: String = s
        .chars()
        .skip(start as usize)
        .take((end - start) as usize)
        .collect();
    Ok(Value::str(out))
}

fn same(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let first = string("string=?", 0, &args[0])?;
    let mut all = true;
    for (i, a) in args.iter().enumerate().skip(1) {
        all &= string("string=?", i, a)? == first;
    }
    Ok(Value::Bool(all))
}

fn contains(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = string("string-contains?", 0, &args[0])?;
    let part = string("string-contains?", 1, &args[1])?;
    Ok(Value::Bool(s.contains(part)))
}

fn split(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = string("string-split", 0, &args[0])?;
    let sep = string("string-split", 1, &args[1])?;
    let parts: Vec<Value> = if sep.is_empty() {
        s.chars().map(|c| Value::str(c.to_string())).collect()
    } else {
        s.split(sep).map(Value::str).collect()
    };
    m.charge(parts.len() as u64)?;
    Value::list(parts)
}

fn join(m: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let items = seq("string-join", 0, &args[0])?;
    let sep = string("string-join", 1, &args[1])?;
    let mut out = String::new();
    for (i, v) in items.items.iter().enumerate() {
        let Value::Str(s) = v else {
            return Err(LispError::expected(
                "string-join",
                1,
                "a list of strings",
                &args[0],
            ));
        };
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(s);
        if out.len() > crate::value::MAX_STRING {
            break;
        }
    }
    m.charge(out.len() as u64 / 64)?;
    Value::text(out)
}

fn number_to_string(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    match &args[0] {
        Value::Int(i) => Ok(Value::str(i.to_string())),
        Value::Dec(d) => Ok(Value::str(decimal_text(*d))),
        other => Err(LispError::expected("number->string", 1, "a number", other)),
    }
}

fn string_to_number(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    let s = string("string->number", 0, &args[0])?.trim();
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    match s.parse::<f64>() {
        Ok(d) if d.is_finite() && s.bytes().any(|b| b.is_ascii_digit()) => Ok(Value::Dec(d)),
        _ => Ok(Value::Bool(false)),
    }
}

fn upcase(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Value::text(string("string-upcase", 0, &args[0])?.to_uppercase())
}

fn downcase(_: &mut Machine<'_>, args: &[Value]) -> LispResult<Value> {
    Value::text(string("string-downcase", 0, &args[0])?.to_lowercase())
}
