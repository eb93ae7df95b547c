//! One agent turn: the first pass (a message or a pulse), then, while any
//! action's result should be seen, continuation passes carrying an
//! `[Action Results]` message — up to a cap. The same system prompt is
//! reused for every pass; every pass is fitted to the agent's context
//! budget. The first message carries the turn's changing context (time,
//! recalled memories) at its end, and is stored as sent: the next turn's
//! request starts with this one's bytes.
//!
//! What is sent and what is stored:
//!
//! | prompt type | messages sent | stored in history |
//! |---|---|---|
//! | first pass, message | history + user message | the user message as sent |
//! | first pass, pulse | history + full pulse prompt | the pulse prompt as sent |
//! | continuation | … + assistant reply + `[Action Results]…` | the reply and the results |
//! | continuation of a pulse | as above, after the pulse prompt | the same |

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

mod env;
mod report;
mod store;

pub use env::{AgentInfo, TokenScale, Trigger, TurnEnv, TurnOutcome};

pub use report::emit_report;
use report::wants_continuation;
use store::{recall, store_message, try_store_message, turn_id};

use super::events::Event;
use super::prompt::assemble::{TurnPrompt, TurnPromptParts};
use super::prompt::{self, ActionFormat, PromptInputs, budget};
use super::provider::{ChatMessage, ChatRequest, PromptKind, StreamEvent, ToolSpec};
use super::settings::{DEFAULT_CONTEXT, prompt_budget};
use partner_engine::exec::{Executor, TurnContext};
use partner_store::memory::blocks;
use partner_store::memory::records::{count_messages, list_intentions, recent_messages};

/// Most tool calls read from one reply.
const MAX_TOOL_CALLS: usize = 32;

/// A turn that could not go on: the partner is told why.
fn failed(env: &TurnEnv, agent: String, message: String) -> TurnOutcome {
    env.emit(Event::Error {
        agent: Some(agent),
        message: message.clone(),
    });
    TurnOutcome {
        error: Some(message),
        ..TurnOutcome::default()
    }
}

/// The verbs an agent may use — all but the authority verbs, unless it has
/// an authority role; the constellation's own verbs included — from the
/// verb registry.
pub fn allowed_verbs(executor: &Executor, authority: bool) -> Vec<partner_dialect::VerbSpec> {
    executor
        .registry()
        .verbs_for(authority)
        .into_iter()
        .cloned()
        .collect()
}

/// Runs one turn to its end (or until cancelled), inside a `turn` span
/// (agent, turn number, what started it) for `RUST_LOG=partner=debug`.
pub async fn run_turn(
    env: Arc<TurnEnv>,
    agent: Arc<AgentInfo>,
    trigger: Trigger,
    pulse: Duration,
    turns: u64,
    cancel: watch::Receiver<bool>,
) -> TurnOutcome {
    use tracing::Instrument;
    let started_by = match &trigger {
        Trigger::Message { .. } => "message",
        Trigger::Pulse { .. } => "pulse",
        Trigger::Results { .. } => "results",
    };
    let span = tracing::debug_span!("turn", agent = %agent.name, turn = turns, started_by);
    async move {
        tracing::debug!("turn starts");
        let outcome = run_turn_steps(env, agent, trigger, pulse, turns, cancel).await;
        tracing::debug!("turn ends");
        outcome
    }
    .instrument(span)
    .await
}

