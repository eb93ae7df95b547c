//! `partner parse`: parse one agent turn and print its actions.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::common::{add_verb_file, read_text};
use crate::dialect::{BlockRegistry, DialectParser, ParsedTurn, VerbTable};
use crate::error::{Error, Result};

/// Options of `partner parse`.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Print one JSON object instead of canonical lines.
    pub json: bool,
    /// Block labels that exist.
    pub blocks: Vec<String>,
    /// Working-memory block labels (also known blocks).
    pub working_blocks: Vec<String>,
    /// A TOML file adding verbs and aliases.
    pub verbs: Option<PathBuf>,
    /// The turn to read; standard input when absent or `-`.
    pub file: Option<PathBuf>,
}

/// Builds the parser `partner parse` uses for these options.
pub fn parser_for(options: &ParseOptions) -> Result<DialectParser> {
    let mut table = VerbTable::builtin();
    if let Some(path) = &options.verbs {
        add_verb_file(&mut table, path)?;
    }
    let mut blocks = BlockRegistry::new();
    for label in &options.blocks {
        blocks.add(label.clone(), false);
    }
    for label in &options.working_blocks {
        blocks.add(label.clone(), true);
    }
    Ok(DialectParser::new().with_table(table).with_blocks(blocks))
}

/// Writes a parsed turn as canonical lines; errors go to `err` with line
/// and column.
fn write_text(
    turn: &ParsedTurn,
    src: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    for action in &turn.actions {
        if action.cancelled {
            writeln!(out, "# cancelled: {}", action.canonical())?;
        } else {
            writeln!(out, "{}", action.canonical())?;
        }
    }
    for error in &turn.errors {
        let (line, col) = error.span.line_col(src);
        writeln!(err, "error: line {line}, column {col}: {}", error.message())?;
    }
    Ok(())
}

/// Runs `partner parse`. Returns the exit code: 0 when the turn parsed
/// (even with no actions), 1 when it held errors.
pub fn run_parse(
    options: &ParseOptions,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let parser = parser_for(options)?;
    let (what, bytes) = match &options.file {
        Some(path) if path.as_os_str() != "-" => {
            let bytes = std::fs::read(path).map_err(|source| Error::Read {
                path: path.clone(),
                source,
            })?;
            (path.display().to_string(), bytes)
        }
        _ => {
            let mut bytes = Vec::new();
            stdin.read_to_end(&mut bytes).map_err(Error::Stdin)?;
            ("standard input".to_string(), bytes)
        }
    };
    let src = read_text(&what, bytes)?;
    let turn = parser.parse(&src);
    if options.json {
        serde_json::to_writer(&mut *out, &turn).map_err(|e| Error::Write(e.into()))?;
        writeln!(out).map_err(Error::Write)?;
    } else {
        write_text(&turn, &src, out, err).map_err(Error::Write)?;
    }
    out.flush().map_err(Error::Write)?;
    Ok(if turn.is_ok() { 0 } else { 1 })
}
