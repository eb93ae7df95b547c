//! Static types of value expressions, checked when a grammar loads: every
//! operator takes the types it is made for (no JavaScript coercions),
//! methods come from a closed list per type, and each error says what to
//! write instead.

use std::collections::HashMap;

use super::expr::{Expr, Field, Item, Piece};
use super::value::Value;

/// A value's static type.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// Any string.
    Str,
    /// A string known from the grammar (a literal).
    Literal,
    /// A number.
    Num,
    /// `true` or `false`.
    Bool,
    /// `undefined` (a skipped optional capture).
    Undef,
    /// `null`.
    Null,
    /// An object.
    Obj,
    /// An array of the given type.
    Arr(Box<Ty>),
    /// One of several.
    Union(Vec<Ty>),
    /// Not known here (not checked).
    Any,
}

impl Ty {
    /// The name errors use.
    pub fn name(&self) -> String {
        match self {
            Ty::Str => "string".into(),
            Ty::Literal => "string-union".into(),
            Ty::Num => "number".into(),
            Ty::Bool => "boolean".into(),
            Ty::Undef => "undefined".into(),
            Ty::Null => "null".into(),
            Ty::Obj => "object".into(),
            Ty::Arr(t) => format!("{}[]", t.base().name()),
            Ty::Union(ts) => ts.iter().map(Ty::name).collect::<Vec<_>>().join(" | "),
            Ty::Any => "unknown".into(),
        }
    }

    /// String literals as strings (for method and array element types).
    fn base(&self) -> Ty {
        match self {
            Ty::Literal => Ty::Str,
            other => other.clone(),
        }
    }

    fn is(&self, pred: &dyn Fn(&Ty) -> bool) -> bool {
        match self {
            Ty::Any => true,
            Ty::Union(ts) => ts.iter().all(|t| t.is(pred)),
            t => pred(t),
        }
    }

    fn stringy(&self) -> bool {
        self.is(&|t| matches!(t, Ty::Str | Ty::Literal))
    }

    fn numeric(&self) -> bool {
        self.is(&|t| matches!(t, Ty::Num))
    }

    fn boolean(&self) -> bool {
        self.is(&|t| matches!(t, Ty::Bool))
    }

    fn has_undefined(&self) -> bool {
        match self {
            Ty::Undef => true,
            Ty::Union(ts) => ts.iter().any(Ty::has_undefined),
            _ => false,
        }
    }

    fn without_undefined(&self) -> Ty {
        match self {
            Ty::Union(ts) => union(ts.iter().filter(|t| **t != Ty::Undef).cloned().collect()),
            other => other.clone(),
        }
    }
}

