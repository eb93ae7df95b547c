//! What another agent tool may do through `partner mcp serve`, on the
//! constellation's store: ask the partner a question (a `/ask` request
//! in the queue, waited on until the partner decides or the wait ends),
//! read the queue, leave a note in an agent's inbox. It never decides:
//! nothing here can approve, deny or run anything but its own `/ask`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::engine::exec::{ActionStatus, Executor, TurnContext};
use crate::protocol::question::{PartnerAnswer, PartnerQuestion};
use partner_store::memory::inbox::NewDelivery;

/// How often a waiting question looks for its decision.
const POLL: Duration = Duration::from_millis(200);
/// At most this many requests in a reading of the queue.
const MAX_LISTED: usize = 50;
/// At most this many characters of a request's action in that reading.
const MAX_ACTION: usize = 2_000;
/// At most this many characters in a note.
pub const MAX_NOTE: usize = 8_000;

/// How a question ended.
#[derive(Debug, Clone, PartialEq)]
pub struct AskOutcome {
    /// The request that asked it (`r12`), once there was one.
    pub request: Option<String>,
    /// `approved`, `denied`, `timed out`, `cancelled`, `failed` (approved,
    /// and the answer could not be made) or `refused` (the policy or the
    /// question's checks said no before anyone was asked).
    pub decision: &'static str,
    /// Who decided.
    pub by: Option<String>,
    /// The answer: approved or not, the choice, the arguments.
    pub answer: PartnerAnswer,
}

impl AskOutcome {
    fn refused(request: Option<String>, decision: &'static str, note: String) -> AskOutcome {
        AskOutcome {
            request,
            decision,
            by: None,
            answer: PartnerAnswer {
                approved: false,
                choice: None,
                arguments: None,
                note: Some(note),
            },
        }
    }

    /// As the asking tool reads it.
    pub fn to_json(&self) -> Value {
        json!({
            "decision": self.decision,
            "approved": self.answer.approved,
            "choice": self.answer.choice,
            "arguments": self.answer.arguments,
            "note": self.answer.note,
            "by": self.by,
            "request": self.request,
        })
    }
}

/// An outside agent tool, as the constellation knows it (a clone shares
/// the store).
#[derive(Clone)]
pub struct Asker {
    executor: Arc<Executor>,
    name: String,
    wait: Duration,
}

impl Asker {
    /// The asker `name` on `executor`'s store, whose questions wait at
    /// most `wait` for the partner.
    pub fn new(executor: Executor, name: String, wait: Duration) -> Asker {
        Asker {
            executor: Arc::new(executor),
            name,
            wait,
        }
    }

    /// The name its requests carry.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The active partner whose token `token` is, if any.
    pub fn partner_of(&self, token: &str) -> Result<Option<String>, String> {
        self.executor
            .store()
            .partners()
            .partner_of(token)
            .map_err(|e| format!("cannot check the token: {e}"))
    }

    /// Asks `question`, waits for the partner's decision (or `stop`, or
    /// the wait's end, which withdraws the request) and returns it.
    pub fn ask(&self, question: &PartnerQuestion, stop: &dyn Fn() -> bool) -> AskOutcome {
        if let Err(e) = question.check() {
            return AskOutcome::refused(None, "refused", e);
        }
        let text = format!("/ask {}", question.to_text());
        let turn = format!("outside-{}", self.executor.now());
        let mut ctx = TurnContext::new(&self.name, "outside", &turn);
        let report = self.executor.run_turn(&mut ctx, &text);
        if let Some(error) = report.errors.first() {
            return AskOutcome::refused(None, "refused", error.message());
        }
        let Some(asked) = report.actions.into_iter().next() else {
            return AskOutcome::refused(None, "refused", "nothing was asked".into());
        };
        let Some(id) = asked.request.as_ref().map(|r| r.id.clone()) else {
            // Decided at once: only a policy's deny does that.
            let note = asked.text;
            return AskOutcome::refused(None, "refused", note);
        };
        let deadline = Instant::now() + self.wait;
        loop {
            match self.executor.take_decision(&id) {
                Ok(Some(decided)) => return settled(&id, decided),
                Ok(None) => {}
                Err(e) => tracing::warn!(%id, error = %e, "reading the decision"),
            }
            if stop() || Instant::now() >= deadline {
                return self.withdraw(&id, stop());
            }
            std::thread::sleep(POLL);
        }
    }

