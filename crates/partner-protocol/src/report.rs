//! What the executor reports back for each action: a short text for the
//! model and structured data for the console.

pub use crate::ActionStatus;
use serde::Serialize;

use crate::memory::MemoryChange;
use crate::request::PendingRequest;
use partner_dialect::{ActionOp, ParseError, ParsedAction, Verb};

/// What an action is, for its report, its trace record and the events
/// about it: verb, op, canonical form and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionInfo {
    /// The verb.
    pub verb: Verb,
    /// Its sub-operation.
    pub op: Option<ActionOp>,
    /// The canonical form (references resolved where they could be).
    pub canonical: String,
    /// The action's id (turn, pass and place), when it came from a turn.
    pub action_id: Option<String>,
}

impl ActionInfo {
    /// An action of a turn, with its id.
    pub fn of(action: &ParsedAction, action_id: Option<String>) -> Self {
        ActionInfo {
            verb: action.verb.clone(),
            op: action.op,
            canonical: action.canonical(),
            action_id,
        }
    }

    /// The action a stored request holds.
    pub fn of_request(request: &PendingRequest) -> Self {
        ActionInfo {
            verb: request.verb.clone(),
            op: request.action.op,
            canonical: request.canonical.clone(),
            action_id: request.action_id.clone(),
        }
    }
}

/// The result of one action (or one chain link).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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
    /// The action's id (turn, pass and place in the turn), when it came
    /// from a turn.
    pub action_id: Option<String>,
    /// The verb.
    pub verb: Verb,
    /// Its sub-operation.
    pub op: Option<ActionOp>,
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
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub system_error: bool,
    /// True when it ran and its verb flags it for the partner's review.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flagged: bool,
}

impl ActionReport {
    /// A report without request, trace, memory or children.
    pub fn new(
        agent: &str,
        info: &ActionInfo,
        status: ActionStatus,
        text: impl Into<String>,
    ) -> Self {
        ActionReport {
            agent: agent.to_string(),
            canonical: info.canonical.clone(),
            action_id: info.action_id.clone(),
            verb: info.verb.clone(),
            op: info.op,
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
            flagged: false,
        }
    }

    /// One line for people: `canonical → status: text`.
    pub fn summary(&self) -> String {
        format!("{} → {}: {}", self.canonical, self.status, self.text)
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