/// The union of types (one type when they are the same).
pub fn union(mut ts: Vec<Ty>) -> Ty {
    let mut flat: Vec<Ty> = Vec::new();
    for t in ts.drain(..) {
        match t {
            Ty::Union(inner) => flat.extend(inner),
            other => flat.push(other),
        }
    }
    let mut out: Vec<Ty> = Vec::new();
    for t in flat {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.contains(&Ty::Any) {
        return Ty::Any;
    }
    match out.len() {
        0 => Ty::Undef,
        1 => out.pop().unwrap_or(Ty::Any),
        _ => Ty::Union(out),
    }
}

const STRING_METHODS: &[&str] = &[
    "at",
    "charAt",
    "charCodeAt",
    "codePointAt",
    "concat",
    "endsWith",
    "includes",
    "indexOf",
    "lastIndexOf",
    "padEnd",
    "padStart",
    "repeat",
    "replace",
    "replaceAll",
    "search",
    "slice",
    "split",
    "startsWith",
    "substring",
    "toLowerCase",
    "toString",
    "toUpperCase",
    "trim",
    "trimEnd",
    "trimStart",
];
const NUMBER_METHODS: &[&str] = &["toExponential", "toFixed", "toPrecision", "toString"];
const ARRAY_METHODS: &[&str] = &[
    "concat",
    "flat",
    "includes",
    "indexOf",
    "join",
    "lastIndexOf",
    "reverse",
    "slice",
    "sort",
];

/// Checks an expression whose variables have `vars`' types; returns its
/// type, adding what is wrong to `errors`.
pub fn check(e: &Expr, vars: &HashMap<String, Ty>, errors: &mut Vec<String>) -> Ty {
    let go = |e: &Expr, errors: &mut Vec<String>| check(e, vars, errors);
    match e {
        Expr::Lit(v) => match v {
            Value::String(_) => Ty::Literal,
            Value::Number(_) => Ty::Num,
            Value::Bool(_) => Ty::Bool,
            Value::Null => Ty::Null,
            Value::Undefined => Ty::Undef,
            _ => Ty::Any,
        },
        Expr::Var(name) => vars.get(name).cloned().unwrap_or(Ty::Any),
        Expr::Object(fields) => check_object(fields, vars, errors),
        Expr::Array(items) => {
            let mut elems = Vec::new();
            for i in items {
                match i {
                    Item::One(e) => elems.push(go(e, errors).base()),
                    Item::Spread(e) => match go(e, errors) {
                        Ty::Arr(t) => elems.push(*t),
                        other => elems.push(other),
                    },
                }
            }
            Ty::Arr(Box::new(union(elems)))
        }
        Expr::Template(pieces) => check_template(pieces, vars, errors),
        Expr::Unary(super::expr::Operator(op), e) => unary_type(op, go(e, errors), errors),
        Expr::Binary(super::expr::Operator(op), a, b) => {
            let (ta, tb) = (go(a, errors), go(b, errors));
            binary_type(op, ta, tb, errors)
        }
        Expr::Cond(t, a, b) => {
            let tt = go(t, errors);
            if !tt.boolean() {
                errors.push(format!("Ternary '?' test must be a boolean expression. Got '{}'. Use a comparison (e.g., x > 0) or equality check (e.g., x !== undefined).", tt.name()));
            }
            union(vec![go(a, errors), go(b, errors)])
        }
        Expr::Member(o, name, optional) => member_type(go(o, errors), name, *optional),
        Expr::Index(o, i, _) => {
            go(o, errors);
            go(i, errors);
            Ty::Any
        }
        Expr::Call(o, method, args, optional) => {
            let t = go(o, errors);
            let arg_types: Vec<Ty> = args.iter().map(|a| go(a, errors)).collect();
            let base = if *optional {
                t.without_undefined()
            } else {
                t.clone()
            };
            method_type(&base, method, &arg_types, errors)
        }
    }
}

/// An object literal: each value checked, a spread only of an object.
fn check_object(
    fields: &super::expr::Fields,
    vars: &HashMap<String, Ty>,
    errors: &mut Vec<String>,
) -> Ty {
    for f in fields.iter() {
        match f {
            Field::Pair(_, Some(e)) => {
                check(e, vars, errors);
            }
            Field::Pair(_, None) => {}
            Field::Spread(e) => {
                let t = check(e, vars, errors);
                if !t.is(&|t| matches!(t, Ty::Obj)) {
                    errors.push(format!(
                        "Spread argument must be an object type, got {}",
                        t.name()
                    ));
                }
            }
        }
    }
    Ty::Obj
}

/// A template literal: no interpolation that may be undefined.
fn check_template(pieces: &[Piece], vars: &HashMap<String, Ty>, errors: &mut Vec<String>) -> Ty {
    for p in pieces {
        if let Piece::Expr(e) = p {
            let t = check(e, vars, errors);
            if t.has_undefined() {
                errors.push(format!(
                    "Template interpolation does not accept {}. Use ?? to provide a default first.",
                    t.name()
                ));
            }
        }
    }
    Ty::Str
}

/// The type of a unary operator applied to a `t`.
fn unary_type(op: &str, t: Ty, errors: &mut Vec<String>) -> Ty {
    match op {
        "!" => {
            if !t.boolean() {
                errors.push(format!(
                    "Operator '!' requires a boolean operand. Got '{}'. Use === or !== for equality checks.",
                    t.name()
                ));
            }
            Ty::Bool
        }
        "typeof" => Ty::Str,
        _ => {
            if !t.numeric() {
                errors.push(format!(
                    "Unary '{op}' requires a number operand. Got '{}'.",
                    t.name()
                ));
            }
            Ty::Num
        }
    }
}

/// The type of a binary operator applied to a `ta` and a `tb`.
fn binary_type(op: &str, ta: Ty, tb: Ty, errors: &mut Vec<String>) -> Ty {
    let got = format!("Got '{}' and '{}'.", ta.name(), tb.name());
    match op {
        "+" => {
            if ta.numeric() && tb.numeric() {
                Ty::Num
            } else if ta.stringy() && tb.stringy() {
                Ty::Str
            } else {
                errors.push(format!("Operator '+' requires both operands to be number or both to be string. {got} Use a template literal for string interpolation."));
                Ty::Any
            }
        }
        "-" | "*" | "/" | "%" => {
            if !(ta.numeric() && tb.numeric()) {
                errors.push(format!(
                    "Operator '{op}' requires both operands to be number. {got}"
                ));
            }
            Ty::Num
        }
        "<" | ">" | "<=" | ">=" => {
            if !((ta.numeric() && tb.numeric()) || (ta.stringy() && tb.stringy())) {
                errors.push(format!("Operator '{op}' requires both operands to be the same type (both number or both string). {got}"));
            }
            Ty::Bool
        }
        "&&" | "||" => {
            if !(ta.boolean() && tb.boolean()) {
                errors.push(format!("Operator '{op}' requires boolean operands. {got} Use ternary (e.g., x > 0 ? a : b) for conditional values."));
            }
            Ty::Bool
        }
        "??" => union(vec![ta.without_undefined(), tb]),
        _ => Ty::Bool,
    }
}

/// The type of `.name` (or `?.name`) on a `t`.
fn member_type(t: Ty, name: &str, optional: bool) -> Ty {
    let base = if optional {
        t.without_undefined()
    } else {
        t.clone()
    };
    let ty = match (&base, name) {
        (Ty::Str | Ty::Literal | Ty::Arr(_), "length") => Ty::Num,
        _ => Ty::Any,
    };
    if optional && t.has_undefined() && ty != Ty::Any {
        union(vec![ty, Ty::Undef])
    } else {
        ty
    }
}

pub(super) fn method_type(t: &Ty, method: &str, args: &[Ty], errors: &mut Vec<String>) -> Ty {
    let (list, kind): (&[&str], &str) = match t {
        Ty::Str | Ty::Literal => (STRING_METHODS, "string"),
        Ty::Num => (NUMBER_METHODS, "number"),
        Ty::Arr(_) => (ARRAY_METHODS, "array"),
        _ => return Ty::Any,
    };
    if !list.contains(&method) {
        errors.push(format!(
            "Method '{method}' is not supported on type '{}'. Supported methods: {}.",
            t.name(),
            list.join(", ")
        ));
        return Ty::Any;
    }
    let want = |i: usize, ty: &str, ok: bool, errors: &mut Vec<String>| {
        if let Some(a) = args.get(i)
            && !ok
        {
            errors.push(format!(
                "Argument {} of '{method}' expects {ty}, got '{}'.",
                i + 1,
                a.name()
            ));
        }
    };
    let num = |i: usize| args.get(i).is_none_or(Ty::numeric);
    let text = |i: usize| args.get(i).is_none_or(Ty::stringy);
    match (kind, method) {
        (
            "string",
            "slice" | "substring" | "charAt" | "charCodeAt" | "codePointAt" | "at" | "repeat",
        ) => {
            want(0, "number", num(0), errors);
            want(1, "number", num(1), errors);
        }
        (
            "string",
            "indexOf" | "lastIndexOf" | "includes" | "startsWith" | "endsWith" | "split",
        ) => {
            want(0, "string", text(0), errors);
        }
        ("number", "toFixed" | "toPrecision" | "toExponential") => {
            want(0, "number", num(0), errors)
        }
        ("array", "join") => want(0, "string", text(0), errors),
        _ => {}
    }
    match (kind, method) {
        ("string", "indexOf" | "lastIndexOf" | "charCodeAt" | "codePointAt" | "search") => Ty::Num,
        ("string", "includes" | "startsWith" | "endsWith") => Ty::Bool,
        ("string", "split") => Ty::Arr(Box::new(Ty::Str)),
        ("string", _) | ("number", _) => Ty::Str,
        ("array", "join") => Ty::Str,
        ("array", "includes") => Ty::Bool,
        ("array", "indexOf" | "lastIndexOf") => Ty::Num,
        _ => t.clone(),
    }
}
