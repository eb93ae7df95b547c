//! `partner exec`: parse and run one agent turn headlessly, printing each
//! action's decision and result.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::common::{DbArg, add_verb_file, line, open_executor, text_arg, write_json};
use crate::engine::exec::{ActionReport, ActionStatus, Executor, TurnContext};
use crate::error::{Error, Result};
use crate::policy::{Authority, Decision};

/// Options of `partner exec`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExecOptions {
    #[command(flatten)]
    /// The database.
    pub db: DbArg,
    /// The agent whose turn it is.
    #[arg(long)]
    pub agent: String,
    /// The conversation the turn belongs to.
    #[arg(long, default_value = "main")]
    pub thread: String,
    /// A policy file (default: the built-in policy, config/policy.toml).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// A verb file adding verbs and aliases for this turn (the
    /// constellation's own verbs, kept in the database, apply otherwise).
    #[arg(long, value_name = "FILE")]
    pub verbs: Option<PathBuf>,
    /// Other agents of the constellation (for /tell), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub agents: Vec<String>,
    /// Approve, as the partner, every request the turn makes.
    #[arg(long, conflicts_with = "deny_all")]
    pub approve_all: bool,
    /// Deny, as the partner, every request the turn makes.
    #[arg(long)]
    pub deny_all: bool,
    /// Print one JSON array of reports.
    #[arg(long)]
    pub json: bool,
    /// The turn's text, or `-` for standard input.
    #[arg(default_value = "-")]
    pub text: String,
}

fn print(out: &mut dyn Write, report: &ActionReport, indent: &str) -> Result<()> {
    let status = serde_json::to_value(report.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut lines = report.text.lines();
    line(
        out,
        format!(
            "{indent}{} → {status}: {}",
            report.canonical,
            lines.next().unwrap_or("")
        ),
    )?;
    for more in lines {
        line(out, format!("{indent}    {more}"))?;
    }
    Ok(())
}

/// Uses the verbs of a verb file (with the built-in ones) for this run.
fn use_verb_file(executor: &mut Executor, path: &std::path::Path) -> Result<()> {
    let mut table = executor.registry().table().clone();
    add_verb_file(&mut table, path)?;
    executor.use_verbs(table)?;
    Ok(())
}

/// `--approve-all` or `--deny-all`: every request the turn made (its
/// actions' and their chain links') decided as the partner, each report
/// replaced by the decided one.
fn decide_all(
    executor: &Executor,
    reports: &mut [ActionReport],
    decision: &Decision,
) -> Result<()> {
    for report in reports.iter_mut() {
        let waiting: Vec<String> = std::iter::once(&*report)
            .chain(report.children.iter())
            .filter_map(|r| r.request.as_ref().map(|q| q.id.clone()))
            .collect();
        for id in waiting {
            let decided = executor
                .decide(&id, decision.clone(), &Authority::Partner, None)
                .map_err(|e| Error::Runtime(e.to_string()))?;
            if report.request.as_ref().is_some_and(|q| q.id == id) {
                *report = decided;
            } else if let Some(child) = report
                .children
                .iter_mut()
                .find(|c| c.request.as_ref().is_some_and(|q| q.id == id))
            {
                *child = decided;
            }
        }
    }
    Ok(())
}

/// Runs `partner exec`. Exit code 0 when every action ran (or waits), 1
/// when the turn held parse errors or an action was denied or failed.
pub fn run_exec(options: &ExecOptions, stdin: &mut dyn Read, out: &mut dyn Write) -> Result<i32> {
    let text = text_arg(&options.text, stdin)?;
    let mut agents = options.agents.clone();
    agents.push(options.agent.clone());
    let at = options.db.store_at()?;
    let mut executor = open_executor(&at, options.policy.as_deref(), &agents)?;
    if let Some(path) = &options.verbs {
        use_verb_file(&mut executor, path)?;
    }
    let turn_id = format!("exec-{}", crate::core::clock::SystemClock.now_ms_public());
    let mut ctx = TurnContext::new(&options.agent, &options.thread, &turn_id);
    // A direct-message thread is private, as in the runtime.
    ctx.private = options.thread.starts_with("dm:");
    let report = executor.run_turn(&mut ctx, &text);
    let mut reports = report.actions;
    let decision = if options.approve_all {
        Some(Decision::ApproveOnce)
    } else if options.deny_all {
        Some(Decision::Deny(Some("denied from the command line".into())))
    } else {
        None
    };
    if let Some(decision) = decision {
        decide_all(&executor, &mut reports, &decision)?;
    }
    if options.json {
        write_json(
            out,
            &serde_json::json!({ "actions": reports, "errors": report.errors }),
        )?;
    } else {
        for r in &reports {
            print(out, r, "")?;
            for child in &r.children {
                print(out, child, "  ")?;
            }
        }
        for error in &report.errors {
            let (l, c) = error.span.line_col(&text);
            line(
                out,
                format!("error: line {l}, column {c}: {}", error.message()),
            )?;
        }
    }
    // A daemon running the database announces what this turn asked now,
    // not at its next sweep.
    if let Ok(Some(mut daemon)) = super::serve::daemon_for_store(&at) {
        let _ = daemon.request(crate::protocol::Op::Sync);
    }
    let bad = !report.errors.is_empty()
        || reports
            .iter()
            .any(|r| matches!(r.status, ActionStatus::Denied | ActionStatus::Failed));
    Ok(i32::from(bad))
}
