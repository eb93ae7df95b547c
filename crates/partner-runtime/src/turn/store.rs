//! What a turn reads and writes beside the model: its id, the messages it
//! stores, the memories it recalls into its first message.

use std::sync::Arc;

use super::env::TurnEnv;
use crate::events::Event;
use partner_store::memory::backend::{Memory, NewMessage};
use partner_store::memory::search::{SearchDomain, SearchQuery};

/// A turn's id, unique across sessions: the agent, the session (when it
/// started, base 36) and the turn's number in it (`ada-mh3k2p1a-4`).
pub(super) fn turn_id(env: &TurnEnv, agent: &str, turns: u64) -> String {
    let mut session = String::new();
    let mut n = env.session_start.max(0) as u64;
    loop {
        let digit = (n % 36) as u8;
        session.insert(
            0,
            char::from(if digit < 10 {
                b'0' + digit
            } else {
                b'a' + digit - 10
            }),
        );
        n /= 36;
        if n == 0 {
            break;
        }
    }
    format!("{agent}-{session}-{turns}")
}

/// Appends a message to an agent's conversation, on the blocking pool; a
/// failure is an error event (the turn goes on).
pub(super) async fn store_message(
    env: &Arc<TurnEnv>,
    agent: &str,
    thread: &str,
    role: &str,
    text: &str,
) {
    let now = env.clock.now_ms();
    if let Err(message) = try_store_message(env, agent, thread, role, text, now).await {
        env.emit(Event::Error {
            agent: None,
            message,
        });
    }
}

/// Stores a message of the turn (its first one as sent, a reply, the
/// results), on the blocking pool.
pub(super) async fn try_store_message(
    env: &Arc<TurnEnv>,
    agent: &str,
    thread: &str,
    from: &str,
    text: &str,
    now: partner_core::clock::Millis,
) -> Result<(), String> {
    let executor = Arc::clone(&env.executor);
    let (agent, thread, from, text) = (
        agent.to_string(),
        thread.to_string(),
        from.to_string(),
        text.to_string(),
    );
    tokio::task::spawn_blocking(move || {
        let message = NewMessage {
            agent: &agent,
            thread: &thread,
            role: &from,
            content: &text,
            lineage: &[],
        };
        executor
            .store()
            .transaction(|tx| tx.add_message(&message, now))
            .map(|_| ())
            .map_err(|e| format!("could not store {agent}'s message: {e}"))
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
}

/// Most memories recalled into a turn's first message.
const RECALLED: usize = 3;

/// Memories recalled for `text`: archival entries and past messages,
/// leaving out the messages the request already carries (its history) and
/// any text recalled twice.
pub(super) fn recall(
    read: &dyn Memory,
    agent: &str,
    text: &str,
    sent: &[partner_store::memory::Message],
) -> partner_store::memory::MemoryResult<Vec<partner_store::memory::SearchHit>> {
    let mut query = SearchQuery::new(text, Some(agent));
    query.domains = vec![SearchDomain::Archival, SearchDomain::Conversations];
    query.limit = RECALLED + sent.len();
    let mut seen = std::collections::HashSet::new();
    let mut hits = read.search(&query)?;
    hits.retain(|h| {
        let carried = h.domain == SearchDomain::Conversations && sent.iter().any(|m| m.id == h.id);
        !carried && seen.insert(h.snippet.clone())
    });
    hits.truncate(RECALLED);
    Ok(hits)
}
