//! Replay verification: re-executes a trace against a fresh in-memory store
//! and reports the first step whose outcome, result or memory change
//! differs. External effects (fetch, web, data reads, authority decisions)
//! are taken from their recorded results instead of being redone.

use std::sync::Arc;

use super::commit::Origin;
use crate::exec::{ExecConfig, ExecError, Executor, TurnContext};
use partner_core::clock::ManualClock;
use partner_dialect::{DialectParser, ParsedAction, VerbTable};
use partner_policy::Policy;
use partner_policy::{Check, Verdict};
use partner_protocol::report::ActionStatus;
use partner_store::memory::MemoryStore;
use partner_store::trace::TraceOp;
use partner_store::trace::{TraceInput, TraceOutcome, TraceRecord, TraceWarning};

pub use partner_store::trace::Divergence;

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
        let as_json = |m: &Option<partner_store::memory::MemoryChange>| {
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
    pub memory: Option<partner_store::memory::MemoryChange>,
    /// The result's data.
    pub data: serde_json::Value,
}

/// A scratch executor over an in-memory store, set up to redo `records`
/// (with the constellation's own verbs, when it had some).
fn scratch(
    records: &[TraceRecord],
    verbs: Option<&VerbTable>,
) -> Result<(Executor, ManualClock), crate::exec::ExecError> {
    let mut agents: Vec<String> = records.iter().map(|r| r.agent.clone()).collect();
    agents.extend(
        records
            .iter()
            .filter_map(|r| r.data["to"].as_str().map(str::to_string)),
    );
    agents.sort();
    agents.dedup();
    scratch_for(agents, records.first().map_or(0, |r| r.time), verbs)
}

/// A scratch executor over an in-memory store whose roster is `agents`,
/// its clock at `start`.
fn scratch_for(
    agents: Vec<String>,
    start: partner_core::clock::Millis,
    verbs: Option<&VerbTable>,
) -> Result<(Executor, ManualClock), crate::exec::ExecError> {
    let clock = ManualClock::new(start);
    let config = ExecConfig {
        agents,
        ..ExecConfig::default()
    };
    let store = Arc::new(MemoryStore::open_in_memory()?.into());
    let mut executor =
        Executor::with_parts(store, Policy::permissive(), config, Arc::new(clock.clone()))?;
    // Each redone step is compared with its record and let go: the
    // scratch store keeps no trace of its own.
    executor.keeps_trace = false;
    if let Some(verbs) = verbs {
        executor.set_verbs(verbs.clone())?;
    }
    Ok((executor, clock))
}

/// The scratch executor's store: an in-memory SQLite database, as
/// [`scratch_for`] makes it.
fn scratch_of(executor: &Executor) -> Result<&MemoryStore, ExecError> {
    executor
        .store()
        .sqlite()
        .ok_or_else(|| ExecError::System("replay's scratch store is not SQLite".into()))
}

/// Steps redone between two commits of the scratch store.
const BATCH: usize = 1_000;

/// A verification in progress: records are handed to it in order and
/// redone on a scratch store in batches (one commit each); the scratch
/// keeps no trace of its own (and what another path may have appended is
/// emptied after each batch), so its memory holds the replayed state, not
/// the trace.
struct Verifier {
    executor: Executor,
    clock: ManualClock,
    parser: DialectParser,
    steps: usize,
    redone: usize,
    in_batch: usize,
    divergence: Option<Divergence>,
}

impl Verifier {
    fn new((executor, clock): (Executor, ManualClock)) -> Result<Self, ExecError> {
        let parser = DialectParser::new().with_table(executor.registry.table().clone());
        Ok(Verifier {
            executor,
            clock,
            parser,
            steps: 0,
            redone: 0,
            in_batch: 0,
            divergence: None,
        })
    }

    /// Redoes `record` if replay redoes it; false once one diverged.
    fn step(&mut self, record: &TraceRecord) -> Result<bool, ExecError> {
        let parsed = redoes(record)
            .then(|| parsed_action(&self.parser, record))
            .flatten();
        self.step_parsed(record, parsed.as_ref())
    }

    /// [`Verifier::step`] with the record's action already parsed (by
    /// [`parsed_action`]).
    fn step_parsed(
        &mut self,
        record: &TraceRecord,
        parsed: Option<&ParsedAction>,
    ) -> Result<bool, ExecError> {
        self.steps += 1;
        if let Some(what) = super::difference::mcp_arguments(record) {
            return Ok(self.diverged(record, what));
        }
        if !redoes(record) {
            return Ok(true);
        }
        let store = scratch_of(&self.executor)?;
        if self.in_batch == 0 {
            store.begin_batch()?;
        }
        // An agent a message went to was on the roster.
        if let Some(to) = record.data["to"].as_str() {
            use partner_store::memory::roster::Roster;
            store.conn().ensure_agent(to, record.time)?;
        }
        self.clock.set(record.time);
        let now = self.executor.redo_parsed(record, parsed)?;
        self.redone += 1;
        self.in_batch += 1;
        if self.in_batch >= BATCH {
            self.flush()?;
        }
        if let Some(what) = differs(record, &now) {
            return Ok(self.diverged(record, what));
        }
        Ok(true)
    }

