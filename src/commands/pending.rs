//! `partner pending`: list waiting requests and decide them as the partner;
//! list and revoke standing rules.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use super::common::{DbArg, line, open_executor, write_json};
use crate::core::clock::format_time;
use crate::error::{Error, Result};
use crate::policy::{Authority, Decision, PendingRequest};
use partner_engine::store::StoreAt;

/// Options of `partner pending`.
#[derive(Debug, Clone, clap::Args)]
pub struct PendingOptions {
    #[command(flatten)]
    /// The database.
    pub db: DbArg,
    /// A policy file (the one the constellation runs with).
    #[arg(long, value_name = "FILE", global = true)]
    pub policy: Option<PathBuf>,
    /// Print JSON (listings print one array of objects).
    #[arg(long, global = true)]
    pub json: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: PendingCommand,
}

/// `partner pending` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PendingCommand {
    /// List waiting requests, oldest first.
    List,
    /// Approve a request once.
    Approve {
        /// The request id (`r3`).
        id: String,
        /// Approve this and the same verb and target for a while (`10m`, `2h`).
        #[arg(long, value_name = "DURATION")]
        r#for: Option<String>,
        /// Approve a shell command although this kernel cannot sandbox it
        /// (asked once more otherwise).
        #[arg(long)]
        unsandboxed: bool,
    },
    /// Approve a request with its action replaced by a dialect line of
    /// yours (parsed and checked for the agent that asked first; refused,
    /// the request keeps waiting).
    Edit {
        /// The request id.
        id: String,
        /// The action to run instead (`/post bluesky "We ship Monday"`).
        action: String,
        /// Approve a shell command although this kernel cannot sandbox it.
        #[arg(long)]
        unsandboxed: bool,
    },
    /// Approve a request and the same verb and target from now on.
    Always {
        /// The request id.
        id: String,
    },
    /// Deny a request; the reason goes back to the agent.
    Deny {
        /// The request id.
        id: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
        /// Deny the same verb and target from now on.
        #[arg(long)]
        always: bool,
    },
    /// Pass a request to its next authority.
    Escalate {
        /// The request id.
        id: String,
    },
    /// Withdraw a request.
    Cancel {
        /// The request id.
        id: String,
    },
    /// Deny every request whose time is up.
    Expire,
    /// List standing rules (approve/deny always).
    Rules,
    /// Revoke a standing rule.
    Revoke {
        /// The rule's number.
        rule: i64,
    },
}

/// A waiting request as listed for scripts.
#[derive(Serialize)]
struct RequestRow<'a> {
    id: &'a str,
    agent: &'a str,
    verb: &'a str,
    canonical: &'a str,
    marker: Option<&'a str>,
    reason: &'a str,
    waiting_on: String,
    created_at: String,
    expires_at: Option<String>,
}

fn row(r: &PendingRequest) -> RequestRow<'_> {
    RequestRow {
        id: &r.id,
        agent: &r.agent,
        verb: r.verb.name(),
        canonical: &r.canonical,
        marker: r.marker.as_deref(),
        reason: &r.reason,
        waiting_on: r.waiting_on().to_string(),
        created_at: format_time(r.created_at),
        expires_at: r.expires_at.map(format_time),
    }
}

/// Runs `partner pending`.
pub fn run_pending(options: &PendingOptions, out: &mut dyn Write) -> Result<i32> {
    let db = options.db.existing_at()?;
    let executor = open_executor(&db, options.policy.as_deref(), &[])?;
    let decide = |id: &str, decision: Decision, out: &mut dyn Write| {
        decide(options, &db, &executor, id, decision, out)
    };
    match &options.command {
        PendingCommand::List => list(options, &executor, out),
        PendingCommand::Approve {
            id,
            r#for,
            unsandboxed,
        } => {
            if let Some(why) = unsandboxed_shell(&executor, id)?
                && !*unsandboxed
            {
                return Err(Error::Usage(format!(
                    "{id} would run {why}; to approve it anyway: partner pending approve {id} --unsandboxed"
                )));
            }
            let decision = match r#for {
                Some(text) => Decision::ApproveFor(
                    crate::core::clock::parse_span(text)
                        .map_err(|e| Error::Usage(format!("--for {text}: {e}")))?,
                ),
                None => Decision::ApproveOnce,
            };
            decide(id, decision, out)
        }
        PendingCommand::Edit {
            id,
            action,
            unsandboxed,
        } => {
            if let Some(why) = unsandboxed_edit(&executor, id, action)?
                && !*unsandboxed
            {
                return Err(Error::Usage(format!(
                    "the edited {id} would run {why}; to approve it anyway: partner pending edit {id} '…' --unsandboxed"
                )));
            }
            decide(id, Decision::ApproveEdited(action.clone()), out)
        }
        PendingCommand::Always { id } => decide(id, Decision::ApproveAlways, out),
        PendingCommand::Deny { id, reason, always } => {
            let decision = if *always {
                Decision::DenyAlways(reason.clone())
            } else {
                Decision::Deny(reason.clone())
            };
            decide(id, decision, out)
        }
        PendingCommand::Escalate { id } => decide(id, Decision::Escalate(None), out),
        PendingCommand::Cancel { id } => decide(id, Decision::Cancel, out),
        PendingCommand::Expire => {
            let expired = executor.expire_overdue()?;
            if options.json {
                write_json(out, &expired)?;
            } else {
                line(out, format!("{} requests timed out", expired.len()))?;
            }
            Ok(0)
        }
        PendingCommand::Rules => rules(options, &executor, out),
        PendingCommand::Revoke { rule } => {
            let now = crate::core::clock::SystemClock.now_ms_public();
            let revoked = executor
                .store()
                .transaction(|tx| tx.revoke_rule(*rule, now))?;
            if !revoked {
                return Err(Error::Runtime(format!(
                    "there is no standing rule #{rule} in force"
                )));
            }
            line(out, format!("revoked rule #{rule}"))?;
            Ok(0)
        }
    }
}

