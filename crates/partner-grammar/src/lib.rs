//! TypeAgent's action grammar (`.agr`): a declarative language whose rules
//! turn plain phrasing into typed values without a model call, and drive
//! completion as one types.
//!
//! ```text
//! .agr text ─ parse ─► SourceFile ─ compile (imports, references, checks) ─► Grammar
//! Grammar + request ─ matcher ─► every parse: value + statistics
//! ```
//!
//! This crate owns the language and its engine and may import no other
//! partner crate (its `Cargo.toml` lists none). Its behaviour follows the reference implementation's
//! recorded results (`../shared/conformance/typeagent/golden-core.jsonl`);
//! where it differs on purpose, `DIVERGENCES.md` says so.

pub mod batch;
mod compile;
mod complete;
mod conform;
mod dispatch;
mod entry;
mod expr;
mod find;
mod joins;
mod matcher;
mod memo;
mod model;
mod needs;
mod order;
mod parse;
mod parses;
pub mod schema;
pub mod serial;
mod source;
mod state;
mod text;
mod twins;
mod types;
mod value;
mod values;
mod viable;
mod work;

pub use compile::{
    BUILTIN_LIBRARY, FileLoader, InMemory, LoadError, LoadOptions, NoFiles, Quotes, load_grammar,
};
pub use complete::{Completion, Direction, Group, Property, complete};
pub use expr::Expr;
pub use matcher::{MAX_STEPS, MatchOptions, MatchResult, Policy, match_grammar};
pub use model::{FirstWords, Grammar, Part, Rule, RuleSet};
pub use parse::{Spacing, line_col};
pub use text::is_sep as is_separator;
pub use value::{Text, Value};

/// The rules a library file defines — a file with no `<Start>`, whose
/// rules other grammars import — leaving out helpers (`__…`); `None` when
/// the file has a `<Start>` or does not read.
pub fn library_rules(text: &str) -> Option<Vec<String>> {
    let source = parse::parse_source(text, true).ok()?;
    if source.defs.iter().any(|d| d.name == "Start") {
        return None;
    }
    Some(
        source
            .defs
            .iter()
            .map(|d| d.name.clone())
            .filter(|n| !n.starts_with("__"))
            .collect(),
    )
}