    /// Withdraws request `id` (the asker stopped waiting); a decision made
    /// meanwhile wins.
    fn withdraw(&self, id: &str, stopped: bool) -> AskOutcome {
        let mut ctx = TurnContext::new(&self.name, "outside", "withdraw");
        let _ = self.executor.run_turn(&mut ctx, &format!("/cancel {id}"));
        match self.executor.take_decision(id) {
            // The partner decided before the withdrawal landed.
            Ok(Some(decided)) if decided.by != format!("agent:{}", self.name) => {
                return settled(id, decided);
            }
            _ => {}
        }
        let why = if stopped {
            "the asking tool stopped waiting; the request is withdrawn".to_string()
        } else {
            format!(
                "nobody decided within {}s; the request is withdrawn",
                self.wait.as_secs()
            )
        };
        AskOutcome::refused(Some(id.to_string()), "timed out", why)
    }

    /// The requests waiting now, oldest first (at most 50, each action cut
    /// to 2,000 characters).
    pub fn queue(&self) -> Result<Value, String> {
        let waiting = self.executor.pending().map_err(|e| e.to_string())?;
        let total = waiting.len();
        let listed: Vec<Value> = waiting
            .into_iter()
            .take(MAX_LISTED)
            .map(|r| {
                let action: String = r.canonical.chars().take(MAX_ACTION).collect();
                json!({
                    "id": r.id,
                    "agent": r.agent,
                    "action": action,
                    "action_cut": action.len() < r.canonical.len(),
                    "reason": r.reason,
                    "waiting_on": r.waiting_on().to_string(),
                    "asked_at": partner_core::clock::format_time(r.created_at),
                })
            })
            .collect();
        Ok(json!({ "waiting": total, "requests": listed }))
    }

    /// Leaves `text` in `agent`'s inbox, from `outside:NAME` (never from
    /// the partner): its runtime answers it as any message.
    pub fn note(&self, agent: &str, text: &str) -> Result<String, String> {
        if text.trim().is_empty() {
            return Err("the note is empty".into());
        }
        if text.chars().count() > MAX_NOTE {
            return Err(format!("the note is longer than {MAX_NOTE} characters"));
        }
        let store = self.executor.store();
        let agents = store
            .read(|tx| Ok(self.executor.agents(tx)))
            .map_err(|e| e.to_string())?;
        if !agents.iter().any(|a| a == agent) || agent == self.name {
            return Err(format!(
                "there is no agent named {agent}; the agents are {}",
                agents.join(", ")
            ));
        }
        let from = format!("outside:{}", self.name);
        let message = NewDelivery {
            agent,
            thread: &from,
            from: &from,
            content: text,
            lineage: &[],
        };
        let now = self.executor.now();
        store
            .transaction(|tx| tx.deliver(&message, now))
            .map_err(|e| format!("could not leave the note: {e}"))?;
        Ok(format!("left a note for {agent}"))
    }
}

/// The outcome of a decided request.
fn settled(id: &str, decided: crate::engine::exec::DecidedRequest) -> AskOutcome {
    let report = decided.report;
    let by = Some(decided.by);
    let request = Some(id.to_string());
    if report.status != ActionStatus::Executed {
        let decision = match report.status {
            ActionStatus::Denied => "denied",
            ActionStatus::Cancelled => "cancelled",
            ActionStatus::TimedOut => "timed out",
            _ => "failed",
        };
        return AskOutcome {
            by,
            ..AskOutcome::refused(request, decision, report.text)
        };
    }
    let answer = report
        .data
        .get("answer")
        .and_then(|a| serde_json::from_value::<PartnerAnswer>(a.clone()).ok())
        .unwrap_or_else(|| PartnerAnswer {
            // The partner approved another action in its place.
            approved: true,
            choice: None,
            arguments: None,
            note: Some(format!("the partner ran {} instead", report.canonical)),
        });
    AskOutcome {
        request,
        decision: "approved",
        by,
        answer,
    }
}
