//! Pattern Lisp's values, how they print (the `partner lisp` contract) and
//! how deep they nest. Every value is immutable and shared by reference
//! count, so a value can never contain itself: cycles cannot be built.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write};
use std::sync::Arc;

use pattern_core::{Pattern, Subject};

use super::error::{LispError, LispResult};
use super::eval::Closure;
use super::prims::Primitive;

/// Deepest a value may nest (lists in lists, closures capturing closures…):
/// printing, serializing and freeing a value recurse over it.
pub const MAX_VALUE_DEPTH: usize = 256;

/// Most items one list, map or set may hold.
pub const MAX_ITEMS: usize = 1 << 20;

/// Longest string a program may build, in bytes.
pub const MAX_STRING: usize = 16 << 20;

/// Largest a value may be once expanded — printed, or serialized — in
/// bytes. Values share their parts, so a list of a thousand references
/// to one long string is small in memory but not when written out: it is
/// measured by what it expands to.
pub const MAX_SIZE: usize = 32 << 20;

/// Most bytes one evaluation may allocate for values, all told (what it
/// freed again counts too): a program cannot exhaust the memory of the
/// process that runs it.
pub const MAX_ALLOCATED: usize = 512 << 20;

thread_local! {
    /// Bytes allocated for values by the evaluation on this thread (each
    /// runs on a thread of its own).
    static ALLOCATED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `bytes` allocated by the evaluation on this thread; a `size`
/// error past [`MAX_ALLOCATED`].
pub fn allocate(bytes: usize) -> LispResult<()> {
    let total = ALLOCATED.with(|a| {
        let total = a.get().saturating_add(bytes);
        a.set(total);
        total
    });
    if total > MAX_ALLOCATED {
        return Err(LispError::new(
            super::error::ErrorKind::Size,
            format!("the program allocated more than the {MAX_ALLOCATED} bytes it may"),
        ));
    }
    Ok(())
}

/// The error for a value that would expand to `size` bytes.
pub fn too_large(size: usize) -> LispError {
    LispError::new(
        super::error::ErrorKind::Size,
        format!(
            "a value that would print to {size} bytes or more; at most {MAX_SIZE} (shared parts count each time they appear)"
        ),
    )
}

/// Checks an expanded size against [`MAX_SIZE`].
fn within(size: usize) -> LispResult<usize> {
    if size > MAX_SIZE {
        Err(too_large(size))
    } else {
        Ok(size)
    }
}

/// A Pattern decorated with a Subject: the state tools read and return.
pub type PatternSubject = Pattern<Subject>;

/// A Pattern Lisp value.
#[derive(Debug, Clone)]
pub enum Value {
    /// A 64-bit integer.
    Int(i64),
    /// A decimal (a double).
    Dec(f64),
    /// A string.
    Str(Arc<str>),
    /// `#t` / `#f`.
    Bool(bool),
    /// `name:`.
    Keyword(Arc<str>),
    /// A list.
    List(Arc<Seq>),
    /// A map, its keys sorted.
    Map(Arc<Table>),
    /// A set of atoms, sorted.
    Set(Arc<KeySet>),
    /// A Pattern Subject.
    Pattern(Arc<Tree>),
    /// A function written in Lisp.
    Closure(Arc<Closure>),
    /// A built-in function.
    Primitive(&'static Primitive),
}

/// A list's items, how deep they nest and what they expand to.
#[derive(Debug)]
pub struct Seq {
    /// The items.
    pub items: Vec<Value>,
    depth: usize,
    size: usize,
}

/// A map's entries, how deep they nest and what they expand to.
#[derive(Debug)]
pub struct Table {
    /// The entries, by key.
    pub entries: BTreeMap<Key, Value>,
    depth: usize,
    size: usize,
}

/// A set's members and what they expand to.
#[derive(Debug, PartialEq, Eq)]
pub struct KeySet {
    keys: BTreeSet<Key>,
    size: usize,
}

impl std::ops::Deref for KeySet {
    type Target = BTreeSet<Key>;
    fn deref(&self) -> &BTreeSet<Key> {
        &self.keys
    }
}

/// A Pattern, how deep it nests and what it expands to.
#[derive(Debug)]
pub struct Tree {
    /// The pattern.
    pub pattern: PatternSubject,
    depth: usize,
    size: usize,
}

/// What may be a map key or a set member: an atom.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// `#f` / `#t`.
    Bool(bool),
    /// A number (integers and decimals ordered together by value).
    Num(Number),
    /// A string.
    Str(Arc<str>),
    /// A keyword.
    Keyword(Arc<str>),
}

/// A number as a key: integers and decimals compare by value.
#[derive(Debug, Clone, Copy)]
pub enum Number {
    /// An integer.
    Int(i64),
    /// A decimal.
    Dec(f64),
}

impl Number {
    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Dec(d) => d,
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Number {}
impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Number {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a.cmp(b),
            _ => self.as_f64().total_cmp(&other.as_f64()),
        }
    }
}

