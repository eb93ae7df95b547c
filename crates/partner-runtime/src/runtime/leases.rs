//! Team mode: which daemon runs each agent. A runtime started with a host
//! name on a PostgreSQL store runs only the agents whose lease it holds
//! (`partner_store::postgres::PgStore::acquire`): it renews them every
//! [`RENEW`], takes any that lapse (their daemon died) at its next round,
//! and stops an agent at once when its lease is lost or cannot be renewed
//! in time. An agent another daemon runs is [`RunState::Elsewhere`], with
//! that daemon's name: never run here, never guessed at.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::{Done, RunState, Runtime, Work, contained};
use crate::events::Event;
use partner_store::postgres::{Lease, LeaseError, PgStore};

/// How long a lease lasts unless renewed: a daemon that dies has its
/// agents taken over within this and one [`RENEW`].
pub const TTL: Duration = Duration::from_secs(6);

/// How often leases are renewed, and free ones sought.
pub const RENEW: Duration = Duration::from_secs(2);

/// A runtime's part in a team: its name and a connection of its own for
/// leases (so renewals never queue behind the agents' work).
pub struct Leasing {
    /// This daemon's `--host-name`.
    pub host: String,
    /// The store, on its own connection.
    pub store: Arc<PgStore>,
}

/// What a round of renewing and seeking found, agent by agent: the
/// lease (or why not), and for an agent just taken what the store holds
/// of it.
pub(super) type Round = Vec<(String, Result<Lease, LeaseError>, Option<Taken>)>;

/// What the store holds of an agent just taken over: its state.
pub(super) type Taken = partner_store::memory::AgentState;

/// One agent's lease as this runtime knows it.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub lease: Lease,
    /// Until when it is surely still ours (asked before this, by this
    /// process's clock): past it without a renewal, the agent stops.
    pub sure_until: Instant,
}

impl Runtime {
    /// Starts a round of renewing the leases held and seeking the rest,
    /// unless one is on its way.
    pub(super) fn lease_round(&mut self) {
        let Some(leasing) = &self.leasing else {
            return;
        };
        if self.leasing_busy {
            return;
        }
        self.leasing_busy = true;
        let host = leasing.host.clone();
        let store = Arc::clone(&leasing.store);
        let asks: Vec<(String, Option<Lease>)> = self
            .slots
            .keys()
            .map(|name| {
                let held = self.held.get(name).map(|h| h.lease.clone());
                (name.clone(), held)
            })
            .collect();
        let asked_at = Instant::now();
        let executor = Arc::clone(&self.env.executor);
        let started = self.env.session_start;
        self.work.spawn_blocking(move || {
            contained(Work::Lease, || {
                // A member of the team, leases or none.
                if let Err(e) = store.present(&host, std::process::id(), started, TTL) {
                    tracing::warn!(error = %e, "could not say this daemon is up");
                }
                let round = asks
                    .into_iter()
                    .map(|(agent, held)| {
                        let taking = held.is_none();
                        let outcome = match held {
                            Some(lease) => store.renew(&lease, TTL),
                            None => store.acquire(&agent, &host, TTL),
                        };
                        let taken = (taking && outcome.is_ok())
                            .then(|| taken(&executor, &agent))
                            .flatten();
                        (agent, outcome, taken)
                    })
                    .collect();
                Done::Leased(round, asked_at)
            })
        });
    }

    /// Applies a round: agents taken start here, agents lost stop here.
    pub(super) fn leased(&mut self, round: Round, asked_at: Instant) {
        self.leasing_busy = false;
        for (agent, outcome, taken) in round {
            match outcome {
                Ok(lease) => {
                    let new = !self.held.contains_key(&agent);
                    self.set_fence(&agent, Some(&lease));
                    self.held.insert(
                        agent.clone(),
                        Held {
                            lease,
                            sure_until: asked_at + TTL,
                        },
                    );
                    if new {
                        self.took(&agent, taken);
                    }
                }
                Err(LeaseError::HeldBy { host, .. }) => self.elsewhere(&agent, Some(host)),
                Err(LeaseError::Lost { by, .. }) => self.elsewhere(&agent, by),
                Err(LeaseError::Store(e)) => {
                    // Not reached: still ours only while surely so.
                    let lapsed = self
                        .held
                        .get(&agent)
                        .is_some_and(|h| Instant::now() >= h.sure_until);
                    if lapsed {
                        self.emit(Event::Error {
                            agent: Some(agent.clone()),
                            message: format!(
                                "{agent}'s lease could not be renewed ({e}): it stops here until the store answers"
                            ),
                        });
                        self.elsewhere(&agent, None);
                    }
                }
            }
        }
    }

