//! [`RuntimeLink`]: how the console reaches the runtime it watches — in
//! its own process (a [`RuntimeHandle`]) or a daemon's over its socket
//! (`remote::RemoteRuntime`). The console's backend reads the database
//! itself either way; only what the runtime does goes through the link.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use partner_engine::exec::Executor;
use partner_policy::{Authority, Decision};
use partner_runtime::{AgentStatus, Event, RuntimeHandle};

/// A boxed future, for the link's asynchronous operations.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the console asks of a runtime.
pub trait RuntimeLink: Send + Sync {
    /// A new subscription to the runtime's events.
    fn events(&self) -> broadcast::Receiver<Event>;
    /// Every agent's state.
    fn status(&self) -> Pending<'_, Vec<AgentStatus>>;
    /// Decides a request as the partner.
    fn decide(&self, id: String, decision: Decision) -> Pending<'_, Result<(), String>>;
    /// Approves a request as edited into `text`: what happened.
    fn approve_edited(&self, id: String, text: String) -> Pending<'_, Result<String, String>>;
    /// Runs a dialect line as `agent`: what each action did.
    fn run_action(&self, agent: String, text: String) -> Pending<'_, String>;
    /// The partner's message to an agent.
    fn send_message(&self, agent: &str, text: &str);
    /// Sets an agent's pulse interval.
    fn set_pulse(&self, agent: &str, every: Duration);
    /// Pulses an agent now.
    fn pulse_now(&self, agent: &str);
    /// Halts an agent.
    fn halt(&self, agent: &str, reason: &str);
    /// Lets a halted agent run again.
    fn resume(&self, agent: &str);
    /// Whether the console runs the constellation itself, or reaches a
    /// daemon's now, or lost it: for the status line and for refusing
    /// decisions nobody would receive.
    fn connection(&self) -> Connection;
}

/// How a console reaches the runtime it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Connection {
    /// It runs the constellation itself.
    #[default]
    Embedded,
    /// It is attached to a daemon that answers.
    Attached,
    /// The daemon went away at this time; the console tries again every
    /// second.
    Gone {
        /// When it went away.
        since: partner_core::clock::Millis,
    },
}

impl Connection {
    /// True when decisions and commands reach a runtime.
    pub fn reaches(self) -> bool {
        !matches!(self, Connection::Gone { .. })
    }

    /// The words for the status line.
    pub fn label(self) -> String {
        match self {
            Connection::Embedded => "embedded".into(),
            Connection::Attached => "attached".into(),
            Connection::Gone { since } => format!(
                "daemon gone since {} · reconnecting…",
                &partner_core::clock::format_time(since)[11..19]
            ),
        }
    }
}

impl RuntimeLink for RuntimeHandle {
    fn events(&self) -> broadcast::Receiver<Event> {
        self.subscribe()
    }

    fn status(&self) -> Pending<'_, Vec<AgentStatus>> {
        Box::pin(RuntimeHandle::status(self))
    }

    fn decide(&self, id: String, decision: Decision) -> Pending<'_, Result<(), String>> {
        Box::pin(async move { RuntimeHandle::decide(self, &id, decision).await })
    }

    fn approve_edited(&self, id: String, text: String) -> Pending<'_, Result<String, String>> {
        let executor: Arc<Executor> = Arc::clone(self.executor());
        let handle = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let outcome = executor
                    .approve_edited(&id, &text, &Authority::Partner)
                    .map(|report| format!("approved the edited {id}: {}", report.summary()))
                    .map_err(|e| e.to_string());
                // The agent that asked hears of it now, not at the next sweep.
                handle.sync();
                outcome
            })
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
        })
    }

    fn run_action(&self, agent: String, text: String) -> Pending<'_, String> {
        let executor: Arc<Executor> = Arc::clone(self.executor());
        let handle = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let lines = executor.run_line_as(&agent, &text);
                // Requests it made are announced now.
                handle.sync();
                lines.join("; ")
            })
            .await
            .unwrap_or_else(|e| e.to_string())
        })
    }

    fn send_message(&self, agent: &str, text: &str) {
        RuntimeHandle::send_message(self, agent, text);
    }

    fn set_pulse(&self, agent: &str, every: Duration) {
        RuntimeHandle::set_pulse(self, agent, every);
    }

    fn pulse_now(&self, agent: &str) {
        RuntimeHandle::pulse_now(self, agent);
    }

    fn halt(&self, agent: &str, reason: &str) {
        RuntimeHandle::halt(self, agent, reason);
    }

    fn resume(&self, agent: &str) {
        RuntimeHandle::resume(self, agent);
    }

    fn connection(&self) -> Connection {
        Connection::Embedded
    }
}
