//! Every value as a Pattern Subject and as Gram text, and back.
//!
//! Atoms are atomic patterns whose Subject says what they are
//! (`(:Number {value: 6})`, `(:String {text: "hi"})`, `(:Bool …)`,
//! `(:Keyword {name: "age"})`, `(:Primitive {name: "+"})`); collections
//! keep their members as elements (`[:List | …]`, `[:Set | …]`,
//! `[:Map | [:Entry | k, v], …]`); a Pattern value is wrapped
//! (`[:Pattern | p]`). A closure is `[:Closure {params: […]} | code, env]`:
//! its `(lambda …)` form as data, and the bindings it captured, outermost
//! scope first — values by name (`[:Scope | [:Binding {name: "k"} | v]]`)
//! and functions that call each other as code (`[:Rec | [:Binding {name:
//! "f"} | code]]`). Names are properties, never Gram identifiers.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use gram_codec::{parse_gram, to_gram_pattern};
use pattern_core::{Pattern, Subject, Symbol, Value as Prop};

use super::error::{LispError, LispResult};
use super::eval::{Closure, Env, Frame};
use super::prims;
use super::read::Datum;
use super::syntax::{Expr, Lambda, analyze_expr};
use super::value::{MAX_VALUE_DEPTH, PatternSubject, Value};

/// A Subject with `labels` and `props`, no identity.
pub fn subject(labels: &[&str], props: Vec<(&str, Prop)>) -> Subject {
    Subject {
        identity: Symbol(String::new()),
        labels: labels.iter().map(|l| l.to_string()).collect(),
        properties: props.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }
}

fn node(
    labels: &[&str],
    props: Vec<(&str, Prop)>,
    elements: Vec<PatternSubject>,
) -> PatternSubject {
    Pattern {
        value: subject(labels, props),
        elements,
    }
}

/// Stack for the Gram reader and writer on deep input (both recurse, with
/// large frames in a debug build).
const GRAM_STACK: usize = 256 << 20;

/// Nesting below which the Gram reader and writer run on the caller's
/// stack.
const SHALLOW: usize = 32;

/// Runs `work` on a thread with room for deep recursion.
fn deep<T: Send>(work: impl FnOnce() -> LispResult<T> + Send) -> LispResult<T> {
    super::on_thread("the Gram codec", GRAM_STACK, || Ok(work()))
        .unwrap_or_else(|why| Err(LispError::parse(why)))
}

fn write_gram(p: &PatternSubject) -> LispResult<String> {
    let write =
        || to_gram_pattern(p).map_err(|e| LispError::parse(format!("cannot write Gram: {e}")));
    if super::value::pattern_depth(p, 0).is_some_and(|d| d < SHALLOW) {
        write()
    } else {
        deep(write)
    }
}

/// A pattern as Gram text.
pub fn gram_of(p: &PatternSubject) -> String {
    write_gram(p).unwrap_or_else(|e| format!("#<pattern that Gram cannot write: {e}>"))
}

/// `v` serialized to Gram text; `globals` supplies the top-level
/// definitions a closure uses.
pub fn to_gram(v: &Value, globals: &HashMap<Arc<str>, Value>) -> LispResult<String> {
    write_gram(&to_pattern(v, globals)?)
}

/// Deepest bracket nesting accepted in Gram text (the Gram parser
/// recurses; a value nests at most `MAX_VALUE_DEPTH`).
const MAX_GRAM_NESTING: usize = 2 * MAX_VALUE_DEPTH;

/// Gram text read into patterns (nesting bounded before the parser sees
/// it).
pub fn parse_patterns(text: &str) -> LispResult<Vec<PatternSubject>> {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '[' | '(' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if depth > MAX_GRAM_NESTING {
                    return Err(LispError::parse(format!(
                        "Gram nested deeper than {MAX_GRAM_NESTING} levels"
                    )));
                }
            }
            ']' | ')' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let read = || parse_gram(text).map_err(|e| LispError::parse(format!("Gram: {e}")));
    if deepest < SHALLOW {
        read()
    } else {
        deep(read)
    }
}

