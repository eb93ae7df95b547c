//! `partner eval`: how well a model writes partner's actions. A task set
//! (`eval/tasks.toml`) gives a message and the actions it calls for; each
//! task is sent once, with the agent's real prompt, in each action format
//! (dialect lines, native tool calls), and the reply is parsed as the
//! runtime would parse it. Nothing runs: the score is about what the model
//! asked for — the actions the task wanted, parse errors, and accidental
//! actions nobody asked for — and what it cost in tokens and time.

mod report;
mod tasks;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use report::{ModeReport, Report, TaskResult};
pub use tasks::{Expect, Task, TaskSet};

use crate::dialect::{BlockRegistry, DialectParser, ParsedAction, VerbSpec, VerbTable};
use crate::runtime::prompt::{
    self, ActionFormat, PromptInputs, budget::estimate_tokens, budget::prompt_tokens,
};
use crate::runtime::provider::{ChatMessage, ChatRequest, PromptKind, Provider, StreamEvent};
use crate::runtime::settings::ModelSettings;
use crate::store::memory::{Block, BlockKind, BlockPermission};

/// Longest reply read in an evaluation.
const MAX_REPLY: usize = 64 * 1024;

/// What an evaluation runs against.
#[derive(Debug, Clone)]
pub struct EvalTarget {
    /// The agent whose name, model and settings are used.
    pub agent: String,
    /// Its provider.
    pub provider: Arc<dyn Provider>,
    /// Its model.
    pub model: String,
    /// Its settings (the profile may be overridden).
    pub settings: ModelSettings,
    /// Most tokens per reply.
    pub max_tokens: u32,
    /// Longest wait for one reply.
    pub timeout: Duration,
    /// The partner's name, as the runtime's prompt gives it.
    pub partner: String,
    /// The agent's own blocks (its persona, its configured blocks), as
    /// the runtime's prompt shows them on a first run.
    pub blocks: Vec<Block>,
    /// Its pulse interval (the prompt says how it is woken).
    pub pulse: Duration,
}

impl EvalTarget {
    /// The blocks a config gives an agent, as a first run stores them.
    pub fn blocks_of(specs: &[crate::store::trace::BlockSpec]) -> Vec<Block> {
        specs
            .iter()
            .map(|b| Block {
                kind: b.kind,
                description: b.description.clone(),
                char_limit: b.char_limit,
                permission: b.permission,
                shared: b.shared,
                ..block(&b.agent, &b.label, &b.value)
            })
            .collect()
    }
}

/// Runs every task in each of `modes` and scores the replies.
pub async fn run(
    target: &EvalTarget,
    set: &TaskSet,
    modes: &[ActionFormat],
    mut progress: impl FnMut(ActionFormat, usize, usize, &TaskResult),
) -> Result<Report, String> {
    let table = VerbTable::builtin();
    let registry = crate::engine::exec::registry::Registry::new(table.clone())
        .map_err(|e| format!("the built-in verbs: {e}"))?;
    let verbs: Vec<&VerbSpec> = registry.verbs_for(false);
    let blocks = set.blocks(&target.agent);
    let mut known = BlockRegistry::new();
    for b in &blocks {
        known.add(b.label.clone(), b.kind != BlockKind::Archival);
    }
    let parser = DialectParser::new()
        .with_table(table.clone())
        .with_blocks(known)
        .with_echoes(prompt::example_lines().map(str::to_string))
        .with_usable_verbs(verbs.iter().map(|v| v.verb.name().to_string()));
    let mut report = Report {
        model: format!("{}:{}", target.provider.name(), target.model),
        profile: target.settings.profile,
        modes: Vec::new(),
        refused: Vec::new(),
    };
    for &mode in modes {
        if mode == ActionFormat::Tools
            && let Some(why) = tools_dropped(target, set, &verbs, &blocks).await
        {
            report.refused.push(why);
            continue;
        }
        let mut results = Vec::new();
        for (i, task) in set.tasks.iter().enumerate() {
            let result = run_task(target, task, mode, &verbs, &blocks, &parser).await;
            progress(mode, i + 1, set.tasks.len(), &result);
            results.push(result);
        }
        report.modes.push(ModeReport::new(mode, results));
    }
    Ok(report)
}

/// Why tools mode cannot be scored, when the server shows that its chat
/// template drops the tools partner sends (the model would never see
/// them, and its score would say nothing of how it uses them).
async fn tools_dropped(
    target: &EvalTarget,
    set: &TaskSet,
    verbs: &[&VerbSpec],
    blocks: &[Block],
) -> Option<String> {
    let task = set.tasks.first()?;
    let (request, _, _) = request_for(target, task, ActionFormat::Tools, verbs, blocks);
    match target.provider.template_keeps_tools(&request).await {
        Some(false) => Some(format!(
            "tools mode was not scored: the server's chat template drops the {} tools partner sends (its /apply-template shows none of them), so the model never sees them; use dialect mode, or a model whose template takes tools",
            request.tools.len()
        )),
        _ => None,
    }
}

