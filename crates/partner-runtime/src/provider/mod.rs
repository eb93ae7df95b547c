//! Model providers: OpenAI-compatible chat completions (OpenAI, Ollama,
//! llama.cpp, vLLM, LM Studio), Anthropic messages, and a scripted provider
//! that answers from a script file. Every provider streams its reply as
//! [`StreamEvent`]s on a channel and stops when told to cancel.

mod anthropic;
mod http;
mod openai;
mod sampling;
mod scripted;
mod sse;

pub use partner_protocol::PromptKind;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

pub use anthropic::AnthropicProvider;
pub use http::{HttpSettings, RetryPolicy};
pub use openai::OpenAiProvider;
pub use sampling::{Sampling, ToolCall, ToolSpec};
pub use scripted::{AgentScript, Script, ScriptedProvider};
pub use sse::{EventTooLarge, MAX_EVENT, MAX_LINE, SseEvent, SseParser};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person, or the runtime speaking for them (pulses, results).
    User,
    /// The model.
    Assistant,
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: String,
}

impl ChatMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What is sent to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The agent asking (scripted providers answer per agent).
    pub agent: String,
    /// The model name, without the provider prefix.
    pub model: String,
    /// Which prompt type this is.
    pub kind: PromptKind,
    /// Who sent the message being answered (`partner`, `agent:scout`,
    /// `system`), for a first pass answering a message.
    pub from: Option<String>,
    /// The system prompt.
    pub system: String,
    /// The conversation, oldest first, ending with a user message.
    pub messages: Vec<ChatMessage>,
    /// Most tokens to generate.
    pub max_tokens: u32,
    /// Sampling settings (`max_tokens` above wins over theirs).
    pub sampling: Sampling,
    /// Tools offered (empty: the model writes dialect actions as text).
    pub tools: Vec<ToolSpec>,
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The server answered with an error status (after any retries).
    #[error("the model server answered {status}: {body}")]
    Status {
        /// HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The server could not be reached.
    #[error("could not reach the model server: {0}")]
    Connection(String),
    /// The stream broke off or reported an error after it began.
    #[error("the reply broke off: {0}")]
    MidStream(String),
    /// The answer was not in the expected format.
    #[error("the model server's answer was not understood: {0}")]
    Protocol(String),
    /// The call was cancelled (the agent was halted).
    #[error("cancelled")]
    Cancelled,
    /// No provider is configured for a model.
    #[error("{0}")]
    Config(String),
}

/// One piece of a streamed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// More text.
    Token(String),
    /// The model called a tool (`actions = "tools"`).
    Tool(ToolCall),
    /// What the call cost, as the server counted it.
    Usage {
        /// Tokens of the prompt.
        input: u64,
        /// Tokens of the reply.
        output: u64,
    },
    /// The reply is complete.
    Done,
    /// The call failed; no more events follow.
    Error(ProviderError),
}

pub use partner_engine::net::Cancel;

/// A language model behind some wire format.
pub trait Provider: Send + Sync + fmt::Debug {
    /// The provider's name, as used before the colon in `provider:model`.
    fn name(&self) -> &str;

    /// Starts a call and returns the stream of its reply.
    fn stream(&self, request: ChatRequest, cancel: Cancel) -> mpsc::Receiver<StreamEvent>;

    /// Who a call to `model` goes to, for error messages: the provider, the
    /// model and, for servers, the URL.
    fn describe(&self, model: &str) -> String {
        format!("provider {}, model {model}", self.name())
    }

    /// The context size the server reports for `model`, in tokens, when it
    /// reports one (llama.cpp does); asked once, with a short timeout.
    fn context_window<'a>(
        &'a self,
        _model: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<usize>> + Send + 'a>> {
        Box::pin(async { None })
    }

    /// Whether the tools `request` carries reach the model through the
    /// server's chat template: `Some(false)` when the server shows its
    /// rendered prompt (llama.cpp's `/apply-template`) and no tool is in
    /// it; `None` when the server cannot show it.
    fn template_keeps_tools<'a>(
        &'a self,
        _request: &'a ChatRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<bool>> + Send + 'a>> {
        Box::pin(async { None })
    }
}

/// Collects a whole reply from a stream (for tests and simple callers),
/// calling `on_token` for each piece.
pub async fn collect(
    mut rx: mpsc::Receiver<StreamEvent>,
    mut on_token: impl FnMut(&str),
) -> Result<String, ProviderError> {
    let mut text = String::new();
    while let Some(event) = rx.recv().await {
        match event {
            StreamEvent::Token(t) => {
                on_token(&t);
                text.push_str(&t);
            }
            StreamEvent::Tool(_) | StreamEvent::Usage { .. } => {}
            StreamEvent::Done => return Ok(text),
            StreamEvent::Error(e) => return Err(e),
        }
    }
    Err(ProviderError::MidStream(
        "the provider stopped without finishing".into(),
    ))
}

/// How long HTTP providers wait between retries at first.
pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
