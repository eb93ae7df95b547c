//! Replay verification: re-executes a trace against a fresh in-memory store
//! and reports the first step whose outcome, result or memory change
//! differs. External effects (fetch, web, data reads, authority decisions)
//! are taken from their recorded results instead of being redone.

use std::sync::Arc;

use super::commit::Origin;
use super::report::ActionStatus;
use crate::clock::ManualClock;
use crate::dialect::{DialectParser, VerbTable};
use crate::exec::{ExecConfig, ExecError, Executor, TurnContext};
use crate::memory::MemoryStore;
use crate::permission::Policy;
use crate::permission::{Check, Verdict};
use crate::trace::TraceOp;
use crate::trace::{TraceInput, TraceOutcome, TraceRecord, TraceWarning};

/// Where a replay first differed.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// One-based step number.
    pub step: usize,
    /// The record's id.
    pub id: String,
    /// The action.
    pub canonical: String,
    /// What differed, in words.
    pub what: String,
}

/// The result of verifying a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// Steps read.
    pub steps: usize,
    /// Steps redone (the rest were recorded external effects or did not run).
    pub redone: usize,
    /// The first divergence, if any.
    pub divergence: Option<Divergence>,
    /// Problems reading the file (a torn last line…).
    pub warnings: Vec<TraceWarning>,
}

fn differs(record: &TraceRecord, redone: &Redone) -> Option<String> {
    use super::difference::{gram, json, texts};
    let Redone {
        outcome,
        text,
        memory,
        data,
    } = redone;
    if *outcome != record.outcome {
        // Why it ended otherwise is in the result.
        return Some(format!(
            "outcome: was {}, now {} ({})",
            record.outcome.as_str(),
            outcome.as_str(),
            texts("result", &record.result, text)
        ));
    }
    if *text != record.result {
        return Some(texts("result", &record.result, text).to_string());
    }
    if *memory != record.memory {
        let as_json = |m: &Option<crate::memory::MemoryChange>| {
            serde_json::to_value(m).unwrap_or(serde_json::Value::Null)
        };
        return json("memory", &as_json(&record.memory), &as_json(memory)).map(|d| d.to_string());
    }
    // What a handler asked replay to reproduce exactly (a tool's output
    // state).
    let check = &record.data["replay_check"];
    if !check.is_null() && *check != data["replay_check"] {
        return Some(match (check.as_str(), data["replay_check"].as_str()) {
            (Some(was), Some(now)) => gram("check", was, now).to_string(),
            _ => json("check", check, &data["replay_check"])?.to_string(),
        });
    }
    None
}

/// What redoing a record gave.
#[derive(Debug, Clone)]
pub struct Redone {
    /// How it ended.
    pub outcome: TraceOutcome,
    /// The result text.
    pub text: String,
    /// The memory change it made.
    pub memory: Option<crate::memory::MemoryChange>,
    /// The result's data.
    pub data: serde_json::Value,
}

/// A scratch executor over an in-memory store, set up to redo `records`
/// (with the constellation's own verbs, when it had some).
fn scratch(
    records: &[TraceRecord],
    verbs: Option<&VerbTable>,
) -> Result<(Executor, ManualClock), crate::exec::ExecError> {
    let clock = ManualClock::new(records.first().map_or(0, |r| r.time));
    let mut agents: Vec<String> = records.iter().map(|r| r.agent.clone()).collect();
    agents.extend(
        records
            .iter()
            .filter_map(|r| r.data["to"].as_str().map(str::to_string)),
    );
    agents.sort();
    agents.dedup();
    let config = ExecConfig {
        agents,
        ..ExecConfig::default()
    };
    let store = Arc::new(MemoryStore::open_in_memory()?);
    let mut executor =
        Executor::with_parts(store, Policy::permissive(), config, Arc::new(clock.clone()))?;
    if let Some(verbs) = verbs {
        executor.set_verbs(verbs.clone())?;
    }
    Ok((executor, clock))
}

/// True for records replay redoes (the rest were recorded external effects
/// or had no effect).
fn redoes(record: &TraceRecord) -> bool {
    matches!(
        record.outcome,
        TraceOutcome::Executed | TraceOutcome::Failed
    ) && !record.external
        && !record.system_error
        && record.data[super::registry::RECORDED_ONLY].is_null()
}

/// The blocks `agent` had after the first `step` records of a trace.
pub fn memory_at(
    records: &[TraceRecord],
    step: usize,
    agent: &str,
    verbs: Option<&VerbTable>,
) -> Result<Vec<crate::memory::Block>, crate::exec::ExecError> {
    let (executor, clock) = scratch(records, verbs)?;
    for record in records.iter().take(step).filter(|r| redoes(r)) {
        clock.set(record.time);
        executor.redo(record)?;
    }
    Ok(crate::memory::blocks::list(
        &executor.store().conn(),
        Some(agent),
    )?)
}

