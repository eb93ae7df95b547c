//! Special forms: a datum analysed once into an expression tree the
//! evaluator walks (`lambda`, `if`, `let`, `let*`, `letrec`, `begin`,
//! `define`, `quote`, `cond`, `and`, `or`; everything else is a call).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::error::{ErrorKind, LispError, LispResult};
use super::read::Datum;
use super::value::Value;

/// An analysed expression.
#[derive(Debug)]
pub enum Expr {
    /// A literal or quoted datum.
    Const(Value),
    /// A variable reference.
    Var(Arc<str>),
    /// `(if c then else)`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(lambda (params) body…)`.
    Lambda(Arc<Lambda>),
    /// `(let ((n v) …) body…)`: all values first, then the body.
    Let(Vec<(Arc<str>, Expr)>, Box<Expr>),
    /// `(letrec ((n v) …) body…)`, also a body's inner `define`s: each
    /// value sees the names before it, and functions see each other.
    Letrec(Vec<(Arc<str>, Expr)>, Box<Expr>),
    /// `(begin e…)`.
    Begin(Vec<Expr>),
    /// A top-level `(define name value)`.
    Define(Arc<str>, Box<Expr>),
    /// `(cond (test e…) … (else e…))`.
    Cond(Vec<(Expr, Expr)>),
    /// `(and e…)`.
    And(Vec<Expr>),
    /// `(or e…)`.
    Or(Vec<Expr>),
    /// `(f args…)`.
    Call(Box<Expr>, Vec<Expr>),
    /// A map literal whose parts are computed.
    MakeMap(Vec<(Expr, Expr)>),
    /// A set literal whose members are computed.
    MakeSet(Vec<Expr>),
}

/// A function's code: parameters, body, the datum it was read from (what
/// serialization writes) and the names it uses but does not bind.
#[derive(Debug)]
pub struct Lambda {
    /// Parameter names.
    pub params: Vec<Arc<str>>,
    /// The body.
    pub body: Expr,
    /// `(lambda (params) body…)` as data.
    pub source: Datum,
    /// Free variables of the body, each once.
    pub free: Vec<Arc<str>>,
}

const FORMS: &[&str] = &[
    "lambda", "if", "let", "let*", "letrec", "begin", "define", "quote", "cond", "and", "or",
];

fn syntax(form: &str, message: impl std::fmt::Display) -> LispError {
    LispError::parse(format!("{form}: {message}"))
}

fn symbol(d: &Datum) -> Option<Arc<str>> {
    match d {
        Datum::Symbol(s) if !FORMS.contains(&&**s) => Some(s.clone()),
        _ => None,
    }
}

/// A datum analysed at the top of a program (`define` allowed).
pub fn analyze_top(d: &Datum) -> LispResult<Expr> {
    analyze(d, true)
}

/// A datum analysed as an expression.
pub fn analyze_expr(d: &Datum) -> LispResult<Expr> {
    analyze(d, false)
}

fn analyze(d: &Datum, top: bool) -> LispResult<Expr> {
    Ok(match d {
        Datum::Int(i) => Expr::Const(Value::Int(*i)),
        Datum::Dec(x) => Expr::Const(Value::Dec(*x)),
        Datum::Str(s) => Expr::Const(Value::Str(s.clone())),
        Datum::Bool(b) => Expr::Const(Value::Bool(*b)),
        Datum::Keyword(k) => Expr::Const(Value::Keyword(k.clone())),
        Datum::Symbol(s) => {
            if FORMS.contains(&&**s) {
                return Err(syntax(s, "a special form is not a value"));
            }
            Expr::Var(s.clone())
        }
        Datum::Quote(inner) => Expr::Const(quote(inner)?),
        Datum::Map(pairs) => {
            let parts = pairs
                .iter()
                .map(|(k, v)| Ok((analyze_expr(k)?, analyze_expr(v)?)))
                .collect::<LispResult<Vec<_>>>()?;
            Expr::MakeMap(parts)
        }
        Datum::Set(items) => {
            Expr::MakeSet(items.iter().map(analyze_expr).collect::<LispResult<_>>()?)
        }
        Datum::List(items) => {
            let Some(head) = items.first() else {
                return Ok(Expr::Const(Value::nil()));
            };
            if let Datum::Symbol(name) = head
                && FORMS.contains(&&**name)
            {
                return special(name, &items[1..], d, top);
            }
            let f = analyze_expr(head)?;
            let args = items[1..]
                .iter()
                .map(analyze_expr)
                .collect::<LispResult<_>>()?;
            Expr::Call(Box::new(f), args)
        }
    })
}

