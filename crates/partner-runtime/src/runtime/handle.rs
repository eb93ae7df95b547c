//! [`RuntimeHandle`]: how the console, headless runs and tests talk to a
//! running constellation — commands in, events out.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc, oneshot};

use super::{AgentStatus, Command};
use crate::events::Event;
use partner_engine::exec::Executor;
use partner_policy::{Authority, Decision};

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

    /// Sends the partner's message to an agent: kept in its inbox, then
    /// answered by whoever runs it. The receipt says when it is kept.
    pub fn send_message(&self, agent: &str, text: &str) -> Receipt {
        self.ask(|ack| Command::Message {
            agent: agent.into(),
            text: text.into(),
            ack,
        })
    }

    /// [`RuntimeHandle::send_message`], waiting until the message is
    /// committed to the agent's inbox: `Ok` means it will be answered, by
    /// this runtime or, after a crash or a takeover, by the next.
    pub async fn deliver(&self, agent: &str, text: &str) -> Result<(), String> {
        if self.tx.is_closed() {
            return Err("the runtime has stopped".into());
        }
        self.send_message(agent, text).committed().await
    }

    /// Sends a command whose end the runtime acknowledges.
    fn ask(&self, command: impl FnOnce(super::Ack) -> Command) -> Receipt {
        let (ack, done) = oneshot::channel();
        let _ = self.tx.send(command(Some(ack)));
        Receipt(done)
    }

    /// Decides a request as `by` (the partner, or a named one); the result
    /// goes to the agent that asked. The runtime keeps running meanwhile:
    /// the decision (and the action it runs) is a task of its own, and
    /// halting the requester cancels an effect it is still waiting on.
    /// The report: the action's result, its refusal, or (status
    /// `Pending`) what the one who decided is told when the request still
    /// waits for another partner's approval.
    pub async fn decide(
        &self,
        id: &str,
        decision: Decision,
        by: Authority,
    ) -> Result<partner_protocol::report::ActionReport, String> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Command::Decide {
                id: id.into(),
                decision,
                by,
                reply,
            })
            .map_err(|_| "the runtime has stopped".to_string())?;
        rx.await
            .map_err(|_| "the runtime has stopped".to_string())?
    }

    /// Changes an agent's pulse interval (zero turns it off); the receipt
    /// says when it is stored.
    pub fn set_pulse(&self, agent: &str, interval: Duration) -> Receipt {
        self.ask(|ack| Command::SetPulse {
            agent: agent.into(),
            interval,
            ack,
        })
    }

    /// Pulses an agent now; the receipt says when the pulse is queued.
    pub fn pulse_now(&self, agent: &str) -> Receipt {
        self.ask(|ack| Command::PulseNow {
            agent: agent.into(),
            ack,
        })
    }

    /// Halts an agent, cancelling what it is generating and any effect of
    /// its still running; the receipt says when the halt is stored.
    pub fn halt(&self, agent: &str, reason: &str) -> Receipt {
        self.ask(|ack| Command::Halt {
            agent: agent.into(),
            reason: reason.into(),
            ack,
        })
    }

    /// Lets a halted agent run again; the receipt says when that is
    /// stored.
    pub fn resume(&self, agent: &str) -> Receipt {
        self.ask(|ack| Command::Resume {
            agent: agent.into(),
            ack,
        })
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

/// How a command sent to the runtime ended, for those who wait: dropping
/// it waits for nothing.
#[derive(Debug)]
pub struct Receipt(oneshot::Receiver<Result<(), String>>);

impl Receipt {
    /// Waits until the runtime has done it (stored it, for what is
    /// stored): `Ok`, or why not.
    pub async fn committed(self) -> Result<(), String> {
        self.0
            .await
            .unwrap_or_else(|_| Err("the runtime stopped before it was done".into()))
    }
}
