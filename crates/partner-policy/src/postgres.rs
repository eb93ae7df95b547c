//! The queue on PostgreSQL: the same [`Requests`] as on SQLite. A decision
//! is one `UPDATE … WHERE status = 'waiting' RETURNING`, so of two
//! partners (or daemons) deciding at once exactly one is recorded and the
//! other is told who came first. A new request and a decision are each
//! announced with `NOTIFY` as they commit, so every daemon listening hears
//! of them at once.

use postgres::{GenericClient, Row};

use crate::approvals::Approving;
use crate::claims;
use crate::pending::{NewRequest, NewRule, PendingRequest, RequestedAction, StandingRule};
use crate::requests::{DecideError, Decided, Requests, RuleScope, second};
use crate::{Authority, RequestStatus};
use partner_core::clock::Millis;
use partner_dialect::Verb;
use partner_store::memory::MemoryError;
use partner_store::postgres::{PgTx, channel, failed};

pub(crate) const COLUMNS: &str = "id, agent, canonical, action_json, verb, marker, reason, authorities, authority_index, turn_id, raw_text, status, decided_by, decision, decision_note, created_at, expires_at, decided_at, thread, on_behalf_of, action_id, deciders, approvals_needed, approved_by, claimed_by";

const RULE_COLUMNS: &str =
    "id, agent, verb, target, effect, reason, created_by, created_at, expires_at, op";

pub(crate) fn request_of(r: &Row) -> PendingRequest {
    let canonical: String = r.get(2);
    PendingRequest {
        id: format!("r{}", r.get::<_, i64>(0)),
        agent: r.get(1),
        action: serde_json::from_str(r.get::<_, &str>(3))
            .unwrap_or_else(|_| RequestedAction::from_canonical(&canonical)),
        verb: Verb::from_name(r.get::<_, &str>(4)),
        marker: r.get(5),
        reason: r.get(6),
        authorities: serde_json::from_str(r.get::<_, &str>(7))
            .unwrap_or_else(|_| vec![Authority::Partner]),
        authority_index: usize::try_from(r.get::<_, i64>(8)).unwrap_or(0),
        turn_id: r.get(9),
        raw_text: r.get(10),
        status: RequestStatus::parse(r.get::<_, &str>(11)),
        decided_by: r.get(12),
        decision: r.get(13),
        decision_note: r.get(14),
        created_at: r.get(15),
        expires_at: r.get(16),
        decided_at: r.get(17),
        canonical,
        thread: r.get(18),
        on_behalf_of: serde_json::from_str(r.get::<_, &str>(19)).unwrap_or_default(),
        action_id: r.get(20),
        deciders: serde_json::from_str(r.get::<_, &str>(21)).unwrap_or_default(),
        approvals_needed: usize::try_from(r.get::<_, i64>(22)).unwrap_or(1).max(1),
        approved_by: serde_json::from_str(r.get::<_, &str>(23)).unwrap_or_default(),
        claimed_by: r.get(24),
    }
}

fn rule_of(r: &Row) -> StandingRule {
    StandingRule {
        id: r.get(0),
        agent: r.get(1),
        verb: r.get(2),
        target: r.get(3),
        effect: r.get(4),
        reason: r.get(5),
        created_by: r.get(6),
        created_at: r.get(7),
        expires_at: r.get(8),
        op: r.get(9),
    }
}

pub(crate) fn get(
    client: &mut impl GenericClient,
    id: &str,
) -> Result<Option<PendingRequest>, MemoryError> {
    let Some(row) = crate::pending::row_id(id) else {
        return Ok(None);
    };
    let found = client
        .query_opt(
            &format!("SELECT {COLUMNS} FROM pending WHERE id = $1"),
            &[&row],
        )
        .map_err(failed)?;
    Ok(found.as_ref().map(request_of))
}

/// A notice on `channel` with `id`, sent when the transaction commits.
pub(crate) fn notify(
    tx: &mut postgres::Transaction<'_>,
    channel: &str,
    id: &str,
) -> Result<(), MemoryError> {
    tx.execute("SELECT pg_notify($1, $2)", &[&channel, &id])
        .map_err(failed)?;
    Ok(())
}

