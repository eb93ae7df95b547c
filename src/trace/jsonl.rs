//! Trace files: JSON lines, one record each — what `partner trace export`
//! writes, what older partner versions kept beside the database, and what
//! `partner replay FILE` reads. Reading tolerates a torn last line (a
//! crash mid-write) and damaged lines: they are skipped with a warning.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::record::TraceRecord;

/// Problems met while reading a trace (never fatal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceWarning {
    /// One-based line number (for a trace in a database, the record's seq).
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for TraceWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
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
