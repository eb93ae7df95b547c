//! Value expressions (what follows `->`): literals, variables, objects and
//! arrays always; with `enableValueExpressions`, JavaScript's operators,
//! template literals, member access, optional chaining, spread and a
//! closed set of string, array and number methods. Parsed here into
//! [`Expr`] and evaluated against the variables a match captured.

mod eval;
mod methods;
mod parse;

pub(crate) use eval::same_text;
pub use eval::{Path, eval};
pub use parse::parse_expr;

use super::value::{Text, Value};

/// A value expression.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Expr {
    /// A constant.
    Lit(Value),
    /// A captured variable.
    Var(String),
    /// `{ key: expr, key, ...expr }`.
    Object(Vec<Field>),
    /// `[expr, ...expr]`.
    Array(Vec<Item>),
    /// `` `text ${expr}` ``.
    Template(Vec<Piece>),
    /// `!x`, `-x`, `+x`, `typeof x`.
    Unary(Operator, Box<Expr>),
    /// `a op b` for arithmetic, comparison, equality, `&&`, `||`, `??`.
    Binary(Operator, Box<Expr>, Box<Expr>),
    /// `test ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `obj.name` or `obj?.name`.
    Member(Box<Expr>, String, bool),
    /// `obj[index]` or `obj?.[index]`.
    Index(Box<Expr>, Box<Expr>, bool),
    /// `obj.method(args)` or `obj?.method(args)`.
    Call(Box<Expr>, String, Vec<Expr>, bool),
}

/// A property of an object expression.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Field {
    /// `key: expr`, or `key` alone (`None`) for `key: key`.
    Pair(Text, Option<Expr>),
    /// `...expr`.
    Spread(Expr),
}

/// An element of an array expression.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Item {
    /// An element.
    One(Expr),
    /// `...expr`.
    Spread(Expr),
}

/// A piece of a template literal.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Piece {
    /// Text.
    Text(String),
    /// `${expr}`.
    Expr(Expr),
}

/// An operator, as written (`"+"`, `"??"`, `"typeof"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operator(pub &'static str);

/// The operators value expressions know.
const OPERATORS: &[&str] = &[
    "!", "-", "+", "typeof", "*", "/", "%", "===", "!==", "==", "!=", "<", ">", "<=", ">=", "&&",
    "||", "??",
];

impl serde::Serialize for Operator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Operator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        OPERATORS
            .iter()
            .find(|k| **k == text)
            .map(|k| Operator(k))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown operator '{text}'")))
    }
}

impl Expr {
    /// Every variable the expression reads (shorthand properties included).
    pub fn variables(&self, out: &mut Vec<String>) {
        match self {
            Expr::Lit(_) => {}
            Expr::Var(v) => out.push(v.clone()),
            Expr::Object(fields) => {
                for f in fields {
                    match f {
                        Field::Pair(k, None) => out.push(k.to_string()),
                        Field::Pair(_, Some(e)) | Field::Spread(e) => e.variables(out),
                    }
                }
            }
            Expr::Array(items) => {
                for i in items {
                    match i {
                        Item::One(e) | Item::Spread(e) => e.variables(out),
                    }
                }
            }
            Expr::Template(pieces) => {
                for p in pieces {
                    if let Piece::Expr(e) = p {
                        e.variables(out);
                    }
                }
            }
            Expr::Unary(_, e) | Expr::Member(e, _, _) => e.variables(out),
            Expr::Binary(_, a, b) | Expr::Index(a, b, _) => {
                a.variables(out);
                b.variables(out);
            }
            Expr::Cond(a, b, c) => {
                a.variables(out);
                b.variables(out);
                c.variables(out);
            }
            Expr::Call(o, _, args, _) => {
                o.variables(out);
                for a in args {
                    a.variables(out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str) -> Value {
        let (e, end) = parse_expr(src, 0, true).unwrap();
        assert_eq!(end, src.len(), "{src}");
        eval(&e, &Path::Root, &mut |name, _| match name {
            "x" => Value::String(" Hello ".into()),
            "n" => Value::Number(4.0),
            "u" => Value::Undefined,
            _ => Value::Undefined,
        })
    }

    #[test]
    fn expressions_follow_javascript() {
        assert_eq!(run("n * 2 + 1"), Value::Number(9.0));
        assert_eq!(run("x.trim().toLowerCase()"), Value::String("hello".into()));
        assert_eq!(run("u ?? \"d\""), Value::String("d".into()));
        assert_eq!(run("u?.length"), Value::Undefined);
        assert_eq!(run("`n=${n}!`"), Value::String("n=4!".into()));
        assert_eq!(
            run("n > 3 ? \"big\" : \"small\""),
            Value::String("big".into())
        );
        assert_eq!(
            run("{ a: 1, ...{ b: 2 }, c: [n, ...[5]] }").to_json(),
            serde_json::json!({"a": 1, "b": 2, "c": [4, 5]})
        );
        assert_eq!(run("0x1F + 0b11"), Value::Number(34.0));
        assert_eq!(run("typeof n"), Value::String("number".into()));
    }
}
