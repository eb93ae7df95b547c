//! Requests and their decisions as they cross the protocol: who may
//! decide (`Authority`), a request waiting for (or past) a decision and
//! what it asks for, the decision itself in the one vocabulary every door
//! speaks, and a standing rule. The permission engine stores and decides
//! them; these are the values.

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::authority::{Authority, MAX_PARTNER_NAME, is_partner_name};

use partner_core::clock::Millis;
use partner_dialect::{ActionOp, ParsedAction, ShellPlan, Verb};

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    pub fn parse(s: &str) -> RequestStatus {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// What a request asks to do beyond its verb and canonical text: the
/// parts the queue shows and a standing rule is scoped by.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedAction {
    /// The sub-operation (`insert`, `append`…), for verbs that have one.
    #[serde(default)]
    pub op: Option<ActionOp>,
    /// The main target: block label, agent, platform, user, URL or id.
    #[serde(default)]
    pub target: Option<String>,
    /// The domain it names (a send's `@bluesky`, a search's `archival`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// For a shell command: the directory it would run in (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// For a shell command proposed from a request in words: the request
    /// and what the system said about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<String>,
    /// For a shell command: the partner's own files it was judged as never
    /// reaching (absolute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected: Vec<String>,
    /// For a shell command: the constellation's files it may read but
    /// never change (absolute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
}

impl RequestedAction {
    /// What a canonical action text asks for, read with the built-in
    /// verbs (nothing known when it does not read as one action).
    pub fn from_canonical(canonical: &str) -> Self {
        let turn = partner_dialect::DialectParser::new().parse(canonical);
        match turn.actions.as_slice() {
            [one] => RequestedAction::of(one),
            _ => RequestedAction::default(),
        }
    }

    /// What `action` asks for.
    pub fn of(action: &ParsedAction) -> Self {
        let plan = action.args.get::<ShellPlan>();
        RequestedAction {
            op: action.op,
            target: action.target.clone(),
            domain: action.domain().map(str::to_string),
            workdir: plan.and_then(|p| p.workdir.clone()),
            proposal: plan.and_then(|p| p.proposal.clone()),
            protected: plan.map(|p| p.protected.clone()).unwrap_or_default(),
            kept: plan.map(|p| p.kept.clone()).unwrap_or_default(),
        }
    }
}

/// A request waiting for (or past) a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRequest {
    /// Id, `r` and a number (`r12`).
    pub id: String,
    /// The agent that asked.
    pub agent: String,
    /// The action, canonical form.
    pub canonical: String,
    /// What the action asks for, typed: what the queue shows and a
    /// standing rule's scope is made of.
    pub action: RequestedAction,
    /// Its verb.
    pub verb: Verb,
    /// Its marker, if any.
    pub marker: Option<String>,
    /// Why it waits.
    pub reason: String,
    /// Who may decide, in escalation order.
    pub authorities: Vec<Authority>,
    /// Index of the authority it waits on now.
    pub authority_index: usize,
    /// The turn it came from.
    pub turn_id: String,
    /// The conversation it came from.
    pub thread: String,
    /// The raw text of the action as written.
    pub raw_text: String,
    /// The action's id (turn, pass and place), when it came from a turn.
    pub action_id: Option<String>,
    /// The agents whose messages led to the request (nearest first). With
    /// the requester, none of them may decide it.
    pub on_behalf_of: Vec<String>,
    /// Status.
    pub status: RequestStatus,
    /// Who decided.
    pub decided_by: Option<String>,
    /// The decision's name.
    pub decision: Option<String>,
    /// The reason given with the decision.
    pub decision_note: Option<String>,
    /// When it was asked.
    pub created_at: Millis,
    /// When it times out.
    pub expires_at: Option<Millis>,
    /// When it was decided.
    pub decided_at: Option<Millis>,
    /// The partners who may decide it, by name (none: any partner).
    #[serde(default)]
    pub deciders: Vec<String>,
    /// How many partners must approve it (at least one).
    #[serde(default = "one")]
    pub approvals_needed: usize,
    /// The partners who have approved it so far, while it waits for more.
    #[serde(default)]
    pub approved_by: Vec<String>,
    /// The process that claimed it to run it (`HOST:PID:START`), once an
    /// approval did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
}

