//! The permission engine: decides whether an action runs, waits for an
//! authority, or is refused; keeps pending requests and standing rules
//! durable in the constellation's database.
//!
//! This crate may import `partner-core`, `partner-dialect` (the actions it
//! judges) and `partner-store` (where requests, decisions and rules are
//! kept), nothing else of partner's: it decides, the engine executes.

pub mod approvals;
mod claims;
mod engine;
pub mod network;
pub mod partners;
pub mod pending;
mod policy;
pub mod postgres;
pub mod rate;
pub mod requests;
pub mod sensitivity;
mod standing;

pub use engine::{
    Check, CheckInput, PermissionEngine, VerbTraits, Verdict, WriteKind, WrittenBlock,
};
pub use partner_protocol::request::Authority;
pub use pending::{
    Decision, DecisionKind, PendingRequest, RequestStatus, RequestedAction, StandingRule,
};
pub use policy::{
    DEFAULT_POLICY, Limits, Network, OneOrMany, Platform, Policy, PolicyError, Quorum, RateLimit,
    Rule, RuleDecision, Visibility,
};
