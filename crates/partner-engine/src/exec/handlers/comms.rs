//! `/send`, `/reply`, `/post`, `/dm`, `/tell` and `/uncertain`. Messages to
//! people and platforms go to the outbox (the seam for platform adapters);
//! `/tell` delivers to the other agent's inbox, which its runtime answers.

use serde_json::json;

use super::Effect;
use crate::exec::context::TurnContext;
use crate::exec::executor::Executor;
use crate::exec::registry::{ActionTx, Cx, Outcome, Stage, VerbHandler};
use partner_core::clock::Millis;
use partner_dialect::{ParsedAction, Verb};
use partner_policy::VerbTraits;
use partner_store::memory::backend::NewMessage;
use partner_store::memory::inbox::NewDelivery;
use partner_store::memory::roster::Outgoing;

/// Delivers a message to another agent, recording who it came through:
/// the sender, then the agents the sender's turn acted on behalf of.
pub(super) fn tell(
    exec: &Executor,
    tx: &dyn ActionTx,
    ctx: &TurnContext,
    to: &str,
    text: &str,
    now: Millis,
) -> Outcome {
    let from = ctx.agent.as_str();
    let agents = exec.agents(tx);
    if !agents.iter().any(|a| a == to) {
        return Err(format!(
            "there is no agent named {to} in this constellation; the agents are {}",
            agents.join(", ")
        )
        .into());
    }
    let thread = format!("agent:{from}");
    let mut lineage = vec![from.to_string()];
    for agent in &ctx.on_behalf_of {
        if !lineage.contains(agent) {
            lineage.push(agent.clone());
        }
    }
    let role = format!("agent:{from}");
    let message = NewDelivery {
        agent: to,
        thread: &thread,
        from: &role,
        content: text,
        lineage: &lineage,
    };
    let id = tx.deliver(&message, now)?;
    Ok(Effect::text(format!("told {to}")).with_data(json!({ "to": to, "message_id": id })))
}

/// Keeps what the acting agent said in its conversation, as part of
/// its turn.
fn said(
    tx: &dyn ActionTx,
    ctx: &TurnContext,
    text: &str,
    now: Millis,
) -> partner_store::memory::MemoryResult<i64> {
    let message = NewMessage {
        agent: &ctx.agent,
        thread: &ctx.thread,
        role: "assistant",
        content: text,
        lineage: &[],
        turn: (!ctx.turn_id.is_empty()).then_some(ctx.turn_id.as_str()),
    };
    tx.add_message(&message, now)
}

/// Delivers a message.
fn deliver(
    exec: &Executor,
    tx: &dyn ActionTx,
    ctx: &TurnContext,
    action: &ParsedAction,
    now: Millis,
) -> Outcome {
    let from = ctx.agent.as_str();
    let text = action
        .content
        .as_deref()
        .ok_or_else(|| format!("/{} needs a message", action.verb))?;
    let target = action.target.as_deref();
    let queue = |channel: &str, target: Option<&str>, public: bool, said: String| -> Outcome {
        let out = Outgoing {
            agent: from,
            channel,
            target,
            content: text,
            public,
        };
        let id = tx.enqueue(&out, now)?;
        Ok(Effect::text(said)
            .with_data(json!({ "outbox_id": id, "channel": channel, "target": target })))
    };
    match action.verb {
        Verb::Tell => tell(
            exec,
            tx,
            ctx,
            target.ok_or("/tell needs an @agent")?,
            text,
            now,
        ),
        Verb::Reply => {
            said(tx, ctx, text, now)?;
            queue("reply", Some(&ctx.thread), false, "replied".into())
        }
        Verb::Post => {
            let platform = target.ok_or("/post needs a platform")?;
            queue(
                platform,
                None,
                true,
                format!("queued a public post to {platform}"),
            )
        }
        Verb::Dm => {
            let user = target.ok_or("/dm needs a @user")?;
            queue(
                "dm",
                Some(user),
                false,
                format!("queued a direct message to {user}"),
            )
        }
        _ => {
            let domain = action.domain().unwrap_or("user");
            match (domain, target) {
                ("agent", Some(agent)) => tell(exec, tx, ctx, agent, text, now),
                ("user", None) => {
                    said(tx, ctx, text, now)?;
                    queue("user", None, false, "sent to the user".into())
                }
                (domain, target) => {
                    let public = !matches!(domain, "user" | "agent");
                    let to = target.map(|t| format!(" {t}")).unwrap_or_default();
                    queue(domain, target, public, format!("queued for {domain}{to}"))
                }
            }
        }
    }
}

/// `/uncertain`: flags something for the partner to look at.
fn uncertain(tx: &dyn ActionTx, ctx: &TurnContext, action: &ParsedAction, now: Millis) -> Outcome {
    let note = action.content.as_deref().ok_or("/uncertain needs a note")?;
    let flag = Outgoing {
        agent: &ctx.agent,
        channel: "partner",
        target: None,
        content: note,
        public: false,
    };
    let id = tx.enqueue(&flag, now)?;
    Ok(Effect::text("flagged for the partner").with_data(json!({ "outbox_id": id })))
}

/// The platform a message publishes to, if it goes to one.
fn platform_of(action: &ParsedAction) -> Option<String> {
    match action.verb {
        Verb::Post => action.target.clone(),
        Verb::Send => action
            .domain()
            .map(str::to_string)
            .filter(|d| !matches!(d.as_str(), "user" | "agent" | "channel")),
        _ => None,
    }
}

/// `/send`, `/reply`, `/post`, `/dm` and `/tell`: messages.
pub(super) struct Message;

impl VerbHandler for Message {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Store
    }

    fn needs_content(&self) -> bool {
        true
    }

    fn traits(&self, action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            platform: platform_of(action),
            carries_text: true,
            ..VerbTraits::default()
        }
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        deliver(cx.exec, cx.tx()?, cx.ctx, action, cx.now)
    }
}

/// `/uncertain`: a flag for the partner.
pub(super) struct Uncertain;

impl VerbHandler for Uncertain {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::Store
    }

    fn traits(&self, _action: &ParsedAction) -> VerbTraits {
        VerbTraits::default()
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        uncertain(cx.tx()?, cx.ctx, action, cx.now)
    }

    fn flags_for_review(&self) -> bool {
        true
    }
}
