//! The values of an agent's memory that cross the protocol: blocks and
//! their versions, a change as the trace records it, learned phrasings,
//! search hits and how far search by meaning has caught up — with the two
//! pure text helpers a console reads them with (a change as a diff, a
//! snippet's marks). The store keeps them; their storage is its own.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use partner_core::clock::Millis;

/// A stored name that names nothing this build knows (a corrupt row or
/// file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{value}'")]
pub struct UnknownName {
    /// What the name was to be (`block kind`).
    pub what: &'static str,
    /// The name read.
    pub value: String,
}

/// Where a block lives in an agent's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// Identity blocks always in the prompt (persona).
    Core,
    /// Working memory, always in context (human, scratch).
    Working,
    /// Long-term memory, read on request.
    Archival,
}

/// Who may change a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockPermission {
    /// Nobody writes it.
    ReadOnly,
    /// Writes need the partner's consent.
    Partner,
    /// Writes need the human's consent (the partner, in this console).
    Human,
    /// Only appends are allowed.
    Append,
    /// Reads and writes, no delete.
    ReadWrite,
    /// Everything, including delete.
    Admin,
}

macro_rules! str_enum {
    ($ty:ty, $what:literal, { $($variant:path => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// The name stored in the database and shown to people.
            pub fn as_str(self) -> &'static str {
                match self { $($variant => $text),+ }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl FromStr for $ty {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($variant),)+
                    other => Err(UnknownName { what: $what, value: other.to_string() }),
                }
            }
        }
    };
}

str_enum!(BlockKind, "block kind", {
    BlockKind::Core => "core",
    BlockKind::Working => "working",
    BlockKind::Archival => "archival",
});

str_enum!(BlockPermission, "block permission", {
    BlockPermission::ReadOnly => "read_only",
    BlockPermission::Partner => "partner",
    BlockPermission::Human => "human",
    BlockPermission::Append => "append",
    BlockPermission::ReadWrite => "read_write",
    BlockPermission::Admin => "admin",
});

/// A memory block as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Block {
    /// Row id.
    pub id: i64,
    /// Owning agent.
    pub agent: String,
    /// Label, unique per agent.
    pub label: String,
    /// Core, working or archival.
    pub kind: BlockKind,
    /// What the block is for.
    pub description: String,
    /// The text.
    pub value: String,
    /// Most characters the value may hold.
    pub char_limit: usize,
    /// Who may change it.
    pub permission: BlockPermission,
    /// Pinned blocks are shown first.
    pub pinned: bool,
    /// Other agents may read it (constellation search, where the policy lets
    /// them read shared blocks).
    pub shared: bool,
    /// Current version (1 on creation, +1 per write).
    pub version: i64,
    /// When it was created.
    pub created_at: Millis,
    /// When it last changed.
    pub updated_at: Millis,
}

impl Block {
    /// Characters in the value.
    pub fn chars(&self) -> usize {
        self.value.chars().count()
    }
}

/// One entry of a block's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct BlockVersion {
    /// Version number.
    pub version: i64,
    /// The value at that version.
    pub value: String,
    /// True when this version deleted the block.
    pub deleted: bool,
    /// When.
    pub changed_at: Millis,
    /// Who (an agent name or `partner`).
    pub changed_by: String,
}

/// A change to one block, as recorded in the trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct MemoryChange {
    /// Owning agent.
    pub agent: String,
    /// Block label.
    pub label: String,
    /// Version before the change (`None` when the block was created).
    pub version_before: Option<i64>,
    /// Version after the change.
    pub version_after: i64,
}

/// One learned phrasing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LearnedRule {
    /// Its id.
    pub id: i64,
    /// The grammar alternative (`words -> "action"`).
    pub rule: String,
    /// The words it came from.
    pub words: String,
    /// The dialect action they stand for.
    pub action: String,
    /// When it was learned.
    pub created_at: Millis,
}

/// Where to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchDomain {
    /// Memory blocks (all kinds).
    Blocks,
    /// Archival entries.
    Archival,
    /// Conversation history.
    Conversations,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchHit {
    /// Which domain it came from.
    pub domain: SearchDomain,
    /// Owning agent.
    pub agent: String,
    /// Row id in its table.
    pub id: i64,
    /// Block label, or conversation thread.
    pub label: Option<String>,
    /// Message role (conversations).
    pub role: Option<String>,
    /// Matching text with the matched terms between [`MARK_START`] and
    /// [`MARK_END`] (see [`bracketed`] and [`marked`]).
    pub snippet: String,
    /// bm25 score (lower is better).
    pub rank: f64,
    /// Time of the item.
    pub time: Millis,
}

/// Which side of a hybrid search found a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// Full-text search only.
    Fts,
    /// Meaning only.
    Vector,
    /// Both.
    Both,
}

/// A hit of a hybrid search: the item, its fused score (higher is better)
/// and which side found it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HybridHit {
    /// The item, as full-text search shows it (a hit found by meaning only
    /// shows the start of its text).
    #[serde(flatten)]
    pub hit: SearchHit,
    /// Reciprocal-rank score.
    pub score: f64,
    /// Which side found it.
    pub via: Via,
}

/// How far the vectors have caught up with memory, for the status line
/// and `partner memory reindex`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexStatus {
    /// The embedder whose vectors count.
    pub embedder: String,
    /// Items with a current vector.
    pub done: usize,
    /// Items waiting for one.
    pub waiting: usize,
    /// Why the last attempt failed (the embedder is down…), if it did.
    pub problem: Option<String>,
}

/// Where a matched term of a snippet starts (a control character, so it
/// is never mistaken for text the item holds).
pub const MARK_START: char = '\u{2}';
/// Where a matched term of a snippet ends.
pub const MARK_END: char = '\u{3}';

/// A snippet in pieces, each with whether it is a matched term: for the
/// console to highlight, on one line.
pub fn marked(snippet: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut matched = false;
    let mut piece = String::new();
    for c in snippet.chars() {
        let mark = match c {
            MARK_START => Some(true),
            MARK_END => Some(false),
            _ => None,
        };
        match mark {
            Some(next) => {
                if !piece.is_empty() {
                    out.push((std::mem::take(&mut piece), matched));
                }
                matched = next;
            }
            None => piece.push(if c == '\n' { ' ' } else { c }),
        }
    }
    if !piece.is_empty() {
        out.push((piece, matched));
    }
    out
}

/// A unified diff from `old` to `new`, labelled with the block and versions.
pub fn diff(label: &str, old: &str, new: &str, from: i64, to: i64) -> String {
    let mut options = diffy::DiffOptions::new();
    options.set_original_filename(format!("{label}@{from}"));
    options.set_modified_filename(format!("{label}@{to}"));
    options.create_patch(old, new).to_string()
}
