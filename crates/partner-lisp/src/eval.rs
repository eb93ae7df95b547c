//! The evaluator: environments as immutable chains of scopes, closures
//! that capture one, calls in tail position that do not grow the Rust
//! stack, and a budget of steps and depth that stops a runaway program.
//!
//! Recursive functions (`letrec`, a body's `define`s) are kept without a
//! cycle: their scope holds the functions' code, and looking a name up
//! there makes the closure afresh. So a closure never contains itself,
//! and serializing one is a walk over a tree.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::error::{ErrorKind, LispError, LispResult};
use super::prims::{self, Primitive};
use super::syntax::{Expr, Lambda};
use super::value::{MAX_VALUE_DEPTH, Value};

/// Steps a program may take unless told otherwise.
pub const DEFAULT_STEPS: u64 = 10_000_000;

/// Deepest nesting of non-tail evaluation (a recursion 10,000 calls deep
/// is well within it; the evaluator runs on a thread with room for it).
pub const MAX_DEPTH: usize = 50_000;

/// Stack given to the thread a program runs on (reserved; pages are
/// touched only as the program goes deeper).
pub const STACK_BYTES: usize = 1 << 30;

/// Most of that stack evaluation may use: the rest is room for what one
/// step does without checking (a primitive walking a value, printing,
/// serializing), so the bound is met as an error, never an overflow.
const STACK_USABLE: usize = STACK_BYTES - (128 << 20);

/// A chain of scopes, innermost first (`None`: the top level).
#[derive(Debug, Clone, Default)]
pub struct Env(pub Option<Arc<Scope>>);

/// One scope of an environment.
#[derive(Debug)]
pub struct Scope {
    /// Its bindings.
    pub frame: Frame,
    /// The scope around it.
    pub parent: Env,
    depth: usize,
}

/// What a scope binds.
#[derive(Debug)]
pub enum Frame {
    /// Names bound to values.
    Vars(Vec<(Arc<str>, Value)>),
    /// Functions that may call each other: each name looked up here is a
    /// closure over this very scope.
    Rec(Vec<(Arc<str>, Arc<Lambda>)>),
}

impl Env {
    /// `frame` inside this environment.
    pub fn with(&self, frame: Frame) -> LispResult<Env> {
        let inner = match &frame {
            Frame::Vars(vars) => vars.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            Frame::Rec(_) => 0,
        };
        let depth = inner.max(self.depth());
        if depth > MAX_VALUE_DEPTH {
            return Err(LispError::budget(format!(
                "closures nested deeper than {MAX_VALUE_DEPTH} levels"
            )));
        }
        Ok(Env(Some(Arc::new(Scope {
            frame,
            parent: self.clone(),
            depth,
        }))))
    }

    fn depth(&self) -> usize {
        self.0.as_ref().map_or(0, |s| s.depth)
    }

    /// The value `name` has here, if bound.
    pub fn lookup(&self, name: &str) -> Option<Value> {
        let mut scope = self.0.as_ref();
        while let Some(s) = scope {
            match &s.frame {
                Frame::Vars(vars) => {
                    if let Some((_, v)) = vars.iter().rev().find(|(n, _)| &**n == name) {
                        return Some(v.clone());
                    }
                }
                Frame::Rec(fns) => {
                    if let Some((_, l)) = fns.iter().find(|(n, _)| &**n == name) {
                        return Some(Value::Closure(Arc::new(Closure::new(
                            l.clone(),
                            Env(Some(s.clone())),
                        ))));
                    }
                }
            }
            scope = s.parent.0.as_ref();
        }
        None
    }
}

/// A function written in Lisp, with the environment it was made in.
#[derive(Debug)]
pub struct Closure {
    /// Its code.
    pub lambda: Arc<Lambda>,
    /// What it captured.
    pub env: Env,
}

impl Closure {
    /// A closure of `lambda` over `env`.
    pub fn new(lambda: Arc<Lambda>, env: Env) -> Self {
        Closure { lambda, env }
    }

    /// Its parameter names.
    pub fn params(&self) -> Vec<&str> {
        self.lambda.params.iter().map(|p| &**p).collect()
    }

    /// How deep what it captured nests.
    pub fn depth(&self) -> usize {
        1 + self.env.depth()
    }
}

/// One program's evaluation: its top-level definitions and what it has
/// spent.
pub struct Machine<'a> {
    /// Top-level definitions.
    pub globals: &'a mut HashMap<Arc<str>, Value>,
    /// Steps taken so far.
    pub steps: u64,
    /// Most steps allowed.
    pub budget: u64,
    depth: usize,
    /// Where this thread's stack was when the machine was made.
    stack_base: usize,
}

/// The address of a local: where the stack is now.
#[inline(never)]
fn stack_here() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

