//! The scripted provider: answers from a script, per agent and prompt type,
//! streaming word by word with an optional typing delay on tokio's clock.
//! It makes the whole pipeline run offline and deterministically.
//!
//! ```toml
//! [agents.ada]
//! typing_delay = "30ms"
//! replies = ["answer to the first message", "to the second"]
//! pulses = ["said on the first pulse"]
//! continuations = ["said after the first action results"]
//! ```
//!
//! Each list is used in order; when one runs out the agent says nothing.
//! `{request}` in a reply is replaced by the request id named in the
//! message being answered (`[Approval Request] r3 …`), so scripts can decide
//! requests without knowing their ids in advance.
//!
//! A reply can say which message it answers — who sent it (`partner`,
//! `system`, `agent`, or one agent `agent:scout`) and a piece of its text:
//!
//! ```toml
//! replies = [
//!   { from = "partner", when = "launch", say = "The launch is on Friday." },
//!   "answers anything",
//! ]
//! unexpected = "I follow a script, so I can't answer that."
//! ```
//!
//! A message the next reply does not answer gets `unexpected` (or nothing)
//! and leaves the script where it was, so an unscripted message from the
//! partner does not spend the replies meant for others.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::mpsc;

use super::{Cancel, ChatRequest, PromptKind, Provider, StreamEvent};

/// A reply to a message: the text, and which messages it answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum ScriptedReply {
    /// Answers any message.
    Any(String),
    /// Answers only a matching message.
    Matching {
        /// Who the message is from (`partner`, `system`, `agent` for any
        /// agent, or `agent:NAME`).
        from: Option<String>,
        /// A piece of the message's text.
        when: Option<String>,
        /// The reply.
        say: String,
    },
}

impl ScriptedReply {
    /// True when this reply answers a message from `from` saying `text`.
    fn answers(&self, from: Option<&str>, text: &str) -> bool {
        match self {
            ScriptedReply::Any(_) => true,
            ScriptedReply::Matching {
                from: want_from,
                when,
                ..
            } => {
                let from_ok = match (want_from.as_deref(), from) {
                    (None, _) => true,
                    (Some("agent"), Some(f)) => f.starts_with("agent:"),
                    (Some(want), Some(f)) => want == f,
                    (Some(_), None) => false,
                };
                from_ok && when.as_deref().is_none_or(|w| text.contains(w))
            }
        }
    }

    fn text(&self) -> &str {
        match self {
            ScriptedReply::Any(text) | ScriptedReply::Matching { say: text, .. } => text,
        }
    }
}

/// One agent's script.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentScript {
    /// Pause between words (`30ms`).
    pub typing_delay: Option<String>,
    /// Replies to messages, in order.
    #[serde(default)]
    pub replies: Vec<ScriptedReply>,
    /// The answer to a message the next reply does not answer (the script
    /// stays where it was).
    pub unexpected: Option<String>,
    /// Replies to pulses, in order.
    #[serde(default)]
    pub pulses: Vec<String>,
    /// Replies to action results, in order.
    #[serde(default)]
    pub continuations: Vec<String>,
}

/// A script for every agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Scripts by agent name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentScript>,
}

impl Script {
    /// Parses a script file.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let script: Script = toml::from_str(text).map_err(|e| e.to_string())?;
        for (agent, s) in &script.agents {
            if let Some(delay) = &s.typing_delay {
                partner_core::clock::parse_span(delay)
                    .map_err(|e| format!("agent {agent}: typing_delay '{delay}': {e}"))?;
            }
        }
        Ok(script)
    }
}

/// Answers from a [`Script`].
#[derive(Debug)]
pub struct ScriptedProvider {
    script: Script,
    cursors: Mutex<HashMap<(String, PromptKind), usize>>,
}

impl ScriptedProvider {
    /// A provider playing `script`.
    pub fn new(script: Script) -> Self {
        ScriptedProvider {
            script,
            cursors: Mutex::new(HashMap::new()),
        }
    }