/// Gram text read back into a value.
pub fn from_gram(text: &str) -> LispResult<Value> {
    let mut patterns = parse_patterns(text)?;
    if patterns.len() != 1 {
        return Err(LispError::parse(format!(
            "Gram: expected one pattern, found {}",
            patterns.len()
        )));
    }
    from_pattern(&patterns.remove(0))
}

/// `v` as a Pattern Subject.
pub fn to_pattern(v: &Value, globals: &HashMap<Arc<str>, Value>) -> LispResult<PatternSubject> {
    Writer::new(globals).value(v)
}

pub(super) struct Writer<'a> {
    globals: &'a HashMap<Arc<str>, Value>,
    /// Global closures being written (a global whose captured environment
    /// leads back to itself cannot be written as a tree).
    visiting: HashSet<Arc<str>>,
    /// What has been written so far, in bytes: closures write what they
    /// captured, which may be shared many times over.
    written: usize,
}

fn prop_i(n: i64) -> Prop {
    Prop::VInteger(n)
}

impl<'a> Writer<'a> {
    /// A writer that reads top-level definitions from `globals`.
    pub(super) fn new(globals: &'a HashMap<Arc<str>, Value>) -> Self {
        Writer {
            globals,
            visiting: HashSet::new(),
            written: 0,
        }
    }

    pub(super) fn value(&mut self, v: &Value) -> LispResult<PatternSubject> {
        // Atoms and patterns count whole; collections and closures count
        // as their parts are written.
        let here = match v {
            Value::List(_) | Value::Map(_) | Value::Set(_) => 2,
            Value::Closure(_) => 16,
            other => other.size(),
        };
        self.written = self.written.saturating_add(here);
        if self.written > super::value::MAX_SIZE {
            return Err(super::value::too_large(self.written));
        }
        Ok(match v {
            Value::Int(i) => node(&["Number"], vec![("value", prop_i(*i))], vec![]),
            Value::Dec(d) => node(&["Number"], vec![("value", Prop::VDecimal(*d))], vec![]),
            Value::Str(s) => node(
                &["String"],
                vec![("text", Prop::VString(s.to_string()))],
                vec![],
            ),
            Value::Bool(b) => node(&["Bool"], vec![("value", Prop::VBoolean(*b))], vec![]),
            Value::Keyword(k) => node(
                &["Keyword"],
                vec![("name", Prop::VString(k.to_string()))],
                vec![],
            ),
            Value::Primitive(p) => node(
                &["Primitive"],
                vec![("name", Prop::VString(p.name.into()))],
                vec![],
            ),
            Value::List(s) => node(
                &["List"],
                vec![],
                s.items
                    .iter()
                    .map(|x| self.value(x))
                    .collect::<LispResult<_>>()?,
            ),
            Value::Set(s) => node(
                &["Set"],
                vec![],
                s.iter()
                    .map(|k| self.value(&k.value()))
                    .collect::<LispResult<_>>()?,
            ),
            Value::Map(t) => {
                let mut entries = Vec::with_capacity(t.entries.len());
                for (k, v) in &t.entries {
                    entries.push(node(
                        &["Entry"],
                        vec![],
                        vec![self.value(&k.value())?, self.value(v)?],
                    ));
                }
                node(&["Map"], vec![], entries)
            }
            Value::Pattern(t) => node(&["Pattern"], vec![], vec![t.pattern.clone()]),
            Value::Closure(c) => self.closure(c)?,
        })
    }

    fn closure(&mut self, c: &Closure) -> LispResult<PatternSubject> {
        let params = Prop::VArray(
            c.lambda
                .params
                .iter()
                .map(|p| Prop::VString(p.to_string()))
                .collect(),
        );
        let code = datum(&c.lambda.source);
        let env = self.env(&c.lambda, &c.env)?;
        Ok(node(
            &["Closure"],
            vec![("params", params)],
            vec![code, env],
        ))
    }

