//! What the parser produces: one [`ParsedAction`] per action an agent wrote.

use serde::{Serialize, Serializer};

use super::span::Span;
use super::verbs::Verb;

/// The sub-operation of a verb, where the verb has several.
///
/// `recall`: read, search, insert, append, delete, patch; `context`: append,
/// replace, archive, load, swap; `fetch`: markdown, html, continue; `data`:
/// list, read, search, monitor, pause; `approve`/`deny`: once, always.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Read a block (recall) or a data source (data).
    Read,
    /// Full-text search (recall) or search inside a data source (data).
    Search,
    /// Store a new memory.
    Insert,
    /// Add text to the end of a block.
    Append,
    /// Remove a block.
    Delete,
    /// Apply a unified diff to a block.
    Patch,
    /// Replace text inside a working-memory block.
    Replace,
    /// Move a working block to archival memory.
    Archive,
    /// Load an archival block into working memory.
    Load,
    /// Swap a working block with an archival one.
    Swap,
    /// Fetch a page converted to markdown (the default).
    Markdown,
    /// Fetch a page as raw HTML.
    Html,
    /// Continue a paginated fetch.
    Continue,
    /// List configured data sources.
    List,
    /// Start notifications from a data source.
    Monitor,
    /// Pause notifications from a data source.
    Pause,
    /// A decision for this request only.
    Once,
    /// A decision that becomes a standing rule.
    Always,
}

impl Op {
    /// The lowercase word used for this op in canonical form and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Search => "search",
            Op::Insert => "insert",
            Op::Append => "append",
            Op::Delete => "delete",
            Op::Patch => "patch",
            Op::Replace => "replace",
            Op::Archive => "archive",
            Op::Load => "load",
            Op::Swap => "swap",
            Op::Markdown => "markdown",
            Op::Html => "html",
            Op::Continue => "continue",
            Op::List => "list",
            Op::Monitor => "monitor",
            Op::Pause => "pause",
            Op::Once => "once",
            Op::Always => "always",
        }
    }
}

/// The permission marker an agent put at the end of an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Marker {
    /// `.` — "this is routine, don't bug them".
    Routine,
    /// `?` or `?word` — "this might need checking".
    Check,
    /// `?ask` — "please confirm with the partner".
    Ask,
    /// `!` — "this is serious, definitely confirm".
    Serious,
}

impl Marker {
    /// The marker as written in canonical form (without a note).
    pub fn sigil(self) -> &'static str {
        match self {
            Marker::Routine => ".",
            Marker::Check => "?",
            Marker::Ask => "?ask",
            Marker::Serious => "!",
        }
    }
}

/// What a reference points at. Resolution happens at execution, not here.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RefKind {
    /// `@last`: the last message in context.
    Last,
    /// `@last.message`: same as `@last`, spelled out.
    LastMessage,
    /// `@last.output`: the output of the last action.
    LastOutput,
    /// `@thread`: the current thread or conversation.
    Thread,
    /// `@parent`: the message being replied to.
    Parent,
    /// `@[uri]`: a specific resource.
    Uri(String),
    /// `that`, `this` or `it` standing alone as an argument.
    Implicit(String),
}

impl RefKind {
    /// The kind's name as it appears in JSON (`"last.output"`, `"uri"`, `"implicit"`…).
    pub fn name(&self) -> &'static str {
        match self {
            RefKind::Last => "last",
            RefKind::LastMessage => "last.message",
            RefKind::LastOutput => "last.output",
            RefKind::Thread => "thread",
            RefKind::Parent => "parent",
            RefKind::Uri(_) => "uri",
            RefKind::Implicit(_) => "implicit",
        }
    }

    /// The reference written canonically (`@last.output`, `@[uri]`, `that`).
    pub fn canonical(&self) -> String {
        match self {
            RefKind::Uri(uri) => format!("@[{uri}]"),
            RefKind::Implicit(word) => word.clone(),
            other => format!("@{}", other.name()),
        }
    }
}

