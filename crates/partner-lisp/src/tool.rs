//! Tools: a program whose last form is `(lambda (state) …)` — exactly one
//! parameter, named `state` — run on a Pattern Subject state and required
//! to return one. Forms before it may define helpers; `;` lines at the
//! top are its documentation.

use super::error::{ErrorKind, LispError, LispResult};
use super::read::{Datum, read_all};
use super::value::{PatternSubject, Value};
use super::{Lisp, codec};

/// A validated tool.
#[derive(Debug, Clone)]
pub struct Tool {
    /// Its name (the file's stem).
    pub name: String,
    /// What it is for: the comment lines at the top of its file.
    pub doc: String,
    /// Its program text.
    pub source: String,
}

fn tool_error(message: impl Into<String>) -> LispError {
    LispError::new(ErrorKind::Tool, message)
}

/// Checks `source` is a tool in canonical form.
pub fn validate(name: &str, source: &str) -> LispResult<Tool> {
    let forms = read_all(source)?;
    let Some((last, pos)) = forms.last() else {
        return Err(tool_error("the file is empty: expected (lambda (state) …)"));
    };
    let here = format!("{}:{}", pos.line, pos.column);
    let Datum::List(items) = last else {
        return Err(tool_error(format!(
            "{here}: not a lambda: the last form must be (lambda (state) …)"
        )));
    };
    if items.first() != Some(&Datum::Symbol("lambda".into())) {
        return Err(tool_error(format!(
            "{here}: not a lambda: the last form must be (lambda (state) …)"
        )));
    }
    let Some(Datum::List(params)) = items.get(1) else {
        return Err(tool_error(format!(
            "{here}: not a lambda: expected a parameter list"
        )));
    };
    if params.len() != 1 {
        return Err(tool_error(format!(
            "{here}: a tool takes exactly one parameter, `state`; this lambda takes {}",
            params.len()
        )));
    }
    if params[0] != Datum::Symbol("state".into()) {
        return Err(tool_error(format!(
            "{here}: the parameter must be named `state`, not `{}`",
            match &params[0] {
                Datum::Symbol(s) => s.to_string(),
                other => format!("{other:?}"),
            }
        )));
    }
    for (d, p) in &forms {
        super::syntax::analyze_top(d).map_err(|e| {
            LispError::new(e.kind, format!("{}:{}: {}", p.line, p.column, e.message))
        })?;
    }
    Ok(Tool {
        name: name.to_string(),
        doc: doc_comment(source),
        source: source.to_string(),
    })
}

/// The first paragraph of `;` comment lines at the top of a file, joined.
pub fn doc_comment(source: &str) -> String {
    let mut words = Vec::new();
    for line in source.lines().map(str::trim) {
        if !line.starts_with(';') {
            if line.is_empty() && words.is_empty() {
                continue;
            }
            break;
        }
        let text = line.trim_start_matches(';').trim();
        if text.is_empty() {
            if words.is_empty() {
                continue;
            }
            break;
        }
        words.push(text);
    }
    words.join(" ")
}

impl Tool {
    /// Runs the tool on `state` with at most `budget` steps; its output
    /// state.
    pub fn run(&self, state: &PatternSubject, budget: u64) -> LispResult<PatternSubject> {
        let mut lisp = Lisp::new();
        lisp.budget = budget;
        let f = lisp.eval_str(&self.source)?;
        let input = Value::pattern(state.clone())?;
        match lisp.call(&f, vec![input])? {
            Value::Pattern(t) => Ok(t.pattern.clone()),
            other => Err(tool_error(format!(
                "`{}` returned {} {}, not a pattern",
                self.name,
                other.type_name(),
                other.brief()
            ))),
        }
    }
}

/// A state read from Gram text.
pub fn state_from_gram(text: &str) -> LispResult<PatternSubject> {
    let mut all = codec::parse_patterns(text)?;
    match all.len() {
        1 => Ok(all.remove(0)),
        n => Err(LispError::parse(format!(
            "a state is one pattern; the Gram holds {n}"
        ))),
    }
}
