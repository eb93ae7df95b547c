//! `partner grammar`: check a `.agr` file, match or complete a request
//! against it, or answer records in the reference's batch format.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::grammar::batch::{RootLoader, answer};
use crate::grammar::{
    Direction, Grammar, LoadOptions, MatchOptions, complete, load_grammar, match_grammar,
};

/// What `partner grammar` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum GrammarCommand {
    /// Load a grammar and report its errors (file:line:col).
    Check {
        /// The `.agr` file.
        file: PathBuf,
    },
    /// Compile a grammar and print it as JSON (every rule body once);
    /// `match` and `complete` read such a file as well as `.agr` text.
    Compile {
        /// The `.agr` file.
        file: PathBuf,
    },
    /// Match a request (or standard input) against a grammar.
    Match {
        /// The `.agr` file.
        #[arg(long)]
        grammar: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The request; standard input when absent or `-`.
        input: Option<String>,
    },
    /// Complete a prefix.
    Complete {
        /// The `.agr` file.
        #[arg(long)]
        grammar: PathBuf,
        /// forward (typing) or backward (deleting).
        #[arg(long, default_value = "forward")]
        direction: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The prefix.
        prefix: String,
    },
    /// Answer JSON records on standard input, one line out per line in.
    Batch {
        /// The directory `grammar_path` and imports are read from.
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// The phrasings the partner taught (list, add, remove, reset).
    Learned {
        #[command(flatten)]
        /// The database.
        db: super::DbArg,
        /// What to do.
        #[command(subcommand)]
        command: LearnedCommand,
    },
}

/// What `partner grammar learned` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum LearnedCommand {
    /// List them.
    List,
    /// Teach one: these words stand for this dialect action.
    Add {
        /// The words, as an agent or the partner would say them.
        words: String,
        /// The dialect action they stand for (`/recall insert "…"`).
        action: String,
    },
    /// Forget one, by id.
    Remove {
        /// Its id.
        id: i64,
    },
    /// Forget them all.
    Reset,
}

/// Options of `partner grammar`.
#[derive(Debug, Clone, clap::Args)]
pub struct GrammarOptions {
    /// What to do.
    #[command(subcommand)]
    pub command: GrammarCommand,
}

fn load(file: &Path) -> Result<std::result::Result<Grammar, String>> {
    let text = std::fs::read_to_string(file).map_err(|source| Error::Read {
        path: file.to_path_buf(),
        source,
    })?;
    if file.extension().is_some_and(|e| e == "json") {
        return Ok(crate::grammar::serial::from_json(&text));
    }
    Ok(load_text(file, &text, true).map_err(|e| e.to_string()))
}

/// Loads `text` as the grammar in `file` (its name in errors, its folder
/// for imports).
fn load_text(
    file: &Path,
    text: &str,
    start_value_required: bool,
) -> std::result::Result<Grammar, crate::grammar::LoadError> {
    let root = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let options = LoadOptions {
        enable_value_expressions: true,
        start_value_required,
        ..LoadOptions::default()
    };
    load_grammar(&name, text, &options, &RootLoader { root })
}

