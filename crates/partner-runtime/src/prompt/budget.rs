//! Fitting a prompt to an agent's context budget: the system prompt (persona,
//! instructions, core memory) always stays; the oldest history goes first,
//! then the recalled memories; what was dropped is reported, so the partner
//! can see why an agent forgot.

use crate::provider::{ChatMessage, Role};

/// Tokens a message costs beyond its text (role markers, separators).
const PER_MESSAGE: usize = 4;

/// A token count estimated from text, for when no tokenizer is at hand:
/// about four bytes a token for English prose, more for dense text, so it
/// takes the larger of a byte-based and a word-based estimate.
pub fn estimate_tokens(text: &str) -> usize {
    let by_bytes = text.len().div_ceil(4);
    let words = text.split_whitespace().count();
    let by_words = words + words / 3;
    by_bytes.max(by_words)
}

/// Tokens of a whole prompt: the system prompt and the messages.
pub fn prompt_tokens(system: &str, messages: &[ChatMessage]) -> usize {
    estimate_tokens(system)
        + PER_MESSAGE
        + messages
            .iter()
            .map(|m| estimate_tokens(&m.content) + PER_MESSAGE)
            .sum::<usize>()
}

/// History is cut only where a page of the conversation starts (every
/// `PAGE` messages, counted from its beginning), so the start of the
/// conversation a prompt carries stays put for several turns — and a
/// server's prompt cache with it — instead of sliding every turn.
pub const PAGE: u64 = 8;

/// Where the history sent should start, as an index into the `n` messages
/// read, the first of which is message number `first` of the conversation
/// (from 0): the earliest page start from which at most `max` messages
/// remain and `fits(start)` holds. When no page start will do, the start
/// that leaves `max` messages (fitting then drops more).
pub fn stable_start(first: u64, n: usize, max: usize, fits: impl Fn(usize) -> bool) -> usize {
    for i in 0..n {
        let number = first + i as u64;
        if number.is_multiple_of(PAGE) && n - i <= max && fits(i) {
            return i;
        }
    }
    n.saturating_sub(max)
}

/// A prompt fitted to its budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    /// The messages to send, oldest first.
    pub messages: Vec<ChatMessage>,
    /// The prompt's estimated size, in tokens.
    pub tokens: usize,
    /// History messages left out, oldest first.
    pub dropped_messages: usize,
    /// Their estimated size.
    pub dropped_tokens: usize,
    /// True when the recalled memories had to go too.
    pub dropped_recalled: bool,
    /// True when even the smallest prompt is over the budget (it is sent
    /// anyway: core memory is never cut).
    pub over: bool,
}

impl Fitted {
    /// What was dropped, in words (empty when nothing was).
    pub fn summary(&self, budget: usize) -> String {
        let mut parts = Vec::new();
        if self.dropped_messages > 0 {
            parts.push(format!(
                "left out the {} oldest messages (~{} tokens)",
                self.dropped_messages, self.dropped_tokens
            ));
        }
        if self.dropped_recalled {
            parts.push("left out the recalled memories".to_string());
        }
        if self.over {
            parts.push(format!(
                "still ~{} tokens, over the budget of {budget}: the system prompt alone is too big",
                self.tokens
            ));
        }
        parts.join("; ")
    }
}

