//! The prompt builder. The system prompt holds what changes rarely, in
//! this order — who the agent is, the dialect instructions (by
//! [`profile`]), pulse control, core memory, intentions — so a server's
//! prompt cache keeps it and the whole history from one turn to the next.
//! What changes every turn (the time, the turn count, recalled memories)
//! goes at the end of the turn's first message instead, and the history
//! travels once, as chat messages. The four prompt types (first pass
//! answering a message, first pass on a pulse, and their continuations with
//! action results) differ only in the messages they send; see
//! [`crate::turn`]. [`budget`] fits the whole to the agent's context.

pub mod assemble;
pub mod budget;
pub mod profile;

use std::time::Duration;

pub use profile::{ActionFormat, MCP_TOOL_TOKENS, Profile, example_lines};

use super::provider::{ChatMessage, Role};
use partner_core::clock::{Millis, format_time};
use partner_dialect::{VerbSpec, format_interval};
use partner_engine::exec::{ActionReport, ActionStatus};
use partner_store::memory::{Block, BlockKind, Intention, IntentionStatus, Message, SearchHit};

/// How a results message ends: what the model should do with them.
pub const CONTINUATION_NOTE: &str = "These are the results of your actions. Use them and carry on; do not repeat actions that already ran.";

/// The pulse prompt sent to the model when the idle timer fires.
pub fn pulse_prompt(interval: Duration, reason: &str) -> String {
    let label = format_interval(interval);
    let why = if reason.is_empty() {
        String::new()
    } else {
        format!("\nReason: {reason}.")
    };
    format!(
        "[AUTOMATED SYSTEM PULSE - not a message from a person]\nThe {label} idle timer has fired and no new message has arrived.{why}\nThis is your chance to act on your own: look for loose ends, check your intentions, follow up, or stay quiet if nothing needs doing."
    )
}

fn escape_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// Core and working memory blocks, each with label, description and permission.
pub fn core_memory(blocks: &[Block]) -> String {
    let shown: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.kind != BlockKind::Archival)
        .collect();
    if shown.is_empty() {
        return "<core_memory>\n(no memory blocks yet)\n</core_memory>".into();
    }
    let mut out = String::from("<core_memory>");
    for b in shown {
        out.push_str(&format!(
            "\n<block label=\"{}\" kind=\"{}\" permission=\"{}\" chars=\"{}/{}\"{}>\n{}\n</block>",
            escape_attr(&b.label),
            b.kind,
            b.permission,
            b.chars(),
            b.char_limit,
            if b.description.is_empty() {
                String::new()
            } else {
                format!(" description=\"{}\"", escape_attr(&b.description))
            },
            b.value
        ));
    }
    out.push_str("\n</core_memory>");
    out
}

/// Open intentions, split into due and upcoming.
pub fn intentions(list: &[Intention], now: Millis) -> String {
    let open: Vec<&Intention> = list
        .iter()
        .filter(|i| {
            matches!(
                i.status,
                IntentionStatus::Pending | IntentionStatus::Triggered
            )
        })
        .collect();
    let mut out = String::from("<your_intentions>");
    if open.is_empty() {
        out.push_str("\nNo open intentions. Set one with /remind \"when\" \"what\".");
    }
    let due: Vec<&&Intention> = open
        .iter()
        .filter(|i| i.status == IntentionStatus::Triggered || i.due_at.is_some_and(|t| t <= now))
        .collect();
    let upcoming: Vec<&&Intention> = open
        .iter()
        .filter(|i| !due.iter().any(|d| d.id == i.id))
        .collect();
    if !due.is_empty() {
        out.push_str("\nDue now:");
        for i in due {
            out.push_str(&format!(
                "\n  #{} {} (set for {})",
                i.id, i.what, i.due_text
            ));
        }
    }
    if !upcoming.is_empty() {
        out.push_str("\nUpcoming:");
        for i in upcoming {
            let when = i
                .due_at
                .map_or_else(|| "next session".to_string(), format_time);
            out.push_str(&format!("\n  #{} {} (due {when})", i.id, i.what));
        }
    }
    out.push_str("\nClose them with /complete ID \"note\" or /dismiss ID.\n</your_intentions>");
    out
}

