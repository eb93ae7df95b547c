//! The partner's own edits (set a block, undo it) and resuming an agent:
//! versioned and traced like an agent's writes, without the agent checks.

use std::time::Instant;

use serde_json::json;

use super::commit::{Origin, TxError};
use super::context::TurnContext;
use super::executor::{ExecError, Executor};
use super::handlers::Effect;
use super::registry::{ActionError, ActionTx};
use partner_core::clock::Millis;
use partner_dialect::Verb;
use partner_policy::{Authority, Check, Verdict};
use partner_protocol::report::{ActionInfo, ActionReport};
use partner_store::memory::backend::BlockWrite;
use partner_store::memory::{MemoryError, NewBlock};
use partner_store::trace::{BlockSpec, TraceOp, TraceOutcome, TraceRecord, TraceSource};

impl Executor {
    /// Runs a dialect line as `agent`'s own actions, for the partner (the
    /// console's command line, a client's `run`): checked and queued like
    /// any; what each action did and each parse error, a line each.
    pub fn run_line_as(&self, agent: &str, text: &str) -> Vec<String> {
        let mut ctx = TurnContext::new(agent, "partner", "partner");
        let report = self.run_turn(&mut ctx, text);
        report
            .actions
            .iter()
            .map(|r| r.summary())
            .chain(report.errors.iter().map(|e| e.message().to_string()))
            .collect()
    }

    /// Creates or rewrites a block as the partner: the same versioning as
    /// an agent's write, recorded in the trace.
    pub fn partner_set_block(
        &self,
        spec: BlockSpec,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        self.partner_store(spec, None, by)
    }

    /// Rewrites an existing block as the partner, if it is still at
    /// `base_version` (the version the partner's edit started from);
    /// otherwise nothing is written and the error is a
    /// [`MemoryError::Conflict`], so the edit can be merged instead of
    /// silently overwriting someone else's change.
    pub fn partner_write_block(
        &self,
        spec: BlockSpec,
        base_version: i64,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        self.partner_store(spec, Some(base_version), by)
    }

    /// Writes a block as the partner; with a base version, only if the
    /// block still exists at that version.
    fn partner_store(
        &self,
        spec: BlockSpec,
        base_version: Option<i64>,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        let ctx = TurnContext::new(&spec.agent, "", "partner");
        let who = by.to_string();
        let canonical = format!(
            ":memory set {} {} {}",
            spec.agent,
            spec.label,
            partner_dialect::quote(&spec.value)
        );
        self.partner_op(
            &ctx,
            by,
            canonical,
            "set",
            TraceOp::SetBlock {
                block: spec.clone(),
            },
            |tx, now| {
                let existing = tx.block(&spec.agent, &spec.label)?;
                if let Some(base) = base_version {
                    match &existing {
                        None => {
                            return Err(MemoryError::Conflict(format!(
                                "block {} no longer exists",
                                spec.label
                            )));
                        }
                        Some(current) if current.version != base => {
                            return Err(MemoryError::Conflict(format!(
                                "{} is at v{} now, not v{base}",
                                spec.label, current.version
                            )));
                        }
                        Some(_) => {}
                    }
                }
                let (block, change) = match existing {
                    Some(_) => {
                        let write = BlockWrite {
                            agent: &spec.agent,
                            label: &spec.label,
                            value: &spec.value,
                            base: None,
                        };
                        tx.write_block(&write, &who, now)?
                    }
                    None => {
                        let new = NewBlock {
                            agent: spec.agent.clone(),
                            label: spec.label.clone(),
                            kind: spec.kind,
                            description: spec.description.clone(),
                            value: spec.value.clone(),
                            char_limit: spec.char_limit,
                            permission: spec.permission,
                            pinned: false,
                            shared: spec.shared,
                        };
                        tx.create_block(&new, &who, now)?
                    }
                };
                Ok(Effect {
                    text: format!(
                        "{} is now v{} ({} chars)",
                        block.label,
                        block.version,
                        block.chars()
                    ),
                    data: json!({ "block": block }),
                    memory: Some(change),
                    needs_continuation: false,
                })
            },
        )
    }

    /// Undoes a block's last change as the partner (recorded in the trace).
    pub fn partner_undo(
        &self,
        agent: &str,
        label: &str,
        by: &Authority,
    ) -> Result<ActionReport, ExecError> {
        let ctx = TurnContext::new(agent, "", "partner");
        let who = by.to_string();
        let op = TraceOp::Undo {
            agent: agent.to_string(),
            label: label.to_string(),
        };
        self.partner_op(
            &ctx,
            by,
            format!(":memory undo {agent} {label}"),
            "undo",
            op,
            |tx, now| {
                let change = tx.undo_block(agent, label, &who, now)?;
                Ok(Effect {
                    text: format!(
                        "{label} is back to its previous value (v{})",
                        change.version_after
                    ),
                    data: json!({ "label": label }),
                    memory: Some(change),
                    needs_continuation: false,
                })
            },
        )
    }

    /// Runs a partner's edit (`apply`, in the transaction of its trace
    /// record), recorded as made by `by`.
    pub(super) fn partner_op(
        &self,
        ctx: &TurnContext,
        by: &Authority,
        canonical: String,
        verb: &str,
        op: TraceOp,
        apply: impl FnOnce(&dyn ActionTx, Millis) -> Result<Effect, MemoryError>,
    ) -> Result<ActionReport, ExecError> {
        let origin = Origin {
            text: &canonical,
            span: (0, canonical.len()),
            source: TraceSource::Partner,
            op,
        };
        let check = Check {
            verdict: Verdict::Allow,
            path: vec![format!("an edit by {by}")],
            charge: None,
        };
        // The partner's own edits are no dialect verbs; they are recorded
        // under their own names (`set`, `undo`).
        let info = ActionInfo {
            verb: Verb::Custom(verb.to_string()),
            op: None,
            canonical: canonical.clone(),
            action_id: None,
        };
        let started = Instant::now();
        let now = self.now();
        let attempt = self
            .store
            .transaction(|tx| -> Result<(Effect, TraceRecord), TxError> {
                let effect = apply(tx, now).map_err(|e| match e {
                    MemoryError::Sqlite(e) => TxError::Db(MemoryError::Sqlite(e)),
                    MemoryError::Conflict(m) => TxError::Db(MemoryError::Conflict(m)),
                    other => TxError::Action(ActionError::Agent(other.to_string())),
                })?;
                let mut record = self.build_record(
                    ctx,
                    &info,
                    &origin,
                    &check,
                    None,
                    TraceOutcome::Executed,
                    &effect,
                    started,
                    now,
                    false,
                );
                record.decision.decided_by = Some(by.to_string());
                record.decision.decision = Some("edit".into());
                let record = self.finalize(tx, record, None, now)?;
                Ok((effect, record))
            });
        match attempt {
            Ok((effect, record)) => Ok(self.report_of(ctx, &info, &record, &effect, &check)),
            Err(TxError::Db(e)) => Err(e.into()),
            Err(TxError::Action(e)) => Err(ExecError::Refused(e.message().to_string())),
            Err(TxError::Limited(reason)) => Err(ExecError::Refused(reason)),
        }
    }

    /// Lets a halted agent run again.
    pub fn resume(&self, agent: &str) -> Result<(), ExecError> {
        let now = self.now();
        Ok(self
            .store
            .transaction(|tx| tx.set_halted(agent, false, None, now))?)
    }
}
