//! Pending requests, stored in the constellation's database (standing
//! rules, in `standing`, are re-exported here). A request is committed
//! before the agent is told it waits, so it survives a crash or restart.

use rusqlite::{Connection, OptionalExtension, Row, params};

pub use super::standing::{
    NewRule, StandingRule, add_rule, choose_rule, matching_rule, revoke_rule, rules,
};
use partner_core::clock::Millis;
use partner_dialect::Verb;
pub use partner_protocol::request::{
    Authority, Decision, DecisionKind, PendingRequest, RequestStatus, RequestedAction,
};
use partner_store::memory::MemoryError;

/// The authorities of a request `agent` makes (on behalf of `lineage`):
/// `authorities` without any of those agents, who may not decide it; the
/// partner when nobody else is left. Also says whom it skipped.
pub fn independent_authorities(
    authorities: &[Authority],
    agent: &str,
    lineage: &[String],
) -> (Vec<Authority>, Vec<Authority>) {
    let interested = |name: &str| name == agent || lineage.iter().any(|l| l == name);
    let (skipped, kept): (Vec<Authority>, Vec<Authority>) = authorities
        .iter()
        .cloned()
        .partition(|a| matches!(a, Authority::Agent(name) if interested(name)));
    let mut kept = kept;
    if kept.is_empty() {
        kept.push(Authority::Partner);
    }
    (kept, skipped)
}

/// What to store for a new request.
#[derive(Debug, Clone)]
pub struct NewRequest<'a> {
    /// The agent.
    pub agent: &'a str,
    /// Canonical form.
    pub canonical: &'a str,
    /// What it asks for, typed.
    pub action: &'a RequestedAction,
    /// Verb.
    pub verb: &'a str,
    /// Marker.
    pub marker: Option<&'a str>,
    /// Why it waits.
    pub reason: &'a str,
    /// Who may decide.
    pub authorities: &'a [Authority],
    /// Turn id.
    pub turn_id: &'a str,
    /// Conversation.
    pub thread: &'a str,
    /// Raw text.
    pub raw_text: &'a str,
    /// The action's id.
    pub action_id: Option<&'a str>,
    /// Agents whose messages led to the request.
    pub on_behalf_of: &'a [String],
    /// The partners who may decide it (none: any).
    pub deciders: &'a [String],
    /// How many partners must approve it.
    pub approvals_needed: usize,
    /// Span in the turn.
    pub span: (usize, usize),
    /// Timeout.
    pub expires_at: Option<Millis>,
}

const COLUMNS: &str = "id, agent, canonical, action_json, verb, marker, reason, authorities, authority_index, turn_id, raw_text, status, decided_by, decision, decision_note, created_at, expires_at, decided_at, thread, on_behalf_of, action_id, deciders, approvals_needed, approved_by, claimed_by";

fn from_row(r: &Row<'_>) -> rusqlite::Result<PendingRequest> {
    let authorities: String = r.get(7)?;
    let action: String = r.get(3)?;
    let status: String = r.get(11)?;
    let canonical: String = r.get(2)?;
    Ok(PendingRequest {
        id: format!("r{}", r.get::<_, i64>(0)?),
        agent: r.get(1)?,
        // Rows written before the action was typed hold the parser's
        // whole JSON: its op, target and shell plan read the same. An
        // unreadable one is read again from the canonical text, so that a
        // standing rule made from it is never wider than the request.
        action: serde_json::from_str(&action)
            .unwrap_or_else(|_| RequestedAction::from_canonical(&canonical)),
        verb: Verb::from_name(&r.get::<_, String>(4)?),
        marker: r.get(5)?,
        reason: r.get(6)?,
        authorities: serde_json::from_str(&authorities)
            .unwrap_or_else(|_| vec![Authority::Partner]),
        authority_index: r.get::<_, i64>(8)? as usize,
        turn_id: r.get(9)?,
        raw_text: r.get(10)?,
        status: RequestStatus::parse(&status),
        decided_by: r.get(12)?,
        decision: r.get(13)?,
        decision_note: r.get(14)?,
        created_at: r.get(15)?,
        expires_at: r.get(16)?,
        decided_at: r.get(17)?,
        canonical,
        thread: r.get(18)?,
        on_behalf_of: serde_json::from_str(&r.get::<_, String>(19)?).unwrap_or_default(),
        action_id: r.get(20)?,
        deciders: serde_json::from_str(&r.get::<_, String>(21)?).unwrap_or_default(),
        approvals_needed: usize::try_from(r.get::<_, i64>(22)?).unwrap_or(1).max(1),
        approved_by: serde_json::from_str(&r.get::<_, String>(23)?).unwrap_or_default(),
        claimed_by: r.get(24)?,
    })
}

