//! The execution trace: one record per action outcome, kept in the
//! constellation's database (`store`), written in the same transaction as
//! the effect it records; exported and read as JSON lines (`jsonl`).
//! Replaying a trace is the executor's job (`crate::exec::replay`).

mod jsonl;
pub mod query;
mod record;
pub mod store;

pub use jsonl::{TraceWarning, read_trace, read_trace_from};
pub use record::{BlockSpec, DecisionPath, TraceOp, TraceOutcome, TraceRecord, TraceSource};

use std::path::{Path, PathBuf};

/// Where to read a trace from: a constellation's database, or a JSON-lines
/// file (an export, or a trace from an older partner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceInput {
    /// The `trace` table of a database.
    Database(PathBuf),
    /// A JSON-lines file.
    File(PathBuf),
}

impl TraceInput {
    /// A path taken as a database when it is an SQLite file, as a
    /// JSON-lines file otherwise.
    pub fn guess(path: &Path) -> TraceInput {
        let sqlite = std::fs::File::open(path)
            .and_then(|mut f| {
                use std::io::Read;
                let mut head = [0u8; 16];
                f.read_exact(&mut head).map(|_| head)
            })
            .is_ok_and(|head| &head == b"SQLite format 3\0");
        if sqlite {
            TraceInput::Database(path.to_path_buf())
        } else {
            TraceInput::File(path.to_path_buf())
        }
    }

    /// The path read.
    pub fn path(&self) -> &Path {
        match self {
            TraceInput::Database(p) | TraceInput::File(p) => p,
        }
    }

    /// The constellation's own verbs a database keeps (none for a file).
    pub fn verbs(&self) -> Result<Option<crate::dialect::VerbTable>, String> {
        let TraceInput::Database(path) = self else {
            return Ok(None);
        };
        let store = crate::memory::MemoryStore::open(path).map_err(|e| e.to_string())?;
        let toml =
            crate::memory::records::meta(&store.read(), "verbs").map_err(|e| e.to_string())?;
        match toml {
            Some(toml) if !toml.is_empty() => {
                let mut table = crate::dialect::VerbTable::builtin();
                table.extend_from_toml(&toml).map_err(|e| e.to_string())?;
                Ok(Some(table))
            }
            _ => Ok(None),
        }
    }

    /// Every record, oldest first, and what could not be read.
    pub fn load(&self) -> Result<(Vec<TraceRecord>, Vec<TraceWarning>), String> {
        match self {
            TraceInput::File(path) => {
                read_trace(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
            }
            TraceInput::Database(path) => {
                let store = crate::memory::MemoryStore::open(path).map_err(|e| e.to_string())?;
                store::import_legacy(&mut store.conn(), path).map_err(|e| e.to_string())?;
                let conn = store.read();
                store::all(&conn).map_err(|e| e.to_string())
            }
        }
    }
}