impl Key {
    /// The value this key stands for.
    pub fn value(&self) -> Value {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Num(Number::Int(i)) => Value::Int(*i),
            Key::Num(Number::Dec(d)) => Value::Dec(*d),
            Key::Str(s) => Value::Str(s.clone()),
            Key::Keyword(k) => Value::Keyword(k.clone()),
        }
    }
}

/// The error for a collection of `n` items, too many.
pub fn too_many(n: usize) -> LispError {
    LispError::budget(format!(
        "{n} items is more than the {MAX_ITEMS} a collection may hold"
    ))
}

fn too_deep() -> LispError {
    LispError::budget(format!("value nested deeper than {MAX_VALUE_DEPTH} levels"))
}

impl Value {
    /// A string value.
    pub fn str(s: impl Into<Arc<str>>) -> Value {
        Value::Str(s.into())
    }

    /// A string built by a program (refused past [`MAX_STRING`]).
    pub fn text(s: String) -> LispResult<Value> {
        if s.len() > MAX_STRING {
            return Err(LispError::budget(format!(
                "string of {} bytes is longer than the {MAX_STRING} allowed",
                s.len()
            )));
        }
        allocate(s.len())?;
        Ok(Value::Str(s.into()))
    }

    /// A list of `items` (refused when it would nest too deep, hold too
    /// many or expand past [`MAX_SIZE`]).
    pub fn list(items: Vec<Value>) -> LispResult<Value> {
        if items.len() > MAX_ITEMS {
            return Err(too_many(items.len()));
        }
        let depth = 1 + items.iter().map(Value::depth).max().unwrap_or(0);
        if depth > MAX_VALUE_DEPTH {
            return Err(too_deep());
        }
        let size = within(
            items
                .iter()
                .fold(2usize, |n, v| n.saturating_add(v.size()).saturating_add(1)),
        )?;
        allocate(items.len() * std::mem::size_of::<Value>())?;
        Ok(Value::List(Arc::new(Seq { items, depth, size })))
    }

    /// The empty list.
    pub fn nil() -> Value {
        Value::List(Arc::new(Seq {
            items: Vec::new(),
            depth: 1,
            size: 2,
        }))
    }

    /// A map of `entries`.
    pub fn map(entries: BTreeMap<Key, Value>) -> LispResult<Value> {
        if entries.len() > MAX_ITEMS {
            return Err(too_many(entries.len()));
        }
        let depth = 1 + entries.values().map(Value::depth).max().unwrap_or(0);
        if depth > MAX_VALUE_DEPTH {
            return Err(too_deep());
        }
        let size = within(entries.iter().fold(2usize, |n, (k, v)| {
            n.saturating_add(key_size(k))
                .saturating_add(v.size())
                .saturating_add(2)
        }))?;
        allocate(entries.len() * 2 * std::mem::size_of::<Value>())?;
        Ok(Value::Map(Arc::new(Table {
            entries,
            depth,
            size,
        })))
    }

    /// A set of `keys`.
    pub fn set(keys: BTreeSet<Key>) -> LispResult<Value> {
        if keys.len() > MAX_ITEMS {
            return Err(too_many(keys.len()));
        }
        let size = within(keys.iter().fold(3usize, |n, k| {
            n.saturating_add(key_size(k)).saturating_add(1)
        }))?;
        allocate(keys.len() * std::mem::size_of::<Value>())?;
        Ok(Value::Set(Arc::new(KeySet { keys, size })))
    }

    /// A pattern value.
    pub fn pattern(pattern: PatternSubject) -> LispResult<Value> {
        let depth = 1 + pattern_depth(&pattern, 0).ok_or_else(too_deep)?;
        let size = within(pattern_size(&pattern))?;
        allocate(size)?;
        Ok(Value::Pattern(Arc::new(Tree {
            pattern,
            depth,
            size,
        })))
    }

    /// What the value expands to when printed or serialized, in bytes (an
    /// estimate from above for atoms; a closure counts its parameters
    /// only — serializing what it captured is bounded as it is written).
    pub fn size(&self) -> usize {
        match self {
            Value::Int(_) | Value::Dec(_) => 24,
            Value::Str(s) => s.len() + 2,
            Value::Bool(_) => 2,
            Value::Keyword(k) => k.len() + 1,
            Value::List(s) => s.size,
            Value::Map(t) => t.size,
            Value::Set(k) => k.size,
            Value::Pattern(t) => t.size,
            Value::Closure(c) => 16 + c.params().iter().map(|p| p.len() + 1).sum::<usize>(),
            Value::Primitive(p) => 16 + p.name.len(),
        }
    }

    /// How deep the value nests (an atom is 0).
    pub fn depth(&self) -> usize {
        match self {
            Value::List(s) => s.depth,
            Value::Map(t) => t.depth,
            Value::Set(_) => 1,
            Value::Pattern(t) => t.depth,
            Value::Closure(c) => c.depth(),
            _ => 0,
        }
    }

    /// The value as a map key or set member, when it is an atom.
    pub fn key(&self) -> Option<Key> {
        Some(match self {
            Value::Bool(b) => Key::Bool(*b),
            Value::Int(i) => Key::Num(Number::Int(*i)),
            Value::Dec(d) => Key::Num(Number::Dec(*d)),
            Value::Str(s) => Key::Str(s.clone()),
            Value::Keyword(k) => Key::Keyword(k.clone()),
            _ => return None,
        })
    }

