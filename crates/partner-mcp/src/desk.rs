//! partner as an MCP server (`partner mcp serve`): the tools another agent
//! tool calls to use partner's console as its approval screen — ask the
//! partner for a decision, ask in the shape of a permission prompt, read
//! the queue, leave a note for an agent. What they do on the
//! constellation is the [`Desk`]'s; this module speaks MCP. None of the
//! tools decides anything: the partner does, in the console.

use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServiceExt};
use serde_json::{Value, json};

/// The largest message read from a client over stdio (as over HTTP).
pub const MAX_REQUEST: usize = 1024 * 1024;

/// What the served tools do on the constellation.
pub trait Desk: Send + Sync + 'static {
    /// Asks the partner `question` (a JSON object: title, details,
    /// options, tool, arguments) and waits for the decision until `stop`
    /// says the caller went away: `{decision, approved, choice,
    /// arguments, note, by, request}`.
    fn ask(&self, question: Value, stop: &dyn Fn() -> bool) -> Value;
    /// The waiting requests.
    fn queue(&self) -> Result<Value, String>;
    /// Leaves a note for `agent`.
    fn note(&self, agent: &str, text: &str) -> Result<String, String>;
    /// The name the asker's requests carry.
    fn asker(&self) -> &str;
}

/// The served tools over a [`Desk`].
pub struct DeskServer<D> {
    desk: Arc<D>,
}

impl<D: Desk> Clone for DeskServer<D> {
    fn clone(&self) -> Self {
        DeskServer {
            desk: self.desk.clone(),
        }
    }
}

impl<D: Desk> DeskServer<D> {
    /// Serves `desk`.
    pub fn new(desk: D) -> Self {
        DeskServer {
            desk: Arc::new(desk),
        }
    }

    /// Serves over this process's standard input and output until the
    /// client closes them; a message over [`MAX_REQUEST`] is dropped.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let transport =
            rmcp::transport::async_rw::AsyncRwTransport::<RoleServer, _, _>::new_server(
                tokio::io::stdin(),
                tokio::io::stdout(),
            )
            .with_max_line_length(MAX_REQUEST);
        let running = self
            .serve(transport)
            .await
            .map_err(|e| format!("the MCP client did not start a session: {e}"))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP session ended badly: {e}"))
    }
}

fn object(schema: Value) -> Arc<JsonObject> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The tools, with their schemas.
pub fn tools() -> Vec<Tool> {
    let ask = json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 200, "description": "what the partner should decide, in one line"},
            "details": {"type": "string", "maxLength": 8000, "description": "what the partner should know to decide"},
            "options": {"type": "array", "items": {"type": "string", "maxLength": 120}, "maxItems": 12, "description": "answers to choose from; approving without choosing picks the first"},
            "tool": {"type": "string", "maxLength": 128, "description": "the tool you would call, when asking about a call"},
            "arguments": {"type": "object", "description": "its arguments; the partner may edit them, and the answer holds them as approved"}
        },
        "required": ["title"],
        "additionalProperties": false
    });
    let prompt = json!({
        "type": "object",
        "properties": {
            "tool_name": {"type": "string", "maxLength": 128},
            "input": {"type": "object"},
            "tool_use_id": {"type": "string"}
        },
        "required": ["tool_name", "input"]
    });
    let note = json!({
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "the agent of the constellation"},
            "text": {"type": "string", "maxLength": 8000}
        },
        "required": ["agent", "text"],
        "additionalProperties": false
    });
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    vec![
        Tool::new(
            "ask_partner",
            "Ask the partner to decide (it lands in partner's queue) and wait for the answer: approved or not, the option chosen, the arguments as approved (perhaps edited), the partner's reason.",
            object(ask),
        ),
        Tool::new(
            "permission_prompt",
            "A permission prompt answered by the partner in partner's console: {\"behavior\": \"allow\", \"updatedInput\": …} or {\"behavior\": \"deny\", \"message\": …}.",
            object(prompt),
        ),
        Tool::new(
            "read_queue",
            "The requests waiting for the partner's decision, oldest first.",
            object(empty),
        )
        .annotate(ToolAnnotations::new().read_only(true)),
        Tool::new(
            "post_note",
            "Leave a note in an agent's inbox (it reads as from this tool, never from the partner).",
            object(note),
        ),
    ]
}