/// Which argument slot a reference stands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RefSlot {
    /// The reference is the action's target (`/reply @parent "…"`).
    Target,
    /// The reference is the action's content (`/post bluesky @last.output`).
    Content,
}

/// An unresolved reference written in an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// What the reference points at.
    pub kind: RefKind,
    /// Where in the action it stands.
    pub slot: RefSlot,
    /// The bytes it was written with.
    pub span: Span,
}

impl Serialize for Reference {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", self.kind.name())?;
        map.serialize_entry("text", &self.kind.canonical())?;
        if let RefKind::Uri(uri) = &self.kind {
            map.serialize_entry("uri", uri)?;
        }
        map.serialize_entry("slot", &self.slot)?;
        map.serialize_entry("span", &self.span)?;
        map.end()
    }
}

/// The role a highlighted piece of an action plays, for syntax highlighting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// The `/do ` prefix that lets an action start mid-line.
    DoPrefix,
    /// The verb as written, slash included (it may be an alias).
    Verb,
    /// A sub-command word (`append`, `in archival`, `always`, `html`…).
    Keyword,
    /// A target, label, id, platform or filter argument.
    Argument,
    /// Content: quoted text, a content block or unquoted text.
    Content,
    /// The permission marker.
    Marker,
    /// A `->` between chain links.
    ChainArrow,
    /// A reference such as `@last.output`.
    Reference,
    /// The braces of a `/batch { … }`.
    Brace,
    /// The `[[` … `]]` of a legacy command.
    LegacyBracket,
}

/// One highlighted piece of an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Part {
    /// What the piece is.
    pub kind: PartKind,
    /// Where it is.
    pub span: Span,
}

/// Unit of a search time filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// Minutes.
    Minutes,
    /// Hours.
    Hours,
    /// Days.
    Days,
    /// Weeks.
    Weeks,
    /// Months (30 days).
    Months,
    /// Years (365 days).
    Years,
}

impl TimeUnit {
    /// The unit's plural English name, as printed in canonical form.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Minutes => "minutes",
            TimeUnit::Hours => "hours",
            TimeUnit::Days => "days",
            TimeUnit::Weeks => "weeks",
            TimeUnit::Months => "months",
            TimeUnit::Years => "years",
        }
    }

    /// Length of one unit in seconds.
    pub fn seconds(self) -> u64 {
        match self {
            TimeUnit::Minutes => 60,
            TimeUnit::Hours => 3_600,
            TimeUnit::Days => 86_400,
            TimeUnit::Weeks => 7 * 86_400,
            TimeUnit::Months => 30 * 86_400,
            TimeUnit::Years => 365 * 86_400,
        }
    }
}

/// A search time filter: `> 2 weeks` (older than) or `< 3 days` (within).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct TimeFilter {
    /// True for `>` (older than the amount), false for `<` (newer than it).
    pub older_than: bool,
    /// How many units.
    pub amount: u32,
    /// The unit.
    pub unit: TimeUnit,
}

impl TimeFilter {
    /// The filter written canonically, e.g. `> 2 weeks`.
    pub fn canonical(&self) -> String {
        let cmp = if self.older_than { '>' } else { '<' };
        format!("{cmp} {} {}", self.amount, self.unit.as_str())
    }
}