/// How many columns a request is read from.
fn column_count() -> usize {
    COLUMNS.split(',').count()
}

/// Parses `r12` (or `12`) into the row id.
pub fn row_id(id: &str) -> Option<i64> {
    id.trim().trim_start_matches(['r', 'R']).parse().ok()
}

/// Stores a new waiting request.
pub fn create(
    conn: &Connection,
    new: &NewRequest<'_>,
    now: Millis,
) -> Result<PendingRequest, MemoryError> {
    conn.execute(
        "INSERT INTO pending (agent, canonical, action_json, verb, marker, reason, authorities, turn_id, raw_text,
                              span_start, span_end, created_at, expires_at, thread, on_behalf_of, action_id,
                              deciders, approvals_needed)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        params![
            new.agent,
            new.canonical,
            serde_json::to_string(new.action).unwrap_or_else(|_| "{}".into()),
            new.verb,
            new.marker,
            new.reason,
            serde_json::to_string(new.authorities).unwrap_or_else(|_| "[\"partner\"]".into()),
            new.turn_id,
            new.raw_text,
            new.span.0 as i64,
            new.span.1 as i64,
            now,
            new.expires_at,
            new.thread,
            serde_json::to_string(new.on_behalf_of).unwrap_or_else(|_| "[]".into()),
            new.action_id,
            serde_json::to_string(new.deciders).unwrap_or_else(|_| "[]".into()),
            new.approvals_needed.max(1) as i64,
        ],
    )?;
    let id = conn.last_insert_rowid();
    get(conn, &format!("r{id}"))?
        .ok_or_else(|| MemoryError::Sqlite(rusqlite::Error::QueryReturnedNoRows))
}

/// The newest request made for the action `action_id`, whatever became
/// of it.
pub fn for_action(
    conn: &Connection,
    action_id: &str,
) -> Result<Option<PendingRequest>, MemoryError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM pending WHERE action_id = ?1 ORDER BY id DESC LIMIT 1"),
            [action_id],
            from_row,
        )
        .optional()?)
}

/// One request by id (`r12`).
pub fn get(conn: &Connection, id: &str) -> Result<Option<PendingRequest>, MemoryError> {
    let Some(row) = row_id(id) else {
        return Ok(None);
    };
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM pending WHERE id = ?1"),
            [row],
            from_row,
        )
        .optional()?)
}

/// Waiting requests, oldest first.
pub fn waiting(conn: &Connection) -> Result<Vec<PendingRequest>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM pending WHERE status = 'waiting' ORDER BY id"
    ))?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every request, newest first, up to `limit`.
