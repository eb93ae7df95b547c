//! The verb table: every verb of the dialect, its aliases and its strictness,
//! in one declarative list ([`BUILTIN_VERBS`]), extensible from TOML (see
//! `verb_file`).

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::action::ActionOp;
use super::args::TEXT;
pub use super::builtin::{BUILTIN_VERBS, BuiltinVerb, Verb};
use super::shape::Shape;

impl Verb {
    /// The verb a canonical name means: a built-in one, or a verb from a
    /// verb file.
    pub fn from_name(name: &str) -> Verb {
        BUILTIN_VERBS
            .iter()
            .find(|b| b.verb.name() == name)
            .map_or_else(|| Verb::Custom(name.to_string()), |b| b.verb.clone())
    }

    /// How the verb's arguments are read: a built-in verb's shape from
    /// the table, free text for any other verb.
    pub fn shape(&self) -> Shape {
        BUILTIN_VERBS
            .iter()
            .find(|b| &b.verb == self)
            .map_or(Shape(&TEXT), |b| Shape(b.shape))
    }
}

impl Serialize for Verb {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Verb {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Ok(Verb::from_name(&name))
    }
}

impl From<&str> for Verb {
    /// The verb of that name: a built-in one, or a custom verb.
    fn from(name: &str) -> Self {
        Verb::from_name(name)
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a verb added from a verb file does (its `action`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum CustomAction {
    /// Sends the action's text to an agent.
    Tell {
        /// The agent.
        agent: String,
    },
    /// Appends the action's text to one of the acting agent's blocks.
    Append {
        /// The block's label.
        block: String,
    },
    /// Runs a Pattern Lisp tool with the action's text as its arguments.
    Tool {
        /// The tool's name (its file's stem in the tools folder).
        tool: String,
    },
    /// Calls a tool of an MCP server with the arguments the action's text
    /// gives (its verb is `server.tool`).
    Mcp {
        /// The server's name in the constellation's `[[mcp]]`.
        server: String,
        /// The tool's name as the server knows it.
        tool: String,
    },
}

/// How forgiving verb matching is for a verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strictness {
    /// Exact spelling (any case) or an exact alias only: approve, deny, halt, escalate.
    Strict,
    /// Also morphology and edit distance 1.
    Normal,
    /// Also morphology and edit distance 2: recall, search.
    Loose,
}

impl Strictness {
    /// The largest edit distance accepted for this strictness.
    pub fn max_distance(self) -> usize {
        match self {
            Strictness::Strict => 0,
            Strictness::Normal => 1,
            Strictness::Loose => 2,
        }
    }
}

/// One verb in a [`VerbTable`].
#[derive(Debug, Clone)]
pub struct VerbSpec {
    /// The verb.
    pub verb: Verb,
    /// Its matching strictness.
    pub strictness: Strictness,
    /// Named in the compact prompt profile: the everyday built-in verbs
    /// and every verb of the constellation's own.
    pub everyday: bool,
    /// Aliases (lowercase phrases) with the op each implies.
    pub aliases: Vec<(String, Option<ActionOp>)>,
    /// One line for help and for the model's instructions.
    pub summary: String,
    /// How its arguments are read and written back.
    pub shape: Shape,
    /// What it does, for a verb from a verb file.
    pub action: Option<CustomAction>,
}

/// One verb a phrase can mean, with the op that phrase implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhraseEntry {
    /// Index into [`VerbTable::specs`].
    pub spec: usize,
    /// The op implied by the phrase (`forget` implies delete).
    pub op: Option<ActionOp>,
    /// True when the phrase is the verb's canonical name.
    pub canonical: bool,
}

/// The verb table used by the parser: built-ins plus any TOML extensions,
/// indexed by phrase.
#[derive(Debug, Clone)]
pub struct VerbTable {
    pub(super) specs: Vec<VerbSpec>,
    /// (Hashed with foldhash: the keys are the table's own phrases, and
    /// a lookup per action with the standard SipHash showed in the parse
    /// profile.)
    pub(super) phrases: HashMap<String, Vec<PhraseEntry>, foldhash::fast::RandomState>,
    /// First words of multi-word phrases (`look` of `look up`).
    phrase_starts: HashSet<String, foldhash::fast::RandomState>,
    max_words: usize,
    /// What words no phrase holds matched to, by edit distance (the
    /// search compares the word with every phrase; a turn that repeats
    /// an unknown verb pays for it once). Emptied when the table changes.
    pub(super) near: NearMemo,
}

/// What matching a word by edit distance gave.
type Near = Result<super::matcher::VerbMatch, super::error::ParseErrorKind>;

/// Most words [`NearMemo`] remembers; past it, it starts again.
const NEAR_MEMO: usize = 4_096;

/// Remembered results of matching a word by edit distance, shared by the
/// clones of one table.
#[derive(Debug, Clone, Default)]
pub(super) struct NearMemo(std::sync::Arc<std::sync::Mutex<HashMap<String, Near>>>);

impl NearMemo {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Near>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The remembered result for `word`, or `find`'s, remembered.
    pub(super) fn get_or(&self, word: &str, find: impl FnOnce() -> Near) -> Near {
        if let Some(found) = self.lock().get(word) {
            return found.clone();
        }
        let found = find();
        let mut memo = self.lock();
        if memo.len() >= NEAR_MEMO {
            memo.clear();
        }
        memo.insert(word.to_string(), found.clone());
        found
    }
}

impl Default for VerbTable {
    fn default() -> Self {
        VerbTable::builtin()
    }
}

impl VerbTable {
    /// The table of built-in verbs.
    pub fn builtin() -> Self {
        let specs = BUILTIN_VERBS
            .iter()
            .map(|b| VerbSpec {
                verb: b.verb.clone(),
                strictness: b.strictness,
                everyday: b.everyday,
                aliases: b
                    .aliases
                    .iter()
                    .map(|(a, op)| (a.to_string(), *op))
                    .collect(),
                summary: b.summary.to_string(),
                shape: Shape(b.shape),
                action: None,
            })
            .collect();
        let mut table = VerbTable {
            specs,
            phrases: HashMap::default(),
            phrase_starts: HashSet::default(),
            max_words: 1,
            near: NearMemo::default(),
        };
        table.reindex();
        table
    }

