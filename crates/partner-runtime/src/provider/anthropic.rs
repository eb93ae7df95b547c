//! Anthropic's messages API with streaming.

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::http::{Call, HttpSettings, Parsed, stream};
use super::sse::SseEvent;
use super::{Cancel, ChatRequest, Provider, Role, StreamEvent};

/// The API version sent in `anthropic-version`.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A provider speaking `POST {base}/v1/messages` with `stream: true`.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    settings: HttpSettings,
    client: reqwest::Client,
}

impl AnthropicProvider {
    /// A provider with its settings (base URL without `/v1`), calling
    /// through `client` (see [`partner_engine::net::model_client`]).
    pub fn new(settings: HttpSettings, client: reqwest::Client) -> Self {
        AnthropicProvider { settings, client }
    }

    /// The request body for a chat request.
    pub fn body(request: &ChatRequest) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                json!({ "role": role, "content": m.content })
            })
            .collect();
        let mut body = json!({
            "model": request.model,
            "system": request.system,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "stream": true,
        });
        let s = &request.sampling;
        if let Some(t) = s.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(p) = s.top_p {
            body["top_p"] = json!(p);
        }
        if let Some(stop) = &s.stop {
            body["stop_sequences"] = json!(stop);
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": t.description,
                        "input_schema": t.parameters,
                    })
                })
                .collect();
            body["tools"] = json!(tools);
        }
        body
    }
}

fn parse(event: &SseEvent) -> Vec<Parsed> {
    vec![parse_one(event)]
}

fn parse_one(event: &SseEvent) -> Parsed {
    let Ok(value) = serde_json::from_str::<Value>(&event.data) else {
        return if event.data.trim().is_empty() {
            Parsed::Skip
        } else {
            Parsed::Error(format!(
                "not JSON: {}",
                event.data.chars().take(120).collect::<String>()
            ))
        };
    };
    let index = value["index"]
        .as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .unwrap_or(0);
    let kind = event
        .event
        .as_deref()
        .or_else(|| value["type"].as_str())
        .unwrap_or("");
    match kind {
        "content_block_start" if value["content_block"]["type"] == "tool_use" => {
            Parsed::ToolDelta {
                index,
                name: value["content_block"]["name"].as_str().map(str::to_string),
                arguments: String::new(),
            }
        }
        "content_block_delta" => match (
            value["delta"]["text"].as_str(),
            value["delta"]["partial_json"].as_str(),
            value["delta"]["thinking"].as_str(),
        ) {
            (Some(text), _, _) => Parsed::Token(text.to_string()),
            (None, Some(json), _) => Parsed::ToolDelta {
                index,
                name: None,
                arguments: json.to_string(),
            },
            (None, None, Some(thinking)) => Parsed::Thinking(thinking.len()),
            (None, None, None) => Parsed::Skip,
        },
        "message_start" => Parsed::Usage {
            input: value["message"]["usage"]["input_tokens"].as_u64(),
            output: None,
        },
        "message_delta" => Parsed::Usage {
            input: None,
            output: value["usage"]["output_tokens"].as_u64(),
        },
        "message_stop" => Parsed::Done,
        "error" => Parsed::Error(
            value["error"]["message"]
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string),
        ),
        _ => Parsed::Skip,
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn describe(&self, model: &str) -> String {
        format!(
            "provider anthropic, model {model}, {}",
            self.settings.base_url
        )
    }

    fn stream(&self, request: ChatRequest, cancel: Cancel) -> mpsc::Receiver<StreamEvent> {
        let url = format!(
            "{}/v1/messages",
            self.settings.base_url.trim_end_matches('/')
        );
        let mut headers = vec![(
            "anthropic-version".to_string(),
            ANTHROPIC_VERSION.to_string(),
        )];
        if let Some(key) = &self.settings.api_key {
            headers.push(("x-api-key".to_string(), key.clone()));
        }
        let call = Call {
            client: self.client.clone(),
            settings: self.settings.clone(),
            url,
            headers,
            body: Self::body(&request).to_string(),
            on_event: parse,
        };
        stream(call, cancel)
    }
}
