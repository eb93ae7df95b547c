//! OpenAI-compatible chat completions with streaming (OpenAI, Ollama's
//! `/v1`, llama.cpp server, vLLM, LM Studio).

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::http::{Call, HttpSettings, Parsed, stream};
use super::sse::SseEvent;
use super::{Cancel, ChatRequest, Provider, Role, StreamEvent};

/// A provider speaking `POST {base}/chat/completions` with `stream: true`.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    name: String,
    settings: HttpSettings,
    client: reqwest::Client,
}

impl OpenAiProvider {
    /// A provider called `name` (`openai`, `ollama`…) with its settings,
    /// calling through `client` (one per constellation, see
    /// [`crate::net::model_client`]).
    pub fn new(name: &str, settings: HttpSettings, client: reqwest::Client) -> Self {
        OpenAiProvider {
            name: name.to_string(),
            settings,
            client,
        }
    }

    /// The request body for a chat request.
    pub fn body(request: &ChatRequest) -> Value {
        let mut messages = vec![json!({ "role": "system", "content": request.system })];
        for m in &request.messages {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            messages.push(json!({ "role": role, "content": m.content }));
        }
        json!({
            "model": request.model,
            "messages": messages,
            "stream": true,
            "max_tokens": request.max_tokens,
        })
    }
}

fn parse(event: &SseEvent) -> Parsed {
    let data = event.data.trim();
    if data == "[DONE]" {
        return Parsed::Done;
    }
    if data.is_empty() {
        return Parsed::Skip;
    }
    let Ok(value) = serde_json::from_str::<Value>(data) else {
        return Parsed::Error(format!(
            "not JSON: {}",
            data.chars().take(120).collect::<String>()
        ));
    };
    if let Some(error) = value.get("error") {
        let message = error["message"]
            .as_str()
            .map_or_else(|| error.to_string(), str::to_string);
        return Parsed::Error(message);
    }
    match value["choices"][0]["delta"]["content"].as_str() {
        Some(text) if !text.is_empty() => Parsed::Token(text.to_string()),
        _ => Parsed::Skip,
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn stream(&self, request: ChatRequest, cancel: Cancel) -> mpsc::Receiver<StreamEvent> {
        let url = format!(
            "{}/chat/completions",
            self.settings.base_url.trim_end_matches('/')
        );
        let mut headers = Vec::new();
        if let Some(key) = &self.settings.api_key {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
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
