//! `partner trace show` and `partner replay --verify`.

use std::io::Write;
use std::path::PathBuf;

use super::common::{line, write_json};
use crate::clock::format_time;
use crate::error::{Error, Result};
use crate::trace::replay::verify_file;
use crate::trace::{TraceRecord, read_trace};

/// Options of `partner trace show`.
#[derive(Debug, Clone, clap::Args)]
pub struct TraceShowOptions {
    /// The trace file (`NAME.trace.jsonl` beside the database).
    pub file: PathBuf,
    /// Only this agent's records.
    #[arg(long)]
    pub agent: Option<String>,
    /// Only this verb.
    #[arg(long)]
    pub verb: Option<String>,
    /// Only this outcome (executed, denied, failed, cancelled, timed_out).
    #[arg(long)]
    pub outcome: Option<String>,
    /// Print one JSON array of records.
    #[arg(long)]
    pub json: bool,
}

/// Options of `partner replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayOptions {
    /// The trace file.
    pub trace: PathBuf,
    /// Re-execute against a fresh store and report the first divergence.
    #[arg(long)]
    pub verify: bool,
}

fn read(path: &PathBuf, err: &mut dyn Write) -> Result<Vec<TraceRecord>> {
    let (records, warnings) = read_trace(path).map_err(|source| Error::Read {
        path: path.clone(),
        source,
    })?;
    for warning in warnings {
        writeln!(err, "warning: {}: {warning}", path.display()).map_err(Error::Write)?;
    }
    Ok(records)
}

/// Runs `partner trace show`.
pub fn run_trace_show(
    options: &TraceShowOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let records: Vec<TraceRecord> = read(&options.file, err)?
        .into_iter()
        .filter(|r| options.agent.as_deref().is_none_or(|a| r.agent == a))
        .filter(|r| options.verb.as_deref().is_none_or(|v| r.verb == v))
        .filter(|r| {
            options
                .outcome
                .as_deref()
                .is_none_or(|o| r.outcome.as_str() == o)
        })
        .collect();
    if options.json {
        write_json(out, &records)?;
        return Ok(0);
    }
    for r in &records {
        let decided = r
            .decision
            .decided_by
            .as_ref()
            .map(|by| {
                format!(
                    " ({} by {by})",
                    r.decision.decision.as_deref().unwrap_or("decided")
                )
            })
            .unwrap_or_default();
        let first = r.result.lines().next().unwrap_or("");
        line(
            out,
            format!(
                "{} {} {} {}  {}{decided}: {first}  [{}µs]",
                r.id,
                format_time(r.time),
                r.agent,
                r.canonical,
                r.outcome.as_str(),
                r.duration_us
            ),
        )?;
    }
    Ok(0)
}

/// Runs `partner replay`. With `--verify`, exit 1 when the replay diverges.
pub fn run_replay(
    options: &ReplayOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    if !options.verify && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return super::run::run_replay_console(&options.trace, None, None);
    }
    if !options.verify {
        for (i, r) in read(&options.trace, err)?.iter().enumerate() {
            line(
                out,
                format!(
                    "step {}: {} {} → {}",
                    i + 1,
                    r.agent,
                    r.canonical,
                    r.outcome.as_str()
                ),
            )?;
        }
        return Ok(0);
    }
    let verification = verify_file(&options.trace)?;
    for warning in &verification.warnings {
        writeln!(err, "warning: {}: {warning}", options.trace.display()).map_err(Error::Write)?;
    }
    match verification.divergence {
        None => {
            line(
                out,
                format!(
                    "all {} steps matched ({} re-executed, the rest replayed from their recorded results)",
                    verification.steps, verification.redone
                ),
            )?;
            Ok(0)
        }
        Some(d) => {
            line(
                out,
                format!(
                    "step {} ({}) diverged: {} — {}",
                    d.step, d.id, d.canonical, d.what
                ),
            )?;
            Ok(1)
        }
    }
}
