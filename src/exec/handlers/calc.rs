//! `/calc` with fend (units, percentages, variables). Variables an agent
//! assigns are kept for its later calculations.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Effect, Outcome};
use crate::dialect::ParsedAction;
use crate::exec::executor::Executor;

/// Each agent's variable assignments, in order.
#[derive(Debug, Default)]
pub(crate) struct CalcState {
    assignments: Mutex<HashMap<String, Vec<String>>>,
}

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

/// `/calc expression`.
pub(super) fn calc(exec: &Executor, agent: &str, action: &ParsedAction) -> Outcome {
    let expr = action
        .content
        .as_deref()
        .ok_or("/calc needs an expression")?
        .trim();
    let state = &exec.calc_state().assignments;
    let earlier = state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(agent)
        .cloned()
        .unwrap_or_default();
    let mut program = earlier.join("; ");
    if !program.is_empty() {
        program.push_str("; ");
    }
    program.push_str(expr);
    let mut context = fend_core::Context::new();
    let deadline = Deadline(Instant::now() + Duration::from_secs(2));
    let result = fend_core::evaluate_with_interrupt(&program, &mut context, &deadline)
        .map_err(|e| format!("I couldn't calculate '{expr}': {e}"))?;
    let value = result.get_main_result().to_string();
    let new: Vec<String> = expr
        .split(';')
        .map(str::trim)
        .filter(|s| is_assignment(s))
        .map(str::to_string)
        .collect();
    if !new.is_empty() {
        state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(agent.to_string())
            .or_default()
            .extend(new);
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
