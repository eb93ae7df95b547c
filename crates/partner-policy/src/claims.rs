//! Claiming a request to run it, on PostgreSQL: the same compare-and-set
//! as on SQLite (`pending::claim`), announced with `NOTIFY` so other
//! daemons stop showing it as waiting.

use postgres::GenericClient;

use crate::pending::PendingRequest;
use crate::postgres::{COLUMNS, get, notify, request_of};
use crate::requests::{DecideError, Decided, second};
use partner_core::clock::Millis;
use partner_store::memory::MemoryError;
use partner_store::postgres::{channel, failed};

/// Claims waiting request `id` for `claimant`, recording `d`'s decision;
/// who decided first when it no longer waits.
pub(crate) fn claim(
    client: &mut impl GenericClient,
    id: &str,
    d: &Decided<'_>,
    claimant: &str,
    now: Millis,
) -> Result<PendingRequest, DecideError> {
    let Some(row) = crate::pending::row_id(id) else {
        return Err(DecideError::NoRequest(id.to_string()));
    };
    let mut tx = client.transaction().map_err(failed)?;
    let claimed = tx
        .query_opt(
            &format!(
                "UPDATE pending SET status = 'running', decision = $2, decided_by = $3, decision_note = $4, decided_at = $5, claimed_by = $6
                 WHERE id = $1 AND status = 'waiting' RETURNING {COLUMNS}"
            ),
            &[&row, &d.decision, &d.by, &d.note, &now, &claimant],
        )
        .map_err(failed)?;
    match claimed {
        Some(row) => {
            let claimed = request_of(&row);
            notify(&mut tx, channel::DECISIONS, &claimed.id)?;
            tx.commit().map_err(failed)?;
            Ok(claimed)
        }
        None => Err(second(id, get(&mut tx, id)?)),
    }
}

/// Gives back `claimant`'s claim on request `id`: it waits again.
pub(crate) fn release(
    client: &mut impl GenericClient,
    id: &str,
    claimant: &str,
) -> Result<bool, MemoryError> {
    let Some(row) = crate::pending::row_id(id) else {
        return Ok(false);
    };
    let changed = client
        .execute(
            "UPDATE pending SET status = 'waiting', decision = NULL, decided_by = NULL, decision_note = NULL, decided_at = NULL, claimed_by = NULL
             WHERE id = $1 AND status = 'running' AND claimed_by = $2",
            &[&row, &claimant],
        )
        .map_err(failed)?;
    Ok(changed > 0)
}

/// The requests being run, oldest first.
pub(crate) fn running(client: &mut impl GenericClient) -> Result<Vec<PendingRequest>, MemoryError> {
    let rows = client
        .query(
            &format!("SELECT {COLUMNS} FROM pending WHERE status = 'running' ORDER BY id"),
            &[],
        )
        .map_err(failed)?;
    Ok(rows.iter().map(request_of).collect())
}
