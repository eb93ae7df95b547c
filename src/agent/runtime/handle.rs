//! [`RuntimeHandle`]: how the console, headless runs and tests talk to a
//! running constellation — commands in, events out.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, oneshot};

use super::{AgentStatus, Command};
use crate::agent::events::Event;
use crate::exec::Executor;
use crate::permission::Decision;

/// Talks to a running constellation.
#[derive(Debug, Clone)]
pub struct RuntimeHandle {
    pub(super) tx: mpsc::UnboundedSender<Command>,
    pub(super) events: broadcast::Sender<Event>,
    pub(super) executor: Arc<Executor>,
}

impl RuntimeHandle {
    /// A new subscription to the event stream.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// The executor (for reading memory, the queue and the trace).
    pub fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }

    /// Sends the partner's message to an agent.
    pub fn send_message(&self, agent: &str, text: &str) {
        let _ = self.tx.send(Command::Message {
            agent: agent.into(),
            text: text.into(),
        });
    }

    /// Decides a request as the partner; the result goes to the agent that
    /// asked. The runtime keeps running meanwhile: the decision (and the
    /// action it runs) is a task of its own, and halting the requester
    /// cancels an effect it is still waiting on.
    pub async fn decide(&self, id: &str, decision: Decision) -> Result<(), String> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Command::Decide {
                id: id.into(),
                decision,
                reply,
            })
            .map_err(|_| "the runtime has stopped".to_string())?;
        rx.await
            .map_err(|_| "the runtime has stopped".to_string())?
    }

    /// Changes an agent's pulse interval (zero turns it off).
    pub fn set_pulse(&self, agent: &str, interval: Duration) {
        let _ = self.tx.send(Command::SetPulse {
            agent: agent.into(),
            interval,
        });
    }

    /// Pulses an agent now.
    pub fn pulse_now(&self, agent: &str) {
        let _ = self.tx.send(Command::PulseNow {
            agent: agent.into(),
        });
    }

    /// Halts an agent, cancelling what it is generating and any effect of
    /// its still running.
    pub fn halt(&self, agent: &str, reason: &str) {
        let _ = self.tx.send(Command::Halt {
            agent: agent.into(),
            reason: reason.into(),
        });
    }

    /// Lets a halted agent run again.
    pub fn resume(&self, agent: &str) {
        let _ = self.tx.send(Command::Resume {
            agent: agent.into(),
        });
    }

    /// Every agent's state (answered from memory, never waiting on the
    /// database or a model).
    pub async fn status(&self) -> Vec<AgentStatus> {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(Command::Status { reply }).is_err() {
            return Vec::new();
        }
        rx.await.unwrap_or_default()
    }

    /// Looks for decisions made and requests made in other processes now,
    /// instead of at the next sweep.
    pub fn sync(&self) {
        let _ = self.tx.send(Command::Sync);
    }

    /// Stops the runtime (turns in flight are cancelled).
    pub fn shutdown(&self) {
        let _ = self.tx.send(Command::Shutdown);
    }
}