/// [`memory_at`], and the change the step itself made to a block, as a
/// diff (when it changed one).
pub fn memory_and_change_at(
    records: &[TraceRecord],
    step: usize,
    agent: &str,
    verbs: Option<&VerbTable>,
) -> Result<(Vec<crate::memory::Block>, Option<String>), crate::exec::ExecError> {
    let (executor, clock) = scratch(records, verbs)?;
    let value_of = |agent: &str, label: &str| -> Option<(String, i64)> {
        crate::memory::blocks::get(&executor.store().conn(), agent, label)
            .ok()
            .flatten()
            .map(|b| (b.value, b.version))
    };
    let mut diff = None;
    for (i, record) in records.iter().take(step).enumerate() {
        let last = i + 1 == step;
        let before = match (&record.memory, last) {
            (Some(m), true) => value_of(&m.agent, &m.label),
            _ => None,
        };
        if redoes(record) {
            clock.set(record.time);
            executor.redo(record)?;
        }
        if let (Some(m), true) = (&record.memory, last) {
            let after = value_of(&m.agent, &m.label);
            let (old, old_version) = before.unwrap_or_default();
            let (new, new_version) = after.unwrap_or_default();
            diff = Some(crate::memory::blocks::diff(
                &m.label,
                &old,
                &new,
                old_version,
                new_version,
            ));
        }
    }
    let blocks = crate::memory::blocks::list(&executor.store().conn(), Some(agent))?;
    Ok((blocks, diff))
}

/// Verifies the records of a trace, in order, with the built-in verbs.
pub fn verify_records(
    records: &[TraceRecord],
) -> Result<(usize, Option<Divergence>), crate::exec::ExecError> {
    verify_records_with(records, None)
}

/// Verifies the records of a trace, in order, with a constellation's verbs.
pub fn verify_records_with(
    records: &[TraceRecord],
    verbs: Option<&VerbTable>,
) -> Result<(usize, Option<Divergence>), crate::exec::ExecError> {
    let (executor, clock) = scratch(records, verbs)?;
    let mut redone = 0;
    for (index, record) in records.iter().enumerate() {
        if !redoes(record) {
            continue;
        }
        clock.set(record.time);
        let now = executor.redo(record)?;
        redone += 1;
        if let Some(what) = differs(record, &now) {
            return Ok((
                redone,
                Some(Divergence {
                    step: index + 1,
                    id: record.id.clone(),
                    canonical: record.canonical.clone(),
                    what,
                }),
            ));
        }
    }
    Ok((redone, None))
}

/// Reads a trace (from a database or a file) and verifies it.
pub fn verify(input: &TraceInput) -> Result<Verification, crate::exec::ExecError> {
    let (records, warnings) = input.load().map_err(crate::exec::ExecError::Refused)?;
    let verbs = input.verbs().map_err(crate::exec::ExecError::Refused)?;
    let (redone, divergence) = verify_records_with(&records, verbs.as_ref())?;
    Ok(Verification {
        steps: records.len(),
        redone,
        divergence,
        warnings,
    })
}

impl Executor {
    /// Replays one trace record's operation against this executor's store
    /// (used by replay verification): what it gave now. A tool runs the
    /// source the record kept, not today's file.
    pub fn redo(&self, record: &TraceRecord) -> Result<Redone, ExecError> {
        let ctx = TurnContext::new(&record.agent, "", &record.turn_id);
        let tool = &record.data["tool"];
        if let (Some(name), Some(source)) = (tool["name"].as_str(), tool["source"].as_str()) {
            self.tools
                .pin(name, source)
                .map_err(|e| ExecError::Refused(format!("the recorded tool {name}: {e}")))?;
        }
        if let (Some(name), Some(why)) = (tool["name"].as_str(), tool["unavailable"].as_str()) {
            self.tools.pin_unavailable(name, why);
        }
        let report = match &record.op {
            TraceOp::SetBlock { block } => self.partner_set_block(block.clone()),
            TraceOp::Undo { agent, label } => self.partner_undo(agent, label),
            TraceOp::Action => {
                let parsed = DialectParser::new()
                    .with_table(self.registry.table().clone())
                    .parse(&record.canonical);
                let Some(action) = parsed.actions.into_iter().next() else {
                    return Ok(Redone {
                        outcome: TraceOutcome::Failed,
                        text: format!("does not parse: {}", record.canonical),
                        memory: None,
                        data: serde_json::Value::Null,
                    });
                };
                let origin = Origin {
                    text: &record.text,
                    span: record.span,
                    source: record.source,
                    op: TraceOp::Action,
                };
                let check = Check {
                    verdict: Verdict::Allow,
                    path: vec!["replay".into()],
                    charge: None,
                };
                self.execute(&ctx, &action, &origin, &check, None, None)
            }
        };
        match report {
            Ok(report) => {
                let outcome = match report.status {
                    ActionStatus::Executed => TraceOutcome::Executed,
                    ActionStatus::Denied => TraceOutcome::Denied,
                    ActionStatus::Cancelled => TraceOutcome::Cancelled,
                    ActionStatus::TimedOut => TraceOutcome::TimedOut,
                    _ => TraceOutcome::Failed,
                };
                Ok(Redone {
                    outcome,
                    text: report.text,
                    memory: report.memory,
                    data: report.data,
                })
            }
            Err(ExecError::Refused(message)) => Ok(Redone {
                outcome: TraceOutcome::Failed,
                text: message,
                memory: None,
                data: serde_json::Value::Null,
            }),
            Err(e) => Err(e),
        }
    }
}