    /// Notes that `record` diverged, and why; false, to stop.
    fn diverged(&mut self, record: &TraceRecord, what: String) -> bool {
        self.divergence = Some(Divergence {
            step: self.steps,
            id: record.id.clone(),
            canonical: record.canonical.clone(),
            what,
        });
        false
    }

    /// Commits the batch and empties the scratch's trace.
    fn flush(&mut self) -> Result<(), ExecError> {
        if self.in_batch > 0 {
            let store = scratch_of(&self.executor)?;
            store.end_batch(true)?;
            store
                .conn()
                .execute("DELETE FROM trace", [])
                .map_err(partner_store::memory::MemoryError::from)?;
            self.in_batch = 0;
        }
        Ok(())
    }
}

/// The action a record of one redoes, parsed from its canonical form as
/// the verbs read it now (`None` for other records, and for an action
/// that no longer parses).
fn parsed_action(parser: &DialectParser, record: &TraceRecord) -> Option<ParsedAction> {
    if record.op != TraceOp::Action {
        return None;
    }
    parser.parse(&record.canonical).actions.into_iter().next()
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
) -> Result<Vec<partner_store::memory::Block>, crate::exec::ExecError> {
    let (executor, clock) = scratch(records, verbs)?;
    for record in records.iter().take(step).filter(|r| redoes(r)) {
        clock.set(record.time);
        executor.redo(record)?;
    }
    Ok(executor.store().read(|tx| tx.blocks(Some(agent)))?)
}

/// [`memory_at`], and the change the step itself made to a block, as a
/// diff (when it changed one).
pub fn memory_and_change_at(
    records: &[TraceRecord],
    step: usize,
    agent: &str,
    verbs: Option<&VerbTable>,
) -> Result<(Vec<partner_store::memory::Block>, Option<String>), crate::exec::ExecError> {
    let (executor, clock) = scratch(records, verbs)?;
    let value_of = |agent: &str, label: &str| -> Option<(String, i64)> {
        executor
            .store()
            .read(|tx| tx.block(agent, label))
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
            diff = Some(partner_store::memory::blocks::diff(
                &m.label,
                &old,
                &new,
                old_version,
                new_version,
            ));
        }
    }
    let blocks = executor.store().read(|tx| tx.blocks(Some(agent)))?;
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
    let mut verifier = Verifier::new(scratch(records, verbs)?)?;
    for record in records {
        if !verifier.step(record)? {
            break;
        }
    }
    verifier.flush()?;
    Ok((verifier.redone, verifier.divergence))
}

/// Verifies the trace of a store of either kind (a PostgreSQL store's
/// trace is read whole), with the verbs the store keeps.
pub fn verify_store(store: &crate::store::Store) -> Result<Verification, ExecError> {
    let (records, verbs) = store.read(|tx| Ok((tx.all_records()?, tx.meta("verbs")?)))?;
    let verbs = match verbs {
        Some(toml) if !toml.is_empty() => {
            let mut table = VerbTable::builtin();
            table
                .extend_from_toml(&toml)
                .map_err(|e| ExecError::Refused(format!("the store's verbs: {e}")))?;
            Some(table)
        }
        _ => None,
    };
    let mut verifier = Verifier::new(scratch(&records, verbs.as_ref())?)?;
    for record in &records {
        if !verifier.step(record)? {
            break;
        }
    }
    verifier.flush()?;
    Ok(Verification {
        steps: verifier.steps,
        redone: verifier.redone,
        divergence: verifier.divergence,
        warnings: Vec::new(),
    })
}

/// Reads a trace (from a database or a file) and verifies it, a page of
/// records at a time.
pub fn verify(input: &TraceInput) -> Result<Verification, crate::exec::ExecError> {
    let verbs = input.verbs().map_err(crate::exec::ExecError::Refused)?;
    let agents = input.agents().map_err(crate::exec::ExecError::Refused)?;
    let mut verifier = Verifier::new(scratch_for(agents, 0, verbs.as_ref())?)?;
    let mut failed = None;
    // Records are parsed on the reading thread, beside the redoing.
    let parser = verifier.parser.clone();
    let warnings = input
        .each(
            |record| {
                redoes(record)
                    .then(|| parsed_action(&parser, record))
                    .flatten()
            },
            |record, parsed| match verifier.step_parsed(record, parsed.as_ref()) {
                Ok(go_on) => go_on,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            },
        )
        .map_err(crate::exec::ExecError::Refused)?;
    if let Some(e) = failed {
        return Err(e);
    }
    verifier.flush()?;
    Ok(Verification {
        steps: verifier.steps,
        redone: verifier.redone,
        divergence: verifier.divergence,
        warnings,
    })
}