enum Step {
    Done(Value),
    Tail(Arc<Lambda>, Env),
}

impl<'a> Machine<'a> {
    /// A machine over `globals` that may take `budget` steps.
    pub fn new(globals: &'a mut HashMap<Arc<str>, Value>, budget: u64) -> Self {
        Machine {
            globals,
            steps: 0,
            budget,
            depth: 0,
            stack_base: stack_here(),
        }
    }

    /// One level deeper, or the error when it would go too deep (by count,
    /// or by the stack really used: frames are larger in a debug build).
    fn enter(&mut self) -> LispResult<()> {
        let used = self.stack_base.saturating_sub(stack_here());
        if self.depth >= MAX_DEPTH || used > STACK_USABLE {
            return Err(LispError::budget(format!(
                "recursion deeper than {} calls",
                self.depth
            )));
        }
        self.depth += 1;
        Ok(())
    }

    /// Charges `n` steps of work.
    pub fn charge(&mut self, n: u64) -> LispResult<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.budget {
            return Err(LispError::budget(format!(
                "stopped after {} steps (the budget)",
                self.budget
            )));
        }
        Ok(())
    }

    /// The value of `expr` in `env`.
    pub fn eval(&mut self, expr: &Expr, env: &Env) -> LispResult<Value> {
        self.enter()?;
        let result = self.run(expr, env);
        self.depth -= 1;
        result
    }

    fn run(&mut self, expr: &Expr, env: &Env) -> LispResult<Value> {
        let mut step = self.step(expr, env)?;
        loop {
            match step {
                Step::Done(v) => return Ok(v),
                Step::Tail(lambda, env) => step = self.step(&lambda.body, &env)?,
            }
        }
    }

    /// Calls `f` with `args`; `who` and `position` name the caller's
    /// argument when `f` is not a function.
    pub fn apply(
        &mut self,
        f: &Value,
        args: Vec<Value>,
        who: &str,
        position: usize,
    ) -> LispResult<Value> {
        match f {
            Value::Primitive(p) => self.call_primitive(p, args),
            Value::Closure(c) => {
                let env = bind(c, args)?;
                let lambda = c.lambda.clone();
                self.enter()?;
                let r = self.run(&lambda.body, &env);
                self.depth -= 1;
                r
            }
            other => Err(LispError::expected(who, position, "a function", other)),
        }
    }

    fn call_primitive(&mut self, p: &'static Primitive, args: Vec<Value>) -> LispResult<Value> {
        p.check_arity(args.len())?;
        (p.func)(self, &args)
    }

    fn step(&mut self, expr: &Expr, env: &Env) -> LispResult<Step> {
        self.charge(1)?;
        Ok(Step::Done(match expr {
            Expr::Const(v) => v.clone(),
            Expr::Var(name) => self.lookup(name, env)?,
            Expr::If(c, then, other) => {
                return match self.eval(c, env)? {
                    Value::Bool(true) => self.step(then, env),
                    Value::Bool(false) => self.step(other, env),
                    v => Err(LispError::expected("if", 1, "a boolean condition", &v)),
                };
            }
            Expr::Lambda(l) => Value::Closure(Arc::new(Closure::new(l.clone(), env.clone()))),
            Expr::Let(bindings, body) => {
                let mut vars = Vec::with_capacity(bindings.len());
                for (n, e) in bindings {
                    vars.push((n.clone(), self.eval(e, env)?));
                }
                let inner = env.with(Frame::Vars(vars))?;
                return self.tail_in(body, inner);
            }
            Expr::Letrec(bindings, body) => {
                let inner = self.letrec(bindings, env)?;
                return self.tail_in(body, inner);
            }
            Expr::Begin(forms) => {
                let (last, init) = forms.split_last().expect("begin has a form");
                for f in init {
                    self.eval(f, env)?;
                }
                return self.step(last, env);
            }
            Expr::Define(name, e) => {
                let v = self.eval(e, env)?;
                self.globals.insert(name.clone(), v);
                Value::str(&**name)
            }
            Expr::Cond(clauses) => return self.cond(clauses, env),
            Expr::And(forms) => self.and_or(forms, false, env)?,
            Expr::Or(forms) => self.and_or(forms, true, env)?,
            Expr::Call(f, args) => return self.call(f, args, env),
            Expr::MakeMap(pairs) => self.make_map(pairs, env)?,
            Expr::MakeSet(items) => self.make_set(items, env)?,
        }))
    }

    /// `cond`: the body of the first clause whose test is true, in tail
    /// position; nil when none is.
    #[inline(always)]
    fn cond(&mut self, clauses: &[(Expr, Expr)], env: &Env) -> LispResult<Step> {
        for (test, body) in clauses {
            match self.eval(test, env)? {
                Value::Bool(true) => return self.step(body, env),
                Value::Bool(false) => {}
                v => return Err(LispError::expected("cond", 1, "a boolean test", &v)),
            }
        }
        Ok(Step::Done(Value::nil()))
    }

    /// `and` (`stop` false) or `or` (`stop` true): the first form that is
    /// `stop` ends it.
    #[inline(always)]
    fn and_or(&mut self, forms: &[Expr], stop: bool, env: &Env) -> LispResult<Value> {
        let form = if stop { "or" } else { "and" };
        for (i, f) in forms.iter().enumerate() {
            match self.eval(f, env)? {
                Value::Bool(b) if b == stop => return Ok(Value::Bool(b)),
                Value::Bool(_) => {}
                v => return Err(LispError::expected(form, i + 1, "a boolean", &v)),
            }
        }
        Ok(Value::Bool(!stop))
    }

    /// A call: a closure's body in tail position, a primitive at once.
    #[inline(always)]
    fn call(&mut self, f: &Expr, args: &[Expr], env: &Env) -> LispResult<Step> {
        let f = self.eval(f, env)?;
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.eval(a, env)?);
        }
        match &f {
            Value::Closure(c) => Ok(Step::Tail(c.lambda.clone(), bind(c, values)?)),
            Value::Primitive(p) => Ok(Step::Done(self.call_primitive(p, values)?)),
            other => Err(LispError::new(
                ErrorKind::TypeMismatch,
                format!(
                    "call: expected a function in operator position, got {} {}",
                    other.type_name(),
                    other.brief()
                ),
            )),
        }
    }

    /// A map literal: each key an atom.
    #[inline]
    fn make_map(&mut self, pairs: &[(Expr, Expr)], env: &Env) -> LispResult<Value> {
        let mut m = BTreeMap::new();
        for (k, v) in pairs {
            let key = self.eval(k, env)?;
            let key = key
                .key()
                .ok_or_else(|| LispError::expected("map", 1, "an atom as key", &key))?;
            m.insert(key, self.eval(v, env)?);
        }
        Value::map(m)
    }

    /// A set literal: each item an atom.
    #[inline]
    fn make_set(&mut self, items: &[Expr], env: &Env) -> LispResult<Value> {
        let mut s = BTreeSet::new();
        for i in items {
            let v = self.eval(i, env)?;
            s.insert(
                v.key()
                    .ok_or_else(|| LispError::expected("set", 1, "an atom", &v))?,
            );
        }
        Value::set(s)
    }

    fn tail_in(&mut self, body: &Expr, env: Env) -> LispResult<Step> {
        // The body runs in a scope the caller does not hold: evaluate it
        // here (a `let` in tail position still loops through `run`).
        match self.step(body, &env)? {
            Step::Done(v) => Ok(Step::Done(v)),
            tail => Ok(tail),
        }
    }

    /// `letrec*`: runs of functions become one recursive scope; other
    /// values are bound in order, each seeing what came before.
    fn letrec(&mut self, bindings: &[(Arc<str>, Expr)], env: &Env) -> LispResult<Env> {
        let mut env = env.clone();
        let mut i = 0;
        while i < bindings.len() {
            let mut fns = Vec::new();
            while let Some((n, Expr::Lambda(l))) = bindings.get(i) {
                fns.push((n.clone(), l.clone()));
                i += 1;
            }
            if !fns.is_empty() {
                env = env.with(Frame::Rec(fns))?;
                continue;
            }
            let (n, e) = &bindings[i];
            let v = self.eval(e, &env)?;
            env = env.with(Frame::Vars(vec![(n.clone(), v)]))?;
            i += 1;
        }
        Ok(env)
    }

    fn lookup(&self, name: &str, env: &Env) -> LispResult<Value> {
        if let Some(v) = env.lookup(name) {
            return Ok(v);
        }
        if let Some(v) = self.globals.get(name) {
            return Ok(v.clone());
        }
        if let Some(p) = prims::lookup(name) {
            return Ok(Value::Primitive(p));
        }
        Err(LispError::new(
            ErrorKind::UndefinedVariable,
            format!("`{name}` is not defined"),
        ))
    }
}

/// The environment a call of `c` with `args` runs in.
fn bind(c: &Closure, args: Vec<Value>) -> LispResult<Env> {
    let params = &c.lambda.params;
    if params.len() != args.len() {
        return Err(LispError::arity(
            &format!("#<closure ({})>", c.params().join(" ")),
            &format!(
                "{} argument{}",
                params.len(),
                if params.len() == 1 { "" } else { "s" }
            ),
            args.len(),
        ));
    }
    c.env
        .with(Frame::Vars(params.iter().cloned().zip(args).collect()))
}