fn json<T: serde::Serialize>(value: &T, otherwise: &str) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| otherwise.into())
}

/// The operations on one transaction.
impl Requests for PgTx<'_> {
    fn ask(&self, new: &NewRequest<'_>, now: Millis) -> Result<PendingRequest, MemoryError> {
        let mut client = self.conn();
        let mut tx = client.transaction().map_err(failed)?;
        let row = tx
            .query_one(
                &format!(
                    "INSERT INTO pending (agent, canonical, action_json, verb, marker, reason, authorities, turn_id, raw_text,
                                          span_start, span_end, created_at, expires_at, thread, on_behalf_of, action_id,
                                          deciders, approvals_needed)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
                     RETURNING {COLUMNS}"
                ),
                &[
                    &new.agent,
                    &new.canonical,
                    &json(new.action, "{}"),
                    &new.verb,
                    &new.marker,
                    &new.reason,
                    &json(&new.authorities, "[\"partner\"]"),
                    &new.turn_id,
                    &new.raw_text,
                    &(new.span.0 as i64),
                    &(new.span.1 as i64),
                    &now,
                    &new.expires_at,
                    &new.thread,
                    &json(&new.on_behalf_of, "[]"),
                    &new.action_id,
                    &json(&new.deciders, "[]"),
                    &(new.approvals_needed.max(1) as i64),
                ],
            )
            .map_err(failed)?;
        let asked = request_of(&row);
        // Every daemon hears of it when this commits.
        notify(&mut tx, channel::REQUESTS, &asked.id)?;
        tx.commit().map_err(failed)?;
        Ok(asked)
    }

    fn request(&self, id: &str) -> Result<Option<PendingRequest>, MemoryError> {
        get(&mut *self.conn(), id)
    }

    fn for_action(&self, action_id: &str) -> Result<Option<PendingRequest>, MemoryError> {
        let row = self
            .conn()
            .query_opt(
                &format!(
                    "SELECT {COLUMNS} FROM pending WHERE action_id = $1 ORDER BY id DESC LIMIT 1"
                ),
                &[&action_id],
            )
            .map_err(failed)?;
        Ok(row.as_ref().map(request_of))
    }

    fn waiting(&self) -> Result<Vec<PendingRequest>, MemoryError> {
        let rows = self
            .conn()
            .query(
                &format!("SELECT {COLUMNS} FROM pending WHERE status = 'waiting' ORDER BY id"),
                &[],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(request_of).collect())
    }

    fn decide(
        &self,
        id: &str,
        d: &Decided<'_>,
        now: Millis,
    ) -> Result<PendingRequest, DecideError> {
        let Some(row) = crate::pending::row_id(id) else {
            return Err(DecideError::NoRequest(id.to_string()));
        };
        let mut client = self.conn();
        let mut tx = client.transaction().map_err(failed)?;
        let decided = tx
            .query_opt(
                &format!(
                    "UPDATE pending SET status = $2, decision = $3, decided_by = $4, decision_note = $5, decided_at = $6
                     WHERE id = $1 AND (($7::TEXT IS NULL AND status = 'waiting') OR (status = 'running' AND claimed_by = $7))
                     RETURNING {COLUMNS}"
                ),
                &[&row, &d.status.as_str(), &d.decision, &d.by, &d.note, &now, &d.claimant],
            )
            .map_err(failed)?;
        match decided {
            Some(row) => {
                let decided = request_of(&row);
                // The waiting agent's daemon hears of it when this commits.
                notify(&mut tx, channel::DECISIONS, &decided.id)?;
                tx.commit().map_err(failed)?;
                Ok(decided)
            }
            None => Err(second(id, get(&mut tx, id)?)),
        }
    }

    fn claim(
        &self,
        id: &str,
        d: &Decided<'_>,
        claimant: &str,
        now: Millis,
    ) -> Result<PendingRequest, DecideError> {
        claims::claim(&mut *self.conn(), id, d, claimant, now)
    }

    fn release(&self, id: &str, claimant: &str) -> Result<bool, MemoryError> {
        claims::release(&mut *self.conn(), id, claimant)
    }

    fn running(&self) -> Result<Vec<PendingRequest>, MemoryError> {
        claims::running(&mut *self.conn())
    }

    fn add_approval(&self, id: &str, name: &str) -> Result<Approving, MemoryError> {
        let Some(row) = crate::pending::row_id(id) else {
            return Ok(Approving::NotWaiting);
        };
        let mut client = self.conn();
        let mut tx = client.transaction().map_err(failed)?;
        // The row is locked until this commits: two partners approving at
        // once are both counted.
        let found = tx
            .query_opt(
                "SELECT approved_by FROM pending WHERE id = $1 AND status = 'waiting' FOR UPDATE",
                &[&row],
            )
            .map_err(failed)?;
        let Some(found) = found else {
            return Ok(Approving::NotWaiting);
        };
        let mut approved: Vec<String> =
            serde_json::from_str(found.get::<_, &str>(0)).unwrap_or_default();
        if approved.iter().any(|a| a == name) {
            return Ok(Approving::Again);
        }
        approved.push(name.to_string());
        tx.execute(
            "UPDATE pending SET approved_by = $2 WHERE id = $1",
            &[&row, &json(&approved, "[]")],
        )
        .map_err(failed)?;
        tx.commit().map_err(failed)?;
        Ok(Approving::Added(approved))
    }

    fn keep_result(&self, id: &str, result: &str) -> Result<(), MemoryError> {
        self.conn()
            .execute(
                "UPDATE pending SET result = $2, routed_at = NULL WHERE id = $1",
                &[&crate::pending::row_id(id), &result],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn add_rule(&self, rule: &NewRule<'_>, now: Millis) -> Result<i64, MemoryError> {
        let row = self
            .conn()
            .query_one(
                "INSERT INTO standing_rules (agent, verb, op, target, effect, reason, created_by, created_at, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
                &[
                    &rule.agent,
                    &rule.verb,
                    &rule.op,
                    &rule.target,
                    &if rule.allow { "allow" } else { "deny" },
                    &rule.reason,
                    &rule.by,
                    &now,
                    &rule.expires_at,
                ],
            )
            .map_err(failed)?;
        Ok(row.get(0))
    }

    fn rules(&self, now: Millis) -> Result<Vec<StandingRule>, MemoryError> {
        let rows = self
            .conn()
            .query(
                &format!(
                    "SELECT {RULE_COLUMNS} FROM standing_rules
                     WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $1) ORDER BY id"
                ),
                &[&now],
            )
            .map_err(failed)?;
        Ok(rows.iter().map(rule_of).collect())
    }

    fn revoke_rule(&self, id: i64, now: Millis) -> Result<bool, MemoryError> {
        let changed = self
            .conn()
            .execute(
                "UPDATE standing_rules SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                &[&id, &now],
            )
            .map_err(failed)?;
        Ok(changed > 0)
    }

    fn matching_rule(
        &self,
        s: &RuleScope<'_>,
        now: Millis,
    ) -> Result<Option<StandingRule>, MemoryError> {
        let rows = self
            .conn()
            .query(
                &format!(
                    "SELECT {RULE_COLUMNS} FROM standing_rules
                     WHERE revoked_at IS NULL AND agent = $1 AND verb = $2
                       AND target IS NOT DISTINCT FROM $3 AND op IS NOT DISTINCT FROM $4
                       AND (expires_at IS NULL OR expires_at > $5)"
                ),
                &[&s.agent, &s.verb, &s.target, &s.op, &now],
            )
            .map_err(failed)?;
        let rules = rows.iter().map(rule_of).collect();
        Ok(crate::pending::choose_rule(rules, s.agent, s.lineage))
    }

    fn take_unrouted(
        &self,
        now: Millis,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<(PendingRequest, String)>, MemoryError> {
        let mut client = self.conn();
        // Rows another daemon is taking are skipped, not waited for: it
        // routes them.
        let rows = client
            .query(
                &format!(
                    "SELECT {COLUMNS}, result FROM pending
                     WHERE routed_at IS NULL AND status != 'waiting' AND result IS NOT NULL
                     ORDER BY decided_at, id FOR UPDATE SKIP LOCKED"
                ),
                &[],
            )
            .map_err(failed)?;
        let column = COLUMNS.split(',').count();
        let taken: Vec<(PendingRequest, String)> = rows
            .iter()
            .map(|r| (request_of(r), r.get::<_, String>(column)))
            .filter(|(request, _)| ours(request))
            .collect();
        for (request, _) in &taken {
            client
                .execute(
                    "UPDATE pending SET routed_at = $2 WHERE id = $1",
                    &[&crate::pending::row_id(&request.id), &now],
                )
                .map_err(failed)?;
        }
        Ok(taken)
    }

    fn take_unannounced(
        &self,
        ours: &dyn Fn(&PendingRequest) -> bool,
    ) -> Result<Vec<PendingRequest>, MemoryError> {
        let mut client = self.conn();
        // Rows another daemon is taking are skipped, not waited for.
        let rows = client
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM pending
                     WHERE status = 'waiting' AND notified != authority_index
                     ORDER BY id FOR UPDATE SKIP LOCKED"
                ),
                &[],
            )
            .map_err(failed)?;
        let taken: Vec<PendingRequest> = rows.iter().map(request_of).filter(|r| ours(r)).collect();
        for request in &taken {
            client
                .execute(
                    "UPDATE pending SET notified = authority_index WHERE id = $1",
                    &[&crate::pending::row_id(&request.id)],
                )
                .map_err(failed)?;
        }
        Ok(taken)
    }

    fn escalate(&self, request: &PendingRequest) -> Result<Option<Authority>, MemoryError> {
        let Some((next, authority)) = crate::requests::next_authority(request) else {
            return Ok(None);
        };
        self.conn()
            .execute(
                "UPDATE pending SET authority_index = $2 WHERE id = $1",
                &[&crate::pending::row_id(&request.id), &(next as i64)],
            )
            .map_err(failed)?;
        Ok(Some(authority))
    }
}