/// How the pulse works and how to change it.
pub fn pulse_control(interval: Duration) -> String {
    let now = if interval.is_zero() {
        "off".to_string()
    } else {
        format!("every {}", format_interval(interval))
    };
    format!(
        "<system_pulse_control>\nWhen nobody writes to you, a pulse wakes you: currently {now}. Change it with /pulse 3m, /pulse 10m, /pulse 30m, /pulse 1h or /pulse 6h (any duration works).\n</system_pulse_control>"
    )
}

/// The current time, how long the session has run, how many turns so far.
pub fn temporal_context(now: Millis, session_start: Millis, turns: u64) -> String {
    let minutes = ((now - session_start).max(0) / 60_000) as u64;
    format!(
        "<temporal_context>\nNow: {} (UTC). Session running for {minutes} minutes, {turns} turns so far.\n</temporal_context>",
        format_time(now)
    )
}

/// Memories that match the incoming message (empty when none).
pub fn recalled_context(hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return String::new();
    }
    let mut out = String::from("<recalled_context>");
    for h in hits {
        let place = h
            .label
            .clone()
            .unwrap_or_else(|| format!("archival #{}", h.id));
        out.push_str(&format!(
            "\n  - [{place}, {}] {}",
            format_time(h.time),
            partner_store::memory::search::bracketed(&h.snippet)
        ));
    }
    out.push_str("\n</recalled_context>");
    out
}

/// The `[Action Results]` continuation message.
pub fn results_message(reports: &[ActionReport]) -> String {
    let mut out = String::from("[Action Results]\n");
    for r in reports {
        let line = match r.status {
            ActionStatus::Executed => {
                format!("Your {} returned:\n{}", r.canonical, indent(&r.text))
            }
            ActionStatus::Pending => format!("Your {} is {}", r.canonical, r.text),
            ActionStatus::NotRun => format!("Your {} did not run ({}).", r.canonical, r.text),
            ActionStatus::Failed => format!("Your {} failed: {}", r.canonical, r.text),
            ActionStatus::Denied => format!("Your {} was denied: {}", r.canonical, r.text),
            ActionStatus::Cancelled => format!("Your {} was cancelled: {}", r.canonical, r.text),
            ActionStatus::TimedOut => {
                format!("Your {} was not decided in time: {}", r.canonical, r.text)
            }
        };
        out.push('\n');
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(CONTINUATION_NOTE);
    out
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Everything the system prompt is built from.
#[derive(Debug, Clone)]
pub struct PromptInputs<'a> {
    /// The agent.
    pub agent: &'a str,
    /// The partner's name.
    pub partner: &'a str,
    /// The agent's memory blocks.
    pub blocks: &'a [Block],
    /// Its intentions.
    pub intentions: &'a [Intention],
    /// Its pulse interval.
    pub pulse: Duration,
    /// The verbs it may use.
    pub verbs: &'a [&'a VerbSpec],
    /// How much of the dialect to spell out.
    pub profile: Profile,
    /// How it writes actions.
    pub format: ActionFormat,
    /// Now (for which intentions are due).
    pub now: Millis,
}