/// `permission_prompt`'s input as a question.
fn prompt_question(asker: &str, args: &JsonObject) -> Result<Value, String> {
    let tool = args
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or("tool_name: a string is needed")?;
    let input = match args.get("input") {
        Some(Value::Object(input)) => input.clone(),
        _ => return Err("input: an object is needed".into()),
    };
    Ok(json!({
        "title": format!("{asker} asks to use {}", tool.chars().take(120).collect::<String>()),
        "tool": tool,
        "arguments": input,
    }))
}

/// An outcome as a permission prompt's answer.
fn prompt_answer(outcome: &Value, input: &JsonObject) -> Value {
    if outcome["approved"] == json!(true) {
        let updated = match &outcome["arguments"] {
            Value::Object(args) => args.clone(),
            _ => input.clone(),
        };
        json!({"behavior": "allow", "updatedInput": updated})
    } else {
        let why = outcome["note"].as_str().unwrap_or("the partner said no");
        json!({"behavior": "deny", "message": why})
    }
}

fn text_result(value: &Value, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(value.to_string())];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Value::Object(_) = value {
        result.structured_content = Some(value.clone());
    }
    result
}

fn failed(why: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(why)])
}

impl<D: Desk> DeskServer<D> {
    /// Runs one tool, blocking (on a blocking thread).
    fn call(&self, name: &str, args: JsonObject, stop: &dyn Fn() -> bool) -> CallToolResult {
        let desk = &*self.desk;
        match name {
            "ask_partner" => {
                let outcome = desk.ask(Value::Object(args), stop);
                text_result(&outcome, false)
            }
            "permission_prompt" => match prompt_question(desk.asker(), &args) {
                Ok(question) => {
                    let input = question["arguments"]
                        .as_object()
                        .cloned()
                        .unwrap_or_default();
                    let outcome = desk.ask(question, stop);
                    let answer = prompt_answer(&outcome, &input);
                    let mut result =
                        CallToolResult::success(vec![ContentBlock::text(answer.to_string())]);
                    result.structured_content = Some(answer);
                    result
                }
                Err(e) => failed(format!("permission_prompt: {e}")),
            },
            "read_queue" => match desk.queue() {
                Ok(queue) => text_result(&queue, false),
                Err(e) => failed(format!("read_queue: {e}")),
            },
            "post_note" => {
                let field = |f: &str| args.get(f).and_then(Value::as_str).unwrap_or("");
                match desk.note(field("agent"), field("text")) {
                    Ok(done) => CallToolResult::success(vec![ContentBlock::text(done)]),
                    Err(e) => failed(format!("post_note: {e}")),
                }
            }
            other => failed(format!("there is no tool {other}")),
        }
    }
}

impl<D: Desk> ServerHandler for DeskServer<D> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("partner", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "partner's console decides: ask_partner or permission_prompt put a request in the partner's queue and wait for the answer.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let server = self.clone();
        let cancelled = context.ct.clone();
        let result = tokio::task::spawn_blocking(move || {
            server.call(&name, args, &|| cancelled.is_cancelled())
        })
        .await
        .unwrap_or_else(|e| failed(format!("the tool stopped: {e}")));
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_permission_prompt_is_a_question_and_its_answer_the_prompt_shape() {
        let args: JsonObject = serde_json::from_value(json!({
            "tool_name": "Bash", "input": {"command": "ls"}
        }))
        .unwrap();
        let q = prompt_question("claude", &args).unwrap();
        assert_eq!(q["title"], "claude asks to use Bash");
        let input = q["arguments"].as_object().unwrap().clone();
        let edited = json!({"approved": true, "arguments": {"command": "ls -a"}});
        assert_eq!(
            prompt_answer(&edited, &input),
            json!({"behavior": "allow", "updatedInput": {"command": "ls -a"}})
        );
        let no = json!({"approved": false, "note": "partner said no: not now"});
        assert_eq!(prompt_answer(&no, &input)["behavior"], "deny");
        assert!(prompt_question("c", &JsonObject::new()).is_err());
    }
}