    /// The name of the value's type, as errors say it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "integer",
            Value::Dec(_) => "decimal",
            Value::Str(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Keyword(_) => "keyword",
            Value::List(_) => "list",
            Value::Map(_) => "map",
            Value::Set(_) => "set",
            Value::Pattern(_) => "pattern",
            Value::Closure(_) => "closure",
            Value::Primitive(_) => "primitive",
        }
    }

    /// The value printed, cut short for an error message.
    pub fn brief(&self) -> String {
        /// Keeps the first characters written and stops the rest.
        struct Head(String);
        impl fmt::Write for Head {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                for c in s.chars() {
                    if self.0.chars().count() > 40 {
                        return Err(fmt::Error);
                    }
                    self.0.push(c);
                }
                Ok(())
            }
        }
        let mut head = Head(String::new());
        if write!(head, "{self}").is_ok() && head.0.chars().count() <= 40 {
            return head.0;
        }
        let cut: String = head.0.chars().take(37).collect();
        format!("{cut}...")
    }

    /// Structural equality: numbers by value (`1` = `1.0`), closures by
    /// identity.
    pub fn equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(_) | Value::Dec(_), Value::Int(_) | Value::Dec(_)) => {
                self.key() == other.key()
            }
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Keyword(a), Value::Keyword(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                a.items.len() == b.items.len()
                    && a.items.iter().zip(&b.items).all(|(x, y)| x.equals(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                a.entries.len() == b.entries.len()
                    && a.entries
                        .iter()
                        .zip(&b.entries)
                        .all(|((k1, v1), (k2, v2))| k1 == k2 && v1.equals(v2))
            }
            (Value::Set(a), Value::Set(b)) => a == b,
            (Value::Pattern(a), Value::Pattern(b)) => a.pattern == b.pattern,
            (Value::Closure(a), Value::Closure(b)) => Arc::ptr_eq(a, b),
            (Value::Primitive(a), Value::Primitive(b)) => a.name == b.name,
            _ => false,
        }
    }
}

/// What a key expands to, in bytes.
fn key_size(k: &Key) -> usize {
    match k {
        Key::Bool(_) => 2,
        Key::Num(_) => 24,
        Key::Str(s) => s.len() + 2,
        Key::Keyword(k) => k.len() + 1,
    }
}

/// What a pattern expands to when written as Gram, in bytes (an estimate
/// from above of its labels, identity and properties, and brackets).
fn pattern_size(p: &PatternSubject) -> usize {
    let mut size = 16 + p.value.identity.to_string().len();
    for label in &p.value.labels {
        size = size.saturating_add(label.len() + 1);
    }
    for (k, v) in &p.value.properties {
        size = size
            .saturating_add(k.len() + 2)
            .saturating_add(format!("{v:?}").len());
    }
    p.elements
        .iter()
        .fold(size, |n, e| n.saturating_add(pattern_size(e)))
}

/// The depth of a pattern (atomic = 0), or `None` past the bound.
pub fn pattern_depth(p: &PatternSubject, level: usize) -> Option<usize> {
    if level >= MAX_VALUE_DEPTH {
        return None;
    }
    let mut deepest = 0;
    for e in &p.elements {
        deepest = deepest.max(1 + pattern_depth(e, level + 1)?);
    }
    Some(deepest)
}

/// A decimal as printed: always with a point or exponent.
pub fn decimal_text(d: f64) -> String {
    let text = format!("{d}");
    if d.is_finite() && !text.contains(['.', 'e', 'E']) {
        format!("{text}.0")
    } else {
        text
    }
}

/// A string as written in source, quoted with escapes.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value().fmt(f)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Dec(d) => f.write_str(&decimal_text(*d)),
            Value::Str(s) => f.write_str(&quoted(s)),
            Value::Bool(b) => f.write_str(if *b { "#t" } else { "#f" }),
            Value::Keyword(k) => write!(f, "{k}:"),
            Value::List(s) => {
                f.write_char('(')?;
                for (i, v) in s.items.iter().enumerate() {
                    if i > 0 {
                        f.write_char(' ')?;
                    }
                    v.fmt(f)?;
                }
                f.write_char(')')
            }
            Value::Map(t) => {
                f.write_char('{')?;
                for (i, (k, v)) in t.entries.iter().enumerate() {
                    if i > 0 {
                        f.write_char(' ')?;
                    }
                    write!(f, "{k} {v}")?;
                }
                f.write_char('}')
            }
            Value::Set(s) => {
                f.write_str("#{")?;
                for (i, k) in s.iter().enumerate() {
                    if i > 0 {
                        f.write_char(' ')?;
                    }
                    k.fmt(f)?;
                }
                f.write_char('}')
            }
            Value::Pattern(t) => f.write_str(&super::codec::gram_of(&t.pattern)),
            Value::Closure(c) => write!(f, "#<closure ({})>", c.params().join(" ")),
            Value::Primitive(p) => write!(f, "#<primitive {}>", p.name),
        }
    }
}
