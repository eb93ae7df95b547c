//! What the executor reports back for each action: a short text for the
//! model and structured data for the console.

use serde::Serialize;

use crate::dialect::ParseError;
use crate::memory::MemoryChange;
use crate::permission::PendingRequest;

/// Where an action stands after the executor saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionStatus {
    /// It ran.
    Executed,
    /// It waits for an authority's decision.
    Pending,
    /// It was refused.
    Denied,
    /// It ran into an error.
    Failed,
    /// It was withdrawn or taken back.
    Cancelled,
    /// Nobody decided in time.
    TimedOut,
    /// A chain link that did not run because an earlier link did not.
    NotRun,
}

/// The result of one action (or one chain link).
#[derive(Debug, Clone, Serialize)]
pub struct ActionReport {
    /// The acting agent.
    pub agent: String,
    /// The action's canonical form (references resolved where they could be).
    pub canonical: String,
    /// Where it stands.
    pub status: ActionStatus,
    /// Natural-language result for the model.
    pub text: String,
    /// Structured result for the console.
    pub data: serde_json::Value,
    /// The pending request, while it waits.
    pub request: Option<PendingRequest>,
    /// The trace record written for it.
    pub trace_id: Option<String>,
    /// The memory it changed.
    pub memory: Option<MemoryChange>,
    /// How the permission decision was reached.
    pub path: Vec<String>,
    /// True when the model should see the result before going on (reads,
    /// searches, fetches, calculations, intentions).
    pub needs_continuation: bool,
    /// Inner results of a batch, in order.
    pub children: Vec<ActionReport>,
    /// True when it failed because of partner or the machine, not the
    /// agent (the partner should see it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub system_error: bool,
}

impl ActionReport {
    /// A report without request, trace, memory or children.
    pub fn new(
        agent: &str,
        canonical: String,
        status: ActionStatus,
        text: impl Into<String>,
    ) -> Self {
        ActionReport {
            agent: agent.to_string(),
            canonical,
            status,
            text: text.into(),
            data: serde_json::Value::Null,
            request: None,
            trace_id: None,
            memory: None,
            path: Vec::new(),
            needs_continuation: false,
            children: Vec::new(),
            system_error: false,
        }
    }

    /// One line for people: `canonical → status: text`.
    pub fn summary(&self) -> String {
        let status = serde_json::to_value(self.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        format!("{} → {status}: {}", self.canonical, self.text)
    }
}

/// Everything that came of one turn.
#[derive(Debug, Clone, Serialize)]
pub struct TurnReport {
    /// One report per top-level action, chain links in order after their head.
    pub actions: Vec<ActionReport>,
    /// Parse errors, worded for the model.
    pub errors: Vec<ParseError>,
}
