//! Pattern Lisp: a small pure Lisp whose tools are functions
//! `(lambda (state) …)` from a Pattern Subject to a Pattern Subject.
//!
//! - [`read`]: text to data, with line and column in errors;
//! - [`syntax`]: the special forms, analysed once;
//! - [`eval`]: environments, closures, tail calls, the step budget;
//! - [`prims`]: the table of primitives;
//! - [`value`]: values and how they print;
//! - [`codec`]: every value as a Pattern Subject and Gram text, and back;
//! - [`subject`]: values as a pattern's Subject decoration, and back;
//! - [`show`]: a value as an indented tree, for the console;
//! - [`tool`]: tools in canonical form, validated and run.
//!
//! This crate may import no other partner crate (its `Cargo.toml` lists
//! none): Pattern, Subject and Gram come
//! from the gram-data crates (`relateby-pattern`, `relateby-gram`).

pub mod codec;
pub mod error;
pub mod eval;
pub mod prims;
pub mod read;
pub mod show;
pub mod subject;
pub mod syntax;
pub mod tool;
pub mod value;

use std::collections::HashMap;
use std::sync::Arc;

pub use error::{ErrorKind, LispError, LispResult};
pub use value::{PatternSubject, Value};

use eval::{DEFAULT_STEPS, Env, Machine, STACK_BYTES};

/// An interpreter: top-level definitions that last from one evaluation to
/// the next (a REPL, or `-e` forms run in order), and a step budget for
/// each evaluation.
pub struct Lisp {
    globals: HashMap<Arc<str>, Value>,
    /// Most steps one evaluation may take.
    pub budget: u64,
    /// Steps the last evaluation took.
    pub last_steps: u64,
}

impl Default for Lisp {
    fn default() -> Self {
        Self::new()
    }
}

impl Lisp {
    /// An interpreter with no definitions and the default budget.
    pub fn new() -> Self {
        Lisp {
            globals: HashMap::new(),
            budget: DEFAULT_STEPS,
            last_steps: 0,
        }
    }

    /// Runs every form of `source` in order; the last one's value.
    pub fn eval_str(&mut self, source: &str) -> LispResult<Value> {
        let forms = read::read_all(source)?;
        let mut exprs = Vec::with_capacity(forms.len());
        for (d, pos) in &forms {
            exprs.push(syntax::analyze_top(d).map_err(|e| at(e, *pos))?);
        }
        self.on_big_stack(|m| {
            let mut last = Value::nil();
            for e in &exprs {
                last = m.eval(e, &Env::default())?;
            }
            Ok(last)
        })
    }

    /// Calls `f` (a closure or primitive) with `args`.
    pub fn call(&mut self, f: &Value, args: Vec<Value>) -> LispResult<Value> {
        self.on_big_stack(|m| m.apply(f, args, "call", 1))
    }

    /// `v` serialized as Gram text (closures with what they use).
    pub fn to_gram(&self, v: &Value) -> LispResult<String> {
        codec::to_gram(v, &self.globals)
    }

    /// Defines `name` at the top level (a tool's `state`, for the console).
    pub fn define(&mut self, name: &str, value: Value) {
        self.globals.insert(name.into(), value);
    }

    /// A top-level definition.
    pub fn global(&self, name: &str) -> Option<&Value> {
        self.globals.get(name)
    }

    /// Runs `work` on a thread with a stack deep enough for the depth
    /// bound, so no program can overflow the caller's stack.
    fn on_big_stack<T: Send>(
        &mut self,
        work: impl FnOnce(&mut Machine<'_>) -> LispResult<T> + Send,
    ) -> LispResult<T> {
        let budget = self.budget;
        let globals = &mut self.globals;
        let (r, steps) = on_thread("the evaluator", STACK_BYTES, move || {
            let mut m = Machine::new(globals, budget);
            let r = work(&mut m);
            Ok((r, m.steps))
        })
        .map_err(|why| LispError::new(ErrorKind::Tool, why))?;
        self.last_steps = steps;
        r
    }
}

/// Runs `work` on a thread of its own with a `stack` of that many bytes
/// (reserved, touched only as needed) and waits for it; `what` names it
/// when the thread cannot start or stops on a bug.
pub(crate) fn on_thread<T: Send>(
    what: &str,
    stack: usize,
    work: impl FnOnce() -> Result<T, String> + Send,
) -> Result<T, String> {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("lisp".into())
            .stack_size(stack)
            .spawn_scoped(scope, work)
        {
            Ok(h) => h
                .join()
                .unwrap_or_else(|_| Err(format!("{what} stopped on an internal error"))),
            Err(e) => Err(format!("cannot start {what}: {e}")),
        }
    })
}

fn at(mut e: LispError, pos: read::Pos) -> LispError {
    if e.kind == ErrorKind::Parse && !e.message.starts_with(char::is_numeric) {
        e.message = format!("{}:{}: {}", pos.line, pos.column, e.message);
    }
    e
}