    /// Stops agents whose lease this runtime can no longer be sure of
    /// (renewals have not come back in time).
    pub(super) fn expire_unsure(&mut self) {
        let now = Instant::now();
        let unsure: Vec<String> = self
            .held
            .iter()
            .filter(|(_, h)| now >= h.sure_until)
            .map(|(name, _)| name.clone())
            .collect();
        for agent in unsure {
            self.elsewhere(&agent, None);
        }
    }

    /// `agent`'s lease is ours now: it runs here, from what the store
    /// holds of it (`stored`; as configured when it could not be read).
    /// The sync this asks for finds what waits in its inbox — messages
    /// sent while no daemon ran it, and the one whose turn was cut.
    fn took(&mut self, agent: &str, stored: Option<Taken>) {
        let Some(slot) = self.slots.get_mut(agent) else {
            return;
        };
        slot.host = None;
        slot.mailbox.clear();
        slot.queued.clear();
        let halted = stored.as_ref().is_some_and(|s| s.halted);
        if let Some(secs) = stored.and_then(|s| s.pulse_secs) {
            slot.pulse = Duration::from_secs(secs.max(0) as u64);
        }
        slot.state = if halted {
            RunState::Halted
        } else {
            RunState::Idle
        };
        slot.idle_since = Instant::now();
        tracing::info!(%agent, "runs here now");
        self.announce_state(agent);
        self.request_sync();
    }

    /// `agent` is not run here (another daemon holds it, `by`, or nobody
    /// is known to): its turn stops and nothing of it starts.
    pub(super) fn elsewhere(&mut self, agent: &str, by: Option<String>) {
        let was_ours = self.held.remove(agent).is_some();
        self.set_fence(agent, None);
        let Some(slot) = self.slots.get_mut(agent) else {
            return;
        };
        if let Some(cancel) = slot.cancel.take() {
            let _ = cancel.send(true);
        }
        // What waits in its inbox (and the turn just cut) is answered by
        // the daemon that holds it now.
        slot.mailbox.clear();
        slot.queued.clear();
        let changed = slot.state != RunState::Elsewhere || slot.host != by;
        slot.host = by;
        slot.state = RunState::Elsewhere;
        let cause = match &slot.host {
            Some(host) => format!("{host} holds it now"),
            None => "it could not be renewed in time".to_string(),
        };
        if changed {
            self.announce_state(agent);
        }
        if was_ours {
            self.report(
                agent,
                super::notices::Failure {
                    kind: partner_protocol::TeamNoticeKind::LeaseLost,
                    cause,
                    provider: None,
                },
            );
        }
    }

    /// What `agent`'s turns commit under: this daemon's lease on it.
    fn set_fence(&self, agent: &str, lease: Option<&Lease>) {
        if let Some(slot) = self.slots.get(agent) {
            *slot.info.fence.lock().unwrap_or_else(|e| e.into_inner()) =
                lease.map(|l| partner_store::memory::roster::Fence {
                    host: l.host.clone(),
                    epoch: l.epoch,
                });
        }
    }

    /// True when this runtime runs `agent` (always, outside team mode).
    pub(super) fn runs(&self, agent: &str) -> bool {
        self.leasing.is_none() || self.held.contains_key(agent)
    }

    /// The agents run here, in team mode (`None`: every agent, and
    /// whatever else the store holds, is this runtime's).
    pub(super) fn ours(&self) -> Option<Arc<HashSet<String>>> {
        self.leasing
            .as_ref()
            .map(|_| Arc::new(self.held.keys().cloned().collect()))
    }
}

/// Gives every lease in `held` up (a clean stop): another daemon takes the
/// agents at its next round instead of waiting for them to lapse.
pub(super) fn release(leasing: &Leasing, held: HashMap<String, Held>) {
    if let Err(e) = leasing.store.absent(&leasing.host) {
        tracing::warn!(error = %e, "could not say this daemon stops");
    }
    for held in held.into_values() {
        if let Err(e) = leasing.store.release(&held.lease) {
            tracing::warn!(agent = %held.lease.agent, error = %e, "could not release the lease");
        }
    }
}

/// What the store holds of `agent`, just taken over; `None` if it could
/// not be read.
fn taken(executor: &partner_engine::exec::Executor, agent: &str) -> Option<Taken> {
    executor.store().read(|tx| tx.agent_state(agent)).ok()
}
