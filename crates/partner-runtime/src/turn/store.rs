//! What a turn reads and writes beside the model: its id, the messages it
//! stores, the memories it recalls into its first message.

use std::sync::Arc;

use super::env::TurnEnv;
use crate::events::Event;
use partner_engine::exec::{TurnContext, fenced};
use partner_store::memory::MemoryError;
use partner_store::memory::backend::{Memory, NewMessage};
use partner_store::memory::inbox::{MAX_ATTEMPTS, Settled};
use partner_store::memory::search::{SearchDomain, SearchQuery};

/// A turn's id, unique across sessions: for a turn answering an inbox
/// message, the agent and the message (`ada-m42`: a turn run again after
/// it was cut short has the same id, and so have its actions); else the
/// agent, the session (when it started, base 36) and the turn's number
/// in it (`ada-mh3k2p1a-4`).
pub(super) fn turn_id(env: &TurnEnv, agent: &str, turns: u64, delivery: Option<i64>) -> String {
    if let Some(id) = delivery {
        return format!("{agent}-m{id}");
    }
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

/// Appends a message of the turn to its conversation, on the blocking
/// pool; a failure is an error event (the turn goes on).
pub(super) async fn store_message(env: &Arc<TurnEnv>, ctx: &TurnContext, role: &str, text: &str) {
    let now = env.clock.now_ms();
    if let Err(message) = try_store_message(env, ctx, role, text, now).await {
        env.emit(Event::Error {
            agent: None,
            message,
        });
    }
}

/// Stores a message of the turn (its first one as sent, a reply, the
/// results) with the turn's id, under its lease, on the blocking pool.
pub(super) async fn try_store_message(
    env: &Arc<TurnEnv>,
    ctx: &TurnContext,
    from: &str,
    text: &str,
    now: partner_core::clock::Millis,
) -> Result<(), String> {
    let executor = Arc::clone(&env.executor);
    let (ctx, from, text) = (ctx.clone(), from.to_string(), text.to_string());
    tokio::task::spawn_blocking(move || {
        let message = NewMessage {
            agent: &ctx.agent,
            thread: &ctx.thread,
            role: &from,
            content: &text,
            lineage: &[],
            turn: Some(&ctx.turn_id),
        };
        executor
            .store()
            .transaction(|tx| {
                fenced(tx, &ctx)?;
                tx.add_message(&message, now)
            })
            .map(|_| ())
            .map_err(|e| format!("could not store {}'s message: {e}", ctx.agent))
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
}

/// Where answering an inbox message stands as its turn begins.
pub(super) enum Begun {
    /// The first turn to answer it.
    First,
    /// A turn began it before and was cut short: what that turn stored
    /// is taken back, and this one runs from the start.
    Again,
    /// It no longer waits (answered, or dropped by a halt).
    Settled,
    /// Turns began it this many times and none finished: given up.
    GaveUp(i64),
}

/// Begins answering inbox message `id` with the turn `ctx` (under its
/// lease), on the blocking pool.
pub(super) async fn begin(env: &Arc<TurnEnv>, ctx: &TurnContext, id: i64) -> Result<Begun, String> {
    let executor = Arc::clone(&env.executor);
    let ctx = ctx.clone();
    let now = env.clock.now_ms();
    tokio::task::spawn_blocking(move || {
        executor
            .store()
            .transaction(|tx| {
                fenced(tx, &ctx)?;
                Ok(match tx.begin(id)? {
                    None => Begun::Settled,
                    Some(n) if n > MAX_ATTEMPTS => {
                        tx.settle(id, Settled::GaveUp, now)?;
                        Begun::GaveUp(n - 1)
                    }
                    Some(1) => Begun::First,
                    Some(_) => {
                        tx.forget_turn(&ctx.agent, &ctx.turn_id)?;
                        Begun::Again
                    }
                })
            })
            .map_err(|e: MemoryError| format!("could not begin {}'s turn: {e}", ctx.agent))
    })
    .await
    .unwrap_or_else(|e| Err(e.to_string()))
}

/// Inbox message `id` is answered by the turn `ctx` (under its lease).
pub(super) async fn answered(env: &Arc<TurnEnv>, ctx: &TurnContext, id: i64) {
    let executor = Arc::clone(&env.executor);
    let ctx = ctx.clone();
    let now = env.clock.now_ms();
    let settled = tokio::task::spawn_blocking(move || {
        executor.store().transaction(|tx| {
            fenced(tx, &ctx)?;
            tx.settle(id, Settled::Answered, now)
        })
    })
    .await;
    if let Ok(Err(e)) = settled {
        // Not kept: a daemon that takes the agent over answers it again.
        tracing::warn!(message = id, error = %e, "could not record the message as answered");
    }
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
