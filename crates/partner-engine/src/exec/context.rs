//! [`TurnContext`]: what an agent's action can refer to, and resolution of
//! references (`@last`, `@last.output`, `@thread`, `@parent`, `@[uri]`,
//! `that`/`this`/`it`) against it.

use partner_store::memory::backend::Memory;

use partner_dialect::{ParsedAction, RefKind, RefSlot};

/// The situation an agent acts in.
#[derive(Debug, Clone, Default)]
pub struct TurnContext {
    /// The acting agent.
    pub agent: String,
    /// The conversation (thread) the turn belongs to.
    pub thread: String,
    /// The turn's id, recorded with every action.
    pub turn_id: String,
    /// True in a private (DM) conversation.
    pub private: bool,
    /// The last message in context (what `@last` means).
    pub last_message: Option<String>,
    /// The output of the last action (what `@last.output` means).
    pub last_output: Option<String>,
    /// The message being replied to (what `@parent` means).
    pub parent: Option<String>,
    /// For a chain link after the first: the previous link's output, used
    /// when the link has no content of its own.
    pub chain_input: Option<String>,
    /// The agents whose messages led to this turn, nearest first: none of
    /// them may decide a request the turn makes.
    pub on_behalf_of: Vec<String>,
    /// The model pass within the turn (from 1), part of each action's id.
    pub pass: u32,
    /// Set when the turn is cancelled (its agent was halted): an action's
    /// effect still running (a fetch) stops.
    pub cancel: Option<crate::exec::registry::Cancel>,
    /// Team mode: the lease the turn runs under; each of its actions
    /// commits only while that lease still holds.
    pub fence: Option<partner_store::memory::roster::Fence>,
    /// The turn runs again from its start, after a crash or a lost lease
    /// cut it short: an action it already ran (the same id) is not run
    /// twice.
    pub again: bool,
}

impl TurnContext {
    /// A context for `agent` in `thread`.
    pub fn new(agent: &str, thread: &str, turn_id: &str) -> Self {
        TurnContext {
            agent: agent.to_string(),
            thread: thread.to_string(),
            turn_id: turn_id.to_string(),
            pass: 1,
            ..TurnContext::default()
        }
    }

    /// The id of an action of this turn's current pass: `turn:pass:place`
    /// (`ada-k3x-4:1:2.1`), or `None` for an action not numbered in a turn.
    pub fn action_id(&self, action: &ParsedAction) -> Option<String> {
        (!action.path.is_empty() && !self.turn_id.is_empty())
            .then(|| format!("{}:{}:{}", self.turn_id, self.pass, action.path_text()))
    }
}

/// Refuses an action's transaction when its agent's lease (`ctx.fence`)
/// was taken over by another daemon: two daemons never both commit for
/// one agent.
pub fn fenced(
    tx: &dyn crate::exec::registry::ActionTx,
    ctx: &TurnContext,
) -> Result<(), partner_store::memory::MemoryError> {
    match &ctx.fence {
        Some(fence) if !tx.holds(&ctx.agent, fence)? => {
            Err(partner_store::memory::MemoryError::Fenced(format!(
                "{}'s lease was taken over by another daemon: {} no longer runs it, and this action was not kept",
                ctx.agent, fence.host
            )))
        }
        _ => Ok(()),
    }
}

/// Resolves references into literal content. Returns the resolved action
/// (no references left) or a message for the agent naming what could not
/// be resolved. A chain link without content takes the previous link's
/// output when its verb `needs_content` (the verb registry says which).
pub fn resolve(
    store: &dyn Memory,
    ctx: &TurnContext,
    action: &ParsedAction,
    needs_content: bool,
) -> Result<ParsedAction, String> {
    let mut resolved = action.clone();
    resolved.refs.clear();
    for reference in &action.refs {
        let name = reference.kind.canonical();
        let value = match &reference.kind {
            RefKind::Last | RefKind::LastMessage => ctx.last_message.clone(),
            RefKind::LastOutput => ctx.last_output.clone(),
            RefKind::Parent => ctx.parent.clone().or_else(|| ctx.last_message.clone()),
            RefKind::Thread => {
                let messages = store
                    .recent_messages(&ctx.agent, &ctx.thread, 20)
                    .map_err(|e| e.to_string())?;
                (!messages.is_empty()).then(|| {
                    messages
                        .iter()
                        .map(|m| format!("{}: {}", m.role, m.content))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
            }
            RefKind::Uri(uri) => Some(uri.clone()),
            RefKind::Implicit(_) => ctx.last_output.clone().or_else(|| ctx.last_message.clone()),
        };
        let Some(value) = value else {
            let what = match &reference.kind {
                RefKind::LastOutput => "no action has produced output yet in this turn",
                RefKind::Thread => "this conversation has no messages yet",
                _ => "there is nothing in context for it to mean",
            };
            return Err(format!(
                "I couldn't resolve {name}: {what}. Write the content out instead."
            ));
        };
        match reference.slot {
            RefSlot::Content => resolved.content = Some(value),
            // A reply to @parent/@thread goes to the current thread anyway.
            RefSlot::Target => {}
        }
    }
    if resolved.content.is_none()
        && needs_content
        && let Some(input) = &ctx.chain_input
    {
        resolved.content = Some(input.clone());
    }
    Ok(resolved)
}
