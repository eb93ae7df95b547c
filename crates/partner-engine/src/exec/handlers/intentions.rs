//! `/remind`, `/complete`, `/dismiss`, `/intentions`, `/pulse` and
//! `/halt`.

use std::sync::Arc;

use serde_json::json;

use super::Effect;
use crate::exec::context::TurnContext;
use crate::exec::executor::Executor;
use crate::exec::registry::{ActionTx, Cx, Outcome, Stage, VerbHandler};
use crate::exec::when::parse_due;
use partner_core::clock::{Millis, format_time};
use partner_dialect::{Due, Interval, ParsedAction, Verb};
use partner_policy::VerbTraits;
use partner_store::memory::records::IntentionStatus;
use partner_store::memory::roster::NewIntention;

/// `/remind "when" "what"`.
fn remind(tx: &dyn ActionTx, ctx: &TurnContext, action: &ParsedAction, now: Millis) -> Outcome {
    let when = action
        .args
        .get::<Due>()
        .map(|due| due.when.as_str())
        .ok_or("/remind needs a time")?;
    let what = action
        .content
        .as_deref()
        .ok_or("/remind needs something to remind you of")?;
    let due = parse_due(when, now)?;
    let new = NewIntention {
        agent: &ctx.agent,
        what,
        due_text: when,
        due_at: due.at,
        next_session: due.next_session,
    };
    let id = tx.add_intention(&new, now)?;
    let at = match due.at {
        Some(at) => format!("due {}", format_time(at)),
        None => "due next session".to_string(),
    };
    Ok(Effect::text(format!("reminder #{id} set, {at}"))
        .with_data(json!({ "intention": id, "due_at": due.at })))
}

/// `/complete id` and `/dismiss id`.
fn close(tx: &dyn ActionTx, ctx: &TurnContext, action: &ParsedAction, now: Millis) -> Outcome {
    let raw = action
        .target
        .as_deref()
        .ok_or("which intention? give its number")?;
    let id: i64 = raw
        .trim_start_matches('#')
        .parse()
        .map_err(|_| format!("'{raw}' is not an intention number; /intentions lists them"))?;
    let (status, done) = if action.verb == Verb::Complete {
        (IntentionStatus::Completed, "completed")
    } else {
        (IntentionStatus::Dismissed, "dismissed")
    };
    let changed =
        tx.set_intention_status(&ctx.agent, id, status, action.content.as_deref(), now)?;
    if !changed {
        return Err(format!("you have no intention #{id}; /intentions lists them").into());
    }
    Ok(Effect::text(format!("intention #{id} {done}"))
        .with_data(json!({ "intention": id, "status": status })))
}

/// `/intentions`.
fn list(tx: &dyn ActionTx, ctx: &TurnContext) -> Outcome {
    let all = tx.intentions(&ctx.agent, false)?;
    if all.is_empty() {
        return Ok(Effect::text("you have no intentions")
            .with_data(json!({ "intentions": [] }))
            .continued());
    }
    let mut text = String::from("your intentions:");
    for i in &all {
        let due = match i.due_at {
            Some(at) => format_time(at),
            None if i.next_session => "next session".to_string(),
            None => i.due_text.clone(),
        };
        text.push_str(&format!(
            "\n  #{} [{}] {} (due {due})",
            i.id,
            i.status.as_str(),
            i.what
        ));
    }
    Ok(Effect::text(text)
        .with_data(json!({ "intentions": all }))
        .continued())
}

/// `/pulse 30m`.
fn pulse(tx: &dyn ActionTx, ctx: &TurnContext, action: &ParsedAction, now: Millis) -> Outcome {
    let secs = action
        .args
        .get::<Interval>()
        .map(|every| every.duration_secs)
        .ok_or("/pulse needs an interval like 30m")?;
    tx.set_pulse(&ctx.agent, secs as i64, now)?;
    let every = action.content.clone().unwrap_or_else(|| format!("{secs}s"));
    Ok(
        Effect::text(format!("pulse set to every {every}"))
            .with_data(json!({ "pulse_secs": secs })),
    )
}

/// `/halt`: the emergency stop. Every agent of the constellation stops
/// until the partner resumes it.
fn halt(
    exec: &Executor,
    tx: &dyn ActionTx,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let reason = action
        .content
        .clone()
        .unwrap_or_else(|| format!("emergency stop by {}", ctx.agent));
    let agents = exec.agents(tx);
    for agent in &agents {
        tx.set_halted(agent, true, Some(&reason), now)?;
    }
    Ok(Effect::text(format!(
        "halted {} until the partner resumes them: {reason}",
        agents.join(", ")
    ))
    .with_data(json!({ "halted": agents, "reason": reason })))
}

/// A verb whose work is one function over the action's transaction.
struct Stored {
    run: fn(&Cx<'_>, &ParsedAction) -> Outcome,
    needs_role: bool,
}

impl VerbHandler for Stored {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Store
    }

    fn needs_role(&self) -> bool {
        self.needs_role
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            needs_role: self.needs_role,
            ..VerbTraits::default()
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        (self.run)(cx, action)
    }
}

fn stored(run: fn(&Cx<'_>, &ParsedAction) -> Outcome) -> Arc<dyn VerbHandler> {
    Arc::new(Stored {
        run,
        needs_role: false,
    })
}

/// `/remind "when" "what"`.
pub(super) fn reminder() -> Arc<dyn VerbHandler> {
    stored(|cx, a| remind(cx.tx()?, cx.ctx, a, cx.now))
}

/// `/complete id` and `/dismiss id`: closes an intention.
pub(super) fn closer() -> Arc<dyn VerbHandler> {
    stored(|cx, a| close(cx.tx()?, cx.ctx, a, cx.now))
}

/// `/intentions`: lists them.
pub(super) fn lister() -> Arc<dyn VerbHandler> {
    stored(|cx, _| list(cx.tx()?, cx.ctx))
}

/// `/pulse 30m`.
pub(super) fn pulser() -> Arc<dyn VerbHandler> {
    stored(|cx, a| pulse(cx.tx()?, cx.ctx, a, cx.now))
}

/// `/halt`: authority only.
pub(super) fn halter() -> Arc<dyn VerbHandler> {
    Arc::new(Stored {
        run: |cx, a| halt(cx.exec, cx.tx()?, cx.ctx, a, cx.now),
        needs_role: true,
    })
}
