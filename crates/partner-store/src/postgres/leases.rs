//! Leases: which daemon runs each agent of a constellation shared by
//! several daemons. A lease is held for a while and renewed; one that
//! lapses (its daemon died) is taken by the next daemon that asks, and its
//! epoch goes up, so the daemon that lost it finds out at its next renewal
//! and stops. Time is the database server's, so daemons whose clocks
//! disagree still agree on when a lease lapses.

use std::time::Duration;

use super::{PgStore, failed};
use crate::memory::MemoryError;
use partner_core::clock::Millis;

/// The server's clock, in milliseconds since the epoch.
const NOW: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// One agent's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The agent.
    pub agent: String,
    /// The daemon holding it (its `--host-name`).
    pub host: String,
    /// How many times the lease changed hands (a fencing number: whoever
    /// holds an older one no longer runs the agent).
    pub epoch: i64,
    /// When it lapses unless renewed (server time).
    pub expires_at: Millis,
}

/// Why a lease was not had.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// Another daemon holds it.
    #[error("{agent} runs on {host} (its lease lasts until {until})")]
    HeldBy {
        /// The agent.
        agent: String,
        /// Who holds it.
        host: String,
        /// Until when, unless renewed.
        until: Millis,
    },
    /// The lease was taken over: this daemon must stop running the agent.
    #[error("{agent}'s lease was taken over{}", .by.as_ref().map(|h| format!(" by {h}")).unwrap_or_default())]
    Lost {
        /// The agent.
        agent: String,
        /// Who holds it now, if anyone.
        by: Option<String>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] MemoryError),
}

fn ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 2)
}

fn lease_of(row: &postgres::Row) -> Lease {
    Lease {
        agent: row.get(0),
        host: row.get(1),
        epoch: row.get(2),
        expires_at: row.get(3),
    }
}

impl PgStore {
    /// Takes `agent`'s lease for `host` for `ttl`: free, lapsed, or
    /// already this host's (then only extended). Held by another host: who.
    pub fn acquire(&self, agent: &str, host: &str, ttl: Duration) -> Result<Lease, LeaseError> {
        let mut client = self.client()?;
        let taken = client
            .query_opt(
                &format!(
                    "INSERT INTO agent_leases AS l (agent, host, epoch, expires_at, acquired_at)
                     SELECT $1, $2, 1, now_ms + $3, now_ms FROM (SELECT {NOW} AS now_ms) t
                     ON CONFLICT (agent) DO UPDATE SET
                         host = EXCLUDED.host,
                         epoch = l.epoch + CASE WHEN l.host = EXCLUDED.host
                             AND l.expires_at > EXCLUDED.acquired_at THEN 0 ELSE 1 END,
                         expires_at = EXCLUDED.expires_at,
                         acquired_at = EXCLUDED.acquired_at
                     WHERE l.expires_at <= EXCLUDED.acquired_at OR l.host = EXCLUDED.host
                     RETURNING agent, host, epoch, expires_at"
                ),
                &[&agent, &host, &ms(ttl)],
            )
            .map_err(failed)?;
        if let Some(row) = taken {
            return Ok(lease_of(&row));
        }
        let held = client
            .query_opt(
                "SELECT host, expires_at FROM agent_leases WHERE agent = $1",
                &[&agent],
            )
            .map_err(failed)?;
        Err(match held {
            Some(row) => LeaseError::HeldBy {
                agent: agent.to_string(),
                host: row.get(0),
                until: row.get(1),
            },
            // Gone between the two statements: held by nobody known.
            None => LeaseError::Lost {
                agent: agent.to_string(),
                by: None,
            },
        })
    }

    /// Extends a lease this daemon holds; `Lost` when another took it over
    /// (the epoch moved on) or it was released.
    pub fn renew(&self, lease: &Lease, ttl: Duration) -> Result<Lease, LeaseError> {
        let mut client = self.client()?;
        let renewed = client
            .query_opt(
                &format!(
                    "UPDATE agent_leases SET expires_at = {NOW} + $4
                     WHERE agent = $1 AND host = $2 AND epoch = $3
                     RETURNING agent, host, epoch, expires_at"
                ),
                &[&lease.agent, &lease.host, &lease.epoch, &ms(ttl)],
            )
            .map_err(failed)?;
        match renewed {
            Some(row) => Ok(lease_of(&row)),
            None => {
                let by = client
                    .query_opt(
                        "SELECT host FROM agent_leases WHERE agent = $1",
                        &[&lease.agent],
                    )
                    .map_err(failed)?
                    .map(|r| r.get(0));
                Err(LeaseError::Lost {
                    agent: lease.agent.clone(),
                    by,
                })
            }
        }
    }

    /// Gives a lease up (a daemon stopping cleanly): it lapses now, its
    /// epoch kept so the next holder's is higher; false when it was no
    /// longer this daemon's.
    pub fn release(&self, lease: &Lease) -> Result<bool, MemoryError> {
        let gone = self
            .client()?
            .execute(
                "UPDATE agent_leases SET expires_at = 0
                 WHERE agent = $1 AND host = $2 AND epoch = $3 AND expires_at > 0",
                &[&lease.agent, &lease.host, &lease.epoch],
            )
            .map_err(failed)?;
        Ok(gone > 0)
    }

    /// Every lease, by agent, and whether each is in force now (server time).
    pub fn leases(&self) -> Result<Vec<(Lease, bool)>, MemoryError> {
        let rows = self
            .client()?
            .query(
                &format!(
                    "SELECT agent, host, epoch, expires_at, expires_at > {NOW}
                     FROM agent_leases ORDER BY agent"
                ),
                &[],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(|r| (lease_of(r), r.get(4))).collect())
    }

    /// Daemon `host` (process `pid`, started at `started_at`) is up, for
    /// `ttl` more (server time): a member of the team even while it
    /// holds no lease.
    pub fn present(
        &self,
        host: &str,
        pid: u32,
        started_at: Millis,
        ttl: Duration,
    ) -> Result<(), MemoryError> {
        self.client()?
            .execute(
                &format!(
                    "INSERT INTO team_members (host, pid, started_at, expires_at)
                     VALUES ($1, $2, $3, {NOW} + $4)
                     ON CONFLICT (host) DO UPDATE SET pid = EXCLUDED.pid,
                         started_at = EXCLUDED.started_at, expires_at = EXCLUDED.expires_at"
                ),
                &[&host, &i64::from(pid), &started_at, &ms(ttl)],
            )
            .map_err(failed)?;
        Ok(())
    }

    /// Daemon `host` stops cleanly: no longer a member.
    pub fn absent(&self, host: &str) -> Result<(), MemoryError> {
        self.client()?
            .execute("DELETE FROM team_members WHERE host = $1", &[&host])
            .map_err(failed)?;
        Ok(())
    }

    /// The daemons up now (seen within their time), by name.
    pub fn members(&self) -> Result<Vec<String>, MemoryError> {
        let rows = self
            .client()?
            .query(
                &format!("SELECT host FROM team_members WHERE expires_at > {NOW} ORDER BY host"),
                &[],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}