/// The value of a quoted datum: symbols become strings.
pub fn quote(d: &Datum) -> LispResult<Value> {
    Ok(match d {
        Datum::Int(i) => Value::Int(*i),
        Datum::Dec(x) => Value::Dec(*x),
        Datum::Str(s) | Datum::Symbol(s) => Value::Str(s.clone()),
        Datum::Bool(b) => Value::Bool(*b),
        Datum::Keyword(k) => Value::Keyword(k.clone()),
        Datum::List(items) => Value::list(items.iter().map(quote).collect::<LispResult<_>>()?)?,
        Datum::Quote(inner) => Value::list(vec![Value::str("quote"), quote(inner)?])?,
        Datum::Map(pairs) => {
            let mut m = BTreeMap::new();
            for (k, v) in pairs {
                let key = quote(k)?;
                let key = key
                    .key()
                    .ok_or_else(|| LispError::expected("quote", 1, "an atom as map key", &key))?;
                m.insert(key, quote(v)?);
            }
            Value::map(m)?
        }
        Datum::Set(items) => {
            let mut s = BTreeSet::new();
            for i in items {
                let v = quote(i)?;
                s.insert(
                    v.key()
                        .ok_or_else(|| LispError::expected("quote", 1, "an atom in a set", &v))?,
                );
            }
            Value::set(s)?
        }
    })
}

fn body(form: &str, forms: &[Datum]) -> LispResult<Expr> {
    if forms.is_empty() {
        return Err(syntax(form, "expected a body"));
    }
    let mut defines = Vec::new();
    let mut rest = Vec::new();
    for f in forms {
        if let Datum::List(items) = f
            && items.first() == Some(&Datum::Symbol("define".into()))
        {
            defines.push(definition(&items[1..])?);
        } else {
            rest.push(analyze_expr(f)?);
        }
    }
    if rest.is_empty() {
        return Err(syntax(
            form,
            "a body needs an expression after its definitions",
        ));
    }
    let inner = if rest.len() == 1 {
        rest.remove(0)
    } else {
        Expr::Begin(rest)
    };
    if defines.is_empty() {
        return Ok(inner);
    }
    Ok(Expr::Letrec(defines, Box::new(inner)))
}

/// `name value` or `(name params…) body…`.
fn definition(args: &[Datum]) -> LispResult<(Arc<str>, Expr)> {
    match args.first() {
        Some(Datum::List(sig)) => {
            let name = sig
                .first()
                .and_then(symbol)
                .ok_or_else(|| syntax("define", "expected (name params…)"))?;
            let mut source = vec![
                Datum::Symbol("lambda".into()),
                Datum::List(sig[1..].to_vec()),
            ];
            source.extend(args[1..].iter().cloned());
            let lambda = lambda(&sig[1..], &args[1..], Datum::List(source))?;
            Ok((name, Expr::Lambda(Arc::new(lambda))))
        }
        Some(d) => {
            let name = symbol(d).ok_or_else(|| syntax("define", "argument 1: expected a name"))?;
            if args.len() != 2 {
                return Err(LispError::new(
                    ErrorKind::ArityMismatch,
                    format!(
                        "define: expected a name and a value, got {} forms",
                        args.len()
                    ),
                ));
            }
            Ok((name, analyze_expr(&args[1])?))
        }
        None => Err(syntax("define", "expected a name and a value")),
    }
}

fn lambda(params: &[Datum], forms: &[Datum], source: Datum) -> LispResult<Lambda> {
    let mut names: Vec<Arc<str>> = Vec::with_capacity(params.len());
    for (i, p) in params.iter().enumerate() {
        let name = symbol(p)
            .ok_or_else(|| syntax("lambda", format!("parameter {}: expected a name", i + 1)))?;
        if names.contains(&name) {
            return Err(syntax(
                "lambda",
                format!("parameter `{name}` is named twice"),
            ));
        }
        names.push(name);
    }
    let body = body("lambda", forms)?;
    let mut free = Vec::new();
    let mut bound = names.clone();
    free_vars(&body, &mut bound, &mut free);
    Ok(Lambda {
        params: names,
        body,
        source,
        free,
    })
}

