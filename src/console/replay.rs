//! A trace the partner opens for replay, read and re-executed here (on
//! a scratch store) with the constellation's verbs: the file is the
//! partner's, not the constellation's.

use partner_dialect::VerbTable;
use partner_store::trace::{TraceInput, TraceRecord};
use partner_tui::backend::{BackendOp, OpenedTrace, Reply};

/// Carries out a replay op (blocking: run it off the console's thread).
pub fn run(op: BackendOp, verbs: &VerbTable) -> Reply {
    match op {
        BackendOp::OpenReplay(path) => match TraceInput::guess(&path).load() {
            Ok((records, _)) => Reply::Replay(OpenedTrace { path, records }),
            Err(e) => Reply::Failed(format!("cannot open the trace: {e}")),
        },
        BackendOp::VerifyReplay(records) => verify(&records, verbs),
        BackendOp::ReplayMemory {
            records,
            step,
            agent,
        } => memory_at(&records, step, &agent, verbs),
        BackendOp::Host(op) => Reply::Failed(format!("not a replay: {op:?}")),
    }
}

/// Where replaying `records` first differs.
fn verify(records: &[TraceRecord], verbs: &VerbTable) -> Reply {
    match partner_engine::exec::replay::verify_records_with(records, Some(verbs)) {
        Ok((_, divergence)) => Reply::Verified(divergence),
        Err(e) => Reply::Failed(format!("verification failed: {e}")),
    }
}

/// An agent's memory as at `step` of a replay, and that step's change.
fn memory_at(records: &[TraceRecord], step: usize, agent: &str, verbs: &VerbTable) -> Reply {
    match partner_engine::exec::replay::memory_and_change_at(records, step, agent, Some(verbs)) {
        Ok((list, diff)) => Reply::ReplayMemory(step, list, diff),
        Err(e) => Reply::Failed(format!("cannot rebuild memory at step {step}: {e}")),
    }
}
