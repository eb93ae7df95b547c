//! Parse errors, worded for the model that wrote the action.
//!
//! Every message is a sentence an agent can act on ("did you mean…",
//! "which one…"), following the seed's error-recovery style. The span says
//! which bytes of the turn the error is about.

use serde::{Serialize, Serializer};
use thiserror::Error;

use super::span::Span;

/// Joins words as an English list: `a`, `a or b`, `a, b or c`.
pub(crate) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

fn slashed(items: &[String]) -> Vec<String> {
    items.iter().map(|i| format!("/{i}")).collect()
}

fn suggest(items: &[String]) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!(" Did you mean {}?", or_list(&slashed(items)))
    }
}

fn legacy_suggest(items: &[String]) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!(" Did you mean {}?", or_list(items))
    }
}

/// What went wrong while parsing one action.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseErrorKind {
    /// The verb matches nothing known.
    #[error("I don't know the action /{written}.{}", suggest(.suggestions))]
    UnknownVerb {
        /// The verb as written.
        written: String,
        /// Close verbs, best first.
        suggestions: Vec<String>,
    },
    /// A misspelling of a strict verb: never matched fuzzily, on purpose.
    #[error(
        "/{written} is not an action; did you mean /{suggestion}? /{suggestion} must be spelled exactly, so nothing was done."
    )]
    StrictVerbMisspelled {
        /// The verb as written.
        written: String,
        /// The strict verb it is close to.
        suggestion: String,
    },
    /// The verb is equally close to several verbs.
    #[error("I couldn't tell which action /{written} meant - {}?", or_list(&slashed(.candidates)))]
    AmbiguousVerb {
        /// The verb as written.
        written: String,
        /// The verbs it could be.
        candidates: Vec<String>,
    },
    /// A required argument is missing.
    #[error("/{verb} needs {what}, for example: {example}")]
    MissingArgument {
        /// The canonical verb.
        verb: String,
        /// What is missing, in words.
        what: String,
        /// A correct example.
        example: String,
    },
    /// A block label matched several blocks (or only partially matched one).
    #[error("'{verb}' found {} matching '{written}' - did you mean {}?", if .candidates.len() == 1 { "no block exactly, but one" } else { "several blocks" }, or_list(.candidates))]
    AmbiguousBlock {
        /// The verb the label was given to.
        verb: String,
        /// The label as written.
        written: String,
        /// The known labels it could mean.
        candidates: Vec<String>,
    },
    /// An argument has the wrong shape.
    #[error("/{verb}: {message}")]
    InvalidArgument {
        /// The canonical verb.
        verb: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A `"""`, a code fence or a batch brace was opened and never closed.
    #[error(
        "the {what} opened here is never closed, so I can't tell where the content ends - close it with {closer}"
    )]
    Unclosed {
        /// What was left open.
        what: String,
        /// What closes it.
        closer: String,
    },
    /// `/do` not followed by an action.
    #[error("/do must be followed by an action, for example: /do /recall project_notes")]
    DoWithoutAction,
    /// A `[[NAME: …]]` command with an unknown name.
    #[error("[[{name}]] is not a command, so nothing was done.{} The bracket form exists only for [[SEARCH: …]], [[REMIND: when | what]], [[COMPLETE: id]], [[DISMISS: id]], [[LIST_INTENTIONS]] and [[PULSE: 10m]]; write other actions as /verb at the start of a line.", legacy_suggest(.suggestions))]
    UnknownLegacyCommand {
        /// The command name as written.
        name: String,
        /// Close legacy commands, written `[[NAME]]`.
        suggestions: Vec<String>,
    },
    /// A verb with an invisible, combining or other non-ASCII character
    /// glued to it: not a verb at all.
    #[error(
        "/{written} has {what} glued to the verb, so it is not an action and nothing was done; write the verb in plain letters"
    )]
    HiddenCharacter {
        /// The verb as written, the character shown as `<U+XXXX>`.
        written: String,
        /// The character, described.
        what: String,
    },
    /// A strict verb introduced by `/do` in the middle of a line.
    #[error(
        "/do /{verb} in the middle of a line is not an action, so nothing was done; write /{verb} at the start of its own line"
    )]
    StrictVerbMidLine {
        /// The strict verb.
        verb: String,
    },
    /// A strict verb as a link of a chain (after `->`): only a strict verb
    /// at the start of its own line decides anything.
    #[error(
        "/{verb} after -> is not an action, so nothing was done; write /{verb} at the start of its own line"
    )]
    StrictVerbInChain {
        /// The strict verb.
        verb: String,
    },
    /// A strict verb whose request id is not written plainly or names
    /// more than one request.
    #[error(
        "/{verb}: {message}, so nothing was done; name exactly one request, for example: /{verb} r2"
    )]
    UnclearRequest {
        /// The strict verb.
        verb: String,
        /// What is unclear.
        message: String,
    },
    /// One link of a chain failed, so the chain as a whole was not accepted.
    #[error("link {index} of the chain: {inner} (the chain was not run)")]
    InChain {
        /// One-based link number.
        index: usize,
        /// The link's error.
        inner: Box<ParseErrorKind>,
    },
    /// A batch inside a batch.
    #[error("a /batch cannot contain another /batch")]
    NestedBatch,
    /// A chain of more links than [`super::link::MAX_CHAIN_LINKS`].
    #[error(
        "a chain of more than {max} links, so none of it was run; split it into shorter chains"
    )]
    ChainTooLong {
        /// The most links a chain may have.
        max: usize,
    },
    /// A reply with more actions than [`super::parser::MAX_ACTIONS`].
    #[error(
        "a reply of {found} actions is more than {max} actions, the most a reply may hold, so none of them was run; write at most {max}"
    )]
    TooManyActions {
        /// The most actions a reply may hold.
        max: usize,
        /// How many it held.
        found: usize,
    },
}

/// A parse error with the bytes it is about.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind}")]
pub struct ParseError {
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// Where.
    pub span: Span,
}

impl ParseError {
    /// Builds an error at `span`.
    pub fn new(kind: ParseErrorKind, span: Span) -> Self {
        ParseError { kind, span }
    }

    /// The natural-language message for the model.
    pub fn message(&self) -> String {
        self.kind.to_string()
    }
}

impl Serialize for ParseError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("message", &self.message())?;
        map.serialize_entry("span", &self.span)?;
        map.end()
    }
}
