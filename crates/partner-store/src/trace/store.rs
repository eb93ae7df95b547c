//! The trace in the database (table `trace`): one row per record, written
//! in the same transaction as the effect it records, its sequence number
//! allocated there, so any number of processes can write one trace. The
//! JSON-lines form is an export (`partner trace export`) and an import, for
//! databases from before the trace moved inside.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::jsonl::TraceWarning;
use crate::memory::{MemoryError, MemoryResult};
use partner_protocol::trace::TraceRecord;

/// The next sequence number. Call it inside the write transaction that
/// inserts the record (partner's action transactions take the write lock
/// when they begin), so no other writer can take the same number.
pub fn next_seq(conn: &Connection) -> MemoryResult<u64> {
    let last: i64 = conn
        .prepare_cached("SELECT coalesce(max(seq), 0) FROM trace")?
        .query_row([], |r| r.get(0))?;
    Ok(last as u64 + 1)
}

/// Stores a record (its `seq` and `id` already set).
pub fn insert(conn: &Connection, record: &TraceRecord) -> MemoryResult<()> {
    let json = serde_json::to_string(record).map_err(|e| MemoryError::Corrupt {
        what: "trace record",
        value: e.to_string(),
    })?;
    conn.prepare_cached(
        "INSERT INTO trace (seq, id, time, agent, verb, canonical, outcome, action_id, duration_us, record)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
            record.seq as i64,
            record.id,
            record.time,
            record.agent,
            record.verb,
            record.canonical,
            record.outcome.as_str(),
            record.action_id,
            record.duration_us as i64,
            json
        ])?;
    Ok(())
}

pub(super) fn decode(seq: i64, json: Option<String>) -> Result<TraceRecord, TraceWarning> {
    let line = usize::try_from(seq).unwrap_or(0);
    let Some(json) = json else {
        return Err(TraceWarning {
            line,
            message: "an older record whose details were never written (only its index row exists)"
                .into(),
        });
    };
    serde_json::from_str(&json).map_err(|e| TraceWarning {
        line,
        message: format!("skipped a damaged record ({e})"),
    })
}

/// Records after `after` (a sequence number), oldest first, at most
/// `limit`; records that do not decode are skipped with a warning (whose
/// `line` is the record's seq).
pub fn since(
    conn: &Connection,
    after: u64,
    limit: usize,
) -> MemoryResult<(Vec<TraceRecord>, Vec<TraceWarning>)> {
    let mut stmt =
        conn.prepare_cached("SELECT seq, record FROM trace WHERE seq > ?1 ORDER BY seq LIMIT ?2")?;
    let rows = stmt.query_map(params![after as i64, limit as i64], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
    })?;
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    for row in rows {
        let (seq, json) = row?;
        match decode(seq, json) {
            Ok(record) => records.push(record),
            Err(warning) => warnings.push(warning),
        }
    }
    Ok((records, warnings))
}

/// Every record, oldest first.
pub fn all(conn: &Connection) -> MemoryResult<(Vec<TraceRecord>, Vec<TraceWarning>)> {
    since(conn, 0, usize::MAX >> 1)
}

/// One record by id (`t12`).
pub fn get(conn: &Connection, id: &str) -> MemoryResult<Option<TraceRecord>> {
    let row: Option<(i64, Option<String>)> = conn
        .query_row("SELECT seq, record FROM trace WHERE id = ?1", [id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    Ok(row.and_then(|(seq, json)| decode(seq, json).ok()))
}

/// The newest record of the action `action_id` (a decided request's
/// record carries the id its action had in its turn).
pub fn by_action(conn: &Connection, action_id: &str) -> MemoryResult<Option<TraceRecord>> {
    let row: Option<(i64, Option<String>)> = conn
        .query_row(
            "SELECT seq, record FROM trace WHERE action_id = ?1 ORDER BY seq DESC LIMIT 1",
            [action_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    Ok(row.and_then(|(seq, json)| decode(seq, json).ok()))
}

/// Number of records.
pub fn count(conn: &Connection) -> MemoryResult<u64> {
    let n: i64 = conn.query_row("SELECT count(*) FROM trace", [], |r| r.get(0))?;
    Ok(n as u64)
}

/// Writes every record as one JSON line each, oldest first; returns how
/// many were written.
pub fn export_jsonl(conn: &Connection, out: &mut dyn Write) -> std::io::Result<usize> {
    let mut stmt = conn
        .prepare("SELECT record FROM trace WHERE record IS NOT NULL ORDER BY seq")
        .map_err(std::io::Error::other)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(std::io::Error::other)?;
    let mut written = 0;
    for row in rows {
        let json = row.map_err(std::io::Error::other)?;
        out.write_all(json.as_bytes())?;
        out.write_all(b"\n")?;
        written += 1;
    }
    Ok(written)
}

/// The trace file a database had beside it before the trace moved into
/// the database: `x.db` → `x.trace.jsonl`.
pub fn legacy_file_for(db: &Path) -> PathBuf {
    let stem = db
        .file_stem()
        .map_or_else(|| "partner".into(), |s| s.to_string_lossy().into_owned());
    db.with_file_name(format!("{stem}.trace.jsonl"))
}

/// What importing a legacy trace file did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// Records added or completed.
    pub records: usize,
    /// Lines skipped (damaged or torn).
    pub skipped: usize,
    /// Where the file was moved once imported.
    pub moved_to: Option<PathBuf>,
}

/// Imports the JSON-lines trace beside `db`, if there is one and it was not
/// imported before, in one transaction: each record fills its row (made by
/// the schema migration from the old index) or adds one. The file is then
/// renamed `….trace.jsonl.imported`, so it is read once and plainly no
/// longer written.
pub fn import_legacy(conn: &mut Connection, db: &Path) -> MemoryResult<Option<Imported>> {
    let path = legacy_file_for(db);
    if !path.exists() {
        return Ok(None);
    }
    let done: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'trace_imported'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if done.is_some() {
        return Ok(None);
    }
    let file = std::fs::File::open(&path).map_err(|e| MemoryError::Corrupt {
        what: "trace file",
        value: format!("{}: {e}", path.display()),
    })?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut imported = Imported::default();
    for line in BufReader::new(file).split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(record) = serde_json::from_slice::<TraceRecord>(&line) else {
            if !line.iter().all(u8::is_ascii_whitespace) {
                imported.skipped += 1;
            }
            continue;
        };
        let json = String::from_utf8_lossy(&line).into_owned();
        let updated = tx.execute(
            "UPDATE trace SET record = ?2, action_id = ?3 WHERE seq = ?1 AND record IS NULL",
            params![record.seq as i64, json, record.action_id],
        )?;
        if updated == 0 {
            let exists: bool = tx.query_row(
                "SELECT count(*) > 0 FROM trace WHERE seq = ?1",
                [record.seq as i64],
                |r| r.get(0),
            )?;
            if !exists {
                insert(&tx, &record)?;
            }
        }
        imported.records += 1;
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('trace_imported', ?1)",
        [path.display().to_string()],
    )?;
    tx.commit()?;
    let moved = path.with_file_name(format!(
        "{}.imported",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    if std::fs::rename(&path, &moved).is_ok() {
        imported.moved_to = Some(moved);
    }
    Ok(Some(imported))
}
