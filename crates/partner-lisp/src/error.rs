//! What can stop a Pattern Lisp program, named by kind so a caller (and
//! `partner lisp`, which prints `error: KIND: message`) can tell a typo
//! from a runaway program.

use std::fmt;

/// The kinds of error a program can meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not a program (reader or special-form syntax), or a
    /// serialized value could not be read back.
    Parse,
    /// A name with no binding.
    UndefinedVariable,
    /// A value of the wrong type for a form or primitive.
    TypeMismatch,
    /// A call with the wrong number of arguments.
    ArityMismatch,
    /// An integer division or remainder by zero.
    DivisionByZero,
    /// The program ran past a bound: steps, call depth or value size.
    StepBudget,
    /// A tool is not in canonical form, or did not return a state.
    Tool,
    /// A value would expand (printed or serialized) past its bound, or
    /// the program allocated more than it may.
    Size,
}

impl ErrorKind {
    /// The kind as `partner lisp` prints it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Parse => "parse",
            ErrorKind::UndefinedVariable => "undefined-variable",
            ErrorKind::TypeMismatch => "type-mismatch",
            ErrorKind::ArityMismatch => "arity-mismatch",
            ErrorKind::DivisionByZero => "division-by-zero",
            ErrorKind::StepBudget => "step-budget",
            ErrorKind::Tool => "tool",
            ErrorKind::Size => "size",
        }
    }
}

/// An error with its kind and a message that names the form or primitive,
/// the argument and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LispError {
    /// What kind of error.
    pub kind: ErrorKind,
    /// What went wrong, for a person.
    pub message: String,
}

impl LispError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        LispError {
            kind,
            message: message.into(),
        }
    }

    /// A reader or syntax error.
    pub fn parse(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Parse, message)
    }

    /// A type error: `who` (form or primitive), argument `position`
    /// (1-based), what was `expected` and the value given.
    pub fn expected(who: &str, position: usize, expected: &str, got: &super::Value) -> Self {
        Self::new(
            ErrorKind::TypeMismatch,
            format!(
                "{who}: argument {position}: expected {expected}, got {} {}",
                got.type_name(),
                got.brief()
            ),
        )
    }

    /// An arity error: `who` takes `wanted` arguments, was given `got`.
    pub fn arity(who: &str, wanted: &str, got: usize) -> Self {
        Self::new(
            ErrorKind::ArityMismatch,
            format!("{who}: expected {wanted}, got {got}"),
        )
    }

    /// A budget error.
    pub fn budget(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::StepBudget, message)
    }
}

impl fmt::Display for LispError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for LispError {}

/// What Pattern Lisp functions return.
pub type LispResult<T> = Result<T, LispError>;
