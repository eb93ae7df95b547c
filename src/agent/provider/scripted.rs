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

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::mpsc;

use super::{Cancel, ChatRequest, PromptKind, Provider, StreamEvent};

/// One agent's script.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentScript {
    /// Pause between words (`30ms`).
    pub typing_delay: Option<String>,
    /// Replies to messages, in order.
    #[serde(default)]
    pub replies: Vec<String>,
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
                crate::clock::parse_span(delay)
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

    fn next(&self, agent: &str, kind: PromptKind) -> (String, Duration) {
        let Some(script) = self.script.agents.get(agent) else {
            return (String::new(), Duration::ZERO);
        };
        let list = match kind {
            PromptKind::Response => &script.replies,
            PromptKind::Pulse => &script.pulses,
            PromptKind::Continuation => &script.continuations,
        };
        let mut cursors = self.cursors.lock().unwrap_or_else(|e| e.into_inner());
        let at = cursors.entry((agent.to_string(), kind)).or_insert(0);
        let reply = list.get(*at).cloned().unwrap_or_default();
        *at += 1;
        let delay = script
            .typing_delay
            .as_deref()
            .and_then(|d| crate::clock::parse_span(d).ok())
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
        let (mut reply, delay) = self.next(&request.agent, request.kind);
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
            let _ = tx.send(StreamEvent::Done).await;
        });
        rx
    }
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn pieces_join_back() {
        let text = "Hello there,\n/recall notes -> /tell @x  ok";
        assert_eq!(pieces(text).concat(), text);
    }
}
