//! The execution trace: one record per action outcome, appended to a
//! JSON-lines file beside the database and indexed in SQLite; and replay
//! verification against a fresh store.

mod log;
mod record;
pub mod replay;

pub use log::{TraceLog, TraceWarning, read_trace, read_trace_from, trace_path_for};
pub use record::{BlockSpec, DecisionPath, TraceOp, TraceOutcome, TraceRecord, TraceSource};
