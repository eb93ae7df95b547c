//! `partner trace show`, `partner trace export` and `partner replay`. The
//! trace lives in the constellation's database; a JSON-lines file (an
//! export, or a trace from an older partner) can be read too.

use std::io::Write;
use std::path::PathBuf;

use super::common::{DbArg, line, write_json};
use crate::core::clock::format_time;
use crate::engine::exec::replay::{verify, verify_store};
use crate::error::{Error, Result};
use crate::store::trace::{TraceInput, TraceRecord};
use partner_engine::store::{Store, StoreAt};

/// Where a command reads a trace: a file given on the command line (a
/// database or a JSON-lines file), else the database `--db` names.
#[derive(Debug, Clone, clap::Args)]
pub struct TraceSourceArgs {
    #[command(flatten)]
    /// The database (used when no file is given).
    pub db: DbArg,
    /// A trace to read instead of the database's: another partner database,
    /// or a JSON-lines file (`partner trace export`, or an older partner's
    /// `NAME.trace.jsonl`).
    #[arg(value_name = "TRACE")]
    pub file: Option<PathBuf>,
}

/// A trace to read: a file or database file, or a PostgreSQL store's.
pub enum TraceAt {
    /// A database file or a JSON-lines file.
    Input(TraceInput),
    /// A PostgreSQL store (its trace is read through the store).
    Store(Box<Store>),
}

impl TraceSourceArgs {
    /// The trace to read.
    pub fn source(&self) -> Result<TraceAt> {
        Ok(match &self.file {
            Some(path) => TraceAt::Input(TraceInput::guess(path)),
            None => match self.db.existing_at()? {
                StoreAt::File(path) => TraceAt::Input(TraceInput::Database(path)),
                at => TraceAt::Store(Box::new(Store::open(&at)?)),
            },
        })
    }
}

/// Options of `partner trace show`.
#[derive(Debug, Clone, clap::Args)]
pub struct TraceShowOptions {
    #[command(flatten)]
    /// Where the trace is.
    pub source: TraceSourceArgs,
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

/// Options of `partner trace export`.
#[derive(Debug, Clone, clap::Args)]
pub struct TraceExportOptions {
    #[command(flatten)]
    /// The database.
    pub db: DbArg,
}

/// Options of `partner replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayOptions {
    #[command(flatten)]
    /// Where the trace is.
    pub source: TraceSourceArgs,
    /// Re-execute against a fresh store and report the first divergence.
    #[arg(long)]
    pub verify: bool,
}

fn read(source: &TraceAt, err: &mut dyn Write) -> Result<Vec<TraceRecord>> {
    let input = match source {
        TraceAt::Input(input) => input,
        TraceAt::Store(store) => return Ok(store.read(|tx| tx.all_records())?),
    };
    let (records, warnings) = input.load().map_err(Error::Runtime)?;
    for warning in warnings {
        writeln!(err, "warning: {}: {warning}", input.path().display()).map_err(Error::Write)?;
    }
    Ok(records)
}

/// Runs `partner trace export`: every record of the database's trace as
/// JSON lines on standard output.
pub fn run_trace_export(options: &TraceExportOptions, out: &mut dyn Write) -> Result<i32> {
    match options.db.existing_at()? {
        StoreAt::File(path) => {
            let store = crate::engine::exec::open_store(&path)?;
            let reader = store.read();
            crate::store::trace::store::export_jsonl(&reader, out).map_err(Error::Write)?;
        }
        at => {
            for record in Store::open(&at)?.read(|tx| tx.all_records())? {
                write_json(out, &record)?;
            }
        }
    }
    Ok(0)
}

/// Refuses filters that can match nothing, as the console does: an
/// outcome that does not exist, an agent or a verb the trace never saw.
fn check_filters(options: &TraceShowOptions, records: &[TraceRecord]) -> Result<()> {
    use crate::tui::command::OUTCOMES;
    if let Some(outcome) = &options.outcome
        && !OUTCOMES.contains(&outcome.as_str())
    {
        return Err(Error::Usage(format!(
            "no outcome '{outcome}' (outcomes: {})",
            OUTCOMES.join(", ")
        )));
    }
    let seen = |field: fn(&TraceRecord) -> &str| -> Vec<String> {
        let mut names: Vec<String> = records.iter().map(|r| field(r).to_string()).collect();
        names.sort();
        names.dedup();
        names
    };
    if let Some(agent) = &options.agent {
        let agents = seen(|r| r.agent.as_str());
        if !agents.contains(agent) {
            return Err(Error::Usage(format!(
                "no agent '{agent}' in this trace (agents: {})",
                if agents.is_empty() {
                    "none".into()
                } else {
                    agents.join(", ")
                }
            )));
        }
    }
    if let Some(verb) = &options.verb {
        let verbs = seen(|r| r.verb.as_str());
        let known = crate::dialect::VerbTable::builtin()
            .specs()
            .iter()
            .any(|s| s.verb.name() == verb.as_str());
        if !known && !verbs.contains(verb) {
            return Err(Error::Usage(format!(
                "no verb '{verb}' (verbs in this trace: {})",
                if verbs.is_empty() {
                    "none".into()
                } else {
                    verbs.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// Runs `partner trace show`.
pub fn run_trace_show(
    options: &TraceShowOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let all = read(&options.source.source()?, err)?;
    check_filters(options, &all)?;
    let records: Vec<TraceRecord> = all
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
    let source = options.source.source()?;
    if let TraceAt::Input(input) = &source
        && !options.verify
        && std::io::IsTerminal::is_terminal(&std::io::stdout())
    {
        return super::run::run_replay_console(input, None, None);
    }
    if !options.verify {
        for (i, r) in read(&source, err)?.iter().enumerate() {
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
    let verification = match &source {
        TraceAt::Input(input) => verify(input)?,
        TraceAt::Store(store) => verify_store(store)?,
    };
    if let TraceAt::Input(input) = &source {
        for warning in &verification.warnings {
            writeln!(err, "warning: {}: {warning}", input.path().display())
                .map_err(Error::Write)?;
        }
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