    pub(super) fn reindex(&mut self) {
        self.near = NearMemo::default();
        self.phrases.clear();
        self.phrase_starts.clear();
        self.max_words = 1;
        for (i, spec) in self.specs.iter().enumerate() {
            self.phrases
                .entry(spec.verb.name().to_string())
                .or_default()
                .push(PhraseEntry {
                    spec: i,
                    op: None,
                    canonical: true,
                });
            for (alias, op) in &spec.aliases {
                self.max_words = self.max_words.max(alias.split(' ').count());
                if let Some((first, _)) = alias.split_once(' ') {
                    self.phrase_starts.insert(first.to_string());
                }
                let entries = self.phrases.entry(alias.clone()).or_default();
                if !entries.iter().any(|e| e.spec == i) {
                    entries.push(PhraseEntry {
                        spec: i,
                        op: *op,
                        canonical: false,
                    });
                }
            }
        }
    }

    /// Every verb in the table, built-ins first.
    pub fn specs(&self) -> &[VerbSpec] {
        &self.specs
    }

    /// True when `word` (any case) is a dotted verb of the table: an MCP
    /// tool's `server.tool`.
    pub fn knows_dotted(&self, word: &str) -> bool {
        word.contains('.')
            && word.len() <= 160
            && self
                .phrases
                .contains_key(word.to_ascii_lowercase().as_str())
    }

    /// The spec at `index`.
    pub fn spec(&self, index: usize) -> &VerbSpec {
        &self.specs[index]
    }

    /// The spec of `verb`, if it is in the table.
    pub fn spec_of(&self, verb: &Verb) -> Option<&VerbSpec> {
        self.specs.iter().find(|s| &s.verb == verb)
    }

    /// The entry of `verb` under its own name (no alias, no implied op);
    /// empty when the table does not have the verb.
    pub fn entries_of(&self, verb: &Verb) -> Vec<PhraseEntry> {
        self.phrases
            .get(verb.name())
            .map(|entries| {
                entries
                    .iter()
                    .filter(|e| e.canonical && &self.specs[e.spec].verb == verb)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The verbs a lowercase phrase means, if any.
    pub fn lookup(&self, phrase: &str) -> Option<&[PhraseEntry]> {
        self.phrases.get(phrase).map(Vec::as_slice)
    }

    /// True when some multi-word alias starts with the lowercase `word`.
    pub fn starts_phrase(&self, word: &str) -> bool {
        self.phrase_starts.contains(word)
    }

    /// The most words any alias has.
    pub fn max_words(&self) -> usize {
        self.max_words
    }

    /// All single-word phrases (names and aliases), for fuzzy matching.
    pub fn single_word_phrases(&self) -> impl Iterator<Item = (&str, &[PhraseEntry])> {
        self.phrases
            .iter()
            .filter(|(p, _)| !p.contains(' '))
            .map(|(p, e)| (p.as_str(), e.as_slice()))
    }
}

/// Lowercases a phrase and turns `_`, `-` and runs of whitespace into single spaces.
pub fn normalize_phrase(phrase: &str) -> String {
    phrase
        .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

partner_core::wire_name_eq!(Verb, name);
