//! The trace file: one JSON object per line beside the database, appended
//! after each action's database commit. Reading tolerates a torn last line
//! (a crash mid-write): it is skipped with a warning.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::record::TraceRecord;

/// The trace file beside a database: `x.db` → `x.trace.jsonl`.
pub fn trace_path_for(db: &Path) -> PathBuf {
    let stem = db
        .file_stem()
        .map_or_else(|| "partner".into(), |s| s.to_string_lossy().into_owned());
    db.with_file_name(format!("{stem}.trace.jsonl"))
}

/// An open trace file for appending.
#[derive(Debug)]
pub struct TraceLog {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

/// Problems met while reading a trace (never fatal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceWarning {
    /// One-based line number.
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for TraceWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl TraceLog {
    /// Opens (creating) the trace at `path` for appending.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let log = TraceLog {
            path,
            file: Mutex::new(Some(file)),
        };
        log.repair_tail()?;
        Ok(log)
    }

    /// A trace that records nothing (replay's scratch executor).
    pub fn disabled() -> Self {
        TraceLog {
            path: PathBuf::new(),
            file: Mutex::new(None),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// If the file ends in a torn line, ends it so the next record starts
    /// on a line of its own (the torn line stays and is skipped on read).
    fn repair_tail(&self) -> std::io::Result<()> {
        let bytes = std::fs::read(&self.path)?;
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            let mut guard = self.file.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(file) = guard.as_mut() {
                file.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    /// Appends one record as a line and flushes it.
    pub fn append(&self, record: &TraceRecord) -> std::io::Result<()> {
        let mut guard = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let Some(file) = guard.as_mut() else {
            return Ok(());
        };
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        file.write_all(&line)?;
        file.flush()
    }
}

/// Reads the records appended to a trace file after byte `offset`, and
/// the offset to continue from (an incomplete last line is left for next time).
pub fn read_trace_from(
    path: impl AsRef<Path>,
    offset: u64,
) -> std::io::Result<(Vec<TraceRecord>, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path.as_ref())?;
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let records = bytes[..complete]
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<TraceRecord>(line).ok())
        .collect();
    Ok((records, offset + complete as u64))
}

/// Reads every record of a trace file. Lines that do not parse (a torn last
/// line after a crash, or damage) are skipped and reported as warnings.
pub fn read_trace(
    path: impl AsRef<Path>,
) -> std::io::Result<(Vec<TraceRecord>, Vec<TraceWarning>)> {
    let file = File::open(path.as_ref())?;
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        number += 1;
        let complete = line.ends_with(b"\n");
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_str::<TraceRecord>(text) {
            Ok(record) => records.push(record),
            Err(e) => warnings.push(TraceWarning {
                line: number,
                message: if complete {
                    format!("skipped a damaged record ({e})")
                } else {
                    "skipped a torn last line (the writer stopped mid-record)".to_string()
                },
            }),
        }
    }
    Ok((records, warnings))
}
