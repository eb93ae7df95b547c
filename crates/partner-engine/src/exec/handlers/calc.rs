//! `/calc` with fend (units, percentages, variables; variables an agent
//! assigns are kept for its later calculations) and `/summarize`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use super::Effect;
use crate::exec::executor::Executor;
use crate::exec::registry::{ActionError, Cx, Outcome, Stage, VerbHandler};
use partner_dialect::ParsedAction;
use partner_policy::VerbTraits;

/// Each agent's variable assignments, in order.
#[derive(Debug, Default)]
pub(crate) struct CalcState {
    assignments: Mutex<HashMap<String, Vec<String>>>,
}

/// Longest a calculation may run.
const CALC_DEADLINE: Duration = Duration::from_secs(2);

struct Deadline(Instant);

impl fend_core::Interrupt for Deadline {
    fn should_interrupt(&self) -> bool {
        Instant::now() >= self.0
    }
}

fn is_assignment(statement: &str) -> bool {
    let Some((name, rest)) = statement.split_once('=') else {
        return false;
    };
    let name = name.trim();
    !rest.starts_with('=')
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Longest expression `/calc` takes.
pub const MAX_EXPRESSION: usize = 2000;

/// Most variable assignments kept per agent (the newest).
pub const MAX_VARIABLES: usize = 32;

/// Deepest nesting of brackets `/calc` takes.
pub const MAX_NESTING: usize = 64;

/// Refuses an expression too long or too deeply nested to evaluate safely.
fn check_bounds(expr: &str) -> Result<(), String> {
    if expr.len() > MAX_EXPRESSION {
        return Err(format!(
            "that expression is {} characters; /calc takes at most {MAX_EXPRESSION}",
            expr.len()
        ));
    }
    let mut depth = 0usize;
    let mut deepest = 0usize;
    for c in expr.chars() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_NESTING {
        return Err(format!(
            "that expression nests {deepest} brackets deep; /calc takes at most {MAX_NESTING}"
        ));
    }
    Ok(())
}

/// `program`'s value by fend (`expr` is the agent's part of it, for
/// messages).
fn with_fend(program: &str, expr: &str) -> Result<String, ActionError> {
    // fend recurses over the expression: bounded above, and given a large
    // stack of its own so no expression can overflow the caller's.
    let deadline = Instant::now() + CALC_DEADLINE;
    partner_core::isolate::on_big_stack(partner_core::isolate::BIG_STACK, || {
        let mut context = fend_core::Context::new();
        fend_core::evaluate_with_interrupt(program, &mut context, &Deadline(deadline))
            .map(|result| result.get_main_result().to_string())
    })
    .map_err(|panic| format!("I couldn't calculate '{expr}': the calculator failed ({panic})"))?
    .map_err(|e| {
        let message = format!("I couldn't calculate '{expr}': {e}");
        if Instant::now() >= deadline {
            // Stopped by the clock, which another run may not be: replay
            // takes this outcome from the record.
            ActionError::AgentWith(
                message,
                serde_json::json!({ crate::exec::registry::RECORDED_ONLY: "a deadline stopped it" }),
            )
        } else {
            ActionError::Agent(message)
        }
    })
}

/// `/calc expression`.
fn calc(exec: &Executor, agent: &str, action: &ParsedAction) -> Outcome {
    let expr = action
        .content
        .as_deref()
        .ok_or("/calc needs an expression")?
        .trim();
    check_bounds(expr)?;
    let state = &exec.calc_state().assignments;
    // Whole-number arithmetic has the value fend would give whatever the
    // agent's variables are; fend is given them before the expression.
    let value = match super::integers::evaluate(expr) {
        Some(value) => value,
        None => {
            let mut program = state
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(agent)
                .map(|earlier| earlier.join("; "))
                .unwrap_or_default();
            if !program.is_empty() {
                program.push_str("; ");
            }
            program.push_str(expr);
            with_fend(&program, expr)?
        }
    };
    let new: Vec<String> = expr
        .split(';')
        .map(str::trim)
        .filter(|s| is_assignment(s))
        .map(str::to_string)
        .collect();
    if !new.is_empty() {
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        let kept = state.entry(agent.to_string()).or_default();
        kept.extend(new);
        let excess = kept.len().saturating_sub(MAX_VARIABLES);
        kept.drain(..excess);
    }
    let text = if value.is_empty() {
        format!("{expr}: done")
    } else {
        format!("{expr} = {value}")
    };
    Ok(Effect::text(text)
        .with_data(json!({ "expression": expr, "result": value }))
        .continued())
}

/// `/summarize`: hands the text back for the model to summarize in its
/// next pass.
fn summarize(action: &ParsedAction) -> Outcome {
    let text = action.content.as_deref().ok_or(
        "/summarize needs something to summarize: chain it after an action or give @thread",
    )?;
    Ok(Effect::text(format!("Summarize this:\n{text}")).continued())
}

/// `/calc`: a calculation.
pub(super) struct Calc;

impl VerbHandler for Calc {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Compute
    }

    fn needs_content(&self) -> bool {
        true
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        calc(cx.exec, &cx.ctx.agent, action)
    }
}

/// `/summarize`: the text back to the model.
pub(super) struct Summarize;

impl VerbHandler for Summarize {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Compute
    }

    fn needs_content(&self) -> bool {
        true
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    fn run(&self, _cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        summarize(action)
    }
}
