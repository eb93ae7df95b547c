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

    fn traits(&self, action: &ParsedAction) -> VerbTraits {
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
            connects_to: reached_host(self.text(action)),
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

    fn fields(&self, exec: &Executor, action: &ParsedAction) -> Vec<(String, String)> {
        let parsed = serde_json::from_str::<Value>(self.text(action)).ok();
        let arguments = parsed
            .as_ref()
            .map_or_else(|| self.text(action).to_string(), super::pretty);
        // What its annotations say is the request's reason, shown above.
        let mut fields = vec![
            ("server".to_string(), self.server.clone()),
            ("tool".to_string(), self.tool.clone()),
        ];
        // What a write would change comes first: the arguments repeat it.
        let writes = self.info.as_ref().is_some_and(|i| !i.read_only);
        if let (true, Some(args), Some(hub)) = (writes, &parsed, exec.mcp()) {
            fields.extend(file_change(args, &hub.roots(&self.server)));
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

/// At most this many lines of a file's diff in the queue.
const SHOWN_DIFF: usize = 80;

/// At most this many bytes of a file are read to show what a write would
/// change in it.
const MAX_COMPARED: u64 = 256 * 1024;

/// What a write-like call naming a `path` and its new `content` would
/// change in that file, as a diff (`diff`), when the file lies in one of
/// the server's `roots`; otherwise why it is not shown (`file`).
fn file_change(args: &Value, roots: &[std::path::PathBuf]) -> Option<(String, String)> {
    let path = args.get("path")?.as_str()?;
    let new = args.get("content")?.as_str()?;
    let path = std::path::Path::new(path);
    let shown = |why: &str| Some(("file".to_string(), format!("{}: {why}", path.display())));
    if !path.is_absolute() {
        return shown("a relative path; what it would change is not shown");
    }
    let real = |p: &std::path::Path| std::fs::canonicalize(p).ok();
    let Some(parent) = path.parent().and_then(real) else {
        return shown("its folder does not exist");
    };
    let inside = roots
        .iter()
        .filter_map(|r| real(r))
        .any(|root| parent.starts_with(&root));
    if !inside {
        return shown("outside the folders the server may write; not read");
    }
    let old = match std::fs::symlink_metadata(path) {
        Err(_) => String::new(),
        Ok(m) if !m.is_file() => return shown("not a plain file; not read"),
        Ok(m) if m.len() > MAX_COMPARED => return shown("over 256 KiB; not compared"),
        Ok(_) => match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(_) => return shown("not text; not compared"),
        },
    };
    let mut options = diffy::DiffOptions::new();
    let name = path.display().to_string();
    options.set_original_filename(name.clone());
    options.set_modified_filename(name);
    let patch = options.create_patch(&old, new).to_string();
    let total = patch.lines().count();
    let mut shown: Vec<&str> = patch.lines().take(SHOWN_DIFF).collect();
    let more = format!("… ({} more lines)", total.saturating_sub(SHOWN_DIFF));
    if total > SHOWN_DIFF {
        shown.push(&more);
    }
    Some(("diff".to_string(), shown.join("\n")))
}

/// At most this many values of the arguments are looked at for URLs.
const MAX_LOOKED_AT: usize = 1_000;

/// The host a call's arguments name in a URL (`http`, `https`, `ws`,
/// `wss`), for the network rules: the first that is not public when any
/// is (so one such host among others is checked), else the first.
fn reached_host(text: &str) -> Option<(String, Option<u16>)> {
    let value: Value = serde_json::from_str(text).ok()?;
    let mut hosts = Vec::new();
    let mut stack = vec![&value];
    let mut looked = 0;
    while let Some(v) = stack.pop() {
        looked += 1;
        if looked > MAX_LOOKED_AT {
            break;
        }
        match v {
            Value::String(s) => hosts.extend(url_host(s)),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    let inner = hosts
        .iter()
        .position(|(h, _)| partner_policy::network::non_public_host(h).is_some());
    match inner {
        Some(i) => Some(hosts.swap_remove(i)),
        None => hosts.into_iter().next(),
    }
}

fn url_host(text: &str) -> Option<(String, Option<u16>)> {
    let text = text.trim();
    let scheme = text.split_once("://")?.0.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https" | "ws" | "wss") {
        return None;
    }
    let url = reqwest::Url::parse(text).ok()?;
    Some((url.host_str()?.to_string(), url.port()))
}
