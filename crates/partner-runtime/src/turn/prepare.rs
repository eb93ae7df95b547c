//! A turn's first step: what started it, what its prompt needs from the
//! database, and the prompt every pass is cut from.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::store::{Begun, begin, recall, turn_id};
use super::{AgentInfo, Trigger, TurnEnv, TurnOutcome, allowed_verbs, failed};
use crate::prompt::assemble::{TurnPrompt, TurnPromptParts};
use crate::prompt::{self, ActionFormat, PromptInputs, budget};
use crate::provider::{PromptKind, ToolSpec};
use crate::settings::{DEFAULT_CONTEXT, prompt_budget};
use partner_core::clock::Millis;
use partner_dialect::VerbSpec;
use partner_engine::exec::TurnContext;
use partner_store::memory::{Block, Intention, MemoryResult, Message, SearchHit};

/// A turn in progress: who runs it, what it answers, its prompt and its
/// context, and what it has come to so far.
pub(super) struct Turn {
    pub env: Arc<TurnEnv>,
    pub agent: Arc<AgentInfo>,
    /// The agent's name.
    pub name: String,
    /// The first pass's prompt type.
    pub kind: PromptKind,
    /// The inbox message the turn answers, if it answers one.
    pub delivery: Option<i64>,
    /// Who the incoming message is from, as stored.
    pub from: String,
    /// Who sent what this turn answers, as a provider is told it.
    pub sender: String,
    pub now: Millis,
    /// The verbs the agent may use.
    pub verbs: Vec<VerbSpec>,
    /// The instructions alone (no memory, no intentions): a reply line
    /// mostly copied from them is an echo, never an action.
    pub instructions: String,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// The prompt budget in the server's tokens.
    pub budget: usize,
    pub prompt: TurnPrompt,
    pub ctx: TurnContext,
    pub cancel: watch::Receiver<bool>,
    pub outcome: TurnOutcome,
}

/// What started a turn, as its first pass sends and stores it.
struct Incoming {
    thread: String,
    kind: PromptKind,
    first: String,
    delivery: Option<i64>,
    from: String,
}

impl Incoming {
    fn of(trigger: &Trigger) -> Incoming {
        match trigger {
            Trigger::Message {
                thread,
                from,
                text,
                delivery,
                ..
            } => Incoming {
                thread: thread.clone(),
                kind: PromptKind::Response,
                first: text.clone(),
                delivery: *delivery,
                from: from.clone(),
            },
            Trigger::Pulse { interval, reason } => Incoming {
                thread: "main".to_string(),
                kind: PromptKind::Pulse,
                first: prompt::pulse_prompt(*interval, reason),
                delivery: None,
                from: "user".to_string(),
            },
            Trigger::Results {
                thread, reports, ..
            } => Incoming {
                thread: thread.clone(),
                kind: PromptKind::Continuation,
                first: prompt::results_message(reports),
                delivery: None,
                from: "user".to_string(),
            },
        }
    }
}

/// What the prompt is built from, read from the database.
struct Gathered {
    first_number: u64,
    history: Vec<Message>,
    memory: Vec<Block>,
    intentions: Vec<Intention>,
    recalled: Vec<SearchHit>,
}

/// Reads what the prompt needs (on the blocking pool: the database is no
/// work for an async worker); `None` if any of it could not be read.
async fn gather(env: &TurnEnv, name: &str, incoming: &Incoming) -> Option<Gathered> {
    let executor = Arc::clone(&env.executor);
    let (name, thread, first) = (
        name.to_string(),
        incoming.thread.clone(),
        incoming.first.clone(),
    );
    let kind = incoming.kind;
    // A page more than is sent, so the history can start where a page
    // does (see `budget::stable_start`).
    let history_len = env.history + budget::PAGE as usize;
    let read = tokio::task::spawn_blocking(move || -> MemoryResult<Gathered> {
        executor.store().read(|read| {
            let history = read.recent_messages(&name, &thread, history_len)?;
            let total = read.count_messages(&name, &thread)?;
            let first_number = total.saturating_sub(history.len() as u64);
            let memory = read.blocks(Some(&name))?;
            let intentions = read.intentions(&name, true)?;
            let recalled = match kind {
                PromptKind::Response => recall(read, &name, &first, &history)?,
                _ => Vec::new(),
            };
            Ok(Gathered {
                first_number,
                history,
                memory,
                intentions,
                recalled,
            })
        })
    })
    .await;
    read.ok()?.ok()
}

/// The system prompt (with the agent's memory), the same without memory
/// (the instructions a reply's echo is checked against), and the tools
/// offered when actions are tool calls.
fn system_parts(
    env: &TurnEnv,
    agent: &AgentInfo,
    gathered: &Gathered,
    verbs: &[VerbSpec],
    pulse: Duration,
    now: Millis,
) -> (String, String, Vec<ToolSpec>) {
    let verb_refs: Vec<&VerbSpec> = verbs.iter().collect();
    let settings = &agent.settings;
    let inputs = PromptInputs {
        agent: &agent.name,
        partner: &env.partner,
        blocks: &gathered.memory,
        intentions: &gathered.intentions,
        pulse,
        verbs: &verb_refs,
        profile: settings.profile,
        format: settings.actions,
        now,
    };
    let system = prompt::system_prompt(&inputs);
    let instructions = prompt::system_prompt(&PromptInputs {
        blocks: &[],
        intentions: &[],
        ..inputs
    });
    let tools: Vec<ToolSpec> = match settings.actions {
        ActionFormat::Tools => {
            crate::tools::tool_specs(&verb_refs, env.executor.mcp().map(|h| &**h))
        }
        ActionFormat::Dialect => Vec::new(),
    };
    (system, instructions, tools)
}

