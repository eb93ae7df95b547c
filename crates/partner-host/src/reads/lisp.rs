//! `:lisp` in the console: Pattern Lisp evaluated against an agent's
//! state, or a dry run of a tool, read off the database (nothing is
//! written), answered as an `Evaluated` the console draws.

use partner_engine::exec::Executor;
use partner_engine::exec::tools::{StateChange, TOOL_STEPS, changes, state_of};
use partner_lisp::show::tree;
use partner_lisp::{Lisp, Value};
use partner_protocol::views::Evaluated;

/// Evaluates `text` for `agent` (blocking: run it off the console's
/// thread): an expression with `state` bound to the agent's state, or
/// `tool NAME ARGS`, a dry run of a tool.
pub(super) fn evaluate(
    ex: &Executor,
    agent: &str,
    text: &str,
    now: partner_core::clock::Millis,
) -> Evaluated {
    let list = match ex.store().read(|tx| tx.blocks(Some(agent))) {
        Ok(l) => l,
        Err(e) => {
            return Evaluated::error(
                format!("{agent}: {text}"),
                format!("cannot read {agent}'s blocks: {e}"),
            );
        }
    };
    if let Some(rest) = text.strip_prefix("tool ") {
        return dry_run(ex, agent, rest, now, &list);
    }
    let title = format!("{text}  — with state = {agent}'s state");
    let mut lisp = Lisp::new();
    match Value::pattern(state_of(agent, "", now, &list)) {
        Ok(state) => lisp.define("state", state),
        Err(e) => return Evaluated::error(title, format!("error: {e}")),
    }
    match lisp.eval_str(text) {
        Ok(v) => Evaluated::result(title, tree(&v, Evaluated::MAX_LINES)),
        Err(e) => Evaluated::error(title, format!("error: {e}")),
    }
}

/// `tool NAME ARGS`: what the tool would change, and its output state.
fn dry_run(
    ex: &Executor,
    agent: &str,
    rest: &str,
    now: partner_core::clock::Millis,
    list: &[partner_store::memory::Block],
) -> Evaluated {
    let mut words = rest.trim().splitn(2, char::is_whitespace);
    let name = words.next().unwrap_or("");
    let args = words.next().unwrap_or("").trim();
    let title = format!("tool {name} on {agent}'s state (a dry run: nothing is written)");
    let tool = match ex.tools().get(name) {
        Ok(t) => t,
        Err(e) => return Evaluated::error(title, e),
    };
    let state = state_of(agent, args, now, list);
    let out = match tool.run(&state, TOOL_STEPS) {
        Ok(out) => out,
        Err(e) => return Evaluated::error(title, format!("error: {e}")),
    };
    let (wanted, ignored) = changes(&state, &out);
    let mut lines: Vec<String> = wanted
        .iter()
        .map(|c| match c {
            StateChange::Write { label, .. } => format!("would patch {label}"),
            StateChange::Create { label, .. } => format!("would create {label}"),
        })
        .collect();
    if lines.is_empty() {
        lines.push("would change nothing".into());
    }
    lines.extend(ignored.into_iter().map(|i| format!("ignored: {i}")));
    lines.push(String::new());
    match Value::pattern(out) {
        Ok(v) => lines.extend(tree(&v, Evaluated::MAX_LINES)),
        Err(e) => lines.push(format!("error: {e}")),
    }
    Evaluated::result(title, lines)
}
