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
    /// through `client` (one per constellation, see
    /// [`crate::net::model_client`]).
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
        json!({
            "model": request.model,
            "system": request.system,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "stream": true,
        })
    }
}

fn parse(event: &SseEvent) -> Parsed {
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
    let kind = event
        .event
        .as_deref()
        .or_else(|| value["type"].as_str())
        .unwrap_or("");
    match kind {
        "content_block_delta" => match value["delta"]["text"].as_str() {
            Some(text) => Parsed::Token(text.to_string()),
            None => Parsed::Skip,
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
