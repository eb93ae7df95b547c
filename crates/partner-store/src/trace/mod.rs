//! The execution trace: one record per action outcome, kept in the
//! constellation's database (`store`), written in the same transaction as
//! the effect it records; exported and read as JSON lines (`jsonl`).
//! Replaying a trace is the executor's job (`partner_engine::exec::replay`).

pub mod backend;
mod jsonl;
pub mod query;
pub mod store;

pub use jsonl::{TraceWarning, read_trace, read_trace_from};
pub use partner_protocol::trace::{
    BlockSpec, DecisionPath, Divergence, TraceOp, TraceOutcome, TraceRecord, TraceSource,
};

use std::path::{Path, PathBuf};

/// Records read from a database at a time by [`TraceInput::each`].
const PAGE: usize = 1_000;

/// Pages [`TraceInput::each`] reads ahead of the records' consumer.
pub const AHEAD: usize = 2;

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
    pub fn verbs(&self) -> Result<Option<partner_dialect::VerbTable>, String> {
        let TraceInput::Database(path) = self else {
            return Ok(None);
        };
        let store = crate::memory::MemoryStore::open(path).map_err(|e| e.to_string())?;
        let toml =
            crate::memory::records::meta(&store.read(), "verbs").map_err(|e| e.to_string())?;
        match toml {
            Some(toml) if !toml.is_empty() => {
                let mut table = partner_dialect::VerbTable::builtin();
                table.extend_from_toml(&toml).map_err(|e| e.to_string())?;
                Ok(Some(table))
            }
            _ => Ok(None),
        }
    }

    /// Hands each record to `f`, oldest first, with what `prepare` made of
    /// it, until `f` returns false; returns what could not be read. The
    /// records are read, decoded and prepared on a thread of their own
    /// while `f` works, at most [`AHEAD`] pages ahead of it (memory holds a
    /// few pages whatever the trace's length), and the pages `f` is done
    /// with go back to that thread to be freed.
    pub fn each<P: Send>(
        &self,
        mut prepare: impl FnMut(&TraceRecord) -> P + Send,
        mut f: impl FnMut(&TraceRecord, &P) -> bool,
    ) -> Result<Vec<TraceWarning>, String> {
        type Page<P> = Vec<(TraceRecord, P)>;
        std::thread::scope(|scope| {
            let (pages, arriving) = std::sync::mpsc::sync_channel::<Page<P>>(AHEAD);
            let (done, spent) = std::sync::mpsc::sync_channel::<Page<P>>(AHEAD + 1);
            let reader = std::thread::Builder::new()
                .name("trace reader".into())
                .spawn_scoped(scope, move || {
                    let mut page = Vec::with_capacity(PAGE);
                    let warnings = self.each_here(|record| {
                        let prepared = prepare(&record);
                        page.push((record, prepared));
                        if page.len() < PAGE {
                            return true;
                        }
                        // Frees what `f` is done with.
                        while spent.try_recv().is_ok() {}
                        // A closed channel: `f` stopped.
                        pages
                            .send(std::mem::replace(&mut page, Vec::with_capacity(PAGE)))
                            .is_ok()
                    })?;
                    if !page.is_empty() {
                        let _ = pages.send(page);
                    }
                    Ok(warnings)
                })
                .map_err(|e| format!("cannot start the trace reader: {e}"))?;
            'pages: for page in &arriving {
                for (record, prepared) in &page {
                    if !f(record, prepared) {
                        break 'pages;
                    }
                }
                // Freed here when the reader has finished.
                let _ = done.try_send(page);
            }
            // The reader sees the channel closed at its next page, and ends.
            drop(arriving);
            reader.join().unwrap_or_else(|panic| {
                Err(format!(
                    "the trace reader failed: {}",
                    partner_core::isolate::panic_message(panic.as_ref())
                ))
            })
        })
    }

    /// [`TraceInput::each`] on this thread, a page held at a time.
    fn each_here(
        &self,
        mut f: impl FnMut(TraceRecord) -> bool,
    ) -> Result<Vec<TraceWarning>, String> {
        match self {
            TraceInput::File(path) => jsonl::each_in_file(path, f)
                .map_err(|e| format!("cannot read {}: {e}", path.display())),
            TraceInput::Database(path) => {
                let store = crate::memory::MemoryStore::open(path).map_err(|e| e.to_string())?;
                store::import_legacy(&mut store.conn(), path).map_err(|e| e.to_string())?;
                let conn = store.read();
                let mut warnings = Vec::new();
                let mut after = 0;
                loop {
                    let (page, mut problems) =
                        store::since(&conn, after, PAGE).map_err(|e| e.to_string())?;
                    warnings.append(&mut problems);
                    let Some(last) = page.last().map(|r| r.seq) else {
                        return Ok(warnings);
                    };
                    after = last;
                    for record in page {
                        if !f(record) {
                            return Ok(warnings);
                        }
                    }
                }
            }
        }
    }

    /// Every agent that acted in the trace, sorted (for a database, read
    /// without decoding its records).
    pub fn agents(&self) -> Result<Vec<String>, String> {
        let mut agents = Vec::new();
        match self {
            TraceInput::File(_) => {
                self.each_here(|r| {
                    if !agents.contains(&r.agent) {
                        agents.push(r.agent);
                    }
                    true
                })?;
            }
            TraceInput::Database(path) => {
                let store = crate::memory::MemoryStore::open(path).map_err(|e| e.to_string())?;
                store::import_legacy(&mut store.conn(), path).map_err(|e| e.to_string())?;
                let conn = store.read();
                let mut stmt = conn
                    .prepare("SELECT DISTINCT agent FROM trace")
                    .map_err(|e| e.to_string())?;
                let rows = stmt
                    .query_map([], |r| r.get::<_, String>(0))
                    .map_err(|e| e.to_string())?;
                for agent in rows {
                    agents.push(agent.map_err(|e| e.to_string())?);
                }
            }
        }
        agents.sort();
        Ok(agents)
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