    /// The scopes of `env` that `lambda` reads, outermost first, then the
    /// top-level definitions it reads.
    fn env(&mut self, lambda: &Lambda, env: &Env) -> LispResult<PatternSubject> {
        let mut needed: Vec<Arc<str>> = lambda.free.clone();
        let mut scopes = Vec::new();
        let mut scope = env.0.as_ref();
        while let Some(s) = scope {
            match &s.frame {
                Frame::Vars(vars) => {
                    let mut picked: Vec<(Arc<str>, Value)> = Vec::new();
                    for (n, v) in vars.iter().rev() {
                        if needed.contains(n) && !picked.iter().any(|(p, _)| p == n) {
                            picked.push((n.clone(), v.clone()));
                        }
                    }
                    needed.retain(|n| !picked.iter().any(|(p, _)| p == n));
                    if !picked.is_empty() {
                        picked.reverse();
                        scopes.push(self.scope(&picked)?);
                    }
                }
                Frame::Rec(fns) => {
                    if fns.iter().any(|(n, _)| needed.contains(n)) {
                        needed.retain(|n| !fns.iter().any(|(f, _)| f == n));
                        for (_, l) in fns {
                            for f in &l.free {
                                if !fns.iter().any(|(g, _)| g == f) && !needed.contains(f) {
                                    needed.push(f.clone());
                                }
                            }
                        }
                        scopes.push(rec(fns.iter().map(|(n, l)| (n.clone(), l.clone()))));
                    }
                }
            }
            scope = s.parent.0.as_ref();
        }
        // What is left is top-level: functions defined there form one
        // recursive scope, other values are bound outside it.
        let mut fns: Vec<(Arc<str>, Arc<Lambda>)> = Vec::new();
        let mut vars: Vec<(Arc<str>, Value)> = Vec::new();
        let mut seen: HashSet<Arc<str>> = HashSet::new();
        while let Some(n) = needed.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            match self.globals.get(&n) {
                Some(Value::Closure(g)) if g.env.0.is_none() => {
                    needed.extend(g.lambda.free.iter().cloned());
                    fns.push((n, g.lambda.clone()));
                }
                Some(v) => vars.push((n, v.clone())),
                None => {}
            }
        }
        if !fns.is_empty() {
            fns.sort_by(|a, b| a.0.cmp(&b.0));
            scopes.push(rec(fns.into_iter()));
        }
        if !vars.is_empty() {
            vars.sort_by(|a, b| a.0.cmp(&b.0));
            for (n, _) in &vars {
                if !self.visiting.insert(n.clone()) {
                    return Err(LispError::parse(format!(
                        "cannot serialize: `{n}` captures an environment that leads back to itself"
                    )));
                }
            }
            let scope = self.scope(&vars);
            for (n, _) in &vars {
                self.visiting.remove(n);
            }
            scopes.push(scope?);
        }
        scopes.reverse();
        Ok(node(&["Env"], vec![], scopes))
    }

    fn scope(&mut self, vars: &[(Arc<str>, Value)]) -> LispResult<PatternSubject> {
        let mut bindings = Vec::with_capacity(vars.len());
        for (n, v) in vars {
            bindings.push(binding(n, self.value(v)?));
        }
        Ok(node(&["Scope"], vec![], bindings))
    }
}

fn binding(name: &str, value: PatternSubject) -> PatternSubject {
    node(
        &["Binding"],
        vec![("name", Prop::VString(name.to_string()))],
        vec![value],
    )
}

fn rec(fns: impl Iterator<Item = (Arc<str>, Arc<Lambda>)>) -> PatternSubject {
    node(
        &["Rec"],
        vec![],
        fns.map(|(n, l)| binding(&n, datum(&l.source))).collect(),
    )
}

/// Code as a Pattern Subject.
pub fn datum(d: &Datum) -> PatternSubject {
    let text = |label: &str, key: &str, s: &str| {
        node(&[label], vec![(key, Prop::VString(s.to_string()))], vec![])
    };
    match d {
        Datum::Int(i) => node(&["Number"], vec![("value", prop_i(*i))], vec![]),
        Datum::Dec(x) => node(&["Number"], vec![("value", Prop::VDecimal(*x))], vec![]),
        Datum::Str(s) => text("String", "text", s),
        Datum::Bool(b) => node(&["Bool"], vec![("value", Prop::VBoolean(*b))], vec![]),
        Datum::Symbol(s) => text("Symbol", "name", s),
        Datum::Keyword(k) => text("Keyword", "name", k),
        Datum::List(items) => node(&["List"], vec![], items.iter().map(datum).collect()),
        Datum::Set(items) => node(&["Set"], vec![], items.iter().map(datum).collect()),
        Datum::Map(pairs) => node(
            &["Map"],
            vec![],
            pairs
                .iter()
                .map(|(k, v)| node(&["Entry"], vec![], vec![datum(k), datum(v)]))
                .collect(),
        ),
        Datum::Quote(inner) => node(&["Quote"], vec![], vec![datum(inner)]),
    }
}