/// Checks a grammar file: `ok`, or — for a file of rules with no
/// `<Start>` that other grammars import (`builtin.agr`,
/// `console-names.agr`) — every rule checked through a start that names
/// them all, said as a library.
fn check(file: &Path) -> Result<std::result::Result<String, String>> {
    let text = std::fs::read_to_string(file).map_err(|source| Error::Read {
        path: file.to_path_buf(),
        source,
    })?;
    let rules: Vec<String> = match crate::grammar::library_rules(&text) {
        Some(rules) if !rules.is_empty() => rules,
        _ => return Ok(load(file)?.map(|_| "ok".to_string())),
    };
    let start = format!(
        "\n<Start> = {};\n",
        rules
            .iter()
            .map(|r| format!("<{r}>"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    Ok(
        load_text(file, &format!("{text}{start}"), false)
            .map(|_| {
                format!(
                    "ok (a library of {} rule{} with no <Start>, for other grammars to use; it is not matched on its own)",
                    rules.len(),
                    if rules.len() == 1 { "" } else { "s" }
                )
            })
            .map_err(|e| e.to_string()),
    )
}

/// Runs `partner grammar`.
pub fn run_grammar(
    options: &GrammarOptions,
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<i32> {
    match &options.command {
        GrammarCommand::Check { file } => match check(file)? {
            Ok(said) => {
                write(out, format!("{}: {said}\n", file.display()))?;
                Ok(0)
            }
            Err(e) => {
                write(out, format!("{e}\n"))?;
                Ok(1)
            }
        },
        GrammarCommand::Compile { file } => match load(file)? {
            Ok(g) => {
                write(out, format!("{}\n", crate::grammar::serial::to_json(&g)))?;
                Ok(0)
            }
            Err(e) => {
                write(out, format!("{e}\n"))?;
                Ok(1)
            }
        },
        GrammarCommand::Match {
            grammar,
            json,
            input,
        } => match_request(grammar, *json, input.as_deref(), stdin, out),
        GrammarCommand::Complete {
            grammar,
            direction,
            json,
            prefix,
        } => complete_prefix(grammar, direction, *json, prefix, out),
        GrammarCommand::Learned { db, command } => learned(db, command, out),
        GrammarCommand::Batch { root } => batch(root.as_deref(), stdin, out),
    }
}

/// Writes `text` to `out`.
fn write(out: &mut dyn Write, text: String) -> Result<()> {
    out.write_all(text.as_bytes()).map_err(Error::Write)
}

/// `grammar match`: the request (or stdin, at most a MiB) matched; exit 1
/// when nothing matches.
fn match_request(
    grammar: &std::path::Path,
    json: bool,
    input: Option<&str>,
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<i32> {
    let g = load(grammar)?.map_err(Error::Usage)?;
    let request = match input {
        Some(text) if text != "-" => text.to_string(),
        _ => {
            let mut text = String::new();
            std::io::Read::take(&mut *stdin, 1 << 20)
                .read_to_string(&mut text)
                .map_err(Error::Write)?;
            text.trim_end_matches(['\n', '\r']).to_string()
        }
    };
    let results = match_grammar(&g, &request, &MatchOptions::default());
    if json {
        let list: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                serde_json::json!({
                    "match": r.value.to_json(),
                    "matchedValueCount": r.matched_value_count,
                    "wildcardCharCount": r.wildcard_char_count,
                    "entityWildcardPropertyNames": r.entity_wildcard_property_names,
                })
            })
            .collect();
        write(out, format!("{}\n", serde_json::Value::Array(list)))?;
    } else if results.is_empty() {
        write(out, "no match\n".into())?;
    } else {
        for r in &results {
            write(out, format!("{}\n", r.value.to_json()))?;
        }
    }
    Ok(if results.is_empty() { 1 } else { 0 })
}

/// `grammar complete`: what may follow `prefix`, forward or backward.
fn complete_prefix(
    grammar: &std::path::Path,
    direction: &str,
    json: bool,
    prefix: &str,
    out: &mut dyn Write,
) -> Result<i32> {
    let g = load(grammar)?.map_err(Error::Usage)?;
    let dir = match direction {
        "forward" => Direction::Forward,
        "backward" => Direction::Backward,
        other => {
            return Err(Error::Usage(format!(
                "--direction {other}: write forward or backward"
            )));
        }
    };
    let c = complete(&g, prefix, dir, None, &MatchOptions::default());
    if json {
        write(out, format!("{}\n", c.to_json()))?;
        return Ok(0);
    }
    // What was typed past the matched prefix narrows the words (the JSON
    // keeps them all, for callers that filter).
    let rest: Vec<u16> = prefix
        .encode_utf16()
        .skip(c.matched_prefix_length)
        .collect();
    let typed = String::from_utf16_lossy(&rest)
        .trim_start_matches(crate::grammar::is_separator)
        .to_lowercase();
    for group in &c.groups {
        for w in &group.completions {
            if w.to_lowercase().starts_with(&typed) {
                write(out, format!("{w}\n"))?;
            }
        }
    }
    // A property reached along several paths is one line here.
    let mut shown: Vec<String> = Vec::new();
    for p in &c.properties {
        let line = format!("<{}>\n", p.names.join(", "));
        if !shown.contains(&line) {
            write(out, line.clone())?;
            shown.push(line);
        }
    }
    Ok(0)
}

/// `grammar batch`: one conformance record a line, each answered on a
/// line, until the input ends.
fn batch(
    root: Option<&std::path::Path>,
    stdin: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<i32> {
    let mut line = String::new();
    loop {
        line.clear();
        let n = std::io::Read::take(&mut *stdin, crate::grammar::batch::MAX_RECORD as u64 + 1)
            .read_line(&mut line)
            .map_err(Error::Write)?;
        if n == 0 {
            return Ok(0);
        }
        let record = line.trim_end_matches(['\n', '\r']);
        if record.trim().is_empty() {
            continue;
        }
        let reply = answer(record, root);
        write(out, format!("{reply}\n"))?;
    }
}

/// `partner grammar learned`.
fn learned(db: &super::DbArg, command: &LearnedCommand, out: &mut dyn Write) -> Result<i32> {
    let store = partner_engine::store::Store::open(&db.store_at()?)?;
    let store = store.phrasings();
    let write =
        |out: &mut dyn Write, text: String| out.write_all(text.as_bytes()).map_err(Error::Write);
    match command {
        LearnedCommand::List => {
            for r in store.phrasings()? {
                write(out, format!("{}  {}  →  {}\n", r.id, r.words, r.action))?;
            }
            Ok(0)
        }
        LearnedCommand::Add { words, action } => {
            let now = crate::core::clock::SystemClock.now_ms_public();
            let learned = crate::runtime::proposals::learn(store, words, action, now)
                .map_err(Error::Usage)?;
            write(out, format!("{learned}\n"))?;
            Ok(0)
        }
        LearnedCommand::Remove { id } => {
            if store.forget(*id)? {
                write(out, format!("forgot #{id}\n"))?;
                Ok(0)
            } else {
                Err(Error::Usage(format!("no learned phrasing #{id}")))
            }
        }
        LearnedCommand::Reset => {
            let n = store.forget_all()?;
            write(out, format!("forgot {n} phrasings\n"))?;
            Ok(0)
        }
    }
}
