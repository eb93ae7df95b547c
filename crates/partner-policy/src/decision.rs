//! How a request is decided: the partner's or an authority's decision, its
//! kind as stored and sent in events, and where a request stands.

use std::time::Duration;

use serde::Serialize;

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    /// Waiting on an authority.
    Waiting,
    /// Approved, and being run by the process that claimed it (an
    /// approval claims a request before its effect runs, so it runs once).
    Running,
    /// Approved (and run).
    Approved,
    /// Denied.
    Denied,
    /// Cancelled by the agent or the partner.
    Cancelled,
    /// Nobody decided in time; treated as denied.
    TimedOut,
}

impl RequestStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Waiting => "waiting",
            RequestStatus::Running => "running",
            RequestStatus::Approved => "approved",
            RequestStatus::Denied => "denied",
            RequestStatus::Cancelled => "cancelled",
            RequestStatus::TimedOut => "timed_out",
        }
    }

    /// The status stored as `s` (anything unknown reads as waiting).
    pub(super) fn parse(s: &str) -> RequestStatus {
        match s {
            "running" => RequestStatus::Running,
            "approved" => RequestStatus::Approved,
            "denied" => RequestStatus::Denied,
            "cancelled" => RequestStatus::Cancelled,
            "timed_out" => RequestStatus::TimedOut,
            _ => RequestStatus::Waiting,
        }
    }
}

/// How a request was decided, by name (events and the `pending` table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Approved this once.
    ApproveOnce,
    /// Approved, with a standing rule.
    ApproveAlways,
    /// Approved, with a rule for a while.
    ApproveFor,
    /// Approved with its action edited by the partner.
    ApproveEdited,
    /// Refused.
    Deny,
    /// Refused, with a standing rule.
    DenyAlways,
    /// Passed to the next authority.
    Escalate,
    /// Withdrawn.
    Cancel,
    /// Nobody decided in time.
    Timeout,
}

impl DecisionKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::ApproveOnce => "approve_once",
            DecisionKind::ApproveAlways => "approve_always",
            DecisionKind::ApproveFor => "approve_for",
            DecisionKind::ApproveEdited => "approve_edited",
            DecisionKind::Deny => "deny",
            DecisionKind::DenyAlways => "deny_always",
            DecisionKind::Escalate => "escalate",
            DecisionKind::Cancel => "cancel",
            DecisionKind::Timeout => "timeout",
        }
    }

    /// The kind of a stored name.
    pub fn parse(name: &str) -> Option<DecisionKind> {
        [
            DecisionKind::ApproveOnce,
            DecisionKind::ApproveAlways,
            DecisionKind::ApproveFor,
            DecisionKind::ApproveEdited,
            DecisionKind::Deny,
            DecisionKind::DenyAlways,
            DecisionKind::Escalate,
            DecisionKind::Cancel,
            DecisionKind::Timeout,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }

    /// True for the approvals.
    pub fn approves(self) -> bool {
        matches!(
            self,
            DecisionKind::ApproveOnce
                | DecisionKind::ApproveAlways
                | DecisionKind::ApproveFor
                | DecisionKind::ApproveEdited
        )
    }
}

impl std::fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A decision on a pending request: the one vocabulary every door speaks
/// (the console, the CLI, the daemon's clients, a team's partners and the
/// agents that supervise), in process and on the wire, where it is
/// `{"kind": "approve" | "always" | "for" | "deny" | "deny_always" |
/// "escalate" | "cancel" | "edited", …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(into = "wire::Form", from = "wire::Form")]
pub enum Decision {
    /// Run it, this once.
    ApproveOnce,
    /// Run it, and allow the same verb and target from this agent from now on.
    ApproveAlways,
    /// Run it, and allow the same verb and target for a while.
    ApproveFor(Duration),
    /// Refuse it; the reason goes back to the agent.
    Deny(Option<String>),
    /// Refuse it, and refuse the same verb and target from now on.
    DenyAlways(Option<String>),
    /// Hand it to the next authority in its chain.
    Escalate(Option<String>),
    /// Withdraw it.
    Cancel,
    /// Run it with its action replaced by this dialect line (the partner's
    /// "edit, then approve"): parsed and checked for the agent first.
    ApproveEdited(String),
}

impl Decision {
    /// Its kind.
    pub fn kind(&self) -> DecisionKind {
        match self {
            Decision::ApproveOnce => DecisionKind::ApproveOnce,
            Decision::ApproveAlways => DecisionKind::ApproveAlways,
            Decision::ApproveFor(_) => DecisionKind::ApproveFor,
            Decision::Deny(_) => DecisionKind::Deny,
            Decision::DenyAlways(_) => DecisionKind::DenyAlways,
            Decision::Escalate(_) => DecisionKind::Escalate,
            Decision::Cancel => DecisionKind::Cancel,
            Decision::ApproveEdited(_) => DecisionKind::ApproveEdited,
        }
    }

    /// The stored name.
    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// True for the approvals.
    pub fn approves(&self) -> bool {
        matches!(
            self,
            Decision::ApproveOnce
                | Decision::ApproveAlways
                | Decision::ApproveFor(_)
                | Decision::ApproveEdited(_)
        )
    }
}

/// A decision's wire form.
mod wire {
    use partner_core::clock::TimeSpan;
    use serde::{Deserialize, Serialize};

    use super::Decision;

    /// What a client sends for a [`Decision`].
    #[derive(Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum Form {
        Approve,
        Always,
        For {
            /// How long, in seconds (at most ten years).
            seconds: TimeSpan,
        },
        Deny {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            reason: Option<String>,
        },
        DenyAlways {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            reason: Option<String>,
        },
        Escalate {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            reason: Option<String>,
        },
        Cancel,
        Edited {
            text: String,
        },
    }

    impl From<Decision> for Form {
        fn from(d: Decision) -> Self {
            match d {
                Decision::ApproveOnce => Form::Approve,
                Decision::ApproveAlways => Form::Always,
                Decision::ApproveFor(d) => Form::For {
                    seconds: TimeSpan::saturating(d),
                },
                Decision::Deny(reason) => Form::Deny { reason },
                Decision::DenyAlways(reason) => Form::DenyAlways { reason },
                Decision::Escalate(reason) => Form::Escalate { reason },
                Decision::Cancel => Form::Cancel,
                Decision::ApproveEdited(text) => Form::Edited { text },
            }
        }
    }

    impl From<Form> for Decision {
        fn from(d: Form) -> Self {
            match d {
                Form::Approve => Decision::ApproveOnce,
                Form::Always => Decision::ApproveAlways,
                Form::For { seconds } => Decision::ApproveFor(seconds.get()),
                Form::Deny { reason } => Decision::Deny(reason),
                Form::DenyAlways { reason } => Decision::DenyAlways(reason),
                Form::Escalate { reason } => Decision::Escalate(reason),
                Form::Cancel => Decision::Cancel,
                Form::Edited { text } => Decision::ApproveEdited(text),
            }
        }
    }
}

partner_core::wire_name_eq!(RequestStatus, as_str);
partner_core::wire_name_eq!(DecisionKind, as_str);