/// The steps of one turn: prompt, stream, parse, act, continue.
async fn run_turn_steps(
    env: Arc<TurnEnv>,
    agent: Arc<AgentInfo>,
    trigger: Trigger,
    pulse: Duration,
    turns: u64,
    mut cancel: watch::Receiver<bool>,
) -> TurnOutcome {
    let name = agent.name.clone();
    let now = env.clock.now_ms();
    // Whether the incoming message is to be stored (a message already
    // stored by whoever sent it is not stored twice).
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
            *store,
            from.clone(),
        ),
        Trigger::Pulse { interval, reason } => (
            "main".to_string(),
            PromptKind::Pulse,
            prompt::pulse_prompt(*interval, reason),
            true,
            "user".to_string(),
        ),
        Trigger::Results {
            thread, reports, ..
        } => {
            let text = prompt::results_message(reports);
            (
                thread.clone(),
                PromptKind::Continuation,
                text,
                true,
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
        let (executor, name, thread, first, from) = (
            Arc::clone(&env.executor),
            name.clone(),
            thread.clone(),
            first.clone(),
            from.clone(),
        );
        // A page more than is sent, so the history can start where a page
        // does (see `budget::stable_start`).
        let history_len = env.history + budget::PAGE as usize;
        tokio::task::spawn_blocking(move || {
            let read = executor.store().read();
            let history = recent_messages(&read, &name, &thread, history_len).and_then(|mut h| {
                let total = count_messages(&read, &name, &thread)?;
                let first_number = total.saturating_sub(h.len() as u64);
                // A message stored when it was sent (another agent's) is
                // in the history already: it travels once, as this
                // turn's first message, with its context.
                if !stored
                    && let Some(at) = h.iter().rposition(|m| m.role == from && m.content == first)
                {
                    h.remove(at);
                }
                Ok((first_number, h))
            });
            let memory = blocks::list(&read, Some(&name));
            let intentions = list_intentions(&read, &name, true);
            let recalled = match (&history, kind) {
                (Ok((_, sent)), PromptKind::Response) => recall(&read, &name, &first, sent),
                _ => Ok(Vec::new()),
            };
            (history, memory, intentions, recalled)
        })
        .await
    };
    let Ok((Ok((first_number, history)), Ok(memory), Ok(intentions), Ok(recalled))) = gathered
    else {
        return failed(
            &env,
            name,
            "could not read this agent's memory from the database".into(),
        );
    };
    let verbs = allowed_verbs(&env.executor, agent.authority);
    let verb_refs: Vec<&partner_dialect::VerbSpec> = verbs.iter().collect();
    let settings = &agent.settings;
    let inputs = PromptInputs {
        agent: &name,
        partner: &env.partner,
        blocks: &memory,
        intentions: &intentions,
        pulse,
        verbs: &verb_refs,
        profile: settings.profile,
        format: settings.actions,
        now,
    };
    let system = prompt::system_prompt(&inputs);
    // The instructions alone (no memory, no intentions): a reply line
    // mostly copied from them is an echo, never an action.
    let instructions = prompt::system_prompt(&PromptInputs {
        blocks: &[],
        intentions: &[],
        ..inputs
    });
    let tools: Vec<ToolSpec> = match settings.actions {
        ActionFormat::Tools => super::tools::tool_specs(&verb_refs),
        ActionFormat::Dialect => Vec::new(),
    };
    let max_tokens = settings.sampling.max_tokens.unwrap_or(env.max_tokens);
    let context = match settings.context {
        Some(c) => c,
        None => agent
            .provider
            .context_window(&agent.model)
            .await
            .unwrap_or(DEFAULT_CONTEXT),
    };
    // In the server's tokens, as its reported usage showed them.
    let budget = agent.tokens.budget(prompt_budget(context, max_tokens));
    // What changes every turn goes last, after the message, so everything
    // before it is the same as last turn's prompt (a server's cache keeps it).
    let mut turn_prompt = TurnPrompt::new(TurnPromptParts {
        system,
        stored: &history,
        first_number,
        max_history: env.history,
        first: format!(
            "{first}\n\n{}",
            prompt::temporal_context(now, env.session_start, turns)
        ),
        recalled: prompt::recalled_context(&recalled),
        budget,
    });
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
        let (messages, fitted) = turn_prompt.next_pass();
        // The incoming message is stored as it was sent, its changing
        // context included: the next turn's request then starts with this
        // one's bytes, and a server's cache reads none of it again.
        if pass == 1
            && stored
            && let Some(sent) = messages.last()
            && let Err(message) =
                try_store_message(&env, &name, &thread, &from, &sent.content, now).await
        {
            return failed(&env, name, message);
        }
        if let Some(fitted) = fitted {
            env.emit(Event::PromptFitted {
                agent: name.clone(),
                tokens: fitted.tokens,
                budget,
                dropped_messages: fitted.dropped_messages,
                dropped_tokens: fitted.dropped_tokens,
                dropped_recalled: fitted.dropped_recalled,
                summary: format!(
                    "{name}'s prompt was fitted to its budget of {budget} tokens: {}",
                    fitted.summary(budget)
                ),
            });
        }
        let sent_estimate = budget::prompt_tokens(&turn_prompt.system, &messages);
        let request = ChatRequest {
            agent: name.clone(),
            model: agent.model.clone(),
            kind: pass_kind,
            from: (pass_kind == PromptKind::Response).then(|| sender.clone()),
            system: turn_prompt.system.clone(),
            messages,
            max_tokens,
            sampling: settings.sampling.clone(),
            tools: tools.clone(),
        };
        let mut rx = agent.provider.stream(request, cancel.clone());
        let mut reply = String::new();
        let mut calls = Vec::new();
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
                    Some(StreamEvent::Tool(call)) => {
                        if calls.len() < MAX_TOOL_CALLS {
                            calls.push(call);
                        }
                    }
                    Some(StreamEvent::Usage { input, .. }) => {
                        agent.tokens.learn(input, sent_estimate);
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
            env.emit(Event::TurnFailed {
                agent: name.clone(),
                pass,
                message: format!(
                    "{name}'s model call failed ({}): {message}",
                    agent.provider.describe(&agent.model)
                ),
            });
            outcome.error = Some(message);
            return outcome;
        }
        // Tool calls become dialect lines at the end of the reply: the
        // reply as stored and shown says exactly what the model asked for.
        let mut call_errors = Vec::new();
        for call in &calls {
            match super::tools::call_to_line(call, &tools) {
                Ok(line) => {
                    if !reply.is_empty() && !reply.ends_with('\n') {
                        reply.push('\n');
                    }
                    reply.push_str(&line);
                    reply.push('\n');
                }
                Err(e) => call_errors.push(e),
            }
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
        let usable: Vec<String> = verbs.iter().map(|v| v.verb.name().to_string()).collect();
        let instructions = instructions.clone();
        let Ok(parsed) = tokio::task::spawn_blocking(move || {
            executor
                .parser_for(&parse_for)
                .with_echoes(prompt::example_lines().map(str::to_string))
                .with_prompt_echoes(&instructions)
                .with_usable_verbs(usable)
                .parse(&text)
        })
        .await
        else {
            outcome.error = Some("reading the reply crashed".into());
            env.emit(Event::Error {
                agent: Some(name.clone()),
                message: "reading the reply crashed".into(),
            });
            return outcome;
        };
        ctx.pass = pass;
        for span in &parsed.echoes {
            env.emit(Event::EchoIgnored {
                agent: name.clone(),
                span: *span,
                text: span.slice(&reply).trim().chars().take(500).collect(),
            });
        }
        // Words without an action may still mean one: it is proposed, and
        // waits for the partner (`?ask`), whatever the policy says.
        let mut run_text = reply.clone();
        let mut parsed = parsed;
        let mut proposed = None;
        if parsed.actions.is_empty()
            && parsed.errors.is_empty()
            && let Some(proposer) = env.proposer.get()
            && let Some(action) = proposer.propose(&reply)
        {
            let line = format!("{action} ?ask");
            let executor = Arc::clone(&env.executor);
            let (parse_for, text) = (name.clone(), line.clone());
            if let Ok(p) =
                tokio::task::spawn_blocking(move || executor.parser_for(&parse_for).parse(&text))
                    .await
                && p.errors.is_empty()
                && p.actions.len() == 1
            {
                parsed = p;
                run_text = line;
                proposed = Some(action);
            }
        }
        for action in &parsed.actions {
            for link in action.all_links() {
                let action_id = ctx.action_id(link).unwrap_or_default();
                env.emit(Event::ActionParsed {
                    agent: name.clone(),
                    action_id: action_id.clone(),
                    verb: link.verb.clone(),
                    op: link.op,
                    canonical: link.canonical().lines().next().unwrap_or("").to_string(),
                    // A proposal is not in the reply's text.
                    span: if proposed.is_some() {
                        partner_dialect::Span::new(reply.len(), reply.len())
                    } else {
                        link.span
                    },
                    cancelled: link.cancelled,
                });
                if let Some(action) = &proposed {
                    env.emit(Event::ActionProposed {
                        agent: name.clone(),
                        action_id,
                        words: super::proposals::words_shown(&reply),
                        action: action.clone(),
                    });
                }
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
        let text = run_text;
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
            .chain(call_errors)
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
        turn_prompt.push(ChatMessage::assistant(reply));
        turn_prompt.push(ChatMessage::user(results));
    }
    outcome
}