pub(super) fn kind(p: &PatternSubject) -> &str {
    const KINDS: &[&str] = &[
        "Number",
        "String",
        "Bool",
        "Keyword",
        "Primitive",
        "List",
        "Set",
        "Map",
        "Pattern",
        "Closure",
        "Symbol",
        "Quote",
        "Entry",
        "Env",
        "Scope",
        "Rec",
        "Binding",
    ];
    KINDS
        .iter()
        .find(|k| p.value.labels.contains(**k))
        .copied()
        .unwrap_or("")
}

fn bad(what: &str) -> LispError {
    LispError::parse(format!("not a serialized value: {what}"))
}

fn prop<'p>(p: &'p PatternSubject, key: &str, kind: &str) -> LispResult<&'p Prop> {
    p.value
        .properties
        .get(key)
        .ok_or_else(|| bad(&format!("a {kind} without its `{key}` property")))
}

fn prop_text<'p>(p: &'p PatternSubject, key: &str, kind: &str) -> LispResult<&'p str> {
    match prop(p, key, kind)? {
        Prop::VString(s) | Prop::VSymbol(s) => Ok(s),
        _ => Err(bad(&format!("a {kind} whose `{key}` is not a string"))),
    }
}

/// A Pattern Subject read back into a value.
pub fn from_pattern(p: &PatternSubject) -> LispResult<Value> {
    read_value(p, 0)
}

fn deeper(level: usize) -> LispResult<usize> {
    // An atom inside the deepest collection is one call more.
    if level > MAX_VALUE_DEPTH {
        return Err(LispError::budget(format!(
            "serialized value nested deeper than {MAX_VALUE_DEPTH} levels"
        )));
    }
    Ok(level + 1)
}

pub(super) fn read_value(p: &PatternSubject, level: usize) -> LispResult<Value> {
    let level = deeper(level)?;
    let k = kind(p);
    Ok(match k {
        "Number" => match prop(p, "value", k)? {
            Prop::VInteger(i) => Value::Int(*i),
            Prop::VDecimal(d) => Value::Dec(*d),
            _ => return Err(bad("a Number whose value is not a number")),
        },
        "String" => Value::str(prop_text(p, "text", k)?),
        "Bool" => match prop(p, "value", k)? {
            Prop::VBoolean(b) => Value::Bool(*b),
            _ => return Err(bad("a Bool whose value is not a boolean")),
        },
        "Keyword" => Value::Keyword(prop_text(p, "name", k)?.into()),
        "Primitive" => {
            let name = prop_text(p, "name", k)?;
            Value::Primitive(prims::lookup(name).ok_or_else(|| {
                LispError::parse(format!("unknown primitive `{name}` in a serialized value"))
            })?)
        }
        "List" => Value::list(
            p.elements
                .iter()
                .map(|e| read_value(e, level))
                .collect::<LispResult<_>>()?,
        )?,
        "Set" => {
            let mut s = BTreeSet::new();
            for e in &p.elements {
                let v = read_value(e, level)?;
                s.insert(
                    v.key()
                        .ok_or_else(|| bad("a Set member that is not an atom"))?,
                );
            }
            Value::set(s)?
        }
        "Map" => {
            let mut m = BTreeMap::new();
            for e in &p.elements {
                let [key, value] = e.elements.as_slice() else {
                    return Err(bad("a Map entry without a key and a value"));
                };
                let key = read_value(key, level)?;
                let key = key
                    .key()
                    .ok_or_else(|| bad("a Map key that is not an atom"))?;
                m.insert(key, read_value(value, level)?);
            }
            Value::map(m)?
        }
        "Pattern" => match p.elements.as_slice() {
            [inner] => Value::pattern(inner.clone())?,
            _ => return Err(bad("a Pattern wrapper without exactly one element")),
        },
        "Closure" => read_closure(p, level)?,
        "" => return Err(bad(&format!("a pattern labelled {:?}", p.value.labels))),
        other => return Err(bad(&format!("a {other} where a value belongs"))),
    })
}

