//! Standing rules, stored in the constellation's database: an allow or a
//! deny the partner made for exactly one agent's verb, op and target, for
//! good or until a time; the one that applies to an action, a denial
//! first and never an allow made by the agent itself or one it acts for.

pub use partner_protocol::request::StandingRule;
use rusqlite::{Connection, Row, params};

use partner_core::clock::Millis;
use partner_store::memory::MemoryError;

/// What a new standing rule covers and says.
#[derive(Debug, Clone)]
pub struct NewRule<'a> {
    /// The agent.
    pub agent: &'a str,
    /// The verb.
    pub verb: &'a str,
    /// The op.
    pub op: Option<&'a str>,
    /// The target.
    pub target: Option<&'a str>,
    /// Allow (true) or deny.
    pub allow: bool,
    /// Why.
    pub reason: Option<&'a str>,
    /// Who made it.
    pub by: &'a str,
    /// When it lapses.
    pub expires_at: Option<Millis>,
}

/// Adds a standing rule for exactly the agent, verb, op and target given;
/// returns its id.
pub fn add_rule(conn: &Connection, rule: &NewRule<'_>, now: Millis) -> Result<i64, MemoryError> {
    conn.execute(
        "INSERT INTO standing_rules (agent, verb, op, target, effect, reason, created_by, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            rule.agent,
            rule.verb,
            rule.op,
            rule.target,
            if rule.allow { "allow" } else { "deny" },
            rule.reason,
            rule.by,
            now,
            rule.expires_at
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

const RULE_COLUMNS: &str =
    "id, agent, verb, target, effect, reason, created_by, created_at, expires_at, op";

fn rule_from_row(r: &Row<'_>) -> rusqlite::Result<StandingRule> {
    Ok(StandingRule {
        id: r.get(0)?,
        agent: r.get(1)?,
        verb: r.get(2)?,
        target: r.get(3)?,
        effect: r.get(4)?,
        reason: r.get(5)?,
        created_by: r.get(6)?,
        created_at: r.get(7)?,
        expires_at: r.get(8)?,
        op: r.get(9)?,
    })
}

/// Standing rules in force at `now`.
pub fn rules(conn: &Connection, now: Millis) -> Result<Vec<StandingRule>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RULE_COLUMNS} FROM standing_rules
         WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?1) ORDER BY id"
    ))?;
    let rows = stmt.query_map([now], rule_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The standing rule for an agent's verb, op and target in force at `now`
/// that applies to an action made on behalf of `lineage`; a deny wins over
/// an allow. A rule covers exactly the verb, op and target it was made for:
/// approving `/recall read plan` always says nothing about `/recall delete
/// plan`. An allowing rule an agent made does not cover actions made on
/// that agent's behalf (it would be deciding its own request).
pub fn matching_rule(
    conn: &Connection,
    agent: &str,
    verb: &str,
    op: Option<&str>,
    target: Option<&str>,
    lineage: &[String],
    now: Millis,
) -> Result<Option<StandingRule>, MemoryError> {
    // Filtered by time and ordered here (denials first, then newest): with
    // an ORDER BY, SQLite prepared this statement again on every run after
    // another connection wrote, which cost more than the rest of the check.
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RULE_COLUMNS} FROM standing_rules
         WHERE revoked_at IS NULL AND agent = ?1 AND verb = ?2 AND target IS ?3 AND op IS ?4"
    ))?;
    let rules = stmt
        .query_map(params![agent, verb, target, op], rule_from_row)?
        .filter(|rule| {
            rule.as_ref()
                .map_or(true, |rule| rule.expires_at.is_none_or(|at| at > now))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(choose_rule(rules, agent, lineage))
}

/// Of the rules in force for one scope, the one that applies: a denial
/// first, then the newest allow not made by the agent itself or one it
/// acts for (an agent never approves its own request).
pub fn choose_rule(
    mut rules: Vec<StandingRule>,
    agent: &str,
    lineage: &[String],
) -> Option<StandingRule> {
    rules.sort_by_key(|rule| (rule.effect != "deny", std::cmp::Reverse(rule.id)));
    rules.into_iter().find(|rule| {
        let by_interested = rule
            .created_by
            .strip_prefix("agent:")
            .is_some_and(|by| by == agent || lineage.iter().any(|l| l == by));
        rule.effect == "deny" || !by_interested
    })
}

/// Revokes a standing rule; false when there was none in force.
pub fn revoke_rule(conn: &Connection, id: i64, now: Millis) -> Result<bool, MemoryError> {
    Ok(conn.execute(
        "UPDATE standing_rules SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
        params![id, now],
    )? > 0)
}
