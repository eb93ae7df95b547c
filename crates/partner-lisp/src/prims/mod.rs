//! The primitives: one table of every built-in function with its name,
//! arity and a line of documentation — the one place a primitive's
//! meaning lives (serialization names them, `partner lisp` lists them).

mod arith;
mod coll;
mod list;
mod pattern;
mod text;

use std::collections::HashMap;
use std::sync::LazyLock;

use super::error::{LispError, LispResult};
use super::eval::Machine;
use super::value::{Key, PatternSubject, Seq, Value};

/// What a primitive does with its arguments.
pub type PrimitiveFn = fn(&mut Machine<'_>, &[Value]) -> LispResult<Value>;

/// A built-in function.
pub struct Primitive {
    /// Its name, as programs and serialized values call it.
    pub name: &'static str,
    /// Fewest arguments.
    pub min: usize,
    /// Most arguments (`None`: any number).
    pub max: Option<usize>,
    /// What it does.
    pub func: PrimitiveFn,
    /// One line: what it is for.
    pub doc: &'static str,
}

impl std::fmt::Debug for Primitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#<primitive {}>", self.name)
    }
}

impl Primitive {
    /// An arity error unless `n` arguments fit.
    pub fn check_arity(&self, n: usize) -> LispResult<()> {
        let ok = n >= self.min && self.max.is_none_or(|m| n <= m);
        if ok {
            return Ok(());
        }
        let wanted = match self.max {
            Some(m) if m == self.min => format!("{m} argument{}", if m == 1 { "" } else { "s" }),
            Some(m) => format!("{} to {m} arguments", self.min),
            None => format!(
                "at least {} argument{}",
                self.min,
                if self.min == 1 { "" } else { "s" }
            ),
        };
        Err(LispError::arity(self.name, &wanted, n))
    }
}

/// Declares a primitive: name, arity (min, max) and documentation.
macro_rules! prim {
    ($name:expr, $min:expr, $max:expr, $func:expr, $doc:expr) => {
        $crate::prims::Primitive {
            name: $name,
            min: $min,
            max: $max,
            func: $func,
            doc: $doc,
        }
    };
}
pub(crate) use prim;

static TABLE: LazyLock<HashMap<&'static str, &'static Primitive>> =
    LazyLock::new(|| all().map(|p| (p.name, p)).collect());

/// Every primitive, in the order documented.
pub fn all() -> impl Iterator<Item = &'static Primitive> {
    arith::PRIMITIVES
        .iter()
        .chain(text::PRIMITIVES)
        .chain(list::PRIMITIVES)
        .chain(coll::PRIMITIVES)
        .chain(pattern::PRIMITIVES)
}

/// The primitive called `name`.
pub fn lookup(name: &str) -> Option<&'static Primitive> {
    TABLE.get(name).copied()
}

// What arguments must be, each naming the primitive and position.

pub(super) fn int(who: &str, i: usize, v: &Value) -> LispResult<i64> {
    match v {
        Value::Int(n) => Ok(*n),
        other => Err(LispError::expected(who, i + 1, "an integer", other)),
    }
}

pub(super) fn string<'v>(who: &str, i: usize, v: &'v Value) -> LispResult<&'v str> {
    match v {
        Value::Str(s) => Ok(s),
        other => Err(LispError::expected(who, i + 1, "a string", other)),
    }
}

pub(super) fn seq<'v>(who: &str, i: usize, v: &'v Value) -> LispResult<&'v Seq> {
    match v {
        Value::List(s) => Ok(s),
        other => Err(LispError::expected(who, i + 1, "a list", other)),
    }
}

pub(super) fn pattern_arg<'v>(who: &str, i: usize, v: &'v Value) -> LispResult<&'v PatternSubject> {
    match v {
        Value::Pattern(t) => Ok(&t.pattern),
        other => Err(LispError::expected(who, i + 1, "a pattern", other)),
    }
}

pub(super) fn key(who: &str, i: usize, v: &Value) -> LispResult<Key> {
    v.key().ok_or_else(|| {
        LispError::expected(
            who,
            i + 1,
            "an atom (number, string, boolean or keyword)",
            v,
        )
    })
}

/// Calls a predicate that must answer a boolean.
pub(super) fn test(m: &mut Machine<'_>, who: &str, f: &Value, arg: Value) -> LispResult<bool> {
    match m.apply(f, vec![arg], who, 1)? {
        Value::Bool(b) => Ok(b),
        other => Err(LispError::new(
            super::error::ErrorKind::TypeMismatch,
            format!(
                "{who}: argument 1: the predicate must return a boolean, got {} {}",
                other.type_name(),
                other.brief()
            ),
        )),
    }
}

/// A predicate argument: a closure of one parameter, or a primitive.
pub(super) fn predicate(who: &str, i: usize, f: &Value) -> LispResult<()> {
    match f {
        Value::Closure(c) if c.lambda.params.len() == 1 => Ok(()),
        Value::Primitive(_) => Ok(()),
        other => Err(LispError::expected(
            who,
            i + 1,
            "a one-argument function",
            other,
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_unique_and_documented() {
        let mut seen = std::collections::HashSet::new();
        for p in super::all() {
            assert!(seen.insert(p.name), "{} twice", p.name);
            assert!(!p.doc.is_empty(), "{} has no doc", p.name);
            assert!(p.max.is_none_or(|m| m >= p.min), "{}", p.name);
        }
    }
}
