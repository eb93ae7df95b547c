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
use crate::dialect::ParsedAction;
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

fn verb_op(action: &ParsedAction) -> (String, Option<String>) {
    (
        action.verb.name().to_string(),
        action.op.map(|o| o.as_str().to_string()),
    )
}

/// Verb and op of a canonical form (the executor's reports carry only that).
pub fn canonical_verb_op(canonical: &str) -> (String, Option<String>) {
    let parsed = crate::dialect::DialectParser::new().parse(canonical);
    match parsed.actions.first() {
        Some(a) => verb_op(a),
        None => (
            canonical
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_start_matches([':', '/'])
                .to_string(),
            None,
        ),
    }
}

fn status_name(status: ActionStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Publishes the events of one report (and its batch members).
pub fn emit_report(env: &TurnEnv, report: &ActionReport, requests: &mut Vec<PendingRequest>) {
    let (verb, op) = canonical_verb_op(&report.canonical);
    if !report.children.is_empty() {
        for child in &report.children {
            emit_report(env, child, requests);
        }
    }
    match (&report.request, report.status) {
        (Some(request), ActionStatus::Pending) => {
            env.emit(Event::PermissionRequested {
                agent: report.agent.clone(),
                id: request.id.clone(),
                verb,
                op,
                canonical: report.canonical.clone(),
                waiting_on: request.waiting_on().to_string(),
                reason: request.reason.clone(),
            });
            requests.push(request.clone());
        }
        (_, ActionStatus::Pending) => {}
        _ => {
            env.emit(Event::ActionExecuted {
                agent: report.agent.clone(),
                verb,
                op,
                canonical: report.canonical.clone(),
                status: status_name(report.status),
                result: report.text.clone(),
                trace_id: report.trace_id.clone(),
            });
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
    // Read what the prompt needs, then store the incoming message.
    let gathered = {
        let conn = env.executor.store().conn();
        let history = recent_messages(&conn, &name, &thread, env.history);
        let memory = blocks::list(&conn, Some(&name));
        let intentions = list_intentions(&conn, &name, true);
        let mut query = SearchQuery::new(&first, Some(&name));
        query.domains = vec![SearchDomain::Archival, SearchDomain::Conversations];
        query.limit = 3;
        let recalled = if kind == PromptKind::Response {
            search(&conn, &query)
        } else {
            Ok(Vec::new())
        };
        let stored_ok = match &stored {
            Some(text) => add_message(&conn, &name, &thread, &from, text, now).map(|_| ()),
            None => Ok(()),
        };
        (history, memory, intentions, recalled, stored_ok)
    };
    let (Ok(history), Ok(memory), Ok(intentions), Ok(recalled), Ok(())) = gathered else {
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
    let mut ctx = TurnContext::new(&name, &thread, &format!("{name}-{turns}"));
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
        let _ = add_message(
            &env.executor.store().conn(),
            &name,
            &thread,
            "assistant",
            &reply,
            env.clock.now_ms(),
        );
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
        for action in &parsed.actions {
            for link in action.all_links() {
                let (verb, op) = verb_op(link);
                env.emit(Event::ActionParsed {
                    agent: name.clone(),
                    verb,
                    op,
                    canonical: link.canonical().lines().next().unwrap_or("").to_string(),
                    span: link.span,
                    cancelled: link.cancelled,
                });
            }
        }
        for error in &parsed.errors {
            env.emit(Event::Error {
                agent: Some(name.clone()),
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
        for r in &report.actions {
            emit_report(&env, r, &mut outcome.requests);
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
        let _ = add_message(
            &env.executor.store().conn(),
            &name,
            &thread,
            "user",
            &results,
            env.clock.now_ms(),
        );
        push(&mut messages, ChatMessage::assistant(reply));
        push(&mut messages, ChatMessage::user(results));
    }
    outcome
}