/// The request for `task` in `mode` — the runtime's prompt for a first
/// message on a first run: the same system prompt (name, partner, the
/// agent's blocks and the task's, pulse), the message with its time
/// context at its end — with its system prompt and messages.
fn request_for(
    target: &EvalTarget,
    task: &Task,
    mode: ActionFormat,
    verbs: &[&VerbSpec],
    blocks: &[Block],
) -> (ChatRequest, String, Vec<ChatMessage>) {
    let now = crate::core::clock::SystemClock.now_ms_public();
    let mut shown: Vec<Block> = target.blocks.clone();
    shown.extend(blocks.iter().cloned());
    let system = prompt::system_prompt(&PromptInputs {
        agent: &target.agent,
        partner: &target.partner,
        blocks: &shown,
        intentions: &[],
        pulse: target.pulse,
        verbs,
        profile: target.settings.profile,
        format: mode,
        now,
    });
    let tools = match mode {
        ActionFormat::Tools => crate::runtime::tools::tool_specs(verbs, None),
        ActionFormat::Dialect => Vec::new(),
    };
    let messages = vec![ChatMessage::user(format!(
        "{}\n\n{}",
        task.say,
        prompt::temporal_context(now, now, 1)
    ))];
    let request = ChatRequest {
        agent: target.agent.clone(),
        model: target.model.clone(),
        kind: PromptKind::Response,
        from: Some("partner".into()),
        system: system.clone(),
        messages: messages.clone(),
        max_tokens: target
            .settings
            .sampling
            .max_tokens
            .unwrap_or(target.max_tokens),
        sampling: target.settings.sampling.clone(),
        tools: tools.clone(),
    };
    (request, system, messages)
}

async fn run_task(
    target: &EvalTarget,
    task: &Task,
    mode: ActionFormat,
    verbs: &[&VerbSpec],
    blocks: &[Block],
    parser: &DialectParser,
) -> TaskResult {
    let (request, system, messages) = request_for(target, task, mode, verbs, blocks);
    let tools = request.tools.clone();
    let started = Instant::now();
    let (_cancel_tx, cancel) = tokio::sync::watch::channel(false);
    let mut rx = target.provider.stream(request, cancel);
    let mut reply = String::new();
    let mut calls = Vec::new();
    let mut usage = None;
    let mut error = None;
    let read = async {
        while let Some(event) = rx.recv().await {
            match event {
                StreamEvent::Token(t) => {
                    if reply.len() + t.len() > MAX_REPLY {
                        error = Some("the reply grew past 64 KiB".to_string());
                        return;
                    }
                    reply.push_str(&t);
                }
                StreamEvent::Tool(call) => calls.push(call),
                StreamEvent::Usage { input, output } => usage = Some((input, output)),
                StreamEvent::Done => return,
                StreamEvent::Error(e) => {
                    error = Some(e.to_string());
                    return;
                }
            }
        }
        error = Some("the model stopped without finishing".into());
    };
    if tokio::time::timeout(target.timeout, read).await.is_err() {
        error = Some(format!(
            "no complete reply within {}",
            humantime::format_duration(target.timeout)
        ));
    }
    let elapsed = started.elapsed();
    let mut call_errors = 0;
    for call in &calls {
        match crate::runtime::tools::call_to_line(call, &tools) {
            Ok(line) => {
                reply.push('\n');
                reply.push_str(&line);
            }
            Err(_) => call_errors += 1,
        }
    }
    let parsed = parser.parse(&reply);
    let actions: Vec<&ParsedAction> = parsed
        .live_actions()
        .flat_map(|a| a.all_links())
        .filter(|a| a.verb.name() != "batch")
        .collect();
    let (matched, accidental) = task.score(&actions);
    let (tokens_in, tokens_out) = usage.unwrap_or_else(|| {
        (
            prompt_tokens(&system, &messages) as u64,
            estimate_tokens(&reply) as u64,
        )
    });
    TaskResult {
        id: task.id.clone(),
        acts: !task.expect.is_empty(),
        matched: matched && error.is_none(),
        actions: actions.iter().map(|a| a.canonical()).collect(),
        parse_errors: parsed.errors.len() + call_errors,
        accidental,
        echoes: parsed.echoes.len(),
        tokens_in,
        tokens_out,
        millis: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        error,
    }
}

/// The block a task set gives the agent, as the prompt shows it.
pub(crate) fn block(agent: &str, label: &str, value: &str) -> Block {
    Block {
        id: 0,
        agent: agent.to_string(),
        label: label.to_string(),
        kind: BlockKind::Working,
        description: String::new(),
        value: value.to_string(),
        char_limit: crate::store::memory::DEFAULT_CHAR_LIMIT,
        permission: BlockPermission::ReadWrite,
        pinned: false,
        shared: false,
        version: 1,
        created_at: 0,
        updated_at: 0,
    }
}
