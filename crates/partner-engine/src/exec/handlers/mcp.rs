//! `/server.tool arguments`: a tool of an MCP server. The arguments are
//! read into the JSON object the tool takes and checked against its schema
//! before anything is asked or sent (an error names the field); what the
//! tool's annotations say decides whether it is asked about when no rule
//! names it; the call runs with the server's timeout, stopped when the
//! agent is halted; its result — content, structured content, `isError` —
//! is the trace's, and replay reuses it without calling any server.

use serde_json::{Value, json};

use super::Effect;
use crate::exec::Executor;
use crate::exec::registry::{ActionError, Cx, Outcome, Stage, VerbHandler};
use partner_dialect::ParsedAction;
use partner_mcp::{ToolInfo, read_arguments};
use partner_policy::VerbTraits;

/// A tool's verb: the server and tool it calls, and — when the server
/// listed it to this process — what it said of the tool.
pub(crate) struct McpCall {
    pub server: String,
    pub tool: String,
    pub info: Option<ToolInfo>,
}

impl McpCall {
    fn text<'a>(&self, action: &'a ParsedAction) -> &'a str {
        action.content.as_deref().unwrap_or("").trim()
    }

    /// The tool as the running server knows it, from the executor's hub.
    fn live(&self, exec: &Executor, verb: &str) -> Result<ToolInfo, String> {
        let hub = exec.mcp().ok_or_else(|| {
            format!("/{verb}: no MCP server runs in this process (replay never calls one)")
        })?;
        hub.tool(verb).ok_or_else(|| {
            format!(
                "/{verb}: MCP server {} has no tool {} now",
                self.server, self.tool
            )
        })
    }
}

impl VerbHandler for McpCall {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::External
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        let asks = match &self.info {
            Some(info) => info.asks_because(),
            None => Some(format!(
                "{}.{} is a tool this process has not seen listed",
                self.server, self.tool
            )),
        };
        VerbTraits {
            // Arguments go out of partner: checked for secrets.
            carries_text: true,
            asks_unless_ruled: asks,
            ..VerbTraits::default()
        }
    }

    fn reproducible(&self, _action: &ParsedAction) -> bool {
        false
    }

    fn prepare(&self, exec: &Executor, action: &mut ParsedAction) -> Result<(), String> {
        let verb = action.verb.name().to_string();
        let info = self.live(exec, &verb)?;
        let args = read_arguments(&verb, self.text(action), &info.schema)?;
        // What the partner is asked about and the trace keeps: the
        // arguments as the tool will get them.
        action.content = Some(Value::Object(args).to_string());
        Ok(())
    }

    fn fields(&self, action: &ParsedAction) -> Vec<(String, String)> {
        let arguments = serde_json::from_str::<Value>(self.text(action))
            .map_or_else(|_| self.text(action).to_string(), |v| super::pretty(&v));
        let mut fields = vec![
            ("server".to_string(), self.server.clone()),
            ("tool".to_string(), self.tool.clone()),
        ];
        if let Some(why) = self.info.as_ref().and_then(ToolInfo::asks_because) {
            fields.push(("says".to_string(), why));
        }
        fields.push(("args".to_string(), arguments));
        fields
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        let verb = action.verb.name();
        let hub = cx.exec.mcp().ok_or_else(|| {
            ActionError::Agent(format!(
                "/{verb}: no MCP server runs in this process (replay never calls one)"
            ))
        })?;
        if !hub.serves(&self.server, &cx.ctx.agent) {
            return Err(ActionError::Agent(format!(
                "/{verb}: {} may not use MCP server {}",
                cx.ctx.agent, self.server
            )));
        }
        let info = self.live(cx.exec, verb).map_err(ActionError::Agent)?;
        let args =
            read_arguments(verb, self.text(action), &info.schema).map_err(ActionError::Agent)?;
        let data = |result: Value, server_us: u64| {
            json!({ "mcp": {
                "server": self.server,
                "tool": self.tool,
                "arguments": args,
                "result": result,
                "server_us": server_us,
            } })
        };
        let result = hub
            .call(verb, args.clone(), cx.cancel.cloned())
            .map_err(|e| ActionError::AgentWith(e.to_string(), data(Value::Null, 0)))?;
        if result.is_error {
            return Err(ActionError::AgentWith(
                format!("/{verb} failed: {}", result.text),
                data(result.result, result.server_us),
            ));
        }
        let text = if result.text.is_empty() {
            format!("/{verb} ran (no content)")
        } else {
            result.text
        };
        Ok(Effect::text(text)
            .with_data(data(result.result, result.server_us))
            .continued())
    }
}