    fn next(&self, request: &ChatRequest) -> (String, Duration) {
        let (agent, kind) = (request.agent.as_str(), request.kind);
        let Some(script) = self.script.agents.get(agent) else {
            return (String::new(), Duration::ZERO);
        };
        let mut cursors = self.cursors.lock().unwrap_or_else(|e| e.into_inner());
        let at = cursors.entry((agent.to_string(), kind)).or_insert(0);
        let reply = match kind {
            PromptKind::Response => {
                let text = request.messages.last().map_or("", |m| m.content.as_str());
                match script.replies.get(*at) {
                    Some(reply) if reply.answers(request.from.as_deref(), text) => {
                        *at += 1;
                        reply.text().to_string()
                    }
                    // Not what the script expects: answer it without
                    // spending the reply meant for another message.
                    Some(_) => script.unexpected.clone().unwrap_or_default(),
                    None => script.unexpected.clone().unwrap_or_default(),
                }
            }
            PromptKind::Pulse | PromptKind::Continuation => {
                let list = if kind == PromptKind::Pulse {
                    &script.pulses
                } else {
                    &script.continuations
                };
                let reply = list.get(*at).cloned().unwrap_or_default();
                *at += 1;
                reply
            }
        };
        let delay = script
            .typing_delay
            .as_deref()
            .and_then(|d| partner_core::clock::parse_span(d).ok())
            .unwrap_or(Duration::ZERO);
        (reply, delay)
    }
}

/// Splits text into word-sized pieces that join back to it exactly.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if c.is_whitespace() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn stream(&self, request: ChatRequest, mut cancel: Cancel) -> mpsc::Receiver<StreamEvent> {
        let (mut reply, delay) = self.next(&request);
        if reply.contains("{request}") {
            let id = request
                .messages
                .last()
                .and_then(|m| m.content.rsplit("[Approval Request] ").next())
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("")
                .to_string();
            reply = reply.replace("{request}", &id);
        }
        // Offered tools, it answers as a model trained on them would: each
        // action line of the script becomes a call.
        let mut calls = Vec::new();
        if !request.tools.is_empty() {
            let mut text = String::new();
            for line in reply.lines() {
                let call = line.strip_prefix('/').and_then(|rest| {
                    let (verb, args) = rest.split_once(' ').unwrap_or((rest, ""));
                    let tool = request.tools.iter().find(|t| t.verb == verb)?;
                    let arguments = if tool.takes_object {
                        args.to_string()
                    } else {
                        serde_json::json!({ "args": args }).to_string()
                    };
                    Some(super::ToolCall {
                        name: tool.name.clone(),
                        arguments,
                    })
                });
                match call {
                    Some(call) => calls.push(call),
                    None => {
                        text.push_str(line);
                        text.push('\n');
                    }
                }
            }
            reply = text.trim_end().to_string();
        }
        let input = crate::prompt::budget::prompt_tokens(&request.system, &request.messages);
        let output = crate::prompt::budget::estimate_tokens(&reply);
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            for piece in pieces(&reply) {
                if !delay.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = cancel.wait_for(|c| *c) => {}
                    }
                }
                if *cancel.borrow() {
                    let _ = tx
                        .send(StreamEvent::Error(super::ProviderError::Cancelled))
                        .await;
                    return;
                }
                if tx.send(StreamEvent::Token(piece)).await.is_err() {
                    return;
                }
            }
            for call in calls {
                let _ = tx.send(StreamEvent::Tool(call)).await;
            }
            let usage = StreamEvent::Usage {
                input: input as u64,
                output: output as u64,
            };
            let _ = tx.send(usage).await;
            let _ = tx.send(StreamEvent::Done).await;
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_back() {
        let text = "Hello there,\n/recall notes -> /tell @x  ok";
        assert_eq!(pieces(text).concat(), text);
    }

    fn asked(from: &str, text: &str) -> ChatRequest {
        ChatRequest {
            agent: "ada".into(),
            model: "x".into(),
            kind: PromptKind::Response,
            from: Some(from.into()),
            system: String::new(),
            messages: vec![super::super::ChatMessage::user(text)],
            max_tokens: 10,
            sampling: Default::default(),
            tools: Vec::new(),
        }
    }

    #[test]
    fn an_unexpected_message_does_not_spend_the_script() {
        let script = Script::from_toml(
            "[agents.ada]\nreplies = [{ from = \"system\", when = \"[Approval Request]\", say = \"/approve {request}\" }, { from = \"agent\", say = \"Thanks.\" }]\nunexpected = \"I follow a script.\"\n",
        )
        .unwrap();
        let p = ScriptedProvider::new(script);
        assert_eq!(p.next(&asked("partner", "hello?")).0, "I follow a script.");
        assert_eq!(
            p.next(&asked("system", "[Approval Request] r3 from bo")).0,
            "/approve {request}",
            "the scripted reply was kept for its message"
        );
        assert_eq!(p.next(&asked("agent:bo", "done")).0, "Thanks.");
        assert_eq!(
            p.next(&asked("partner", "and now?")).0,
            "I follow a script.",
            "past the end of the script too"
        );
    }
}
