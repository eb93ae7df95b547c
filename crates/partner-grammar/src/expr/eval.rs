//! Evaluating value expressions with JavaScript's semantics.

use super::methods::call;

use super::{Expr, Field, Item, Piece};
use crate::value::{Text, Value, js_number};

/// Where in the result a value lands (`parameters.date`), written out only
/// when somebody asks.
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
    /// The result itself.
    Root,
    /// A property of an object.
    Key(&'a Path<'a>, &'a str),
    /// An element of an array.
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (parent, last): (&Path<'_>, &dyn std::fmt::Display) = match self {
            Path::Root => return Ok(()),
            Path::Key(parent, k) => (parent, k),
            Path::Index(parent, i) => (parent, i),
        };
        if matches!(parent, Path::Root) {
            write!(f, "{last}")
        } else {
            write!(f, "{parent}.{last}")
        }
    }
}

/// Evaluates `e`; `var` resolves a variable (with the property path the
/// value lands at).
pub fn eval<F>(e: &Expr, path: &Path<'_>, var: &mut F) -> Value
where
    F: FnMut(&str, &Path<'_>) -> Value,
{
    match e {
        Expr::Lit(v) => v.clone(),
        Expr::Var(name) => var(name, path),
        Expr::Object(fields) => eval_object(fields, path, var),
        Expr::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let sub = Path::Index(path, i);
                match item {
                    Item::One(e) => out.push(eval(e, &sub, var)),
                    Item::Spread(e) => match eval(e, &sub, var) {
                        Value::Array(inner) => out.extend(inner),
                        other => out.push(other),
                    },
                }
            }
            Value::Array(out)
        }
        Expr::Template(pieces) => {
            let mut s = String::new();
            for p in pieces {
                match p {
                    Piece::Text(t) => s.push_str(t),
                    Piece::Expr(e) => s.push_str(&eval(e, path, var).to_js_string()),
                }
            }
            Value::String(Text::from(s))
        }
        Expr::Unary(super::Operator(op), e) => {
            let v = eval(e, path, var);
            match *op {
                "!" => Value::Bool(!v.truthy()),
                "-" => Value::Number(-to_number(&v)),
                "+" => Value::Number(to_number(&v)),
                _ => Value::String(v.type_of().into()),
            }
        }
        Expr::Binary(super::Operator(op), a, b) => eval_binary(op, a, b, path, var),
        Expr::Cond(t, a, b) => {
            if eval(t, path, var).truthy() {
                eval(a, path, var)
            } else {
                eval(b, path, var)
            }
        }
        Expr::Member(o, name, optional) => {
            let v = eval(o, path, var);
            if *optional && matches!(v, Value::Undefined | Value::Null) {
                return Value::Undefined;
            }
            v.get(name)
        }
        Expr::Index(o, i, optional) => {
            let v = eval(o, path, var);
            if *optional && matches!(v, Value::Undefined | Value::Null) {
                return Value::Undefined;
            }
            let key = match eval(i, path, var) {
                Value::Number(n) => js_number(n),
                other => other.to_js_string(),
            };
            v.get(&key)
        }
        Expr::Call(o, method, args, optional) => {
            let v = eval(o, path, var);
            if *optional && matches!(v, Value::Undefined | Value::Null) {
                return Value::Undefined;
            }
            let args: Vec<Value> = args.iter().map(|a| eval(a, path, var)).collect();
            call(&v, method, &args)
        }
    }
}