/// Fits `history` (oldest first) and the turn's own messages (`turn`,
/// which always stay) under `budget` tokens with `system`. `recalled` is the
/// recalled-memories text appended to the turn's first message; it goes
/// when dropping all history is not enough.
pub fn fit(
    system: &str,
    history: &[ChatMessage],
    turn: &[ChatMessage],
    recalled: &str,
    budget: usize,
) -> Fitted {
    let fixed = prompt_tokens(system, turn);
    let recalled_cost = if recalled.is_empty() {
        0
    } else {
        estimate_tokens(recalled) + 1
    };
    let costs: Vec<usize> = history
        .iter()
        .map(|m| estimate_tokens(&m.content) + PER_MESSAGE)
        .collect();
    let mut total = fixed + recalled_cost + costs.iter().sum::<usize>();
    let mut start = 0;
    let mut dropped_tokens = 0;
    while total > budget && start < history.len() {
        total -= costs[start];
        dropped_tokens += costs[start];
        start += 1;
    }
    // A conversation sent to a model starts with the user.
    while start < history.len() && history[start].role == Role::Assistant {
        total -= costs[start];
        dropped_tokens += costs[start];
        start += 1;
    }
    let dropped_recalled = total > budget && recalled_cost > 0;
    if dropped_recalled {
        total -= recalled_cost;
    }
    let mut messages: Vec<ChatMessage> = history[start..].to_vec();
    let mut own = turn.to_vec();
    if !dropped_recalled
        && !recalled.is_empty()
        && let Some(first) = own.first_mut()
    {
        first.content.push_str("\n\n");
        first.content.push_str(recalled);
    }
    for m in own {
        match messages.last_mut() {
            Some(last) if last.role == m.role => {
                last.content.push_str("\n\n");
                last.content.push_str(&m.content);
            }
            _ => messages.push(m),
        }
    }
    Fitted {
        messages,
        tokens: total,
        dropped_messages: start,
        dropped_tokens,
        dropped_recalled,
        over: total > budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(n: usize) -> Vec<ChatMessage> {
        (0..n)
            .map(|i| {
                let text = format!("message {i} {}", "word ".repeat(40));
                if i % 2 == 0 {
                    ChatMessage::user(text)
                } else {
                    ChatMessage::assistant(text)
                }
            })
            .collect()
    }

    #[test]
    fn the_oldest_history_goes_first_and_the_turn_stays() {
        let h = history(20);
        let turn = [ChatMessage::user("now")];
        let all = fit("system", &h, &turn, "", 100_000);
        assert_eq!(all.dropped_messages, 0);
        assert_eq!(all.messages.len(), 21);
        let budget = prompt_tokens("system", &turn) + 5 * 60;
        let fitted = fit("system", &h, &turn, "", budget);
        assert!(fitted.tokens <= budget && !fitted.over, "{fitted:?}");
        assert!(fitted.dropped_messages > 0);
        assert_eq!(fitted.messages.first().unwrap().role, Role::User);
        assert!(
            fitted
                .messages
                .first()
                .unwrap()
                .content
                .starts_with(&format!("message {}", fitted.dropped_messages))
        );
        assert_eq!(fitted.messages.last().unwrap().content, "now");
        assert!(fitted.summary(budget).contains("oldest messages"));
    }

    #[test]
    fn recalled_memories_go_after_the_history_and_the_system_never() {
        let turn = [ChatMessage::user("now")];
        let recalled = "<recalled_context>\n".to_string() + &"memory ".repeat(200);
        let fitted = fit("system", &history(4), &turn, &recalled, 50);
        assert_eq!(fitted.dropped_messages, 4);
        assert!(fitted.dropped_recalled);
        assert_eq!(fitted.messages, vec![ChatMessage::user("now")]);
        let big = "core ".repeat(400);
        let over = fit(&big, &[], &turn, "", 50);
        assert!(over.over && over.summary(50).contains("over the budget"));
    }

    #[test]
    fn history_starts_at_a_page_and_stays_there_while_it_fits() {
        // Everything fits: the whole conversation.
        assert_eq!(stable_start(0, 20, 30, |_| true), 0);
        // At most 30 of 40 messages: the first page start leaving ≤ 30.
        assert_eq!(stable_start(0, 40, 30, |_| true), 16);
        // Two more messages: the same first message is sent.
        assert_eq!(stable_start(0, 42, 30, |_| true), 16);
        // Read from message 10 on: message 16 is index 6.
        assert_eq!(stable_start(10, 30, 30, |_| true), 6);
        // Only the last 10 fit: the first page start among them.
        assert_eq!(stable_start(0, 40, 30, |i| i >= 30), 32);
        assert_eq!(stable_start(0, 40, 30, |i| i >= 20), 24);
        // Only the last 3 fit: no page start does, so the count limit's
        // start, and fitting drops the rest one by one.
        assert_eq!(stable_start(0, 40, 30, |i| i >= 37), 10);
        assert_eq!(stable_start(0, 0, 10, |_| true), 0);
    }

    #[test]
    fn estimates_are_never_below_a_quarter_of_the_bytes() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert!(estimate_tokens("a b c d e f g h") >= 8);
    }
}
