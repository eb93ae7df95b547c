//! One agent turn: the first pass (a message or a pulse), then, while any
//! action's result should be seen, continuation passes carrying an
//! `[Action Results]` message — up to a cap. The same system prompt is
//! reused for every pass, with one line added for continuations.
//!
//! What is sent and what is stored:
//!
//! | prompt type | messages sent | stored in history |
//! |---|---|---|
//! | first pass, message | history + user message | the user message |
//! | first pass, pulse | history + full pulse prompt | `[System Pulse]` |
//! | continuation | … + assistant reply + `[Action Results]…` | the reply and the results |
//! | continuation of a pulse | as above, after the pulse prompt | the same |

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, watch};

use super::events::Event;
use super::prompt::{self, CONTINUATION_NOTE, PULSE_STORED, PromptInputs};
use super::provider::{ChatMessage, ChatRequest, PromptKind, Provider, Role, StreamEvent};
use crate::clock::{Millis, SharedClock};
use crate::exec::{ActionReport, ActionStatus, Executor, TurnContext};
use crate::memory::records::{add_message, list_intentions, recent_messages};
use crate::memory::search::{SearchDomain, SearchQuery, search};
use crate::memory::{Message, blocks};
use crate::permission::PendingRequest;

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
        /// Store it in the history (false when it is already stored, as
        /// messages from `/tell` are).
        store: bool,
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

/// Turns stored messages into chat messages: the agent's own as assistant,
/// everything else as user, with neighbours of the same role merged so
/// roles alternate.
pub fn history_messages(history: &[Message]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::new();
    for m in history {
        let role = if m.role == "assistant" {
            Role::Assistant
        } else {
            Role::User
        };
        let content = if m.role == "user" || m.role == "assistant" {
            m.content.clone()
        } else {
            format!("[{}] {}", m.role, m.content)
        };
        match out.last_mut() {
            Some(last) if last.role == role => {
                last.content.push_str("\n\n");
                last.content.push_str(&content);
            }
            _ => out.push(ChatMessage { role, content }),
        }
    }
    while out.first().is_some_and(|m| m.role == Role::Assistant) {
        out.remove(0);
    }
    out
}

fn push(messages: &mut Vec<ChatMessage>, message: ChatMessage) {
    match messages.last_mut() {
        Some(last) if last.role == message.role => {
            last.content.push_str("\n\n");
            last.content.push_str(&message.content);
        }
        _ => messages.push(message),
    }
}

/// Publishes the events of one report (and its batch members), each with
/// the action's id, so the console follows each action exactly. Requests it
/// made are collected, not announced: the runtime announces every request
/// from the database (whichever process made it), once.
pub fn emit_report(env: &TurnEnv, report: &ActionReport, requests: &mut Vec<PendingRequest>) {
    for child in &report.children {
        emit_report(env, child, requests);
    }
    match (&report.request, report.status) {
        (Some(request), ActionStatus::Pending) => requests.push(request.clone()),
        (_, ActionStatus::Pending) => {}
        _ => {
            env.emit(Event::ActionExecuted {
                agent: report.agent.clone(),
                action_id: report.action_id.clone(),
                verb: report.verb.clone(),
                op: report.op,
                canonical: report.canonical.clone(),
                status: report.status,
                result: report.text.clone(),
                trace_id: report.trace_id.clone(),
                system_error: report.system_error,
            });
            if report.system_error {
                env.emit(Event::Error {
                    agent: Some(report.agent.clone()),
                    message: format!(
                        "system error running {} (not the agent's doing): {}",
                        report.canonical, report.text
                    ),
                });
            }
            if let Some(change) = &report.memory {
                env.emit(Event::MemoryChanged {
                    agent: change.agent.clone(),
                    label: change.label.clone(),
                    version_before: change.version_before,
                    version_after: change.version_after,
                });
            }
        }
    }
}

/// True when the model should see these results before the turn ends:
/// reads, searches, fetches and the like, and anything that failed or was
/// refused (so the model learns why).
fn wants_continuation(reports: &[ActionReport]) -> bool {
    reports.iter().any(|r| {
        (r.status == ActionStatus::Executed && r.needs_continuation)
            || matches!(r.status, ActionStatus::Failed | ActionStatus::Denied)
            || wants_continuation(&r.children)
    })
}

