//! The runtime's records of its agents on PostgreSQL: the same [`Roster`]
//! as on SQLite.

use postgres::GenericClient;

use super::{PgTx, failed};
use crate::memory::MemoryResult;
use crate::memory::records::{AgentState, Intention, IntentionStatus, OutboxItem};
use crate::memory::roster::{Fence, NewIntention, Outgoing, Roster};
use partner_core::clock::Millis;

/// Puts `name` on the roster, if it is not there.
fn ensure_in(client: &mut impl GenericClient, name: &str, now: Millis) -> MemoryResult<()> {
    client
        .execute(
            "INSERT INTO agents (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            &[&name, &now],
        )
        .map_err(failed)?;
    Ok(())
}

/// The operations on one transaction.
impl Roster for PgTx<'_> {
    fn ensure_agent(&self, name: &str, now: Millis) -> MemoryResult<()> {
        ensure_in(&mut *self.conn(), name, now)
    }

    fn agent_state(&self, name: &str) -> MemoryResult<AgentState> {
        let row = self
            .conn()
            .query_opt(
                "SELECT name, halted, halt_reason, pulse_secs FROM agents WHERE name = $1",
                &[&name],
            )
            .map_err(failed)?;
        Ok(match row {
            Some(r) => AgentState {
                name: r.get(0),
                halted: r.get(1),
                halt_reason: r.get(2),
                pulse_secs: r.get(3),
            },
            None => AgentState {
                name: name.to_string(),
                halted: false,
                halt_reason: None,
                pulse_secs: None,
            },
        })
    }

    fn set_halted(
        &self,
        name: &str,
        halted: bool,
        reason: Option<&str>,
        now: Millis,
    ) -> MemoryResult<()> {
        let mut client = self.conn();
        ensure_in(&mut *client, name, now)?;
        client
            .execute(
                "UPDATE agents SET halted = $2, halt_reason = $3 WHERE name = $1",
                &[&name, &halted, &reason],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn set_pulse(&self, name: &str, secs: i64, now: Millis) -> MemoryResult<()> {
        let mut client = self.conn();
        ensure_in(&mut *client, name, now)?;
        client
            .execute(
                "UPDATE agents SET pulse_secs = $2 WHERE name = $1",
                &[&name, &secs],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn add_intention(&self, n: &NewIntention<'_>, now: Millis) -> MemoryResult<i64> {
        let row = self
            .conn()
            .query_one(
                "INSERT INTO intentions (agent, what, due_text, due_at, next_session, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
                &[&n.agent, &n.what, &n.due_text, &n.due_at, &n.next_session, &now],
            )
            .map_err(failed)?;
        Ok(row.get(0))
    }

    fn intentions(&self, agent: &str, open_only: bool) -> MemoryResult<Vec<Intention>> {
        let rows = self
            .conn()
            .query(
                "SELECT id, agent, what, due_text, due_at, next_session, status, note, created_at FROM intentions
                 WHERE agent = $1 AND (NOT $2 OR status IN ('pending', 'triggered'))
                 ORDER BY status IN ('completed', 'dismissed'), due_at IS NULL, due_at, id",
                &[&agent, &open_only],
            )
            .map_err(failed)?;
        rows.iter()
            .map(|r| {
                Ok(Intention {
                    id: r.get(0),
                    agent: r.get(1),
                    what: r.get(2),
                    due_text: r.get(3),
                    due_at: r.get(4),
                    next_session: r.get(5),
                    status: IntentionStatus::parse(r.get::<_, &str>(6))?,
                    note: r.get(7),
                    created_at: r.get(8),
                })
            })
            .collect()
    }

    fn set_intention_status(
        &self,
        agent: &str,
        id: i64,
        status: IntentionStatus,
        note: Option<&str>,
        now: Millis,
    ) -> MemoryResult<bool> {
        let changed = self
            .conn()
            .execute(
                "UPDATE intentions SET status = $3, note = COALESCE($4, note), updated_at = $5
                 WHERE agent = $1 AND id = $2",
                &[&agent, &id, &status.as_str(), &note, &now],
            )
            .map_err(failed)?;
        Ok(changed > 0)
    }

    fn due_intentions(&self, now: Millis) -> MemoryResult<Vec<(String, i64)>> {
        let rows = self
            .conn()
            .query(
                "SELECT agent, id FROM intentions
                 WHERE status = 'pending' AND due_at IS NOT NULL AND due_at <= $1 ORDER BY due_at, id",
                &[&now],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    fn enqueue(&self, o: &Outgoing<'_>, now: Millis) -> MemoryResult<i64> {
        let row = self
            .conn()
            .query_one(
                "INSERT INTO outbox (agent, channel, target, content, public, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &[&o.agent, &o.channel, &o.target, &o.content, &o.public, &now],
            )
            .map_err(failed)?;
        Ok(row.get(0))
    }

    fn outbox(&self) -> MemoryResult<Vec<OutboxItem>> {
        let rows = self
            .conn()
            .query(
                "SELECT id, agent, channel, target, content, public, created_at, delivered_at
                 FROM outbox ORDER BY id",
                &[],
            )
            .map_err(failed)?;
        Ok(rows
            .iter()
            .map(|r| OutboxItem {
                id: r.get(0),
                agent: r.get(1),
                channel: r.get(2),
                target: r.get(3),
                content: r.get(4),
                public: r.get(5),
                created_at: r.get(6),
                delivered_at: r.get(7),
            })
            .collect())
    }

    fn agent_names(&self) -> MemoryResult<Vec<String>> {
        let rows = self
            .conn()
            .query(
                "SELECT agent FROM blocks UNION SELECT name FROM agents",
                &[],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn set_watch(&self, agent: &str, source: &str, active: bool, now: Millis) -> MemoryResult<()> {
        self.conn()
            .execute(
                "INSERT INTO data_watches (agent, source, active, changed_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (agent, source) DO UPDATE SET active = $3, changed_at = $4",
                &[&agent, &source, &active, &now],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn meta(&self, key: &str) -> MemoryResult<Option<String>> {
        let row = self
            .conn()
            .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
            .map_err(failed)?;
        Ok(row.map(|r| r.get(0)))
    }

    fn set_meta(&self, key: &str, value: Option<&str>) -> MemoryResult<()> {
        let mut client = self.conn();
        match value {
            Some(value) => client.execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = $2",
                &[&key, &value],
            ),
            None => client.execute("DELETE FROM meta WHERE key = $1", &[&key]),
        }
        .map_err(failed)?;
        Ok(())
    }

    fn add_parse_failure(
        &self,
        agent: &str,
        text: &str,
        message: &str,
        now: Millis,
    ) -> MemoryResult<()> {
        self.conn()
            .execute(
                "INSERT INTO parse_failures (agent, text, message, created_at) VALUES ($1, $2, $3, $4)",
                &[&agent, &text, &message, &now],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn holds(&self, agent: &str, fence: &Fence) -> MemoryResult<bool> {
        // Locked for share: a takeover (an UPDATE of this row) waits for
        // this transaction, and then raises the epoch.
        let row = self
            .conn()
            .query_opt(
                "SELECT 1 FROM agent_leases WHERE agent = $1 AND host = $2 AND epoch = $3
                 FOR SHARE",
                &[&agent, &fence.host, &fence.epoch],
            )
            .map_err(failed)?;
        Ok(row.is_some())
    }
}