/// One action an agent wrote, with every part located in the turn.
///
/// A chain `/a -> /b -> /c` is one `ParsedAction` for `/a` whose `chain`
/// holds `/b` and `/c` in order; its `span` covers the whole chain. A
/// `/batch { … }` is one action with verb `batch` whose inner actions are in
/// `batch`.
#[derive(Debug, Clone, Serialize)]
pub struct ParsedAction {
    /// The canonical verb (aliases resolved).
    #[serde(serialize_with = "ser_verb")]
    pub verb: Verb,
    /// The verb exactly as the agent wrote it (may be an alias or misspelling).
    pub verb_written: String,
    /// The sub-operation, for verbs that have one.
    pub op: Option<Op>,
    /// The main target: block label, agent, platform, user, URL or request id.
    pub target: Option<String>,
    /// The text, message or query. Reasons for deny/escalate/halt live here.
    pub content: Option<String>,
    /// The permission marker, if any.
    pub marker: Option<Marker>,
    /// The word after `?` in a qualified marker such as `?public`.
    pub marker_note: Option<String>,
    /// References written as arguments, unresolved.
    pub refs: Vec<Reference>,
    /// True when later prose took the action back ("scratch that").
    pub cancelled: bool,
    /// True when the action was written in the legacy `[[COMMAND: …]]` form.
    #[serde(skip_serializing_if = "is_false")]
    pub legacy: bool,
    /// The bytes of the whole action (the whole chain for a chain head).
    pub span: Span,
    /// Highlightable pieces: verb, arguments, content, marker, arrows, refs.
    pub parts: Vec<Part>,
    /// Search domain (`archival`, `conversations`, `constellation`, `all`) or
    /// send domain (`user`, `agent`, `bluesky`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Search time filter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<TimeFilter>,
    /// Search role filter (`role:assistant`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The text being replaced, for `context replace` (the new text is `content`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The archival label of a `context swap` (the working block is `target`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
    /// When a reminder is due, as written (`in 20 minutes`, `tomorrow morning`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// A pulse interval in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_secs: Option<u64>,
    /// The canonical one-line form (for a batch, one action per line).
    pub canonical: String,
    /// The following links of a chain, in order.
    pub chain: Vec<ParsedAction>,
    /// The inner actions of a `/batch { … }`, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub batch: Vec<ParsedAction>,
}

fn ser_verb<S: Serializer>(verb: &Verb, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(verb.name())
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl ParsedAction {
    /// A bare action of `verb` with every argument empty, located at `span`.
    pub fn new(verb: Verb, verb_written: impl Into<String>, span: Span) -> Self {
        ParsedAction {
            verb,
            verb_written: verb_written.into(),
            op: None,
            target: None,
            content: None,
            marker: None,
            marker_note: None,
            refs: Vec::new(),
            cancelled: false,
            legacy: false,
            span,
            parts: Vec::new(),
            domain: None,
            time: None,
            role: None,
            old: None,
            other: None,
            when: None,
            duration_secs: None,
            canonical: String::new(),
            chain: Vec::new(),
            batch: Vec::new(),
        }
    }

    /// True when both actions mean the same thing: every field equal except
    /// where and how they were written (spans, parts, alias spelling, legacy
    /// form, cancellation). Used to check canonical round-trips.
    pub fn same_meaning(&self, other: &ParsedAction) -> bool {
        let refs = |a: &ParsedAction| -> Vec<(RefKind, RefSlot)> {
            a.refs.iter().map(|r| (r.kind.clone(), r.slot)).collect()
        };
        self.verb == other.verb
            && self.op == other.op
            && self.target == other.target
            && self.content == other.content
            && self.marker == other.marker
            && self.marker_note == other.marker_note
            && refs(self) == refs(other)
            && self.domain == other.domain
            && self.time == other.time
            && self.role == other.role
            && self.old == other.old
            && self.other == other.other
            && self.when == other.when
            && self.duration_secs == other.duration_secs
            && self.chain.len() == other.chain.len()
            && self
                .chain
                .iter()
                .zip(&other.chain)
                .all(|(a, b)| a.same_meaning(b))
            && self.batch.len() == other.batch.len()
            && self
                .batch
                .iter()
                .zip(&other.batch)
                .all(|(a, b)| a.same_meaning(b))
    }

    /// The content reference, if the content slot holds one.
    pub fn content_ref(&self) -> Option<&Reference> {
        self.refs.iter().find(|r| r.slot == RefSlot::Content)
    }

    /// The target reference, if the target slot holds one.
    pub fn target_ref(&self) -> Option<&Reference> {
        self.refs.iter().find(|r| r.slot == RefSlot::Target)
    }

    /// This action and every chain link and batch member below it, depth first.
    pub fn all_links(&self) -> Vec<&ParsedAction> {
        let mut out = vec![self];
        for inner in self.batch.iter().chain(&self.chain) {
            out.extend(inner.all_links());
        }
        out
    }
}
