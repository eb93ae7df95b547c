//! How one agent talks to its model: the prompt profile, the action format,
//! the sampling settings and the context budget, resolved from the agent's
//! section of `partner.toml` over its provider's over `[runtime]`.

use super::prompt::{ActionFormat, Profile};
use super::provider::Sampling;

/// Context assumed when neither the config nor the server gives one.
pub const DEFAULT_CONTEXT: usize = 16_384;

/// One agent's model settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelSettings {
    /// How much of the dialect its prompt spells out.
    pub profile: Profile,
    /// Dialect lines or native tool calls.
    pub actions: ActionFormat,
    /// Sampling, resolved.
    pub sampling: Sampling,
    /// Its context size in tokens, when the config sets one (else the
    /// server's, else [`DEFAULT_CONTEXT`]).
    pub context: Option<usize>,
}

/// The prompt budget in a context of `context` tokens when `reply` tokens
/// are kept for the answer (at most half the context is kept).
pub fn prompt_budget(context: usize, reply: u32) -> usize {
    let reply = usize::try_from(reply).unwrap_or(usize::MAX);
    context.saturating_sub(reply.min(context / 2))
}
