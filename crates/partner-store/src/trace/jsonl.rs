//! Trace files: JSON lines, one record each — what `partner trace export`
//! writes, what older partner versions kept beside the database, and what
//! `partner replay FILE` reads. Reading tolerates a torn last line (a
//! crash mid-write) and damaged lines: they are skipped with a warning.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use partner_protocol::trace::TraceRecord;

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
    let mut records = Vec::new();
    let warnings = each_in_file(path, |record| {
        records.push(record);
        true
    })?;
    Ok((records, warnings))
}

/// The longest line read as a record.
const MAX_LINE: usize = 64 << 20;

/// Reads past the rest of a line without holding it.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

/// Hands each record of a trace file to `f`, in order, until `f` returns
/// false; lines that do not parse are skipped and reported as warnings.
/// Holds one line at a time.
pub fn each_in_file(
    path: impl AsRef<Path>,
    mut f: impl FnMut(TraceRecord) -> bool,
) -> std::io::Result<Vec<TraceWarning>> {
    let file = File::open(path.as_ref())?;
    let mut warnings = Vec::new();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        number += 1;
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            // Past any record partner writes: the rest of the line is
            // passed over, never held.
            skip_line(&mut reader)?;
            warnings.push(TraceWarning {
                line: number,
                message: format!("skipped a line longer than {} MB", MAX_LINE >> 20),
            });
            continue;
        }
        let complete = line.ends_with(b"\n");
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_str::<TraceRecord>(text) {
            Ok(record) => {
                if !f(record) {
                    break;
                }
            }
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
    Ok(warnings)
}
