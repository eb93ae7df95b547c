//! OpenAI-compatible chat completions with streaming (OpenAI, Ollama's
//! `/v1`, llama.cpp server, vLLM, LM Studio): sampling settings, tools and
//! usage reports included, and the context size llama.cpp reports.

use serde_json::{Value, json};
use tokio::sync::{OnceCell, mpsc};

use super::http::{Call, HttpSettings, Parsed, stream};
use super::sse::SseEvent;
use super::{Cancel, ChatRequest, Provider, Role, StreamEvent};

/// A provider speaking `POST {base}/chat/completions` with `stream: true`.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    name: String,
    settings: HttpSettings,
    client: reqwest::Client,
    context: std::sync::Arc<OnceCell<Option<usize>>>,
}

impl OpenAiProvider {
    /// A provider called `name` (`openai`, `ollama`…) with its settings,
    /// calling through `client` (see [`partner_engine::net::model_client`]).
    pub fn new(name: &str, settings: HttpSettings, client: reqwest::Client) -> Self {
        OpenAiProvider {
            name: name.to_string(),
            settings,
            client,
            context: std::sync::Arc::default(),
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
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "stream": true,
            "stream_options": { "include_usage": true },
            "max_tokens": request.max_tokens,
        });
        let s = &request.sampling;
        let fields = [
            ("temperature", s.temperature),
            ("top_p", s.top_p),
            ("repeat_penalty", s.repeat_penalty),
            ("frequency_penalty", s.frequency_penalty),
            ("presence_penalty", s.presence_penalty),
        ];
        for (name, value) in fields {
            if let Some(v) = value {
                body[name] = json!(v);
            }
        }
        if let Some(stop) = &s.stop {
            body["stop"] = json!(stop);
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.parameters,
                        },
                    })
                })
                .collect();
            body["tools"] = json!(tools);
        }
        body
    }

    /// The server's root (the base URL without its `/v1`).
    fn root(&self) -> &str {
        let base = self.settings.base_url.trim_end_matches('/');
        base.strip_suffix("/v1").unwrap_or(base)
    }
}

fn parse(event: &SseEvent) -> Vec<Parsed> {
    let data = event.data.trim();
    if data == "[DONE]" {
        return vec![Parsed::Done];
    }
    if data.is_empty() {
        return Vec::new();
    }
    let Ok(value) = serde_json::from_str::<Value>(data) else {
        return vec![Parsed::Error(format!(
            "not JSON: {}",
            data.chars().take(120).collect::<String>()
        ))];
    };
    if let Some(error) = value.get("error") {
        let message = error["message"]
            .as_str()
            .map_or_else(|| error.to_string(), str::to_string);
        return vec![Parsed::Error(message)];
    }
    let mut out = Vec::new();
    let delta = &value["choices"][0]["delta"];
    if let Some(text) = delta["content"].as_str()
        && !text.is_empty()
    {
        out.push(Parsed::Token(text.to_string()));
    }
    let thinking = ["reasoning_content", "reasoning"]
        .iter()
        .filter_map(|k| delta[k].as_str())
        .map(str::len)
        .sum::<usize>();
    if thinking > 0 {
        out.push(Parsed::Thinking(thinking));
    }
    if let Some(calls) = delta["tool_calls"].as_array() {
        for (i, call) in calls.iter().enumerate() {
            let index = call["index"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(i);
            out.push(Parsed::ToolDelta {
                index,
                name: call["function"]["name"].as_str().map(str::to_string),
                arguments: call["function"]["arguments"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            });
        }
    }
    let usage = &value["usage"];
    if usage.is_object() {
        out.push(Parsed::Usage {
            input: usage["prompt_tokens"].as_u64(),
            output: usage["completion_tokens"].as_u64(),
        });
    }
    out
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

    fn describe(&self, model: &str) -> String {
        format!(
            "provider {}, model {model}, {}",
            self.name, self.settings.base_url
        )
    }

    /// llama.cpp's server renders a request's prompt at `/apply-template`:
    /// the tools are kept when their descriptions are in it.
    fn template_keeps_tools<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<bool>> + Send + 'a>> {
        Box::pin(async move {
            if request.tools.is_empty() {
                return None;
            }
            let url = format!("{}/apply-template", self.root());
            let body = Self::body(request);
            let ask = async {
                let mut response = self
                    .client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await
                    .ok()?;
                if !response.status().is_success() {
                    return None;
                }
                let (bytes, _) = partner_engine::net::read_limited(&mut response, 4 * 1024 * 1024)
                    .await
                    .ok()?;
                let value: Value = serde_json::from_slice(&bytes).ok()?;
                let prompt = value["prompt"].as_str()?;
                // A tool's description, not its name: the instructions
                // name verbs too.
                Some(
                    request
                        .tools
                        .iter()
                        .any(|t| !t.description.is_empty() && prompt.contains(&t.description)),
                )
            };
            tokio::time::timeout(std::time::Duration::from_secs(5), ask)
                .await
                .ok()
                .flatten()
        })
    }

    /// llama.cpp's server reports its context size at `/props`; asked once.
    fn context_window<'a>(
        &'a self,
        _model: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<usize>> + Send + 'a>> {
        Box::pin(async move {
            *self
                .context
                .get_or_init(|| async {
                    let url = format!("{}/props", self.root());
                    let ask = async {
                        let mut response = self.client.get(&url).send().await.ok()?;
                        if !response.status().is_success() {
                            return None;
                        }
                        let (bytes, _) =
                            partner_engine::net::read_limited(&mut response, 256 * 1024)
                                .await
                                .ok()?;
                        let value: Value = serde_json::from_slice(&bytes).ok()?;
                        let n = value["default_generation_settings"]["n_ctx"]
                            .as_u64()
                            .or_else(|| value["n_ctx"].as_u64())?;
                        usize::try_from(n).ok().filter(|n| *n >= 256)
                    };
                    tokio::time::timeout(std::time::Duration::from_secs(3), ask)
                        .await
                        .ok()
                        .flatten()
                })
                .await
        })
    }
}
