//! What a turn needs from its constellation, the agent it runs for, what
//! starts it and how it ended.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use crate::events::Event;
use crate::provider::Provider;
use crate::settings::ModelSettings;
use partner_core::clock::{Millis, SharedClock};
use partner_engine::exec::{ActionReport, Executor};
use partner_policy::PendingRequest;

/// What a turn needs from its constellation.
#[derive(Debug)]
pub struct TurnEnv {
    /// The executor.
    pub executor: Arc<Executor>,
    /// Where events go.
    pub events: broadcast::Sender<Event>,
    /// The partner's name.
    pub partner: String,
    /// Most passes per turn.
    pub max_passes: u32,
    /// Messages of history sent.
    pub history: usize,
    /// Most tokens per reply.
    pub max_tokens: u32,
    /// Longest reply read, in bytes.
    pub max_reply_bytes: usize,
    /// The clock.
    pub clock: SharedClock,
    /// When the session started.
    pub session_start: Millis,
    /// Woken when a turn made requests, so the runtime tells their
    /// authorities without waiting for the turn to end.
    pub requests: Arc<tokio::sync::Notify>,
    /// Reads a reply's plain words as an action to propose (none: replies
    /// without actions stay words).
    pub proposer: crate::proposals::CurrentProposer,
}

impl TurnEnv {
    /// Publishes an event (nobody listening is fine).
    pub fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }
}

/// One agent as the turn sees it.
#[derive(Debug, Clone)]
pub struct AgentInfo {
    /// Name.
    pub name: String,
    /// Its provider.
    pub provider: Arc<dyn Provider>,
    /// Model name.
    pub model: String,
    /// True when it may use approve, deny, escalate and halt.
    pub authority: bool,
    /// Profile, action format, sampling and context.
    pub settings: ModelSettings,
    /// How the server's own token counts compare with partner's estimate.
    pub tokens: Arc<TokenScale>,
    /// Team mode: the lease this daemon holds on the agent, which each
    /// action of its turns must still hold to commit.
    pub fence: Arc<std::sync::Mutex<Option<partner_store::memory::roster::Fence>>>,
}

/// The ratio of the tokens a model server reported for a prompt to
/// partner's estimate of it (bytes and words), learned from each call's
/// reported usage: prompts are fitted to the budget in the server's
/// tokens, not in an estimate that runs a few percent low.
#[derive(Debug, Default)]
pub struct TokenScale {
    /// The ratio × 1000 (0: nothing reported yet).
    milli: std::sync::atomic::AtomicU32,
}

impl TokenScale {
    /// The budget, in partner's estimated tokens, that holds `budget` of
    /// the server's (2% kept back, as prompts differ a little).
    pub fn budget(&self, budget: usize) -> usize {
        let milli = self.milli.load(std::sync::atomic::Ordering::Relaxed);
        let milli = if milli == 0 { 1000 } else { milli as usize };
        budget.saturating_mul(1000) / milli * 98 / 100
    }

    /// Learns from a call: the server counted `reported` tokens for a
    /// prompt partner estimated at `estimated` (a ratio outside ½–4 is
    /// taken as a count of something else and ignored).
    pub fn learn(&self, reported: u64, estimated: usize) {
        if reported == 0 || estimated == 0 {
            return;
        }
        let milli = reported.saturating_mul(1000) / estimated as u64;
        if (500..=4000).contains(&milli) {
            self.milli
                .store(milli as u32, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl AgentInfo {
    /// An agent with the default model settings.
    pub fn new(name: &str, provider: Arc<dyn Provider>, model: &str, authority: bool) -> Self {
        AgentInfo {
            name: name.to_string(),
            provider,
            model: model.to_string(),
            authority,
            settings: ModelSettings::default(),
            tokens: Arc::default(),
            fence: Arc::default(),
        }
    }
}

/// What starts a turn.
#[derive(Debug, Clone)]
pub enum Trigger {
    /// A message arrived.
    Message {
        /// The conversation.
        thread: String,
        /// Who it is from, as stored (`user`, `agent:anchor`).
        from: String,
        /// The text.
        text: String,
        /// The inbox message it is (none for a notice the runtime makes,
        /// as a request for a supervisor's decision): the turn is named
        /// after it, and settles it once answered.
        delivery: Option<i64>,
        /// The agents the message came through (for a message from an
        /// agent): none of them may decide what the turn asks for.
        lineage: Vec<String>,
    },
    /// The pulse fired.
    Pulse {
        /// The interval that fired.
        interval: Duration,
        /// Why (`idle`, `intention #2 due: …`).
        reason: String,
    },
    /// Decisions on the agent's requests came back.
    Results {
        /// The conversation.
        thread: String,
        /// The results.
        reports: Vec<ActionReport>,
        /// The agents the requests were made on behalf of.
        lineage: Vec<String>,
    },
}

/// How a turn ended.
#[derive(Debug, Clone, Default)]
pub struct TurnOutcome {
    /// Requests the turn left waiting.
    pub requests: Vec<PendingRequest>,
    /// True when it was cancelled (the agent was halted).
    pub cancelled: bool,
    /// An error that ended it early.
    pub error: Option<String>,
}
