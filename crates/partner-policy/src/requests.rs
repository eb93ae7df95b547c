//! [`Requests`]: the durable queue — waiting requests, their decisions and
//! the standing rules — behind one interface with two back ends, the
//! SQLite store ([`MemoryStore`]) and PostgreSQL (`PgStore`, in
//! [`crate::postgres`]). A request is decided once: whoever comes second,
//! in this process or another, is told who decided it first.

use partner_core::clock::Millis;
use partner_store::memory::MemoryError;
use rusqlite::Connection;

use crate::approvals::Approving;
use crate::pending::{self, NewRequest, NewRule, PendingRequest, StandingRule};
use crate::{Authority, RequestStatus};

/// A decision to record.
#[derive(Debug, Clone, Copy)]
pub struct Decided<'a> {
    /// The final status.
    pub status: RequestStatus,
    /// The decision's name (`approve_once`, `deny`…).
    pub decision: &'a str,
    /// Who decided (`partner`, `partner:NAME`, `agent:NAME`).
    pub by: &'a str,
    /// The reason given, if any.
    pub note: Option<&'a str>,
    /// The process that claimed the request to run it (a decision that
    /// completes its own claim), or `None` for a request still waiting.
    pub claimant: Option<&'a str>,
}

/// Why a decision was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// Someone decided it first.
    #[error("{id} was already decided by {by} ({decision})")]
    AlreadyDecided {
        /// The request.
        id: String,
        /// Who decided it.
        by: String,
        /// How.
        decision: String,
    },
    /// There is no such request.
    #[error("there is no request {0}")]
    NoRequest(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] MemoryError),
}

impl From<rusqlite::Error> for DecideError {
    fn from(e: rusqlite::Error) -> Self {
        DecideError::Store(MemoryError::Sqlite(e))
    }
}

