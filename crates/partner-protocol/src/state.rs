//! The states and kinds the protocol names: how an agent's run stands,
//! which prompt a turn sent, how an action ended.

use serde::{Deserialize, Serialize};

/// What an agent is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Waiting for input or its pulse.
    Idle,
    /// A turn is running.
    Generating,
    /// Its requests wait for decisions.
    Waiting,
    /// Stopped until resumed.
    Halted,
    /// Run by another daemon of the constellation (team mode): this one
    /// neither runs its turns nor knows what it is doing now.
    Elsewhere,
}

impl RunState {
    /// The name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Idle => "idle",
            RunState::Generating => "generating",
            RunState::Waiting => "waiting",
            RunState::Halted => "halted",
            RunState::Elsewhere => "elsewhere",
        }
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of the three prompt types a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptKind {
    /// First pass, answering a message.
    Response,
    /// First pass, woken by the pulse.
    Pulse,
    /// Second (or later) pass, with action results.
    Continuation,
}

/// Where an action stands after the executor saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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

impl ActionStatus {
    /// The name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionStatus::Executed => "executed",
            ActionStatus::Pending => "pending",
            ActionStatus::Denied => "denied",
            ActionStatus::Failed => "failed",
            ActionStatus::Cancelled => "cancelled",
            ActionStatus::TimedOut => "timed_out",
            ActionStatus::NotRun => "not_run",
        }
    }
}

impl std::fmt::Display for ActionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

partner_core::wire_name_eq!(ActionStatus, as_str);
