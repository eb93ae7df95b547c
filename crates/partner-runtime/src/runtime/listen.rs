//! Team mode, between daemons: hearing with `LISTEN` what another daemon
//! did (a request, a decision, a message: read the store again now), and
//! keeping the partner's messages in the inbox, where whichever daemon
//! runs the agent finds them.

use std::time::Duration;

use partner_store::memory::inbox::NewDelivery;
use partner_store::postgres::PgStore;

/// Wakes the runtime (`wake`) whenever another daemon makes a request, a
/// decision or a message, heard with `LISTEN` on a connection of its own:
/// a decision made through any daemon reaches the waiting agent at once,
/// not at the next sweep, and a message the partner sent through another
/// daemon is answered at once by the one that runs its agent. The thread
/// ends when the runtime is gone; a lost connection is opened again (the
/// sweep covers the gap meanwhile).
pub(super) fn listen(store: &PgStore, wake: std::sync::Weak<tokio::sync::Notify>) {
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
                let channels = [
                    channel::REQUESTS,
                    channel::DECISIONS,
                    channel::MESSAGES,
                    channel::NOTICES,
                ];
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
                            if !notices.is_empty() {
                                wake.notify_one();
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

/// Keeps the partner's message to `agent` in its inbox, then (team
/// mode) tells every daemon, so the one running the agent answers it now
/// rather than at its next sweep.
pub(super) fn deliver(
    executor: &partner_engine::exec::Executor,
    agent: &str,
    text: &str,
) -> Result<(), String> {
    let message = NewDelivery {
        agent,
        thread: "main",
        from: "user",
        content: text,
        lineage: &[],
    };
    let now = executor.now();
    executor
        .store()
        .transaction(|tx| tx.deliver(&message, now))
        .map_err(|e| format!("could not keep the message for {agent}: {e}"))?;
    if let Some(store) = executor.store().postgres()
        && let Err(e) = store.notify(partner_store::postgres::channel::MESSAGES, agent)
    {
        // The sweep finds it within a second all the same.
        tracing::warn!(%agent, error = %e, "could not tell the other daemons of a message");
    }
    Ok(())
}
