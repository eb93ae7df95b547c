//! What one daemon of a team tells the others about its agents — a failed
//! model call, a halt, a lost lease — kept in `team_notices` and
//! announced with `NOTIFY`, so a console attached to any daemon learns of
//! it. The newest [`KEPT`] are kept.

use super::listen::channel;
use super::{PgStore, failed};
use crate::memory::MemoryResult;
use partner_core::clock::Millis;

/// How many notices are kept.
pub const KEPT: i64 = 1000;

/// Longest message kept, in bytes (cut at a character boundary).
pub const MAX_MESSAGE: usize = 4096;

/// One notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamNotice {
    /// Its number.
    pub id: i64,
    /// The daemon that reported it.
    pub host: String,
    /// The agent.
    pub agent: String,
    /// What happened (`turn_failed`, `halted`, `lease_lost`).
    pub kind: String,
    /// In words.
    pub message: String,
    /// When (the reporter's clock).
    pub at: Millis,
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl PgStore {
    /// Reports `kind` about `agent` from daemon `host` to the team; the
    /// oldest notices past [`KEPT`] are dropped.
    pub fn tell_team(
        &self,
        host: &str,
        agent: &str,
        kind: &str,
        message: &str,
        at: Millis,
    ) -> MemoryResult<i64> {
        self.transaction(|tx| {
            tx.with(|tx| {
                let id: i64 = tx
                    .query_one(
                        "INSERT INTO team_notices (host, agent, kind, message, at)
                         VALUES ($1, $2, $3, $4, $5) RETURNING id",
                        &[&host, &agent, &kind, &cut(message, MAX_MESSAGE), &at],
                    )
                    .map_err(failed)?
                    .get(0);
                tx.execute("DELETE FROM team_notices WHERE id <= $1", &[&(id - KEPT)])
                    .map_err(failed)?;
                tx.execute(
                    "SELECT pg_notify($1, $2)",
                    &[&channel::NOTICES, &id.to_string()],
                )
                .map_err(failed)?;
                Ok(id)
            })
        })
    }

    /// The notices after `after` from daemons other than `host`, oldest
    /// first, at most `limit`; and the newest number seen (to read after
    /// next time).
    pub fn team_notices(
        &self,
        after: i64,
        host: &str,
        limit: i64,
    ) -> MemoryResult<(Vec<TeamNotice>, i64)> {
        let rows = self
            .client()?
            .query(
                "SELECT id, host, agent, kind, message, at FROM team_notices
                 WHERE id > $1 ORDER BY id LIMIT $2",
                &[&after, &limit],
            )
            .map_err(failed)?;
        let newest = rows.last().map_or(after, |r| r.get(0));
        let notices = rows
            .iter()
            .map(|r| TeamNotice {
                id: r.get(0),
                host: r.get(1),
                agent: r.get(2),
                kind: r.get(3),
                message: r.get(4),
                at: r.get(5),
            })
            .filter(|n| n.host != host)
            .collect();
        Ok((notices, newest))
    }

    /// The newest notice's number (0 when there is none): a daemon that
    /// starts reads only what comes after.
    pub fn newest_team_notice(&self) -> MemoryResult<i64> {
        Ok(self
            .client()?
            .query_one("SELECT COALESCE(MAX(id), 0) FROM team_notices", &[])
            .map_err(failed)?
            .get(0))
    }
}
