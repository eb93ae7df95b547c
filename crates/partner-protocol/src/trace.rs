//! The execution trace's values as they cross the protocol: a record of
//! what one action did and how it was decided, a filter and a page of
//! older records, and where a replay first differed. The store writes and
//! reads them; replay is the executor's.

use serde::{Deserialize, Serialize};

use crate::memory::{BlockKind, BlockPermission, MemoryChange};
use partner_core::clock::Millis;

/// Who an action came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceSource {
    /// An agent wrote it.
    Agent,
    /// The partner did it at the console or command line.
    Partner,
}

/// How an action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceOutcome {
    /// It ran.
    Executed,
    /// It was refused (by policy or an authority).
    Denied,
    /// It ran into an error.
    Failed,
    /// It was withdrawn, or taken back in the turn's prose.
    Cancelled,
    /// Nobody decided in time.
    TimedOut,
}

impl TraceOutcome {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            TraceOutcome::Executed => "executed",
            TraceOutcome::Denied => "denied",
            TraceOutcome::Failed => "failed",
            TraceOutcome::Cancelled => "cancelled",
            TraceOutcome::TimedOut => "timed_out",
        }
    }
}

/// A block written by the partner (not through the dialect).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSpec {
    /// Owning agent.
    pub agent: String,
    /// Label.
    pub label: String,
    /// Kind (used when the block is created).
    pub kind: BlockKind,
    /// Permission (used when the block is created).
    pub permission: BlockPermission,
    /// Character limit (used when the block is created; read as a
    /// [`CharLimit`](partner_core::bounds::CharLimit)).
    #[serde(deserialize_with = "partner_core::bounds::char_limit")]
    pub char_limit: usize,
    /// Description (used when the block is created).
    pub description: String,
    /// The new value.
    pub value: String,
    /// Readable by other agents (used when the block is created).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
}

/// What kind of operation a record is, so replay can redo it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceOp {
    /// A dialect action (its canonical form is in the record).
    Action,
    /// The partner created or rewrote a block.
    SetBlock {
        /// The block.
        block: BlockSpec,
    },
    /// The partner undid a block's last change.
    Undo {
        /// Owning agent.
        agent: String,
        /// Label.
        label: String,
    },
}

/// How the permission decision was reached.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DecisionPath {
    /// `allow`, `ask` or `deny`, as the engine decided.
    pub verdict: String,
    /// The engine's steps, in words.
    pub steps: Vec<String>,
    /// The pending request, when it was asked.
    pub request: Option<String>,
    /// Who decided the request.
    pub decided_by: Option<String>,
    /// The decision (`approve_once`, `deny_always`…).
    pub decision: Option<String>,
    /// When it was decided.
    pub decided_at: Option<Millis>,
    /// When the request was made (so replay can show the queue at any step).
    #[serde(default)]
    pub requested_at: Option<Millis>,
}

/// One executed (or refused, failed, cancelled) action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Id (`t` and the sequence number).
    pub id: String,
    /// Position in the trace, from 1.
    pub seq: u64,
    /// The action's id (`turn:pass:index[.link]`), when it came from a turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    /// When it finished.
    pub time: Millis,
    /// The acting agent (the requester, for approved requests).
    pub agent: String,
    /// The turn it came from.
    pub turn_id: String,
    /// Agent or partner.
    pub source: TraceSource,
    /// The action as written.
    pub text: String,
    /// Its byte range in the turn.
    pub span: (usize, usize),
    /// Canonical form (references resolved).
    pub canonical: String,
    /// Verb.
    pub verb: String,
    /// What to redo on replay.
    pub op: TraceOp,
    /// The permission path.
    pub decision: DecisionPath,
    /// How it ended.
    pub outcome: TraceOutcome,
    /// The result for the model.
    pub result: String,
    /// The result, structured.
    pub data: serde_json::Value,
    /// Time spent executing, in microseconds.
    pub duration_us: u64,
    /// The memory change, if any.
    pub memory: Option<MemoryChange>,
    /// True when the result came from outside (fetch, web, data), so
    /// replay reuses it instead of going out again.
    #[serde(default)]
    pub external: bool,
    /// True when the action failed because of partner or the machine (a
    /// busy database, a bug), not the agent: replay does not expect to
    /// reproduce it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub system_error: bool,
}

/// Which records a reader wants: each field that is set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TraceFilter {
    /// Only this agent's records.
    pub agent: Option<String>,
    /// Only records of this verb.
    pub verb: Option<String>,
    /// Only records with this outcome (`executed`, `denied`…).
    pub outcome: Option<String>,
    /// Only records whose line contains this, in any case.
    pub search: Option<String>,
}

impl TraceFilter {
    /// True when the filter admits every record.
    pub fn is_empty(&self) -> bool {
        self == &TraceFilter::default()
    }

    /// Whether `record` passes. `search` is this filter's search already
    /// in lower case (so a long walk lowers it once).
    pub fn admits(&self, record: &TraceRecord, search: Option<&str>) -> bool {
        self.agent.as_deref().is_none_or(|a| record.agent == a)
            && self.verb.as_deref().is_none_or(|v| record.verb == v)
            && self
                .outcome
                .as_deref()
                .is_none_or(|o| record.outcome.as_str() == o)
            && search.is_none_or(|s| record.canonical.to_lowercase().contains(s))
    }

    /// The search, in lower case.
    pub fn lowered(&self) -> Option<String> {
        self.search.as_deref().map(str::to_lowercase)
    }
}

/// A page of older records: newest first, and the sequence number to ask
/// before for the next page (`None`: the trace starts here).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OlderPage {
    /// The records, newest first.
    pub records: Vec<TraceRecord>,
    /// Where the next page starts (exclusive), if there is one.
    pub next: Option<u64>,
}

/// Where a replay of the trace first differed from what it recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// One-based step number.
    pub step: usize,
    /// The record's id.
    pub id: String,
    /// The action.
    pub canonical: String,
    /// What differed, in words.
    pub what: String,
}