/// The queue of a constellation, on whichever database holds it. Every
/// write is committed before it returns.
pub trait Requests {
    /// Stores a new waiting request.
    fn ask(&self, new: &NewRequest<'_>, now: Millis) -> Result<PendingRequest, MemoryError>;
    /// One request by id (`r12`).
    fn request(&self, id: &str) -> Result<Option<PendingRequest>, MemoryError>;
    /// The newest request made for an action, by the action's id.
    fn for_action(&self, action_id: &str) -> Result<Option<PendingRequest>, MemoryError>;
    /// The waiting requests, oldest first.
    fn waiting(&self) -> Result<Vec<PendingRequest>, MemoryError>;
    /// Records `decided` if the request still waits; the request as
    /// decided, or who decided it first.
    fn decide(
        &self,
        id: &str,
        decided: &Decided<'_>,
        now: Millis,
    ) -> Result<PendingRequest, DecideError>;
    /// Claims a waiting request for `claimant` to run, recording the
    /// approval `decided` describes: of two deciders at once exactly one
    /// claims it, and the other is told who did. Committed before the
    /// effect runs, so that an approved request runs at most once.
    fn claim(
        &self,
        id: &str,
        decided: &Decided<'_>,
        claimant: &str,
        now: Millis,
    ) -> Result<PendingRequest, DecideError>;
    /// Gives back `claimant`'s claim on a request whose effect never ran;
    /// false when it held none.
    fn release(&self, id: &str, claimant: &str) -> Result<bool, MemoryError>;
    /// The requests being run, oldest first.
    fn running(&self) -> Result<Vec<PendingRequest>, MemoryError>;
    /// Adds partner `name`'s approval to a waiting request that needs
    /// several; each partner counts once.
    fn add_approval(&self, id: &str, name: &str) -> Result<Approving, MemoryError>;
    /// Keeps what the requester of a decided request should hear (JSON),
    /// for whichever process routes it.
    fn keep_result(&self, id: &str, result: &str) -> Result<(), MemoryError>;
    /// Adds a standing rule; its id.
    fn add_rule(&self, rule: &NewRule<'_>, now: Millis) -> Result<i64, MemoryError>;
    /// The standing rules in force at `now`.
    fn rules(&self, now: Millis) -> Result<Vec<StandingRule>, MemoryError>;
    /// Revokes a standing rule; false when none was in force.
    fn revoke_rule(&self, id: i64, now: Millis) -> Result<bool, MemoryError>;
    /// The standing rule in force at `now` for exactly this agent, verb,
    /// op and target (see [`pending::choose_rule`]).
    fn matching_rule(
        &self,
        scope: &RuleScope<'_>,
        now: Millis,
    ) -> Result<Option<StandingRule>, MemoryError>;
    /// Decided requests `ours` accepts (those of the agents a process runs,
    /// or one request) whose result has not
    /// reached the agent that asked, oldest first, with their results;
    /// each marked routed at `now`. Another process taking them at the
    /// same moment gets none of the same.
    fn take_unrouted(
        &self,
        now: Millis,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<(PendingRequest, String)>, MemoryError>;
    /// Waiting requests whose current authority has not been told yet,
    /// oldest first; each marked told.
    fn take_unannounced(
        &self,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<PendingRequest>, MemoryError>;
    /// Moves a request to its next authority (never the requester or one
    /// it acts for); the new authority, or `None` at the last one.
    fn escalate(&self, request: &PendingRequest) -> Result<Option<Authority>, MemoryError>;
    /// Waiting requests whose time is up at `now`.
    fn overdue(&self, now: Millis) -> Result<Vec<PendingRequest>, MemoryError> {
        Ok(self
            .waiting()?
            .into_iter()
            .filter(|r| r.expires_at.is_some_and(|t| t <= now))
            .collect())
    }
}

/// Which standing rule an action would fall under.
#[derive(Debug, Clone, Copy)]
pub struct RuleScope<'a> {
    /// The acting agent.
    pub agent: &'a str,
    /// The verb's name.
    pub verb: &'a str,
    /// The verb's op, if it has one.
    pub op: Option<&'a str>,
    /// The action's target, if it has one.
    pub target: Option<&'a str>,
    /// The agents it acts for.
    pub lineage: &'a [String],
}

/// The next authority of a request after its current one, skipping the
/// requester and those it acts for.
pub fn next_authority(request: &PendingRequest) -> Option<(usize, Authority)> {
    request
        .authorities
        .iter()
        .enumerate()
        .skip(request.authority_index + 1)
        .find(|(_, a)| !matches!(a, Authority::Agent(name) if request.made_by(name)))
        .map(|(i, a)| (i, a.clone()))
}

/// What a decision that came second is told, read from the request.
pub fn second(id: &str, found: Option<PendingRequest>) -> DecideError {
    match found {
        Some(r) => DecideError::AlreadyDecided {
            id: r.id,
            by: r.decided_by.unwrap_or_else(|| "nobody known".into()),
            decision: r.decision.unwrap_or_else(|| r.status.as_str().into()),
        },
        None => DecideError::NoRequest(id.to_string()),
    }
}

/// In whatever transaction the connection is in: a decision is recorded
/// in its action's transaction.
impl Requests for Connection {
    fn ask(&self, new: &NewRequest<'_>, now: Millis) -> Result<PendingRequest, MemoryError> {
        pending::create(self, new, now)
    }

    fn request(&self, id: &str) -> Result<Option<PendingRequest>, MemoryError> {
        pending::get(self, id)
    }

    fn for_action(&self, action_id: &str) -> Result<Option<PendingRequest>, MemoryError> {
        pending::for_action(self, action_id)
    }

    fn waiting(&self) -> Result<Vec<PendingRequest>, MemoryError> {
        pending::waiting(self)
    }

    fn decide(
        &self,
        id: &str,
        d: &Decided<'_>,
        now: Millis,
    ) -> Result<PendingRequest, DecideError> {
        if pending::finish(self, id, d, now)? {
            pending::get(self, id)?.ok_or_else(|| DecideError::NoRequest(id.to_string()))
        } else {
            Err(second(id, pending::get(self, id)?))
        }
    }

    fn claim(
        &self,
        id: &str,
        d: &Decided<'_>,
        claimant: &str,
        now: Millis,
    ) -> Result<PendingRequest, DecideError> {
        if pending::claim(self, id, d, claimant, now)? {
            pending::get(self, id)?.ok_or_else(|| DecideError::NoRequest(id.to_string()))
        } else {
            Err(second(id, pending::get(self, id)?))
        }
    }

    fn release(&self, id: &str, claimant: &str) -> Result<bool, MemoryError> {
        pending::release(self, id, claimant)
    }

    fn running(&self) -> Result<Vec<PendingRequest>, MemoryError> {
        pending::running(self)
    }

    fn add_approval(&self, id: &str, name: &str) -> Result<Approving, MemoryError> {
        crate::approvals::add_approval(self, id, name)
    }

    fn keep_result(&self, id: &str, result: &str) -> Result<(), MemoryError> {
        pending::set_result(self, id, result)
    }

    fn add_rule(&self, rule: &NewRule<'_>, now: Millis) -> Result<i64, MemoryError> {
        pending::add_rule(self, rule, now)
    }

    fn rules(&self, now: Millis) -> Result<Vec<StandingRule>, MemoryError> {
        pending::rules(self, now)
    }

    fn revoke_rule(&self, id: i64, now: Millis) -> Result<bool, MemoryError> {
        pending::revoke_rule(self, id, now)
    }

    fn matching_rule(
        &self,
        s: &RuleScope<'_>,
        now: Millis,
    ) -> Result<Option<StandingRule>, MemoryError> {
        pending::matching_rule(self, s.agent, s.verb, s.op, s.target, s.lineage, now)
    }

    fn take_unrouted(
        &self,
        now: Millis,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<(PendingRequest, String)>, MemoryError> {
        pending::take_unrouted(self, now, ours)
    }

    fn take_unannounced(
        &self,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<PendingRequest>, MemoryError> {
        pending::take_unannounced(self, ours)
    }

    fn escalate(&self, request: &PendingRequest) -> Result<Option<Authority>, MemoryError> {
        pending::escalate(self, request)
    }
}