/// Decides `id` as the partner: through the daemon when one runs the
/// database (so the agent that asked goes on at once), else here.
fn decide(
    options: &PendingOptions,
    db: &StoreAt,
    executor: &crate::engine::exec::Executor,
    id: &str,
    decision: Decision,
    out: &mut dyn Write,
) -> Result<i32> {
    if let Some(mut daemon) = super::serve::daemon_for_store(db)? {
        let name = decision.name();
        let (message, _) = daemon
            .request(crate::protocol::Op::Decide {
                request: id.to_string(),
                decision: decision.clone(),
            })
            .map_err(|e| Error::Runtime(e.to_string()))?;
        if options.json {
            write_json(
                out,
                &serde_json::json!({"id": id, "decision": name, "by": "daemon", "pid": daemon.pid, "message": message}),
            )?;
        } else {
            line(
                out,
                format!("{message} (through the daemon, pid {})", daemon.pid),
            )?;
        }
        return Ok(0);
    }
    let report = executor.decide(id, decision, &Authority::Partner, None)?;
    if options.json {
        write_json(out, &report)?;
    } else {
        line(out, report.summary())?;
    }
    Ok(0)
}

/// `pending list`: every waiting request, whom it waits on and why.
fn list(
    options: &PendingOptions,
    executor: &crate::engine::exec::Executor,
    out: &mut dyn Write,
) -> Result<i32> {
    let waiting = executor.pending()?;
    if options.json {
        write_json(out, &waiting.iter().map(row).collect::<Vec<_>>())?;
    } else if waiting.is_empty() {
        line(out, "no requests are waiting")?;
    } else {
        for r in &waiting {
            line(
                out,
                format!(
                    "{}  {}  {}  (waits on {}; {})",
                    r.id,
                    r.agent,
                    r.canonical,
                    r.waiting_on(),
                    r.reason
                ),
            )?;
        }
    }
    Ok(0)
}

/// `pending rules`: the standing rules in force.
fn rules(
    options: &PendingOptions,
    executor: &crate::engine::exec::Executor,
    out: &mut dyn Write,
) -> Result<i32> {
    let now = crate::core::clock::SystemClock.now_ms_public();
    let rules = executor.store().read(|tx| tx.rules(now))?;
    if options.json {
        write_json(out, &rules)?;
    } else if rules.is_empty() {
        line(out, "no standing rules")?;
    } else {
        for r in &rules {
            let until = r
                .expires_at
                .map(|t| format!(" until {}", format_time(t)))
                .unwrap_or_default();
            let covers = r.scope();
            line(
                out,
                format!(
                    "#{} {} /{covers} for {}{until} (by {})",
                    r.id, r.effect, r.agent, r.created_by
                ),
            )?;
        }
    }
    Ok(0)
}

/// Why a shell request would run without a sandbox, when it would.
fn unsandboxed_shell(executor: &crate::engine::exec::Executor, id: &str) -> Result<Option<String>> {
    let Some(r) = executor.store().read(|tx| tx.request(id))? else {
        return Ok(None);
    };
    if executor.request_command(&r).is_none() {
        return Ok(None);
    }
    Ok(walls_missing())
}

/// The same for request `id` edited into `action`: a shell command
/// whichever way the request or the edit reads.
fn unsandboxed_edit(
    executor: &crate::engine::exec::Executor,
    id: &str,
    action: &str,
) -> Result<Option<String>> {
    let Some(r) = executor.store().read(|tx| tx.request(id))? else {
        return Ok(None);
    };
    let edited_shell = executor
        .parser_for(&r.agent)
        .parse(action)
        .actions
        .iter()
        .any(|a| a.verb == crate::dialect::Verb::Shell);
    if edited_shell || executor.request_command(&r).is_some() {
        return Ok(walls_missing());
    }
    Ok(None)
}

/// What this kernel's sandbox lacks, in the words a question uses.
fn walls_missing() -> Option<String> {
    let walls = crate::gate::sandbox::walls();
    walls.missing().map(|missing| {
        if walls.absent() {
            format!("NOT SANDBOXED ({missing})")
        } else {
            format!("PARTLY SANDBOXED ({missing})")
        }
    })
}