/// An object literal: its fields in order, a later key (or a spread
/// object's) replacing an earlier one.
fn eval_object<F>(fields: &super::Fields, path: &Path<'_>, var: &mut F) -> Value
where
    F: FnMut(&str, &Path<'_>) -> Value,
{
    let mut out: Vec<(Text, Value)> = Vec::with_capacity(fields.iter().len());
    for f in fields.iter() {
        match f {
            Field::Pair(k, value) => {
                let sub = Path::Key(path, k);
                // A variable or constant (most fields) without a call to
                // `eval`, whose frame is large.
                let v = match value {
                    Some(Expr::Var(name)) => var(name, &sub),
                    Some(Expr::Lit(v)) => v.clone(),
                    Some(e) => eval(e, &sub, var),
                    None => var(k, &sub),
                };
                if fields.distinct() {
                    out.push((k.clone(), v));
                    continue;
                }
                match out.iter_mut().find(|(key, _)| same_text(key, k)) {
                    Some(slot) => slot.1 = v,
                    None => out.push((k.clone(), v)),
                }
            }
            Field::Spread(e) => {
                if let Value::Object(inner) = eval(e, path, var) {
                    for (k, v) in inner {
                        match out.iter_mut().find(|(key, _)| same_text(key, &k)) {
                            Some(slot) => slot.1 = v,
                            None => out.push((k, v)),
                        }
                    }
                }
            }
        }
    }
    Value::Object(out)
}

/// A binary operator: `&&`, `||` and `??` evaluate their right side only
/// when they need it.
fn eval_binary<F>(op: &str, a: &Expr, b: &Expr, path: &Path<'_>, var: &mut F) -> Value
where
    F: FnMut(&str, &Path<'_>) -> Value,
{
    let left = eval(a, path, var);
    match op {
        "&&" => {
            if left.truthy() {
                eval(b, path, var)
            } else {
                left
            }
        }
        "||" => {
            if left.truthy() {
                left
            } else {
                eval(b, path, var)
            }
        }
        "??" => match left {
            Value::Undefined | Value::Null => eval(b, path, var),
            other => other,
        },
        _ => binary(op, &left, &eval(b, path, var)),
    }
}

/// Equal strings, told apart quickly when their length differs (as most
/// keys and names do). Names up to 16 bytes (nearly all) are compared as
/// two words each, their first and last bytes, without a call.
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 16 {
        return a == b;
    }
    if let Some(same) = ends_equal::<8>(a, b).or_else(|| ends_equal::<4>(a, b)) {
        return same;
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// For byte strings of one length, at least `N` and at most `2N`: whether
/// their first `N` and last `N` bytes (which cover them) are equal; none
/// when they are shorter than `N`.
fn ends_equal<const N: usize>(a: &[u8], b: &[u8]) -> Option<bool> {
    let (a0, b0) = (a.first_chunk::<N>()?, b.first_chunk::<N>()?);
    let (a1, b1) = (a.last_chunk::<N>()?, b.last_chunk::<N>()?);
    Some(a0 == b0 && a1 == b1)
}

pub(super) fn to_number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => *n,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Null => 0.0,
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                0.0
            } else {
                t.parse().unwrap_or(f64::NAN)
            }
        }
        _ => f64::NAN,
    }
}

fn binary(op: &str, a: &Value, b: &Value) -> Value {
    match op {
        "+" => match (a, b) {
            (Value::String(_), _) | (_, Value::String(_)) => {
                Value::String(Text::from(a.to_js_string() + &b.to_js_string()))
            }
            _ => Value::Number(to_number(a) + to_number(b)),
        },
        "-" => Value::Number(to_number(a) - to_number(b)),
        "*" => Value::Number(to_number(a) * to_number(b)),
        "/" => Value::Number(to_number(a) / to_number(b)),
        "%" => Value::Number(to_number(a) % to_number(b)),
        "===" | "==" => Value::Bool(a.strict_eq(b)),
        "!==" | "!=" => Value::Bool(!a.strict_eq(b)),
        "<" | ">" | "<=" | ">=" => {
            let ord = match (a, b) {
                (Value::String(x), Value::String(y)) => x.partial_cmp(y),
                _ => to_number(a).partial_cmp(&to_number(b)),
            };
            Value::Bool(match (op, ord) {
                (_, None) => false,
                ("<", Some(o)) => o.is_lt(),
                (">", Some(o)) => o.is_gt(),
                ("<=", Some(o)) => o.is_le(),
                (_, Some(o)) => o.is_ge(),
            })
        }
        _ => Value::Undefined,
    }
}
