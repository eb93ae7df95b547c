//! The dialect: the slash-command language agents write actions in, and
//! its parser.
//!
//! ```text
//! agent turn (prose with actions)
//!   └─ scan      finds action lines, `/do /verb`, `[[LEGACY]]`, fences, cancellations
//!       └─ link  reads the verb (matcher) and each chain link's tokens (lexer)
//!           └─ args   interprets tokens by the verb's shape → ParsedAction
//!               └─ canonical  prints the action back as one dialect line
//! ```
//!
//! # Rules
//!
//! **Where actions are.** An action starts with `/` at the start of a line
//! (after optional whitespace). A markdown list marker (`- `, `* `, `+ `,
//! `1. `, `2) `) or a bold/italic wrapper around the whole line
//! (`**/search x**`) may come first; the wrapper is not content. A `> ` line
//! never starts an action: it is content only directly under an action line.
//! `/do /verb …` starts an action anywhere in a line. A line beginning with a
//! path (`/usr/local/bin/x is …`, `/notes.txt`, `/tmp`) is prose, and so is a
//! slash mid-sentence, in a URL or a fraction. Nothing inside a code fence or
//! inline code is an action. Legacy `[[NAME: args]]` commands count anywhere
//! in prose, never inside fences, inline code or an action's content; a
//! `[[Title Case]]` wiki link is prose.
//!
//! **Cancellation.** A phrase such as "never mind", "scratch that", "wait,
//! don't", "on second thought", "ignore that", "disregard" or "cancel that"
//! on a later line cancels the nearest action before it, even with prose in
//! between: the action stays in the result with `cancelled: true`. A chain or
//! batch is cancelled as a whole. A phrase before any action, or after an
//! action that failed to parse, cancels nothing.
//!
//! **Verbs.** One declarative table ([`BUILTIN_VERBS`]) lists every verb,
//! its aliases and its strictness; a TOML file can add aliases and verbs
//! ([`VerbTable::extend_from_toml`]). Matching tries the exact name, an
//! exact alias (multi-word aliases such as `look up` match as whole
//! phrases; `_` and `-` join words: `/look_up`), the same in any letter case,
//! simple morphology (`searching`, `recalled`, `told`), then edit distance:
//! 1 for normal verbs, 2 for loose ones (recall, search), never for strict
//! ones (approve, deny, halt, escalate) and never for words under four
//! letters. `/aprove r1` is an error suggesting `/approve`, never an
//! approval. A misspelling equally close to two verbs is an error naming
//! both.
//!
//! **Shared aliases** are resolved from the argument:
//! `remember` means `context` when its target is a working-memory block and
//! `recall` (insert) otherwise; `get` means `fetch` when its argument is a URL
//! and `recall read` otherwise. `forget` is `recall delete`; `store`, `save`,
//! `archive` and `remember` store a new memory unless the shape says
//! otherwise.
//!
//! **Recall intent** (`/recall ARGS`): a sub-command word (`insert add save
//! store`, `append`, `read get check show`, `delete remove forget`, `patch
//! edit`, `search find`) decides; otherwise `+ content` inserts, `label +
//! content` appends, `-label` or `- label` deletes, a quoted argument
//! searches, and unquoted words read the block they name (`project notes`
//! names `project_notes`). An argument that is not a known block label is a
//! search. A label given to append, delete or patch that matches known
//! blocks only partially is an error listing them, and yields no action.
//!
//! **Arguments and content.** Content is `"…"` on one line (escapes
//! `\" \\ \n \t`; a `"` never closed on its line is an ordinary character),
//! `"""…"""` over several lines, a ``` fence, `> ` lines under the action,
//! or unquoted text to the end of the line. `that`, `this` and `it` are
//! references only when they are the whole argument (`/reply that works for
//! me` is content); `@last`, `@last.message`, `@last.output`, `@thread`,
//! `@parent` and `@[uri]` likewise. References stay unresolved. Request ids
//! are words containing a digit, `#n` or `[anything]`, so `/deny too risky`
//! is a reason, not an id. Reasons given to deny, escalate and halt are the
//! action's `content`. `approve`/`deny` without `always` have op `once`.
//!
//! **Markers** come last, as their own word (or straight after a closing
//! quote): `.` routine, `?` check, `?ask` ask, `!` serious, and `?word`
//! (`?public`) is check with the note `public`. A `?` or `!` inside quoted
//! content, or glued to an unquoted word (`/reply really?`), is content.
//!
//! **Chains and batches.** `->` followed by `/` chains links (it may also
//! start the next line); `"old" -> "new"` is the context-replace form, not a
//! chain. A link that fails makes the whole chain an error, and so does a
//! chain of more than [`MAX_CHAIN_LINKS`] links. `/batch {` ends
//! its line; one action per line follows, then a line holding `}` (optionally
//! followed by a marker). The batch is one action whose inner actions are in
//! its `batch` field; its canonical form spans lines.
//!
//! **How many.** A reply holds at most [`MAX_ACTIONS`] actions: one with
//! more is a single error over all of them, and none runs.
//!
//! **Errors** are sentences for the model. Every byte of a turn is in an
//! action, an invalid action or prose ([`ParsedTurn::segments`]).
//!
//! This crate owns the language: its rules, verb table, parser and
//! canonical form. It may import `partner-core` and `partner-grammar` (the
//! proposer reads plain words through the action grammar) and nothing else
//! of partner's; what an action does is the executor's.

mod action;
pub mod args;
mod batch;
mod blocks;
mod builtin;
mod cancel;
pub mod canonical;
mod echo;
mod error;
mod legacy;
mod lexer;
mod link;
mod markers;
mod matcher;
mod parser;
pub mod proposals;
mod scan;
mod shape;
mod span;
mod turn;
mod verb_file;
mod verb_word;
mod verbs;

pub use action::{
    ActionOp, Marker, ParsedAction, Part, PartKind, RefKind, RefSlot, Reference, TimeFilter,
    TimeUnit,
};
pub use args::{
    ContextEdit, Destination, Due, Interval, SEND_DOMAINS, SearchFilters, ShellPlan,
    format_interval, interval, parse_interval,
};
pub use blocks::{BlockRegistry, KnownBlock, LabelMatch, normalize_label};
pub use cancel::{CANCEL_PHRASES, has_cancel_phrase};
pub use canonical::{canonical, quote};
pub use error::{ParseError, ParseErrorKind};
pub use lexer::{Token, TokenKind};
pub use link::MAX_CHAIN_LINKS;
pub use matcher::{MatchKind, PhraseEntries, VerbMatch, match_verb};
pub use parser::{DialectParser, MAX_ACTIONS};
pub use shape::{ArgPayload, ArgShape, Args, Shape};
pub use span::Span;
pub use turn::{ParsedTurn, Segment, SegmentKind};
pub use verb_file::VerbTableError;
pub use verbs::{
    BUILTIN_VERBS, BuiltinVerb, CustomAction, PhraseEntry, Strictness, Verb, VerbSpec, VerbTable,
    normalize_phrase,
};