pub fn all(conn: &Connection, limit: usize) -> Result<Vec<PendingRequest>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM pending ORDER BY id DESC LIMIT ?1"
    ))?;
    let rows = stmt.query_map([limit as i64], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Records a final status, if the request still waits — or, for a
/// decision that claimed it (`claimant`), if it is still running under
/// that claim. Call it in the decision's transaction and roll back when
/// it returns `false`: someone (perhaps another process) decided the
/// request meanwhile.
pub fn finish(
    conn: &Connection,
    id: &str,
    d: &crate::requests::Decided<'_>,
    now: Millis,
) -> Result<bool, MemoryError> {
    let changed = conn.execute(
        "UPDATE pending SET status = ?2, decision = ?3, decided_by = ?4, decision_note = ?5, decided_at = ?6
         WHERE id = ?1 AND ((?7 IS NULL AND status = 'waiting') OR (status = 'running' AND claimed_by = ?7))",
        params![row_id(id), d.status.as_str(), d.decision, d.by, d.note, now, d.claimant],
    )?;
    Ok(changed > 0)
}

/// Claims a waiting request for `claimant` to run (status `running`, the
/// decision recorded); `false` when it no longer waits.
pub fn claim(
    conn: &Connection,
    id: &str,
    d: &crate::requests::Decided<'_>,
    claimant: &str,
    now: Millis,
) -> Result<bool, MemoryError> {
    let changed = conn.execute(
        "UPDATE pending SET status = 'running', decision = ?2, decided_by = ?3, decision_note = ?4, decided_at = ?5, claimed_by = ?6
         WHERE id = ?1 AND status = 'waiting'",
        params![row_id(id), d.decision, d.by, d.note, now, claimant],
    )?;
    Ok(changed > 0)
}

/// Gives back `claimant`'s claim on a request whose effect never ran: it
/// waits again, undecided.
pub fn release(conn: &Connection, id: &str, claimant: &str) -> Result<bool, MemoryError> {
    let changed = conn.execute(
        "UPDATE pending SET status = 'waiting', decision = NULL, decided_by = NULL, decision_note = NULL, decided_at = NULL, claimed_by = NULL
         WHERE id = ?1 AND status = 'running' AND claimed_by = ?2",
        params![row_id(id), claimant],
    )?;
    Ok(changed > 0)
}

/// Requests being run, oldest first.
pub fn running(conn: &Connection) -> Result<Vec<PendingRequest>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM pending WHERE status = 'running' ORDER BY id"
    ))?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Keeps what the requesting agent should hear of a decision (JSON), for
/// whichever process routes it.
pub fn set_result(conn: &Connection, id: &str, result: &str) -> Result<(), MemoryError> {
    conn.execute(
        "UPDATE pending SET result = ?2, routed_at = NULL WHERE id = ?1",
        params![row_id(id), result],
    )?;
    Ok(())
}

/// Decided requests `ours` accepts (those of the agents a process runs,
/// or one request) whose result has not
/// reached the agent that asked yet, oldest first, with their results; each
/// is marked routed at `now`. Requests of other agents are left for the
/// process that runs them.
pub fn take_unrouted(
    conn: &Connection,
    now: Millis,
    ours: &dyn Fn(&PendingRequest) -> bool,
) -> Result<Vec<(PendingRequest, String)>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, result FROM pending
         WHERE routed_at IS NULL AND status != 'waiting' AND result IS NOT NULL ORDER BY decided_at, id"
    ))?;
    let rows: Vec<(PendingRequest, String)> = stmt
        // `result` comes after every column of a request.
        .query_map([], |r| {
            Ok((from_row(r)?, r.get::<_, String>(column_count())?))
        })?
        .filter(|row| row.as_ref().map_or(true, |(request, _)| ours(request)))
        .collect::<Result<_, _>>()?;
    for (request, _) in &rows {
        conn.execute(
            "UPDATE pending SET routed_at = ?2 WHERE id = ?1",
            params![row_id(&request.id), now],
        )?;
    }
    Ok(rows)
}

/// Waiting requests whose current authority has not been told yet (new
/// ones, and escalated ones) and that `ours` accepts, oldest first; each
/// is marked told.
pub fn take_unannounced(
    conn: &Connection,
    ours: &dyn Fn(&PendingRequest) -> bool,
) -> Result<Vec<PendingRequest>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM pending
         WHERE status = 'waiting' AND notified != authority_index ORDER BY id"
    ))?;
    let rows: Vec<PendingRequest> = stmt
        .query_map([], from_row)?
        .filter(|row| row.as_ref().map_or(true, ours))
        .collect::<Result<_, _>>()?;
    for request in &rows {
        conn.execute(
            "UPDATE pending SET notified = authority_index WHERE id = ?1",
            [row_id(&request.id)],
        )?;
    }
    Ok(rows)
}

/// Moves a request to its next authority. Returns the new authority, or
/// `None` when it already waits on the last one.
pub fn escalate(
    conn: &Connection,
    request: &PendingRequest,
) -> Result<Option<Authority>, MemoryError> {
    let Some((next, authority)) = crate::requests::next_authority(request) else {
        return Ok(None);
    };
    conn.execute(
        "UPDATE pending SET authority_index = ?2 WHERE id = ?1",
        params![row_id(&request.id), next as i64],
    )?;
    Ok(Some(authority))
}
