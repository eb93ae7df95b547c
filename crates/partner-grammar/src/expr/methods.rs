//! The string, array and number methods value expressions may call.

use super::eval::to_number;
use crate::value::{Text, Value, js_number, utf16_len};

/// JavaScript's index argument: negative counts from the end.
fn index_arg(args: &[Value], i: usize, len: usize, default: usize) -> usize {
    match args.get(i) {
        Some(Value::Number(n)) => {
            let n = n.trunc();
            if n < 0.0 {
                len.saturating_sub((-n) as usize)
            } else {
                (n as usize).min(len)
            }
        }
        _ => default,
    }
}

/// The whitelisted methods: strings, arrays, numbers.
pub(super) fn call(v: &Value, method: &str, args: &[Value]) -> Value {
    match v {
        Value::String(s) => string_method(s, method, args),
        Value::Array(items) => array_method(v, items, method, args),
        Value::Number(n) => number_method(*n, method, args),
        _ => Value::Undefined,
    }
}

/// The argument at `i` as a string (empty when missing).
fn arg_str(args: &[Value], i: usize) -> String {
    args.get(i).map(Value::to_js_string).unwrap_or_default()
}

/// A string's methods.
fn string_method(s: &Text, method: &str, args: &[Value]) -> Value {
    let arg_str = |i: usize| arg_str(args, i);
    match method {
        "toLowerCase" | "toLocaleLowerCase" => Value::String(Text::from(s.to_lowercase())),
        "toUpperCase" | "toLocaleUpperCase" => Value::String(Text::from(s.to_uppercase())),
        "trim" => Value::String(s.trim().into()),
        "trimStart" => Value::String(s.trim_start().into()),
        "trimEnd" => Value::String(s.trim_end().into()),
        "includes" => Value::Bool(s.contains(&arg_str(0))),
        "startsWith" => Value::Bool(s.starts_with(&arg_str(0))),
        "endsWith" => Value::Bool(s.ends_with(&arg_str(0))),
        "indexOf" => Value::Number(
            s.find(&arg_str(0))
                .map_or(-1.0, |b| utf16_len(&s[..b]) as f64),
        ),
        "lastIndexOf" => Value::Number(
            s.rfind(&arg_str(0))
                .map_or(-1.0, |b| utf16_len(&s[..b]) as f64),
        ),
        "slice" | "substring" | "charAt" | "at" | "charCodeAt" | "codePointAt" => {
            string_at(s, method, args)
        }
        "concat" => Value::String(Text::from(
            s.to_string() + &args.iter().map(Value::to_js_string).collect::<String>(),
        )),
        "repeat" => {
            let n = args.first().map_or(0.0, to_number).clamp(0.0, 10_000.0);
            Value::String(Text::from(s.repeat(n as usize)))
        }
        "replace" => Value::String(Text::from(s.replacen(&arg_str(0), &arg_str(1), 1))),
        "replaceAll" => Value::String(Text::from(s.replace(&arg_str(0), &arg_str(1)))),
        "split" => {
            let sep = arg_str(0);
            let parts: Vec<Value> = if sep.is_empty() {
                s.chars()
                    .map(|c| Value::String(Text::from(c.to_string())))
                    .collect()
            } else {
                s.split(sep.as_str())
                    .map(|p| Value::String(p.into()))
                    .collect()
            };
            Value::Array(parts)
        }
        "padStart" | "padEnd" => string_pad(s, method, args),
        "toString" | "valueOf" => Value::String(s.clone()),
        _ => Value::Undefined,
    }
}

/// The string methods that index its UTF-16 code units, as JavaScript's do.
fn string_at(s: &Text, method: &str, args: &[Value]) -> Value {
    let units: Vec<u16> = s.encode_utf16().collect();
    let from_units = |u: &[u16]| String::from_utf16_lossy(u);
    let len = units.len();
    match method {
        "slice" => {
            let a = index_arg(args, 0, len, 0);
            let b = index_arg(args, 1, len, len);
            Value::String(if a < b {
                Text::from(from_units(&units[a..b]))
            } else {
                Text::from(String::new())
            })
        }
        "substring" => {
            let clamp = |i: usize, d: usize| match args.get(i) {
                Some(Value::Number(n)) if *n > 0.0 => (*n as usize).min(len),
                Some(Value::Number(_)) => 0,
                _ => d,
            };
            let (a, b) = (clamp(0, 0), clamp(1, len));
            let (a, b) = if a > b { (b, a) } else { (a, b) };
            Value::String(Text::from(from_units(&units[a..b])))
        }
        "charAt" | "at" => {
            let i = match args.first() {
                Some(Value::Number(n)) if *n < 0.0 && method == "at" => len as f64 + n.trunc(),
                Some(Value::Number(n)) => n.trunc(),
                _ => 0.0,
            };
            if i >= 0.0 && (i as usize) < len {
                Value::String(Text::from(from_units(&units[i as usize..i as usize + 1])))
            } else if method == "at" {
                Value::Undefined
            } else {
                Value::String(Text::from(String::new()))
            }
        }
        "charCodeAt" | "codePointAt" => {
            let i = match args.first() {
                Some(Value::Number(n)) => n.trunc(),
                _ => 0.0,
            };
            if i >= 0.0 && (i as usize) < len {
                Value::Number(f64::from(units[i as usize]))
            } else if method == "codePointAt" {
                Value::Undefined
            } else {
                Value::Number(f64::NAN)
            }
        }
        _ => Value::Undefined,
    }
}

