//! Requests that partners decide together: which partners a request
//! names as its deciders, how many must approve it, and each approval
//! counted once, in the decision's transaction.

use rusqlite::{Connection, OptionalExtension, params};

use crate::Authority;
use crate::pending::{PendingRequest, row_id};
use partner_store::memory::MemoryError;

/// Why a partner may not decide a request (or not alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotDecider {
    /// Only the named partners may.
    NotNamed(Vec<String>),
    /// It needs approvals from several partners, each under their own
    /// name; a partner without one cannot count.
    Unnamed(usize),
}

impl std::fmt::Display for NotDecider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotDecider::NotNamed(names) => {
                write!(
                    f,
                    "only partner {} may decide it",
                    names.join(" or partner ")
                )
            }
            NotDecider::Unnamed(n) => write!(
                f,
                "it needs {n} partners to approve it, each with their own token; a console without a partner's token cannot count as one"
            ),
        }
    }
}

impl PendingRequest {
    /// Whether partner `by` (named or not) may decide it: one of its
    /// deciders when it names any; someone with a name when it needs
    /// several approvals.
    pub fn partner_may_decide(&self, by: &Authority) -> Result<(), NotDecider> {
        match by.partner_name() {
            Some(name) if self.deciders.is_empty() || self.deciders.iter().any(|d| d == name) => {
                Ok(())
            }
            Some(_) => Err(NotDecider::NotNamed(self.deciders.clone())),
            None if !self.deciders.is_empty() => Err(NotDecider::NotNamed(self.deciders.clone())),
            None if self.approvals_needed > 1 => Err(NotDecider::Unnamed(self.approvals_needed)),
            None => Ok(()),
        }
    }

    /// How many more approvals it needs after those it has.
    pub fn approvals_missing(&self) -> usize {
        self.approvals_needed
            .max(1)
            .saturating_sub(self.approved_by.len())
    }
}

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
