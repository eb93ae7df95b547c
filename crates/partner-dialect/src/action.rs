//! What the parser produces: one [`ParsedAction`] per action an agent wrote.

use serde::{Serialize, Serializer};

use super::shape::{Args, Shape};
use super::span::Span;
use super::verbs::Verb;

/// The sub-operation of a verb, where the verb has several.
///
/// `recall`: read, search, insert, append, delete, patch; `context`: append,
/// replace, archive, load, swap; `fetch`: markdown, html, continue; `data`:
/// list, read, search, monitor, pause; `approve`/`deny`: once, always.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionOp {
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

impl ActionOp {
    /// The lowercase word used for this op in canonical form and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionOp::Read => "read",
            ActionOp::Search => "search",
            ActionOp::Insert => "insert",
            ActionOp::Append => "append",
            ActionOp::Delete => "delete",
            ActionOp::Patch => "patch",
            ActionOp::Replace => "replace",
            ActionOp::Archive => "archive",
            ActionOp::Load => "load",
            ActionOp::Swap => "swap",
            ActionOp::Markdown => "markdown",
            ActionOp::Html => "html",
            ActionOp::Continue => "continue",
            ActionOp::List => "list",
            ActionOp::Monitor => "monitor",
            ActionOp::Pause => "pause",
            ActionOp::Once => "once",
            ActionOp::Always => "always",
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
    /// How strongly a marker asks for checking, none counted between `.`
    /// (which may waive an ask) and `?`.
    pub fn rank(marker: Option<Marker>) -> u8 {
        match marker {
            Some(Marker::Routine) => 0,
            None => 1,
            Some(Marker::Check) => 2,
            Some(Marker::Ask) => 3,
            Some(Marker::Serious) => 4,
        }
    }

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
    /// The filter written canonically, e.g. `> 2 weeks`, `< 1 day`.
    pub fn canonical(&self) -> String {
        let cmp = if self.older_than { '>' } else { '<' };
        let unit = self.unit.as_str();
        let unit = if self.amount == 1 {
            &unit[..unit.len() - 1]
        } else {
            unit
        };
        format!("{cmp} {} {unit}", self.amount)
    }
}

/// One action an agent wrote, with every part located in the turn.
///
/// A chain `/a -> /b -> /c` is one `ParsedAction` for `/a` whose `chain`
/// holds `/b` and `/c` in order; its `span` covers the whole chain. A
/// `/batch { … }` is one action with verb `batch` whose inner actions are in
/// `batch`.
#[derive(Debug, Clone)]
pub struct ParsedAction {
    /// The canonical verb (aliases resolved).
    pub verb: Verb,
    /// The verb exactly as the agent wrote it (may be an alias or misspelling).
    pub verb_written: String,
    /// The sub-operation, for verbs that have one.
    pub op: Option<ActionOp>,
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
    pub legacy: bool,
    /// The bytes of the whole action (the whole chain for a chain head).
    pub span: Span,
    /// Highlightable pieces: verb, arguments, content, marker, arrows, refs.
    pub parts: Vec<Part>,
    /// What the verb's shape read beyond the fields above (a search's
    /// filters, a replaced text, a reminder's time), typed by the shape.
    pub args: Args,
    /// The shape the action was read with, which writes it back.
    pub shape: Shape,
    /// The following links of a chain, in order.
    pub chain: Vec<ParsedAction>,
    /// The inner actions of a `/batch { … }`, in order.
    pub batch: Vec<ParsedAction>,
    /// Where the action is in its turn, one-based: `[3]` for the third
    /// action, `[3, 2]` for the second link of a chain there (or the second
    /// member of a batch), `[3, 2, 1]` for a chain inside a batch. The
    /// runtime prefixes the turn and pass to make the action's id.
    pub path: Vec<u16>,
}

impl Serialize for ParsedAction {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("verb", self.verb.name())?;
        map.serialize_entry("verb_written", &self.verb_written)?;
        map.serialize_entry("op", &self.op)?;
        map.serialize_entry("target", &self.target)?;
        map.serialize_entry("content", &self.content)?;
        map.serialize_entry("marker", &self.marker)?;
        map.serialize_entry("marker_note", &self.marker_note)?;
        map.serialize_entry("refs", &self.refs)?;
        map.serialize_entry("cancelled", &self.cancelled)?;
        if self.legacy {
            map.serialize_entry("legacy", &true)?;
        }
        map.serialize_entry("span", &self.span)?;
        if !self.path.is_empty() {
            map.serialize_entry("path", &self.path_text())?;
        }
        map.serialize_entry("parts", &self.parts)?;
        for (key, value) in self.args.json_fields() {
            if !value.is_null() {
                map.serialize_entry(&key, &value)?;
            }
        }
        map.serialize_entry("canonical", &self.canonical())?;
        map.serialize_entry("chain", &self.chain)?;
        if !self.batch.is_empty() {
            map.serialize_entry("batch", &self.batch)?;
        }
        map.end()
    }
}

impl ParsedAction {
    /// A bare action of `verb` with every argument empty, located at `span`.
    pub fn new(verb: Verb, verb_written: impl Into<String>, span: Span) -> Self {
        let shape = verb.shape();
        ParsedAction::with_shape(verb, verb_written, span, shape)
    }

    /// A bare action of `verb`, read with `shape` (the parser has it from
    /// the verb's table row; no lookup by verb).
    pub fn with_shape(
        verb: Verb,
        verb_written: impl Into<String>,
        span: Span,
        shape: Shape,
    ) -> Self {
        ParsedAction {
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
            // A verb, its arguments, content and a marker, without regrowing.
            parts: Vec::with_capacity(6),
            shape,
            args: Args::default(),
            chain: Vec::new(),
            batch: Vec::new(),
            path: Vec::new(),
            verb,
        }
    }

    /// The path written as in an action id: `3`, `3.2`.
    pub fn path_text(&self) -> String {
        self.path
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(".")
    }

    /// Numbers this action (the `index`th of its turn), its chain links and
    /// its batch members.
    pub(crate) fn number(&mut self, path: Vec<u16>) {
        if !self.chain.is_empty() {
            let mut head = path.clone();
            head.push(1);
            for (k, link) in self.chain.iter_mut().enumerate() {
                let mut link_path = path.clone();
                link_path.push(k as u16 + 2);
                link.number(link_path);
            }
            self.path = head;
            return;
        }
        for (m, member) in self.batch.iter_mut().enumerate() {
            let mut member_path = path.clone();
            member_path.push(m as u16 + 1);
            member.number(member_path);
        }
        self.path = path;
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
            && self.args.same(&other.args)
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

    /// The canonical dialect text: one line that parses back to this action
    /// (its chain included; a batch spans one line per inner action).
    pub fn canonical(&self) -> String {
        super::canonical::canonical(self)
    }

    /// The domain the action names (a search's `in archival`, a send's
    /// `@bluesky`), if its arguments have one.
    pub fn domain(&self) -> Option<&str> {
        self.args.domain()
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
