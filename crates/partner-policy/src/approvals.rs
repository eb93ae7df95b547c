//! Requests that partners decide together: which partners a request
//! names as its deciders, how many must approve it, and each approval
//! counted once, in the decision's transaction.

use rusqlite::{Connection, OptionalExtension, params};

pub use partner_protocol::request::NotDecider;

use crate::pending::row_id;
use partner_store::memory::MemoryError;

/// What adding one partner's approval to a request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approving {
    /// Recorded: the partners who have approved it now.
    Added(Vec<String>),
    /// That partner had approved it already.
    Again,
    /// It no longer waits.
    NotWaiting,
}

/// Adds `name`'s approval to a waiting request that needs several. Call
/// it in the decision's transaction, which holds the write lock, so two
/// partners approving at once are both counted.
pub fn add_approval(conn: &Connection, id: &str, name: &str) -> Result<Approving, MemoryError> {
    let found: Option<String> = conn
        .query_row(
            "SELECT approved_by FROM pending WHERE id = ?1 AND status = 'waiting'",
            [row_id(id)],
            |r| r.get(0),
        )
        .optional()?;
    let Some(found) = found else {
        return Ok(Approving::NotWaiting);
    };
    let mut approved: Vec<String> = serde_json::from_str(&found).unwrap_or_default();
    if approved.iter().any(|a| a == name) {
        return Ok(Approving::Again);
    }
    approved.push(name.to_string());
    conn.execute(
        "UPDATE pending SET approved_by = ?2 WHERE id = ?1",
        params![
            row_id(id),
            serde_json::to_string(&approved).unwrap_or_default()
        ],
    )?;
    Ok(Approving::Added(approved))
}