impl Turn {
    /// Reads what the turn answers and what its prompt needs, and builds
    /// the prompt; the outcome to end with if the database cannot be read.
    pub(super) async fn prepare(
        env: Arc<TurnEnv>,
        agent: Arc<AgentInfo>,
        trigger: &Trigger,
        pulse: Duration,
        turns: u64,
        cancel: watch::Receiver<bool>,
    ) -> Result<Turn, TurnOutcome> {
        let name = agent.name.clone();
        let now = env.clock.now_ms();
        let incoming = Incoming::of(trigger);
        let mut ctx = context_of(
            &name,
            &incoming.thread,
            &turn_id(&env, &name, turns, incoming.delivery),
            trigger,
            &cancel,
        );
        ctx.fence = agent
            .fence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(id) = incoming.delivery {
            ctx.again = begun(&env, &ctx, id).await?;
        }
        let sender = match incoming.from.as_str() {
            "user" => "partner".to_string(),
            other => other.to_string(),
        };
        let Some(gathered) = gather(&env, &name, &incoming).await else {
            return Err(failed(
                &env,
                name,
                "could not read this agent's memory from the database".into(),
            ));
        };
        let verbs = allowed_verbs(&env.executor, &agent.name, agent.authority);
        let (system, instructions, tools) =
            system_parts(&env, &agent, &gathered, &verbs, pulse, now);
        let settings = &agent.settings;
        let max_tokens = settings.sampling.max_tokens.unwrap_or(env.max_tokens);
        let budget = budget_of(&agent, max_tokens).await;
        // What changes every turn goes last, after the message, so
        // everything before it is the same as last turn's prompt (a
        // server's cache keeps it).
        let prompt = TurnPrompt::new(TurnPromptParts {
            system,
            stored: &gathered.history,
            first_number: gathered.first_number,
            max_history: env.history,
            first: format!(
                "{}\n\n{}",
                incoming.first,
                prompt::temporal_context(now, env.session_start, turns)
            ),
            recalled: prompt::recalled_context(&gathered.recalled),
            budget,
        });
        Ok(Turn {
            env,
            agent,
            name,
            kind: incoming.kind,
            delivery: incoming.delivery,
            from: incoming.from,
            sender,
            now,
            verbs,
            instructions,
            tools,
            max_tokens,
            budget,
            prompt,
            ctx,
            cancel,
            outcome: TurnOutcome::default(),
        })
    }
}

/// Begins answering inbox message `id`: true when the turn runs again
/// after one cut short; the outcome to end with when there is nothing to
/// answer (it no longer waits, or it was given up on).
async fn begun(env: &Arc<TurnEnv>, ctx: &TurnContext, id: i64) -> Result<bool, TurnOutcome> {
    match begin(env, ctx, id).await {
        Ok(Begun::First) => Ok(false),
        Ok(Begun::Again) => {
            tracing::warn!(agent = %ctx.agent, turn = %ctx.turn_id, "a turn cut short runs again from its start");
            Ok(true)
        }
        Ok(Begun::Settled) => Err(TurnOutcome::default()),
        Ok(Begun::GaveUp(n)) => Err(failed(
            env,
            ctx.agent.clone(),
            format!(
                "{} began answering a message {n} times and never finished (its daemon stopped each time); it is given up: send it again to retry",
                ctx.agent
            ),
        )),
        Err(e) => Err(failed(env, ctx.agent.clone(), e)),
    }
}

/// What the prompt may take of the model's context, in the server's
/// tokens as its reported usage showed them: the agent's `context`, or
/// what the server says its model holds, less the reply's room.
async fn budget_of(agent: &AgentInfo, max_tokens: u32) -> usize {
    let context = match agent.settings.context {
        Some(c) => c,
        None => agent
            .provider
            .context_window(&agent.model)
            .await
            .unwrap_or(DEFAULT_CONTEXT),
    };
    agent.tokens.budget(prompt_budget(context, max_tokens))
}

/// The executor's context for the turn's actions.
fn context_of(
    name: &str,
    thread: &str,
    turn_id: &str,
    trigger: &Trigger,
    cancel: &watch::Receiver<bool>,
) -> TurnContext {
    let mut ctx = TurnContext::new(name, thread, turn_id);
    ctx.cancel = Some(cancel.clone());
    ctx.private = thread.starts_with("dm:");
    ctx.last_message = match trigger {
        Trigger::Message { text, .. } => Some(text.clone()),
        _ => None,
    };
    ctx.on_behalf_of = match trigger {
        Trigger::Message { lineage, .. } | Trigger::Results { lineage, .. } => lineage.clone(),
        Trigger::Pulse { .. } => Vec::new(),
    };
    ctx
}