impl Executor {
    /// Replays one trace record's operation against this executor's store
    /// (used by replay verification): what it gave now. A tool runs the
    /// source the record kept, not today's file.
    pub fn redo(&self, record: &TraceRecord) -> Result<Redone, ExecError> {
        let parser = DialectParser::new().with_table(self.registry.table().clone());
        self.redo_with(&parser, record)
    }

    /// [`Executor::redo`] with a parser already made for this executor's
    /// verbs (a long replay makes one).
    pub fn redo_with(
        &self,
        parser: &DialectParser,
        record: &TraceRecord,
    ) -> Result<Redone, ExecError> {
        self.redo_parsed(record, parsed_action(parser, record).as_ref())
    }

    /// [`Executor::redo`] with the record's action parsed already (by
    /// [`parsed_action`]; `None` for an action that no longer parses).
    fn redo_parsed(
        &self,
        record: &TraceRecord,
        parsed: Option<&ParsedAction>,
    ) -> Result<Redone, ExecError> {
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
        // A partner's edit is redone under the name it was made by.
        let by: partner_policy::Authority = record
            .decision
            .decided_by
            .as_deref()
            .and_then(|by| by.parse().ok())
            .unwrap_or(partner_policy::Authority::Partner);
        let report = match &record.op {
            TraceOp::SetBlock { block } => self.partner_set_block(block.clone(), &by),
            TraceOp::Undo { agent, label } => self.partner_undo(agent, label, &by),
            TraceOp::Action => {
                let Some(action) = parsed else {
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
                self.execute(&ctx, action, &origin, &check, None, None)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An executor over an in-memory store, and a turn of ada's, to make
    /// a trace with.
    fn recording() -> (Executor, TurnContext) {
        let store = Arc::new(MemoryStore::open_in_memory().unwrap().into());
        let clock = Arc::new(ManualClock::new(1_000));
        let exec = Executor::with_parts(store, Policy::permissive(), ExecConfig::default(), clock)
            .unwrap();
        (exec, TurnContext::new("ada", "main", "t1"))
    }

    #[test]
    fn the_scratch_store_keeps_no_trace_of_its_own() {
        let (exec, mut ctx) = recording();
        exec.run_turn(&mut ctx, "/recall insert \"the launch moved\"");
        exec.run_turn(&mut ctx, "/calc 2 * 21");
        let records = exec.store().read(|tx| tx.all_records()).unwrap();
        assert_eq!(records.len(), 2);
        let mut verifier = Verifier::new(scratch(&records, None).unwrap()).unwrap();
        for record in &records {
            assert!(verifier.step(record).unwrap(), "{:?}", verifier.divergence);
        }
        assert_eq!(verifier.redone, 2);
        let kept = verifier.executor.store().read(|tx| tx.len()).unwrap();
        assert_eq!(kept, 0, "the scratch store appended to its own trace");
    }

    #[test]
    fn the_scratch_text_index_is_written_once_per_batch() {
        let (exec, mut ctx) = recording();
        for i in 0..BATCH {
            exec.run_turn(
                &mut ctx,
                &format!("/recall insert \"note {i}: the launch\""),
            );
        }
        exec.run_turn(&mut ctx, "/recall search launch");
        let records = exec.store().read(|tx| tx.all_records()).unwrap();
        let mut verifier = Verifier::new(scratch(&records, None).unwrap()).unwrap();
        for record in &records[..BATCH] {
            assert!(verifier.step(record).unwrap(), "{:?}", verifier.divergence);
        }
        let segments = |verifier: &Verifier| -> i64 {
            scratch_of(&verifier.executor)
                .unwrap()
                .conn()
                .query_row(
                    "SELECT count(DISTINCT segid) FROM archival_fts_idx",
                    [],
                    |r| r.get(0),
                )
                .unwrap()
        };
        assert_eq!(
            segments(&verifier),
            1,
            "one segment for the batch of {BATCH} steps"
        );
        // The search after it finds what the batch added.
        assert!(
            verifier.step(&records[BATCH]).unwrap(),
            "{:?}",
            verifier.divergence
        );
        verifier.flush().unwrap();
    }
}
