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
    Object(Fields),
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

/// An object expression's fields, knowing whether each key is written
/// once and nothing is spread in (then building the object needs no check
/// for a key already set). Serialized as the list alone.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(from = "Vec<Field>", into = "Vec<Field>")]
pub struct Fields {
    list: Vec<Field>,
    distinct: bool,
}

impl Fields {
    /// The fields, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Field> {
        self.list.iter()
    }

    /// True when every key is written once and nothing is spread in.
    pub fn distinct(&self) -> bool {
        self.distinct
    }
}

impl From<Vec<Field>> for Fields {
    fn from(list: Vec<Field>) -> Self {
        let distinct = list.iter().enumerate().all(|(i, f)| match f {
            Field::Pair(k, _) => !list[..i]
                .iter()
                .any(|g| matches!(g, Field::Pair(j, _) if j == k)),
            Field::Spread(_) => false,
        });
        Fields { list, distinct }
    }
}

impl From<Fields> for Vec<Field> {
    fn from(fields: Fields) -> Self {
        fields.list
    }
}

impl<'a> IntoIterator for &'a Fields {
    type Item = &'a Field;
    type IntoIter = std::slice::Iter<'a, Field>;

    fn into_iter(self) -> Self::IntoIter {
        self.list.iter()
    }
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

    fn keys(v: &Value) -> Vec<(String, serde_json::Value)> {
        match v {
            Value::Object(fields) => fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_json()))
                .collect(),
            other => panic!("not an object: {other:?}"),
        }
    }

    #[test]
    fn objects_set_a_key_written_twice_where_it_first_came() {
        let pairs = |list: &[(&str, serde_json::Value)]| -> Vec<(String, serde_json::Value)> {
            list.iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect()
        };
        use serde_json::json;
        assert_eq!(
            keys(&run("{ a: 1, b: 2, a: 3 }")),
            pairs(&[("a", json!(3)), ("b", json!(2))])
        );
        assert_eq!(
            keys(&run("{ n, ...{ n: 7, m: 8 }, m: 9 }")),
            pairs(&[("n", json!(7)), ("m", json!(9))])
        );
        assert_eq!(
            keys(&run("{ b: n, a: x }")),
            pairs(&[("b", json!(4)), ("a", json!(" Hello "))])
        );
        // Which objects need the check for a key already set.
        let fields = |src: &str| match parse_expr(src, 0, true).unwrap().0 {
            Expr::Object(f) => f,
            other => panic!("not an object: {other:?}"),
        };
        assert!(fields("{ a: 1, b, c: { a: 2 } }").distinct());
        assert!(fields("{}").distinct());
        assert!(!fields("{ a: 1, b: 2, a: 3 }").distinct());
        assert!(!fields("{ a: 1, ...x }").distinct());
        // Serialized as the list; read back, the check is worked out again.
        let dup = Expr::Object(fields("{ a: 1, a: 2 }"));
        let json = serde_json::to_value(&dup).unwrap();
        assert!(json["Object"].is_array(), "{json}");
        let back: Expr = serde_json::from_value(json).unwrap();
        assert_eq!(back, dup);
        assert!(matches!(back, Expr::Object(f) if !f.distinct()));
    }

    #[test]
    fn same_text_agrees_with_comparing_every_byte() {
        // Every length up to past the longest word-wise case, with each
        // byte changed in turn (and a change in a multi-byte character).
        for len in 0..40 {
            let a: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            assert!(same_text(&a, &a.clone()), "{a}");
            assert!(!same_text(&a, &format!("{a}x")), "{a}");
            for at in 0..len {
                let mut b = a.clone().into_bytes();
                b[at] = b'#';
                let b = String::from_utf8(b).unwrap();
                assert!(!same_text(&a, &b), "{a} / {b}");
                assert!(!same_text(&b, &a), "{b} / {a}");
            }
        }
        assert!(same_text("été", "été"));
        assert!(!same_text("été", "ete\u{301}"));
        assert!(!same_text("déjà", "dèjà"));
    }
}
