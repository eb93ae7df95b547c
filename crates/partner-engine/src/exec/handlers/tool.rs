//! `/tool NAME args`, and `/NAME args` for each loaded tool: runs a
//! Pattern Lisp tool on its caller's state and asks for the memory writes
//! its output state implies. The run itself changes nothing; each write
//! is then submitted as the agent's own `/recall` action, so the
//! permission engine sees it and a write that needs approval waits in
//! the queue.

use serde_json::json;

use super::Effect;
use crate::exec::registry::{ActionError, Cx, Outcome, Stage, VerbHandler};
use crate::exec::tools::{StateChange, TOOL_STEPS, changes, state_of};
use partner_dialect::{ActionOp, ParsedAction, Verb, VerbTable};
use partner_lisp::codec::gram_of;
use partner_policy::VerbTraits;

/// At most this many characters in `/tools`' listing.
const MAX_LISTING: usize = 16 * 1024;

/// `/tools` (`/tool` alone): every tool the agent may use — the Pattern
/// Lisp tools, and the tools of the MCP servers that serve it with their
/// arguments — one line each, at most [`MAX_LISTING`] characters. What
/// it lists depends on what runs, so replay reuses the recorded listing.
fn listing(cx: &Cx<'_>) -> Effect {
    let agent = cx.ctx.agent.as_str();
    let mut lines: Vec<String> = cx
        .exec
        .tools()
        .scan()
        .into_iter()
        .filter(|(_, tool)| tool.is_ok())
        .map(|(name, _)| format!("/tool {name} arguments"))
        .collect();
    if let Some(hub) = cx.exec.mcp() {
        lines.extend(
            hub.tools()
                .into_iter()
                .filter(|t| hub.serves(&t.server, agent))
                .map(|t| format!("/{} {}", t.verb, t.summary(240))),
        );
    }
    let total = lines.len();
    let mut text = String::new();
    let mut shown = 0;
    for line in &lines {
        if text.len() + line.len() + 1 > MAX_LISTING {
            break;
        }
        text.push_str(line);
        text.push('\n');
        shown += 1;
    }
    if total == 0 {
        text = "no tools: nothing is configured for you".into();
    } else if shown < total {
        text.push_str(&format!("…and {} more not shown", total - shown));
    }
    Effect::text(text.trim_end().to_string()).with_data(json!({
        "tools": { "listed": total },
        crate::exec::registry::RECORDED_ONLY: "the listing is of the servers running then",
    }))
}

/// Runs a tool: the one named by the verb, or (for `/tool`) by the first
/// word of the text; `/tool` alone lists them.
pub(super) struct RunTool {
    pub tool: Option<String>,
}

impl RunTool {
    fn name_and_args(&self, action: &ParsedAction) -> Result<(String, String), ActionError> {
        let text = action.content.as_deref().unwrap_or("").trim();
        if let Some(name) = &self.tool {
            return Ok((name.clone(), text.to_string()));
        }
        let mut words = text.splitn(2, char::is_whitespace);
        let name = words.next().filter(|n| !n.is_empty()).ok_or_else(|| {
            ActionError::Agent("/tool needs the tool's name: /tool NAME arguments".into())
        })?;
        Ok((
            name.to_string(),
            words.next().unwrap_or("").trim().to_string(),
        ))
    }
}

impl VerbHandler for RunTool {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Compute
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    fn taught(&self, table: &VerbTable) -> bool {
        self.tool.is_some()
            || table.specs().iter().any(|s| {
                matches!(
                    s.action,
                    Some(
                        partner_dialect::CustomAction::Tool { .. }
                            | partner_dialect::CustomAction::Mcp { .. }
                    )
                )
            })
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        if self.tool.is_none() && action.content.as_deref().unwrap_or("").trim().is_empty() {
            return Ok(listing(cx));
        }
        let (name, args) = self.name_and_args(action)?;
        let tool = cx.exec.tools().get(&name).map_err(|why| {
            // Kept with the failure: a replay answers the same.
            ActionError::AgentWith(
                why.clone(),
                json!({ "tool": { "name": name, "unavailable": why } }),
            )
        })?;
        let agent = cx.ctx.agent.as_str();
        let list = cx.exec.store().read(|tx| tx.blocks(Some(agent)))?;
        let input = state_of(agent, &args, cx.now, &list);
        let output = tool.run(&input, TOOL_STEPS).map_err(|e| {
            // Kept with the failure, so replay runs the same tool again.
            ActionError::AgentWith(
                format!("tool {name}: {e}"),
                json!({ "tool": { "name": name, "args": args, "source": tool.source } }),
            )
        })?;
        let (wanted, ignored) = changes(&input, &output);
        let labels: Vec<&str> = wanted
            .iter()
            .map(|c| match c {
                StateChange::Write { label, .. } | StateChange::Create { label, .. } => {
                    label.as_str()
                }
            })
            .collect();
        let mut text = if labels.is_empty() {
            format!("tool {name} ran: no change to memory")
        } else {
            format!(
                "tool {name} ran: it writes {} (each write is checked like your own)",
                labels.join(", ")
            )
        };
        if !ignored.is_empty() {
            text.push_str(&format!("; ignored: {}", ignored.join("; ")));
        }
        let output_gram = gram_of(&output);
        Ok(Effect::text(text).with_data(json!({
            "tool": {
                "name": name,
                "args": args,
                "source": tool.source,
                "input": gram_of(&input),
                "output": output_gram,
                "input_nodes": input.size(),
                "output_nodes": output.size(),
                "changes": wanted,
                "ignored": ignored,
            },
            "replay_check": output_gram,
        })))
    }

    fn follow_ups(&self, action: &ParsedAction, data: &serde_json::Value) -> Vec<ParsedAction> {
        let Some(list) = data["tool"]["changes"].as_array() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, change) in list.iter().enumerate() {
            let mut write = ParsedAction::new(Verb::Recall, "recall", action.span);
            if let Some(w) = change.get("Write") {
                let (Some(label), Some(old), Some(new)) =
                    (w["label"].as_str(), w["old"].as_str(), w["new"].as_str())
                else {
                    continue;
                };
                write.op = Some(ActionOp::Patch);
                write.target = Some(label.to_string());
                write.content = Some(diffy::create_patch(old, new).to_string());
            } else if let Some(c) = change.get("Create") {
                let (Some(label), Some(value)) = (c["label"].as_str(), c["value"].as_str()) else {
                    continue;
                };
                write.op = Some(ActionOp::Insert);
                write.target = Some(label.to_string());
                write.content = Some(value.to_string());
            } else {
                continue;
            }
            // `0` never appears in a parsed path: the writes' ids cannot
            // collide with the turn's own actions.
            write.path = action
                .path
                .iter()
                .copied()
                .chain([0, i as u16 + 1])
                .collect();
            out.push(write);
        }
        out
    }
}
