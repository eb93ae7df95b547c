//! Sampling settings (temperature, top-p, penalties, stop sequences, reply
//! length), set per provider and per agent, and what a tool offered to a
//! model looks like. Each wire format passes on what it has a field for.

use serde::{Deserialize, Serialize};

/// How a model samples its reply. Unset fields are left to the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// Randomness (0 is greedy).
    pub temperature: Option<f32>,
    /// Nucleus sampling: the share of probability mass kept.
    pub top_p: Option<f32>,
    /// Penalty on repeated tokens (llama.cpp, Ollama, vLLM).
    pub repeat_penalty: Option<f32>,
    /// Penalty by how often a token already appeared (OpenAI).
    pub frequency_penalty: Option<f32>,
    /// Penalty on tokens that already appeared at all (OpenAI).
    pub presence_penalty: Option<f32>,
    /// Text that ends the reply.
    pub stop: Option<Vec<String>>,
    /// Most tokens in the reply.
    pub max_tokens: Option<u32>,
}

impl Sampling {
    /// These settings, with the unset ones taken from `base`.
    pub fn over(&self, base: &Sampling) -> Sampling {
        Sampling {
            temperature: self.temperature.or(base.temperature),
            top_p: self.top_p.or(base.top_p),
            repeat_penalty: self.repeat_penalty.or(base.repeat_penalty),
            frequency_penalty: self.frequency_penalty.or(base.frequency_penalty),
            presence_penalty: self.presence_penalty.or(base.presence_penalty),
            stop: self.stop.clone().or_else(|| base.stop.clone()),
            max_tokens: self.max_tokens.or(base.max_tokens),
        }
    }

    /// What is wrong with the values, in words.
    pub fn check(&self) -> Result<(), String> {
        let range = |name: &str, v: Option<f32>, lo: f32, hi: f32| match v {
            Some(x) if !(lo..=hi).contains(&x) => {
                Err(format!("{name} = {x} must be between {lo} and {hi}"))
            }
            _ => Ok(()),
        };
        range("temperature", self.temperature, 0.0, 2.0)?;
        range("top_p", self.top_p, 0.0, 1.0)?;
        range("repeat_penalty", self.repeat_penalty, 0.0, 10.0)?;
        range("frequency_penalty", self.frequency_penalty, -2.0, 2.0)?;
        range("presence_penalty", self.presence_penalty, -2.0, 2.0)?;
        if let Some(stop) = &self.stop
            && (stop.len() > 16 || stop.iter().any(|s| s.is_empty() || s.len() > 256))
        {
            return Err("stop takes at most 16 non-empty sequences of up to 256 bytes".into());
        }
        if self.max_tokens == Some(0) {
            return Err("max_tokens must be at least 1".into());
        }
        Ok(())
    }
}

/// A function tool offered to a model (`actions = "tools"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    /// The function's name: a verb, or an MCP tool's verb with its dot
    /// made a `-` (function names allow no dot).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its parameters, as a JSON schema.
    pub parameters: serde_json::Value,
    /// The dialect verb a call stands for.
    pub verb: String,
    /// The call's arguments are the tool's own JSON object (an MCP
    /// tool's), written after the verb as they are; otherwise they are
    /// `{args, marker}`, what would follow the verb in the dialect.
    pub takes_object: bool,
}

/// A function call a model made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The function.
    pub name: String,
    /// Its arguments, as the JSON text the model wrote.
    pub arguments: String,
}