fn one() -> usize {
    1
}

impl PendingRequest {
    /// The authority it waits on now.
    pub fn waiting_on(&self) -> &Authority {
        self.authorities
            .get(self.authority_index)
            .or_else(|| self.authorities.last())
            .unwrap_or(&Authority::Partner)
    }

    /// True when `agent` asked for it, or it was asked on `agent`'s behalf.
    pub fn made_by(&self, agent: &str) -> bool {
        self.agent == agent || self.on_behalf_of.iter().any(|a| a == agent)
    }

    /// True when `by` may decide it now: the partner always; an agent only
    /// when the request waits on it and it is not the agent's own (or made
    /// on its behalf).
    pub fn decidable_by(&self, by: &Authority) -> bool {
        match by {
            Authority::Partner | Authority::Named(_) => {
                self.partner_may_decide(by).is_ok()
                    && match self.waiting_on() {
                        Authority::Named(name) => by.partner_name() == Some(name),
                        _ => true,
                    }
            }
            Authority::Agent(name) => self.waiting_on() == by && !self.made_by(name),
        }
    }
}

/// Why a partner may not decide a request (or not alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotDecider {
    /// Only the named partners may.
    NotNamed(Vec<String>),
    /// It needs approvals from several partners, each under their own
    /// name; a partner without one cannot count.
    Unnamed(usize),
}

impl std::fmt::Display for NotDecider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotDecider::NotNamed(names) => {
                write!(
                    f,
                    "only partner {} may decide it",
                    names.join(" or partner ")
                )
            }
            NotDecider::Unnamed(n) => write!(
                f,
                "it needs {n} partners to approve it, each with their own token; a console without a partner's token cannot count as one"
            ),
        }
    }
}

impl PendingRequest {
    /// Whether partner `by` (named or not) may decide it: one of its
    /// deciders when it names any; someone with a name when it needs
    /// several approvals.
    pub fn partner_may_decide(&self, by: &Authority) -> Result<(), NotDecider> {
        match by.partner_name() {
            Some(name) if self.deciders.is_empty() || self.deciders.iter().any(|d| d == name) => {
                Ok(())
            }
            Some(_) => Err(NotDecider::NotNamed(self.deciders.clone())),
            None if !self.deciders.is_empty() => Err(NotDecider::NotNamed(self.deciders.clone())),
            None if self.approvals_needed > 1 => Err(NotDecider::Unnamed(self.approvals_needed)),
            None => Ok(()),
        }
    }

    /// How many more approvals it needs after those it has.
    pub fn approvals_missing(&self) -> usize {
        self.approvals_needed
            .max(1)
            .saturating_sub(self.approved_by.len())
    }
}

/// A persisted allow or deny for an agent's verb and target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingRule {
    /// Id.
    pub id: i64,
    /// The agent it applies to.
    pub agent: String,
    /// The verb.
    pub verb: String,
    /// The verb's op (`read`, `delete`…; `None` for verbs without one).
    pub op: Option<String>,
    /// The target (`None` for actions without one).
    pub target: Option<String>,
    /// `allow` or `deny`.
    pub effect: String,
    /// Reason given.
    pub reason: Option<String>,
    /// Who made it.
    pub created_by: String,
    /// When.
    pub created_at: Millis,
    /// When it lapses (approve-for-a-duration).
    pub expires_at: Option<Millis>,
}

impl StandingRule {
    /// What the rule covers, as written after a `/`: its verb, op and
    /// target (`post bluesky`, `recall delete plan`). A rule covers
    /// exactly these.
    pub fn scope(&self) -> String {
        [
            Some(self.verb.as_str()),
            self.op.as_deref(),
            self.target.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
    }
}