/// `padStart` and `padEnd`, to at most 10,000 code units.
fn string_pad(s: &Text, method: &str, args: &[Value]) -> Value {
    let len = utf16_len(s);
    let target = args.first().map_or(0.0, to_number).min(10_000.0) as usize;
    let fill = if args.len() > 1 {
        arg_str(args, 1)
    } else {
        " ".into()
    };
    if target <= len || fill.is_empty() {
        return Value::String(s.clone());
    }
    let pad: String = fill.chars().cycle().take(target - len).collect();
    Value::String(if method == "padStart" {
        Text::from(pad + s)
    } else {
        Text::from(s.to_string() + &pad)
    })
}

/// An array's methods.
fn array_method(v: &Value, items: &[Value], method: &str, args: &[Value]) -> Value {
    let arg_str = |i: usize| arg_str(args, i);
    match method {
        "join" => {
            let sep = if args.is_empty() {
                ",".into()
            } else {
                arg_str(0)
            };
            Value::String(Text::from(
                items
                    .iter()
                    .map(|v| match v {
                        Value::Undefined | Value::Null => String::new(),
                        other => other.to_js_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(&sep),
            ))
        }
        "includes" => Value::Bool(
            items
                .iter()
                .any(|v| args.first().is_some_and(|a| a.strict_eq(v))),
        ),
        "indexOf" => Value::Number(
            items
                .iter()
                .position(|v| args.first().is_some_and(|a| a.strict_eq(v)))
                .map_or(-1.0, |i| i as f64),
        ),
        "slice" => {
            let len = items.len();
            let a = index_arg(args, 0, len, 0);
            let b = index_arg(args, 1, len, len);
            Value::Array(if a < b {
                items[a..b].to_vec()
            } else {
                Vec::new()
            })
        }
        "concat" => {
            let mut out = items.to_vec();
            for a in args {
                match a {
                    Value::Array(inner) => out.extend(inner.iter().cloned()),
                    other => out.push(other.clone()),
                }
            }
            Value::Array(out)
        }
        "at" => {
            let len = items.len() as f64;
            let i = args.first().map_or(0.0, to_number).trunc();
            let i = if i < 0.0 { len + i } else { i };
            if i >= 0.0 && i < len {
                items[i as usize].clone()
            } else {
                Value::Undefined
            }
        }
        "flat" => Value::Array(
            items
                .iter()
                .flat_map(|v| match v {
                    Value::Array(inner) => inner.clone(),
                    other => vec![other.clone()],
                })
                .collect(),
        ),
        "toString" => Value::String(Text::from(v.to_js_string())),
        _ => Value::Undefined,
    }
}

/// A number's methods.
fn number_method(n: f64, method: &str, args: &[Value]) -> Value {
    match method {
        "toFixed" => {
            let digits = args.first().map_or(0.0, to_number).clamp(0.0, 100.0) as usize;
            Value::String(Text::from(format!("{n:.digits$}")))
        }
        "toString" => Value::String(Text::from(js_number(n))),
        "toPrecision" => match args.first() {
            Some(p) => {
                let p = to_number(p).clamp(1.0, 100.0) as usize;
                let digits = p.saturating_sub(1 + n.abs().log10().floor().max(0.0) as usize);
                Value::String(Text::from(format!("{n:.digits$}")))
            }
            None => Value::String(Text::from(js_number(n))),
        },
        "toExponential" => {
            let digits = args.first().map_or(6.0, to_number).clamp(0.0, 100.0) as usize;
            let s = format!("{n:.digits$e}");
            Value::String(match s.split_once('e') {
                Some((m, e)) if !e.starts_with('-') => Text::from(format!("{m}e+{e}")),
                _ => Text::from(s),
            })
        }
        _ => Value::Undefined,
    }
}