/// The system prompt: the sections that change rarely, most stable first;
/// empty sections are left out.
pub fn system_prompt(p: &PromptInputs<'_>) -> String {
    let sections = [
        format!("You are {}, an agent working with {}.", p.agent, p.partner),
        profile::instructions(p.profile, p.format, p.verbs),
        pulse_control(p.pulse),
        core_memory(p.blocks),
        intentions(p.intentions, p.now),
    ];
    sections
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
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

/// Adds a message, merged into the last one when they share a role.
pub fn push_message(messages: &mut Vec<ChatMessage>, message: ChatMessage) {
    match messages.last_mut() {
        Some(last) if last.role == message.role => {
            last.content.push_str("\n\n");
            last.content.push_str(&message.content);
        }
        _ => messages.push(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_dialect::Verb;
    use partner_engine::exec::ActionInfo;
    use partner_store::memory::{BlockPermission, IntentionStatus};

    fn block(label: &str, kind: BlockKind, value: &str) -> Block {
        Block {
            id: 1,
            agent: "ada".into(),
            label: label.into(),
            kind,
            description: "about \"them\"".into(),
            value: value.into(),
            char_limit: 100,
            permission: BlockPermission::Partner,
            pinned: false,
            shared: false,
            version: 3,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn core_memory_shows_label_description_permission_and_leaves_archival_out() {
        let text = core_memory(&[
            block("human", BlockKind::Working, "likes tea"),
            block("old", BlockKind::Archival, "x"),
        ]);
        assert!(text.contains("<block label=\"human\" kind=\"working\" permission=\"partner\" chars=\"9/100\" description=\"about &quot;them&quot;\">\nlikes tea\n</block>"), "{text}");
        assert!(!text.contains("old"));
        assert!(core_memory(&[]).contains("no memory blocks yet"));
    }

    fn intention(id: i64, due_at: Option<Millis>, status: IntentionStatus) -> Intention {
        Intention {
            id,
            agent: "ada".into(),
            what: format!("task {id}"),
            due_text: "soon".into(),
            due_at,
            next_session: due_at.is_none(),
            status,
            note: None,
            created_at: 0,
        }
    }

    #[test]
    fn intentions_split_due_and_upcoming() {
        let text = intentions(
            &[
                intention(1, Some(50), IntentionStatus::Pending),
                intention(2, Some(500), IntentionStatus::Pending),
                intention(3, None, IntentionStatus::Completed),
            ],
            100,
        );
        let due = text.find("Due now:").unwrap();
        let upcoming = text.find("Upcoming:").unwrap();
        assert!(
            due < text.find("#1 task 1").unwrap() && text.find("#1 task 1").unwrap() < upcoming
        );
        assert!(text.contains("#2 task 2 (due 1970-01-01T00:00:00Z)"));
        assert!(!text.contains("task 3"), "closed intentions are left out");
        assert!(intentions(&[], 0).contains("No open intentions"));
    }

    #[test]
    fn pulse_control_names_the_interval() {
        assert!(pulse_control(Duration::from_secs(600)).contains("currently every 10m"));
        assert!(pulse_control(Duration::ZERO).contains("currently off"));
    }

    #[test]
    fn temporal_context_counts_minutes_and_turns() {
        let text = temporal_context(90 * 60_000, 0, 7);
        assert!(
            text.contains(
                "Now: 1970-01-01T01:30:00Z (UTC). Session running for 90 minutes, 7 turns so far."
            ),
            "{text}"
        );
    }

    #[test]
    fn recalled_context_is_empty_without_content() {
        assert_eq!(recalled_context(&[]), "");
        let hit = SearchHit {
            domain: partner_store::memory::SearchDomain::Archival,
            agent: "ada".into(),
            id: 4,
            label: None,
            role: None,
            snippet: "the [launch] moved".into(),
            rank: -1.0,
            time: 0,
        };
        assert!(
            recalled_context(&[hit])
                .contains("- [archival #4, 1970-01-01T00:00:00Z] the [launch] moved")
        );
    }

    #[test]
    fn results_say_what_each_action_did() {
        let mut ok = ActionReport::new(
            "ada",
            &ActionInfo {
                verb: Verb::Calc,
                op: None,
                canonical: "/calc \"1+1\"".into(),
                action_id: None,
            },
            ActionStatus::Executed,
            "1+1 = 2",
        );
        ok.needs_continuation = true;
        let denied = ActionReport::new(
            "ada",
            &ActionInfo {
                verb: Verb::Post,
                op: None,
                canonical: "/post x \"y\"".into(),
                action_id: None,
            },
            ActionStatus::Denied,
            "no platform 'x' is configured",
        );
        let text = results_message(&[ok, denied]);
        assert!(
            text.starts_with("[Action Results]\n\nYour /calc \"1+1\" returned:\n  1+1 = 2"),
            "{text}"
        );
        assert!(text.contains("Your /post x \"y\" was denied: no platform 'x' is configured"));
        assert!(text.ends_with(CONTINUATION_NOTE));
    }
}
