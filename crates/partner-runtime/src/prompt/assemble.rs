//! One turn's prompt as it is sent pass after pass: the system prompt, the
//! history cut where a page starts and fitted to the budget, and the turn's
//! own messages (the first with its changing context at its end).

use super::budget::{self, Fitted};
use super::{history_messages, push_message};
use crate::provider::ChatMessage;
use partner_store::memory::Message;

/// A turn's prompt.
#[derive(Debug, Clone)]
pub struct TurnPrompt {
    /// The system prompt (the same every pass).
    pub system: String,
    history: Vec<ChatMessage>,
    own: Vec<ChatMessage>,
    recalled: String,
    budget: usize,
    /// History the budget (not the count limit) kept out: messages, tokens.
    cut: (usize, usize),
    /// How much was dropped when it was last reported.
    reported: usize,
}

/// What a turn's prompt is built from.
#[derive(Debug, Clone)]
pub struct TurnPromptParts<'a> {
    /// The system prompt.
    pub system: String,
    /// The stored conversation read for this turn, oldest first.
    pub stored: &'a [Message],
    /// The number, from 0, of the first of them in the conversation.
    pub first_number: u64,
    /// Most history messages sent.
    pub max_history: usize,
    /// The first message of the turn, its changing context included.
    pub first: String,
    /// The recalled memories (empty when none).
    pub recalled: String,
    /// The prompt budget, in tokens.
    pub budget: usize,
}

impl TurnPrompt {
    /// The prompt for the first pass, with the history cut where a page
    /// starts (see [`budget::stable_start`]).
    pub fn new(parts: TurnPromptParts<'_>) -> Self {
        let own = vec![ChatMessage::user(parts.first)];
        let n = parts.stored.len();
        let fits = |i: usize| {
            let fitted = budget::fit(
                &parts.system,
                &history_messages(&parts.stored[i..]),
                &own,
                &parts.recalled,
                parts.budget,
            );
            fitted.dropped_messages == 0 && !fitted.dropped_recalled
        };
        let start = budget::stable_start(parts.first_number, n, parts.max_history, fits);
        let by_count = budget::stable_start(parts.first_number, n, parts.max_history, |_| true);
        let kept_out = history_messages(&parts.stored[by_count.min(start)..start]);
        let cut = (
            start.saturating_sub(by_count),
            budget::prompt_tokens("", &kept_out).saturating_sub(budget::prompt_tokens("", &[])),
        );
        TurnPrompt {
            history: history_messages(&parts.stored[start..]),
            system: parts.system,
            own,
            recalled: parts.recalled,
            budget: parts.budget,
            cut,
            reported: 0,
        }
    }

    /// The budget it is fitted to.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Adds a message of this turn (a reply, its results).
    pub fn push(&mut self, message: ChatMessage) {
        push_message(&mut self.own, message);
    }

    /// The messages for the next pass, and what was left out when more was
    /// than last time it was said (once a turn, unless a pass drops more).
    pub fn next_pass(&mut self) -> (Vec<ChatMessage>, Option<Fitted>) {
        let mut fitted = budget::fit(
            &self.system,
            &self.history,
            &self.own,
            &self.recalled,
            self.budget,
        );
        fitted.dropped_messages += self.cut.0;
        fitted.dropped_tokens += self.cut.1;
        let dropped = fitted.dropped_messages
            + usize::from(fitted.dropped_recalled)
            + usize::from(fitted.over);
        let messages = std::mem::take(&mut fitted.messages);
        if dropped > self.reported {
            self.reported = dropped;
            (messages, Some(fitted))
        } else {
            (messages, None)
        }
    }
}
