//! Verb files: TOML that adds verbs and aliases to the verb table, and the
//! table's own additions written back as one (kept in the database, so
//! every process reads a constellation's verbs the same way).
//!
//! A TOML extension file looks like this:
//!
//! ```toml
//! [verbs.recall]            # an existing verb: add aliases
//! aliases = ["jot down", "memo"]
//!
//! [verbs.shout]             # a new verb: free-text content
//! aliases = ["yell"]
//! strictness = "normal"     # strict | normal | loose (default normal)
//! summary = "say something loudly"
//! action = { kind = "tell", agent = "anchor" }   # or { kind = "append", block = "log" }, { kind = "tool", tool = "NAME" }
//! ```
//!
//! A new verb needs an `action` to run in a constellation (the verb
//! registry binds it to that action's handler); `partner parse` reads it
//! without one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::args::TEXT;
use super::shape::Shape;
use super::verbs::{CustomAction, Strictness, Verb, VerbSpec, VerbTable, normalize_phrase};

/// A problem in a TOML verb file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerbTableError {
    /// The file is not valid TOML of the expected shape.
    #[error("line {line}, column {column}: {message}")]
    Toml {
        /// One-based line of the problem.
        line: usize,
        /// One-based column of the problem.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A verb name that cannot be written after a slash.
    #[error(
        "verb name '{0}' must start with a letter and use only lowercase letters, digits and _"
    )]
    BadName(String),
    /// An alias already taken by another verb.
    #[error("alias '{alias}' of verb '{verb}' is already an alias of '{taken_by}'")]
    AliasTaken {
        /// The alias.
        alias: String,
        /// The verb the file gives it to.
        verb: String,
        /// The verb that already has it.
        taken_by: String,
    },
    /// An `action` given to a built-in verb (whose meaning is fixed).
    #[error("verb '{0}' is built in; only new verbs take an action")]
    ActionOnBuiltin(String),
    /// An empty or badly spaced alias.
    #[error("alias '{alias}' of verb '{verb}' must be one or more words of letters, digits or _")]
    BadAlias {
        /// The alias.
        alias: String,
        /// The verb.
        verb: String,
    },
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct VerbFile {
    #[serde(default)]
    verbs: BTreeMap<String, VerbFileEntry>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct VerbFileEntry {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    aliases: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strictness: Option<Strictness>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<CustomAction>,
}

/// True for a verb name of lowercase letters, digits and `_`, starting
/// with a letter.
fn valid_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// True for an MCP tool's verb: its server's name, a dot and the tool's
/// (each a verb name), when the verb calls that tool.
fn mcp_verb(name: &str, action: Option<&CustomAction>) -> bool {
    matches!(action, Some(CustomAction::Mcp { .. }))
        && name
            .split_once('.')
            .is_some_and(|(server, tool)| valid_name(server) && valid_name(tool))
}

impl VerbTable {
    /// Adds a verb defined in code (with its own argument shape): its name
    /// and every alias must be free.
    pub fn add(&mut self, spec: VerbSpec) -> Result<(), VerbTableError> {
        let name = spec.verb.name().to_string();
        if !(valid_name(&name) || mcp_verb(&name, spec.action.as_ref()))
            || self.phrases.contains_key(&name)
        {
            return Err(VerbTableError::BadName(name));
        }
        for (alias, _) in &spec.aliases {
            if let Some(entries) = self.phrases.get(alias) {
                return Err(VerbTableError::AliasTaken {
                    alias: alias.clone(),
                    verb: name,
                    taken_by: self.specs[entries[0].spec].verb.name().to_string(),
                });
            }
        }
        self.specs.push(spec);
        self.reindex();
        Ok(())
    }

    /// Adds the verbs and aliases of a TOML verb file (see module docs).
    pub fn extend_from_toml(&mut self, text: &str) -> Result<(), VerbTableError> {
        let file: VerbFile = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            let (line, column) = super::span::Span::new(at, at).line_col(text);
            VerbTableError::Toml {
                line,
                column,
                message: e.message().trim().replace('\n', " "),
            }
        })?;
        for (name, entry) in file.verbs {
            let index = match self.specs.iter().position(|s| s.verb.name() == name) {
                Some(index) => index,
                None => {
                    if !(valid_name(&name) || mcp_verb(&name, entry.action.as_ref()))
                        || self.phrases.contains_key(&name)
                    {
                        return Err(VerbTableError::BadName(name));
                    }
                    self.specs.push(VerbSpec {
                        verb: Verb::Custom(name.clone()),
                        strictness: Strictness::Normal,
                        everyday: true,
                        aliases: Vec::new(),
                        summary: String::new(),
                        shape: Shape(&TEXT),
                        action: None,
                    });
                    self.specs.len() - 1
                }
            };
            if let Some(strictness) = entry.strictness {
                self.specs[index].strictness = strictness;
            }
            if let Some(summary) = entry.summary {
                self.specs[index].summary = summary;
            }
            if let Some(action) = entry.action {
                if !matches!(self.specs[index].verb, Verb::Custom(_)) {
                    return Err(VerbTableError::ActionOnBuiltin(name));
                }
                self.specs[index].action = Some(action);
            }
            for alias in entry.aliases {
                let phrase = normalize_phrase(&alias);
                let valid = !phrase.is_empty()
                    && phrase
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ');
                if !valid {
                    return Err(VerbTableError::BadAlias { alias, verb: name });
                }
                if let Some(entries) = self.phrases.get(&phrase)
                    && let Some(other) = entries.iter().find(|e| e.spec != index)
                {
                    return Err(VerbTableError::AliasTaken {
                        alias,
                        verb: name,
                        taken_by: self.specs[other.spec].verb.name().to_string(),
                    });
                }
                self.specs[index].aliases.push((phrase, None));
                self.reindex();
            }
            self.reindex();
        }
        Ok(())
    }

    /// What this table adds to the built-in one, as a verb file (empty when
    /// nothing): new verbs whole, and the aliases built-in verbs gained.
    /// Reading it back with [`VerbTable::extend_from_toml`] onto the
    /// built-in table gives this table again.
    pub fn extensions_toml(&self) -> String {
        let builtin = VerbTable::builtin();
        let mut verbs = BTreeMap::new();
        for spec in &self.specs {
            let base = builtin.spec_of(&spec.verb);
            let aliases: Vec<String> = spec
                .aliases
                .iter()
                .filter(|(a, _)| base.is_none_or(|b| !b.aliases.iter().any(|(x, _)| x == a)))
                .map(|(a, _)| a.clone())
                .collect();
            let entry = match base {
                Some(base) => VerbFileEntry {
                    aliases,
                    strictness: (spec.strictness != base.strictness).then_some(spec.strictness),
                    summary: (spec.summary != base.summary).then(|| spec.summary.clone()),
                    action: None,
                },
                None => VerbFileEntry {
                    aliases,
                    strictness: Some(spec.strictness),
                    summary: Some(spec.summary.clone()),
                    action: spec.action.clone(),
                },
            };
            let changed = base.is_none()
                || !entry.aliases.is_empty()
                || entry.strictness.is_some()
                || entry.summary.is_some();
            if changed {
                verbs.insert(spec.verb.name().to_string(), entry);
            }
        }
        if verbs.is_empty() {
            return String::new();
        }
        toml::to_string(&VerbFile { verbs }).unwrap_or_default()
    }
}
