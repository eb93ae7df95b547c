//! `partner lisp`: evaluate Pattern Lisp (`-e EXPR`, a file, or a REPL
//! with line editing and history), and check or run a tool. Errors print
//! one line, `error: KIND: message`, and exit 1.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::lisp::tool::{self, Tool};
use crate::lisp::{Lisp, LispError, Value, codec};

/// What `partner lisp` does besides evaluating.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum LispCommand {
    /// Check that a file is a tool: `(lambda (state) …)`, one parameter named `state`.
    CheckTool {
        /// The tool file (`.plisp`).
        file: PathBuf,
    },
    /// Run a tool on a state and print the new state in Gram notation.
    RunTool {
        /// The tool file (`.plisp`).
        file: PathBuf,
        /// The input state, one pattern in Gram notation.
        #[arg(long)]
        state: PathBuf,
        /// Most steps the tool may take.
        #[arg(long, default_value_t = crate::lisp::eval::DEFAULT_STEPS)]
        steps: u64,
    },
}

/// Options of `partner lisp`.
#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct LispOptions {
    /// Check or run a tool.
    #[command(subcommand)]
    pub command: Option<LispCommand>,
    /// Forms to evaluate, in order, in one environment (repeatable).
    #[arg(short = 'e', long = "eval", value_name = "EXPR")]
    pub eval: Vec<String>,
    /// Print the value as its Gram serialization.
    #[arg(long)]
    pub gram: bool,
    /// Most steps one evaluation may take.
    #[arg(long, default_value_t = crate::lisp::eval::DEFAULT_STEPS)]
    pub steps: u64,
    /// A program file (`-` for standard input).
    pub file: Option<PathBuf>,
}

fn read(path: &Path, stdin: &mut dyn Read) -> Result<String> {
    if path == Path::new("-") {
        let mut s = String::new();
        stdin.read_to_string(&mut s).map_err(Error::Stdin)?;
        return Ok(s);
    }
    std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn fail(err: &mut dyn Write, e: &LispError) -> Result<i32> {
    writeln!(err, "error: {e}").map_err(Error::Write)?;
    Ok(1)
}

fn show(lisp: &Lisp, v: &Value, gram: bool) -> std::result::Result<String, LispError> {
    if gram {
        lisp.to_gram(v)
    } else {
        Ok(v.to_string())
    }
}

/// Runs `partner lisp`; the exit status.
pub fn run_lisp(
    options: &LispOptions,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    match &options.command {
        Some(LispCommand::CheckTool { file }) => {
            let source = read(file, stdin)?;
            match tool::validate(&stem(file), &source) {
                Ok(t) => {
                    let doc = if t.doc.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", t.doc)
                    };
                    writeln!(out, "ok: {}{doc}", t.name).map_err(Error::Write)?;
                    Ok(0)
                }
                Err(e) => fail(err, &e),
            }
        }
        Some(LispCommand::RunTool { file, state, steps }) => {
            let source = read(file, stdin)?;
            let state_text = read(state, stdin)?;
            let run = || -> std::result::Result<String, LispError> {
                let t: Tool = tool::validate(&stem(file), &source)?;
                let input = tool::state_from_gram(&state_text)?;
                let output = t.run(&input, *steps)?;
                Ok(codec::gram_of(&output))
            };
            match run() {
                Ok(gram) => {
                    writeln!(out, "{gram}").map_err(Error::Write)?;
                    Ok(0)
                }
                Err(e) => fail(err, &e),
            }
        }
        None => {
            let mut lisp = Lisp::new();
            lisp.budget = options.steps;
            let mut sources = options.eval.clone();
            if let Some(file) = &options.file {
                sources.push(read(file, stdin)?);
            }
            if sources.is_empty() {
                return repl(&mut lisp, options.gram, out);
            }
            let mut last = Value::nil();
            for s in &sources {
                match lisp.eval_str(s) {
                    Ok(v) => last = v,
                    Err(e) => return fail(err, &e),
                }
            }
            match show(&lisp, &last, options.gram) {
                Ok(text) => {
                    writeln!(out, "{text}").map_err(Error::Write)?;
                    Ok(0)
                }
                Err(e) => fail(err, &e),
            }
        }
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "tool".into(), |s| s.to_string_lossy().into_owned())
}

/// The REPL: a line (or several, until the brackets close) at a time,
/// with history kept in partner's data directory.
fn repl(lisp: &mut Lisp, gram: bool, out: &mut dyn Write) -> Result<i32> {
    use rustyline::error::ReadlineError;
    let mut editor = rustyline::DefaultEditor::new()
        .map_err(|e| Error::Runtime(format!("cannot start the line editor: {e}")))?;
    let history = super::data_dir().ok().map(|d| d.join("lisp-history.txt"));
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    writeln!(out, "Pattern Lisp — Ctrl-D to leave").map_err(Error::Write)?;
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() { "λ> " } else { ".. " };
        match editor.readline(prompt) {
            Ok(line) => {
                pending.push_str(&line);
                pending.push('\n');
                if open_brackets(&pending) > 0 {
                    continue;
                }
                let text = std::mem::take(&mut pending);
                if text.trim().is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(text.trim());
                let shown = lisp.eval_str(&text).and_then(|v| show(lisp, &v, gram));
                match shown {
                    Ok(s) => writeln!(out, "{s}"),
                    Err(e) => writeln!(out, "error: {e}"),
                }
                .map_err(Error::Write)?;
            }
            Err(ReadlineError::Interrupted) => pending.clear(),
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(Error::Runtime(format!("line editor: {e}"))),
        }
    }
    if let Some(h) = &history {
        if let Some(dir) = h.parent() {
            let _ = crate::core::files::create_private_dir(dir);
        }
        let _ = editor.save_history(h);
    }
    Ok(0)
}

/// Brackets opened and not closed (strings and comments skipped).
fn open_brackets(text: &str) -> i64 {
    let mut depth = 0i64;
    let mut in_string = false;
    let mut escaped = false;
    let mut comment = false;
    for c in text.chars() {
        if comment {
            comment = c != '\n';
            continue;
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            ';' => comment = true,
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            _ => {}
        }
    }
    depth
}
