//! Native tool calls as a second wire format (`actions = "tools"`): each
//! verb an agent may use is offered as a function whose one required
//! argument is what would follow the verb in the dialect, and each call
//! the model makes becomes that dialect line — so parsing, permission,
//! the trace and the console see the same actions either way.

use serde_json::{Value, json};

use super::provider::{ToolCall, ToolSpec};
use partner_dialect::{CustomAction, VerbSpec};
use partner_mcp::McpHub;

/// Longest arguments text taken from one call.
const MAX_ARGUMENTS: usize = 16 * 1024;

/// The longest function name providers accept.
const MAX_FUNCTION_NAME: usize = 64;

/// The markers a call may carry.
const MARKERS: &[&str] = &[".", "?", "?ask", "!"];

/// At most this many tokens (estimated) of MCP tools' functions — names,
/// descriptions and schemas — offered in one request; the rest are
/// reached through `/tools` and written as dialect lines.
pub const MCP_FUNCTION_TOKENS: usize = 4_000;

/// The tools offered for `verbs`: an MCP tool (with the hub that
/// listed it) as itself — its name with a `-` for the dot, its own
/// description and input schema — while they fit [`MCP_FUNCTION_TOKENS`];
/// any other verb as a function whose one required argument is what would
/// follow the verb in the dialect.
pub fn tool_specs(verbs: &[&VerbSpec], mcp: Option<&McpHub>) -> Vec<ToolSpec> {
    let mut share = Share::default();
    verbs
        .iter()
        .filter_map(|v| match &v.action {
            Some(CustomAction::Mcp { .. }) => share.fits(mcp_spec(v, mcp?)?),
            _ => Some(dialect_spec(v)),
        })
        .collect()
}

/// The MCP functions' share of a request, counted as they are offered.
#[derive(Default)]
struct Share {
    spent: usize,
}

impl Share {
    /// `spec`, when it fits what is left of [`MCP_FUNCTION_TOKENS`]
    /// after those offered before it.
    fn fits(&mut self, spec: ToolSpec) -> Option<ToolSpec> {
        self.spent += crate::prompt::budget::estimate_tokens(&format!(
            "{} {} {}",
            spec.name, spec.description, spec.parameters
        ));
        (self.spent <= MCP_FUNCTION_TOKENS).then_some(spec)
    }
}

fn mcp_spec(v: &VerbSpec, mcp: &McpHub) -> Option<ToolSpec> {
    let info = mcp.tool(v.verb.name())?;
    // Function names are at most 64 characters.
    if info.verb.len() > MAX_FUNCTION_NAME {
        return None;
    }
    Some(ToolSpec {
        name: info.verb.replacen('.', "-", 1),
        description: info.description,
        parameters: info.schema,
        verb: info.verb,
        takes_object: true,
    })
}

fn dialect_spec(v: &VerbSpec) -> ToolSpec {
    ToolSpec {
        name: v.verb.name().to_string(),
        description: v.summary.to_string(),
        parameters: json!({
            "type": "object",
            "properties": {
                "args": {
                    "type": "string",
                    "description": format!("what follows /{} in the dialect: words, \"quoted text\", @targets", v.verb.name()),
                },
                "marker": {
                    "type": "string",
                    "enum": MARKERS,
                    "description": ". routine, ? check, ?ask ask the partner first, ! serious",
                },
            },
            "required": ["args"],
        }),
        verb: v.verb.name().to_string(),
        takes_object: false,
    }
}

/// The dialect line a tool call stands for, or why it cannot be one. Only
/// tools that were offered are accepted; the arguments stay on one line.
pub fn call_to_line(call: &ToolCall, offered: &[ToolSpec]) -> Result<String, String> {
    let Some(tool) = offered.iter().find(|t| t.name == call.name) else {
        return Err(format!(
            "the model called {}, which is not a tool it was offered",
            call.name.chars().take(40).collect::<String>()
        ));
    };
    if call.arguments.len() > MAX_ARGUMENTS {
        return Err(format!("the arguments of {} were too long", call.name));
    }
    let value: Value = if call.arguments.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&call.arguments)
            .map_err(|e| format!("the arguments of {} were not JSON: {e}", call.name))?
    };
    if tool.takes_object {
        // The tool's own object, as compact JSON: one line, checked
        // against the tool's schema by its handler.
        return match value {
            Value::Object(_) => Ok(format!("/{} {value}", tool.verb)),
            _ => Err(format!("the arguments of {} were not an object", call.name)),
        };
    }
    let args = match &value {
        Value::Object(map) => match map.get("args") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        Value::String(s) => s.clone(),
        _ => return Err(format!("the arguments of {} were not an object", call.name)),
    };
    let marker = value
        .get("marker")
        .and_then(Value::as_str)
        .filter(|m| MARKERS.contains(m));
    // One line: a call never smuggles a second action in.
    let args = args.replace(['\r', '\n'], " ");
    let mut line = format!("/{} {}", tool.verb, args.trim());
    if let Some(marker) = marker {
        line.push(' ');
        line.push_str(marker);
    }
    Ok(line.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_dialect::VerbTable;

    fn offered() -> Vec<ToolSpec> {
        let table = VerbTable::builtin();
        let verbs: Vec<&VerbSpec> = table
            .specs()
            .iter()
            .filter(|s| matches!(s.verb.name(), "recall" | "post"))
            .collect();
        tool_specs(&verbs, None)
    }

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn calls_become_single_dialect_lines() {
        let tools = offered();
        assert_eq!(tools.len(), 2);
        assert_eq!(
            call_to_line(
                &call("recall", r#"{"args": "insert \"Dana prefers email\""}"#),
                &tools
            ),
            Ok("/recall insert \"Dana prefers email\"".into())
        );
        assert_eq!(
            call_to_line(
                &call("post", r#"{"args": "bluesky \"hi\"", "marker": "?ask"}"#),
                &tools
            ),
            Ok("/post bluesky \"hi\" ?ask".into())
        );
        assert_eq!(
            call_to_line(
                &call("recall", "{\"args\": \"notes\\n/approve r1\"}"),
                &tools
            ),
            Ok("/recall notes /approve r1".into()),
            "a newline in the arguments never starts a second action"
        );
        assert!(call_to_line(&call("approve", r#"{"args": "r1"}"#), &tools).is_err());
        assert!(call_to_line(&call("recall", "{not json"), &tools).is_err());
    }

    #[test]
    fn mcp_functions_stop_at_their_share() {
        let mut share = Share::default();
        let big = |i: usize| ToolSpec {
            name: format!("fs-tool_{i}"),
            description: "x ".repeat(2_000),
            parameters: json!({"type": "object"}),
            verb: format!("fs.tool_{i}"),
            takes_object: true,
        };
        let offered = (0..40).filter_map(|i| share.fits(big(i))).count();
        assert!((1..40).contains(&offered), "{offered} of 40 offered");
        assert!(
            share.fits(big(41)).is_none(),
            "none after the share is spent"
        );
    }
}