/// A bucket's tokens and when it was last used, if it exists.
fn bucket(
    client: &mut impl GenericClient,
    agent: &str,
    verb: &str,
) -> Result<Option<(f64, Millis)>, MemoryError> {
    let row = client
        .query_opt(
            "SELECT tokens, last FROM rate_buckets WHERE agent = $1 AND verb = $2",
            &[&agent, &verb],
        )
        .map_err(failed)?;
    Ok(row.map(|r| (r.get(0), r.get(1))))
}

/// The operations on one transaction.
impl crate::rate::Buckets for PgTx<'_> {
    fn available(
        &self,
        agent: &str,
        verb: &str,
        limit: crate::RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError> {
        Ok(match bucket(&mut *self.conn(), agent, verb)? {
            Some((tokens, last)) => crate::rate::wait_for(tokens, last, limit, now),
            None => Ok(()),
        })
    }

    fn take(
        &self,
        agent: &str,
        verb: &str,
        limit: crate::RateLimit,
        now: Millis,
    ) -> Result<Result<(), Millis>, MemoryError> {
        let capacity = f64::from(limit.burst.max(1));
        let per_ms = limit.per_minute.max(0.0) / 60_000.0;
        let mut client = self.conn();
        // One statement: two daemons cannot both take the last token.
        let taken = client
            .execute(
                "INSERT INTO rate_buckets AS b (agent, verb, tokens, last)
                 VALUES ($1, $2, $3::FLOAT8 - 1, $5::BIGINT)
                 ON CONFLICT (agent, verb) DO UPDATE SET
                     tokens = LEAST($3::FLOAT8, b.tokens + GREATEST($5::BIGINT - b.last, 0)::FLOAT8 * $4::FLOAT8) - 1,
                     last = GREATEST(b.last, $5::BIGINT)
                 WHERE LEAST($3::FLOAT8, b.tokens + GREATEST($5::BIGINT - b.last, 0)::FLOAT8 * $4::FLOAT8) >= 1",
                &[&agent, &verb, &capacity, &per_ms, &now],
            )
            .map_err(failed)?;
        if taken > 0 {
            return Ok(Ok(()));
        }
        // The insert-or-update refused: the bucket exists and is empty.
        let (tokens, last) = bucket(&mut *client, agent, verb)?.unwrap_or((0.0, now));
        Ok(Err(crate::rate::wait_for(tokens, last, limit, now)
            .err()
            .unwrap_or(1)))
    }
}