fn read_closure(p: &PatternSubject, level: usize) -> LispResult<Value> {
    let [code, env] = p.elements.as_slice() else {
        return Err(bad("a Closure without its code and environment"));
    };
    if kind(env) != "Env" {
        return Err(bad("a Closure whose second element is not an Env"));
    }
    let mut scope = Env::default();
    for s in &env.elements {
        let frame = match kind(s) {
            "Scope" => {
                let mut vars = Vec::with_capacity(s.elements.len());
                for b in &s.elements {
                    let (name, inner) = read_binding(b)?;
                    vars.push((name, read_value(inner, level)?));
                }
                Frame::Vars(vars)
            }
            "Rec" => {
                let mut fns = Vec::with_capacity(s.elements.len());
                for b in &s.elements {
                    let (name, inner) = read_binding(b)?;
                    fns.push((name, read_lambda(inner)?));
                }
                Frame::Rec(fns)
            }
            _ => return Err(bad("an Env member that is neither a Scope nor a Rec")),
        };
        scope = scope.with(frame)?;
    }
    Ok(Value::Closure(Arc::new(Closure::new(
        read_lambda(code)?,
        scope,
    ))))
}

fn read_binding(b: &PatternSubject) -> LispResult<(Arc<str>, &PatternSubject)> {
    if kind(b) != "Binding" {
        return Err(bad("a scope member that is not a Binding"));
    }
    let name = prop_text(b, "name", "Binding")?;
    match b.elements.as_slice() {
        [inner] => Ok((name.into(), inner)),
        _ => Err(bad("a Binding without exactly one element")),
    }
}

fn read_lambda(code: &PatternSubject) -> LispResult<Arc<Lambda>> {
    let d = read_datum(code, 0)?;
    match analyze_expr(&d)? {
        Expr::Lambda(l) => Ok(l),
        _ => Err(bad("closure code that is not a lambda")),
    }
}

/// Code read back from a Pattern Subject.
pub fn read_datum(p: &PatternSubject, level: usize) -> LispResult<Datum> {
    let level = deeper(level)?;
    let k = kind(p);
    let items = |level| {
        p.elements
            .iter()
            .map(|e| read_datum(e, level))
            .collect::<LispResult<Vec<_>>>()
    };
    Ok(match k {
        "Number" => match prop(p, "value", k)? {
            Prop::VInteger(i) => Datum::Int(*i),
            Prop::VDecimal(d) => Datum::Dec(*d),
            _ => return Err(bad("a Number whose value is not a number")),
        },
        "String" => Datum::Str(prop_text(p, "text", k)?.into()),
        "Bool" => match prop(p, "value", k)? {
            Prop::VBoolean(b) => Datum::Bool(*b),
            _ => return Err(bad("a Bool whose value is not a boolean")),
        },
        "Symbol" => Datum::Symbol(prop_text(p, "name", k)?.into()),
        "Keyword" => Datum::Keyword(prop_text(p, "name", k)?.into()),
        "List" => Datum::List(items(level)?),
        "Set" => Datum::Set(items(level)?),
        "Quote" => match p.elements.as_slice() {
            [inner] => Datum::Quote(Box::new(read_datum(inner, level)?)),
            _ => return Err(bad("a Quote without exactly one element")),
        },
        "Map" => {
            let mut pairs = Vec::new();
            for e in &p.elements {
                let [key, value] = e.elements.as_slice() else {
                    return Err(bad("a Map entry without a key and a value"));
                };
                pairs.push((read_datum(key, level)?, read_datum(value, level)?));
            }
            Datum::Map(pairs)
        }
        other => return Err(bad(&format!("code labelled `{other}`"))),
    })
}