/// A turn's id, unique across sessions: the agent, the session (when it
/// started, base 36) and the turn's number in it (`ada-mh3k2p1a-4`).
fn turn_id(env: &TurnEnv, agent: &str, turns: u64) -> String {
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
async fn store_message(env: &Arc<TurnEnv>, agent: &str, thread: &str, role: &str, text: &str) {
    let executor = Arc::clone(&env.executor);
    let (agent, thread, role, text) = (
        agent.to_string(),
        thread.to_string(),
        role.to_string(),
        text.to_string(),
    );
    let now = env.clock.now_ms();
    let stored = tokio::task::spawn_blocking(move || {
        add_message(&executor.store().conn(), &agent, &thread, &role, &text, now)
            .map_err(|e| format!("could not store {agent}'s message: {e}"))
    })
    .await;
    if let Ok(Err(message)) = stored {
        env.emit(Event::Error {
            agent: None,
            message,
        });
    }
}

/// The verbs an agent may use — all but the authority verbs, unless it has
/// an authority role; the constellation's own verbs included — from the
/// verb registry.
pub fn allowed_verbs(executor: &Executor, authority: bool) -> Vec<crate::dialect::VerbSpec> {
    executor
        .registry()
        .verbs_for(authority)
        .into_iter()
        .cloned()
        .collect()
}

/// Runs one turn to its end (or until cancelled).
pub async fn run_turn(
    env: Arc<TurnEnv>,
    agent: Arc<AgentInfo>,
    trigger: Trigger,
    pulse: Duration,
    turns: u64,
    mut cancel: watch::Receiver<bool>,
) -> TurnOutcome {
    let name = agent.name.clone();
    let now = env.clock.now_ms();
    let (thread, kind, first, stored, from) = match &trigger {
        Trigger::Message {
            thread,
            from,
            text,
            store,
            ..
        } => (
            thread.clone(),
            PromptKind::Response,
            text.clone(),
            store.then(|| text.clone()),
            from.clone(),
        ),
        Trigger::Pulse { interval, reason } => (
            "main".to_string(),
            PromptKind::Pulse,
            prompt::pulse_prompt(*interval, reason),
            Some(PULSE_STORED.to_string()),
            "user".to_string(),
        ),
        Trigger::Results {
            thread, reports, ..
        } => {
            let text = prompt::results_message(reports);
            (
                thread.clone(),
                PromptKind::Continuation,
                text.clone(),
                Some(text),
                "user".to_string(),
            )
        }
    };
    // Who sent what this turn answers, as a provider is told it.
    let sender = match from.as_str() {
        "user" => "partner".to_string(),
        other => other.to_string(),
    };
    // Read what the prompt needs, then store the incoming message (on the
    // blocking pool: the database is no work for an async worker).
    let gathered = {
        let (executor, name, thread, first) = (
            Arc::clone(&env.executor),
            name.clone(),
            thread.clone(),
            first.clone(),
        );
        let history_len = env.history;
        tokio::task::spawn_blocking(move || {
            let read = executor.store().read();
            let history = recent_messages(&read, &name, &thread, history_len);
            let memory = blocks::list(&read, Some(&name));
            let intentions = list_intentions(&read, &name, true);
            let mut query = SearchQuery::new(&first, Some(&name));
            query.domains = vec![SearchDomain::Archival, SearchDomain::Conversations];
            query.limit = 3;
            let recalled = if kind == PromptKind::Response {
                search(&read, &query)
            } else {
                Ok(Vec::new())
            };
            drop(read);
            let stored_ok = match &stored {
                Some(text) => {
                    add_message(&executor.store().conn(), &name, &thread, &from, text, now)
                        .map(|_| ())
                }
                None => Ok(()),
            };
            (history, memory, intentions, recalled, stored_ok)
        })
        .await
    };
    let Ok((Ok(history), Ok(memory), Ok(intentions), Ok(recalled), Ok(()))) = gathered else {
        let message = "could not read this agent's memory from the database".to_string();
        env.emit(Event::Error {
            agent: Some(name),
            message: message.clone(),
        });
        return TurnOutcome {
            error: Some(message),
            ..TurnOutcome::default()
        };
    };
    let verbs = allowed_verbs(&env.executor, agent.authority);
    let verb_refs: Vec<&crate::dialect::VerbSpec> = verbs.iter().collect();
    let system = prompt::system_prompt(&PromptInputs {
        agent: &name,
        partner: &env.partner,
        blocks: &memory,
        intentions: &intentions,
        pulse,
        verbs: &verb_refs,
        now,
        session_start: env.session_start,
        turns,
        recalled: &recalled,
        recent: &history,
    });
    let mut messages = history_messages(&history);
    push(&mut messages, ChatMessage::user(first.clone()));
    let mut ctx = TurnContext::new(&name, &thread, &turn_id(&env, &name, turns));
    ctx.cancel = Some(cancel.clone());
    ctx.private = thread.starts_with("dm:");
    ctx.last_message = match &trigger {
        Trigger::Message { text, .. } => Some(text.clone()),
        _ => None,
    };
    ctx.on_behalf_of = match &trigger {
        Trigger::Message { lineage, .. } | Trigger::Results { lineage, .. } => lineage.clone(),
        Trigger::Pulse { .. } => Vec::new(),
    };
    let mut outcome = TurnOutcome::default();
    for pass in 1..=env.max_passes {
        let continuation = kind == PromptKind::Continuation || pass > 1;
        let pass_kind = if pass > 1 {
            PromptKind::Continuation
        } else {
            kind
        };
        env.emit(Event::TurnStarted {
            agent: name.clone(),
            kind: pass_kind,
            pass,
        });
        let request = ChatRequest {
            agent: name.clone(),
            model: agent.model.clone(),
            kind: pass_kind,
            from: (pass_kind == PromptKind::Response).then(|| sender.clone()),
            system: if continuation {
                format!("{system}\n\n{CONTINUATION_NOTE}")
            } else {
                system.clone()
            },
            messages: messages.clone(),
            max_tokens: env.max_tokens,
        };
        let mut rx = agent.provider.stream(request, cancel.clone());
        let mut reply = String::new();
        let ended = loop {
            tokio::select! {
                event = rx.recv() => match event {
                    Some(StreamEvent::Token(t)) => {
                        if reply.len() + t.len() > env.max_reply_bytes {
                            // Dropping the stream stops the provider.
                            break Err(format!(
                                "the reply grew past {} bytes, so it was cut off and none of its actions ran",
                                env.max_reply_bytes
                            ));
                        }
                        env.emit(Event::Token { agent: name.clone(), text: t.clone() });
                        reply.push_str(&t);
                    }
                    Some(StreamEvent::Done) => break Ok(()),
                    Some(StreamEvent::Error(e)) => break Err(e.to_string()),
                    None => break Err("the model stopped without finishing".to_string()),
                },
                _ = cancel.wait_for(|c| *c) => break Err("cancelled".to_string()),
            }
        };
        if *cancel.borrow() {
            outcome.cancelled = true;
            return outcome;
        }
        if let Err(message) = ended {
            env.emit(Event::Error {
                agent: Some(name.clone()),
                message: format!("{name}'s model call failed: {message}"),
            });
            outcome.error = Some(message);
            return outcome;
        }
        store_message(&env, &name, &thread, "assistant", &reply).await;
        env.emit(Event::ReplyFinished {
            agent: name.clone(),
            pass,
            text: reply.clone(),
        });

        // Parsing and running are synchronous work: off the async workers.
        let executor = Arc::clone(&env.executor);
        let text = reply.clone();
        let parse_for = name.clone();
        let Ok(parsed) =
            tokio::task::spawn_blocking(move || executor.parser_for(&parse_for).parse(&text)).await
        else {
            outcome.error = Some("reading the reply crashed".into());
            env.emit(Event::Error {
                agent: Some(name.clone()),
                message: "reading the reply crashed".into(),
            });
            return outcome;
        };
        ctx.pass = pass;
        for action in &parsed.actions {
            for link in action.all_links() {
                env.emit(Event::ActionParsed {
                    agent: name.clone(),
                    action_id: ctx.action_id(link).unwrap_or_default(),
                    verb: link.verb.clone(),
                    op: link.op,
                    canonical: link.canonical().lines().next().unwrap_or("").to_string(),
                    span: link.span,
                    cancelled: link.cancelled,
                });
            }
        }
        for error in &parsed.errors {
            env.emit(Event::ParseFailed {
                agent: name.clone(),
                span: error.span,
                message: error.message(),
            });
        }
        let executor = Arc::clone(&env.executor);
        let mut run_ctx = ctx.clone();
        let text = reply.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let report = executor.run_parsed(&mut run_ctx, &text, &parsed);
            (report, run_ctx)
        })
        .await;
        let Ok((report, new_ctx)) = joined else {
            outcome.error = Some("running the actions crashed".into());
            env.emit(Event::Error {
                agent: Some(name.clone()),
                message: "running the actions crashed".into(),
            });
            return outcome;
        };
        ctx = new_ctx;
        let asked = outcome.requests.len();
        for r in &report.actions {
            emit_report(&env, r, &mut outcome.requests);
        }
        if outcome.requests.len() > asked {
            // Their authorities hear of them now, not when the turn ends.
            env.requests.notify_one();
        }
        let mut errors = report
            .errors
            .iter()
            .map(|e| e.message())
            .collect::<Vec<_>>();
        if *cancel.borrow() {
            outcome.cancelled = true;
            return outcome;
        }
        if !wants_continuation(&report.actions) && errors.is_empty() {
            return outcome;
        }
        if pass == env.max_passes {
            let message = format!("{name} stopped after {} passes in one turn", env.max_passes);
            env.emit(Event::Error {
                agent: Some(name.clone()),
                message: message.clone(),
            });
            outcome.error = Some(message);
            return outcome;
        }
        let mut results = prompt::results_message(&report.actions);
        if !errors.is_empty() {
            errors.insert(0, "Some of your actions could not be read:".into());
            results = format!("{results}\n\n{}", errors.join("\n  "));
        }
        store_message(&env, &name, &thread, "user", &results).await;
        push(&mut messages, ChatMessage::assistant(reply));
        push(&mut messages, ChatMessage::user(results));
    }
    outcome
}
