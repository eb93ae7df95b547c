//! Team mode, between daemons: hearing with `LISTEN` what another daemon
//! did (a request, a decision: read the store again now; the partner's
//! message to an agent run here: answer it), and forwarding the partner's
//! message to an agent another daemon runs.

use std::sync::Arc;
use std::time::Duration;

use super::{Done, Runtime, Work, contained};
use crate::events::Event;
use partner_store::postgres::PgStore;

/// Wakes the runtime (`wake`) whenever another daemon makes a request or
/// a decision, heard with `LISTEN` on a connection of its own: a decision
/// made through any daemon reaches the waiting agent at once, not at the
/// next sweep. A message the partner sent through another daemon is
/// handed to the runtime (`commands`) to answer if it runs the agent. The thread ends when the runtime is gone; a lost
/// connection is opened again (the sweep covers the gap meanwhile).
pub(super) fn listen(
    store: &PgStore,
    wake: std::sync::Weak<tokio::sync::Notify>,
    commands: tokio::sync::mpsc::UnboundedSender<super::Command>,
) {
    use partner_store::postgres::channel;
    let store = match store.connect_again() {
        Ok(store) => store,
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for other daemons: the sweep finds their work");
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("partner-listen".into())
        .spawn(move || {
            loop {
                let channels = [channel::REQUESTS, channel::DECISIONS, channel::MESSAGES];
                let mut listener = match store.listen(&channels) {
                    Ok(listener) => listener,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot listen for other daemons; trying again");
                        std::thread::sleep(Duration::from_secs(5));
                        if wake.strong_count() == 0 {
                            return;
                        }
                        continue;
                    }
                };
                loop {
                    let heard = listener.wait(Duration::from_millis(500));
                    let Some(wake) = wake.upgrade() else {
                        return;
                    };
                    match heard {
                        Ok(notices) => {
                            for notice in notices {
                                if notice.channel != channel::MESSAGES {
                                    wake.notify_one();
                                } else if let Ok(id) = notice.payload.parse::<i64>()
                                    && commands.send(super::Command::Forwarded { id }).is_err()
                                {
                                    return;
                                }
                            }
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "lost the connection listening for other daemons");
                            break;
                        }
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start listening for other daemons");
    }
}

/// The partner's message to `agent`, which another daemon runs: kept in
/// its history (`stored`: its id, when it is already), then every daemon
/// told; the one that runs the agent answers it.
pub(super) fn forward(
    executor: &partner_engine::exec::Executor,
    agent: &str,
    text: &str,
    stored: Option<i64>,
) -> Result<(), String> {
    let Some(store) = executor.store().postgres() else {
        return Err(format!("{agent} runs in no daemon here"));
    };
    let id = match stored {
        Some(id) => id,
        None => {
            let message = partner_store::memory::backend::NewMessage {
                agent,
                thread: "main",
                role: "user",
                content: text,
                lineage: &[],
            };
            let now = executor.now();
            executor
                .store()
                .transaction(|tx| tx.add_message(&message, now))
                .map_err(|e| format!("could not store the message: {e}"))?
        }
    };
    store
        .notify(partner_store::postgres::channel::MESSAGES, &id.to_string())
        .map_err(|e| {
            format!("the message is stored, but the daemon running {agent} was not told: {e}")
        })
}

impl Runtime {
    /// Reads the message another daemon forwarded, off the loop.
    pub(super) fn read_forwarded(&mut self, id: i64) {
        let executor = Arc::clone(&self.env.executor);
        self.work.spawn_blocking(move || {
            contained(Work::Forward, || {
                match executor.store().read(|tx| tx.message(id)) {
                    Ok(Some(message)) => Done::Forwarded(message),
                    _ => Done::Decided,
                }
            })
        });
    }

    /// A message forwarded by another daemon: a turn for it, if this
    /// runtime runs its agent (the history has it already).
    pub(super) fn forwarded(&mut self, message: partner_store::memory::Message) {
        if !self.runs(&message.agent) || !self.slots.contains_key(&message.agent) {
            return;
        }
        self.emit(Event::MessageReceived {
            agent: message.agent.clone(),
            from: "partner".into(),
            text: message.content.clone(),
        });
        self.push(
            &message.agent,
            crate::turn::Trigger::Message {
                thread: message.thread,
                from: message.role,
                text: message.content,
                store: false,
                lineage: message.lineage,
            },
        );
    }
}
