//! `/remind`, `/complete`, `/dismiss`, `/intentions`, `/pulse`, `/halt` and
//! `/summarize`.

use rusqlite::Connection;
use serde_json::json;

use super::{Effect, Outcome};
use crate::clock::{Millis, format_time};
use crate::dialect::{ParsedAction, Verb};
use crate::exec::context::TurnContext;
use crate::exec::executor::Executor;
use crate::exec::when::parse_due;
use crate::memory::records::{self, IntentionStatus};

/// `/remind "when" "what"`.
pub(super) fn remind(
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let when = action.when.as_deref().ok_or("/remind needs a time")?;
    let what = action
        .content
        .as_deref()
        .ok_or("/remind needs something to remind you of")?;
    let due = parse_due(when, now)?;
    let id = records::add_intention(conn, &ctx.agent, what, when, due.at, due.next_session, now)
        .map_err(|e| e.to_string())?;
    let at = match due.at {
        Some(at) => format!("due {}", format_time(at)),
        None => "due next session".to_string(),
    };
    Ok(Effect::text(format!("reminder #{id} set, {at}"))
        .with_data(json!({ "intention": id, "due_at": due.at })))
}

/// `/complete id` and `/dismiss id`.
pub(super) fn close(
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
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
        records::set_intention_status(conn, &ctx.agent, id, status, action.content.as_deref(), now)
            .map_err(|e| e.to_string())?;
    if !changed {
        return Err(format!(
            "you have no intention #{id}; /intentions lists them"
        ));
    }
    Ok(Effect::text(format!("intention #{id} {done}"))
        .with_data(json!({ "intention": id, "status": status })))
}

/// `/intentions`.
pub(super) fn list(conn: &Connection, ctx: &TurnContext) -> Outcome {
    let all = records::list_intentions(conn, &ctx.agent, false).map_err(|e| e.to_string())?;
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
pub(super) fn pulse(
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let secs = action
        .duration_secs
        .ok_or("/pulse needs an interval like 30m")?;
    records::set_pulse(conn, &ctx.agent, secs as i64, now).map_err(|e| e.to_string())?;
    let every = action.content.clone().unwrap_or_else(|| format!("{secs}s"));
    Ok(
        Effect::text(format!("pulse set to every {every}"))
            .with_data(json!({ "pulse_secs": secs })),
    )
}

/// `/halt`: the emergency stop. Every agent of the constellation stops
/// until the partner resumes it.
pub(super) fn halt(
    exec: &Executor,
    conn: &Connection,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let reason = action
        .content
        .clone()
        .unwrap_or_else(|| format!("emergency stop by {}", ctx.agent));
    let agents = exec.agents(conn);
    for agent in &agents {
        records::set_halted(conn, agent, true, Some(&reason), now).map_err(|e| e.to_string())?;
    }
    Ok(Effect::text(format!(
        "halted {} until the partner resumes them: {reason}",
        agents.join(", ")
    ))
    .with_data(json!({ "halted": agents, "reason": reason })))
}

/// `/summarize`: hands the text back for the model to summarize in its next pass.
pub(super) fn summarize(action: &ParsedAction) -> Outcome {
    let text = action.content.as_deref().ok_or(
        "/summarize needs something to summarize: chain it after an action or give @thread",
    )?;
    Ok(Effect::text(format!("Summarize this:\n{text}")).continued())
}