fn bindings(form: &str, d: Option<&Datum>) -> LispResult<Vec<(Arc<str>, Expr)>> {
    let Some(Datum::List(items)) = d else {
        return Err(syntax(
            form,
            "argument 1: expected a list of (name value) bindings",
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, b)| match b {
            Datum::List(pair) if pair.len() == 2 => {
                let name = symbol(&pair[0])
                    .ok_or_else(|| syntax(form, format!("binding {}: expected a name", i + 1)))?;
                Ok((name, analyze_expr(&pair[1])?))
            }
            _ => Err(syntax(
                form,
                format!("binding {}: expected (name value)", i + 1),
            )),
        })
        .collect()
}

fn special(name: &str, args: &[Datum], whole: &Datum, top: bool) -> LispResult<Expr> {
    let count = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(LispError::arity(name, &format!("{n} forms"), args.len()))
        }
    };
    Ok(match name {
        "quote" => {
            count(1)?;
            Expr::Const(quote(&args[0])?)
        }
        "if" => {
            count(3)?;
            Expr::If(
                Box::new(analyze_expr(&args[0])?),
                Box::new(analyze_expr(&args[1])?),
                Box::new(analyze_expr(&args[2])?),
            )
        }
        "lambda" => {
            let Some(Datum::List(params)) = args.first() else {
                return Err(syntax("lambda", "argument 1: expected a parameter list"));
            };
            Expr::Lambda(Arc::new(lambda(params, &args[1..], whole.clone())?))
        }
        "let" => {
            let b = bindings("let", args.first())?;
            Expr::Let(b, Box::new(body("let", &args[1..])?))
        }
        "let*" => {
            let b = bindings("let*", args.first())?;
            let mut inner = body("let*", &args[1..])?;
            for binding in b.into_iter().rev() {
                inner = Expr::Let(vec![binding], Box::new(inner));
            }
            inner
        }
        "letrec" => {
            let b = bindings("letrec", args.first())?;
            Expr::Letrec(b, Box::new(body("letrec", &args[1..])?))
        }
        "begin" => {
            if args.is_empty() {
                return Err(syntax("begin", "expected at least one form"));
            }
            Expr::Begin(
                args.iter()
                    .map(|a| analyze(a, top))
                    .collect::<LispResult<_>>()?,
            )
        }
        "define" => {
            if !top {
                return Err(syntax(
                    "define",
                    "only at the top of a program or the start of a body",
                ));
            }
            let (n, value) = definition(args)?;
            Expr::Define(n, Box::new(value))
        }
        "cond" => Expr::Cond(cond_clauses(args)?),
        "and" => Expr::And(args.iter().map(analyze_expr).collect::<LispResult<_>>()?),
        "or" => Expr::Or(args.iter().map(analyze_expr).collect::<LispResult<_>>()?),
        _ => return Err(syntax(name, "unknown special form")),
    })
}

/// `cond`'s clauses, each `(test body…)`; `else`, only last, is true.
fn cond_clauses(args: &[Datum]) -> LispResult<Vec<(Expr, Expr)>> {
    let mut clauses = Vec::new();
    for (i, c) in args.iter().enumerate() {
        let Datum::List(parts) = c else {
            return Err(syntax(
                "cond",
                format!("clause {}: expected (test body…)", i + 1),
            ));
        };
        let Some(test) = parts.first() else {
            return Err(syntax("cond", format!("clause {}: is empty", i + 1)));
        };
        let test = if *test == Datum::Symbol("else".into()) {
            if i + 1 != args.len() {
                return Err(syntax("cond", "`else` must be the last clause"));
            }
            Expr::Const(Value::Bool(true))
        } else {
            analyze_expr(test)?
        };
        clauses.push((test, body("cond", &parts[1..])?));
    }
    Ok(clauses)
}

fn note(name: &Arc<str>, bound: &[Arc<str>], free: &mut Vec<Arc<str>>) {
    if !bound.contains(name) && !free.contains(name) {
        free.push(name.clone());
    }
}

/// The names `e` uses that `bound` does not bind, added to `free`.
fn free_vars(e: &Expr, bound: &mut Vec<Arc<str>>, free: &mut Vec<Arc<str>>) {
    match e {
        Expr::Const(_) => {}
        Expr::Var(n) => note(n, bound, free),
        Expr::If(a, b, c) => {
            for x in [a, b, c] {
                free_vars(x, bound, free);
            }
        }
        Expr::Lambda(l) => {
            for n in &l.free {
                note(n, bound, free);
            }
        }
        Expr::Let(bs, body) => {
            for (_, v) in bs {
                free_vars(v, bound, free);
            }
            let mark = bound.len();
            bound.extend(bs.iter().map(|(n, _)| n.clone()));
            free_vars(body, bound, free);
            bound.truncate(mark);
        }
        Expr::Letrec(bs, body) => {
            let mark = bound.len();
            bound.extend(bs.iter().map(|(n, _)| n.clone()));
            for (_, v) in bs {
                free_vars(v, bound, free);
            }
            free_vars(body, bound, free);
            bound.truncate(mark);
        }
        Expr::Define(_, v) => free_vars(v, bound, free),
        Expr::Begin(xs) | Expr::And(xs) | Expr::Or(xs) | Expr::MakeSet(xs) => {
            for x in xs {
                free_vars(x, bound, free);
            }
        }
        Expr::Cond(cs) => {
            for (t, b) in cs {
                free_vars(t, bound, free);
                free_vars(b, bound, free);
            }
        }
        Expr::Call(f, args) => {
            free_vars(f, bound, free);
            for a in args {
                free_vars(a, bound, free);
            }
        }
        Expr::MakeMap(pairs) => {
            for (k, v) in pairs {
                free_vars(k, bound, free);
                free_vars(v, bound, free);
            }
        }
    }
}
