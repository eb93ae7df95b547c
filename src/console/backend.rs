//! [`ConsoleBackend`]: the console's ops carried out. Everything of the
//! constellation — its state, the queue, the trace, memory, decisions,
//! edits, messages, the partner's own commands — is the protocol's
//! operation sent to a [`Host`] (the constellation in this process, or a
//! daemon's over its socket: the same operations either way), its answer
//! turned into the console's reply. Only a trace the partner opens for
//! replay is read here. Nothing runs on the console's task.

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};

use partner_core::clock::Clock;
use partner_dialect::VerbTable;
use partner_protocol::views::{self, Evaluated, Found, Listed, Queue, SaveOutcome, TracePage};
use partner_protocol::wire::{
    Block, BlockVersion, CommandPlan, IndexStatus, LearnedRule, OlderPage, StandingRule,
};
use partner_protocol::{Answer, Connection, Event, Host, Op as HostOp};
use partner_tui::backend::{Backend, BackendOp, Reply};
use partner_tui::model::AgentLine;
use partner_tui::panes::{LispView, OutputView};

/// The console's backend: the constellation through its host, a replayed
/// trace here with the constellation's verbs.
#[derive(Clone)]
pub struct ConsoleBackend {
    host: Arc<dyn Host>,
    verbs: Arc<VerbTable>,
    replies: mpsc::UnboundedSender<Reply>,
}

impl ConsoleBackend {
    /// A backend over the constellation `host` serves, replaying traces
    /// with `verbs`, answering on `replies`.
    pub fn new(
        host: Arc<dyn Host>,
        verbs: Arc<VerbTable>,
        replies: mpsc::UnboundedSender<Reply>,
    ) -> Self {
        ConsoleBackend {
            host,
            verbs,
            replies,
        }
    }
}

impl Backend for ConsoleBackend {
    fn events(&self) -> broadcast::Receiver<Event> {
        self.host.events()
    }

    fn connection(&self) -> Connection {
        self.host.connection()
    }

    fn send(&self, op: BackendOp) {
        match op {
            BackendOp::Host(op) => {
                let host = Arc::clone(&self.host);
                let replies = self.replies.clone();
                let asked = Asked::of(&op);
                tokio::spawn(async move {
                    // A failure inside partner is answered, so nothing
                    // stays "waiting for the answer…".
                    let said =
                        tokio::spawn(async move { ask(host.as_ref(), op).await })
                            .await
                            .unwrap_or_else(|e| {
                                vec![asked.refused(format!(
                                    "partner failed inside ({e}); please report it"
                                ))]
                            });
                    for reply in said {
                        let _ = replies.send(reply);
                    }
                });
            }
            replay => {
                let verbs = Arc::clone(&self.verbs);
                let replies = self.replies.clone();
                tokio::task::spawn_blocking(move || {
                    let reply = partner_core::isolate::contain(|| {
                        super::replay::run(replay, &verbs)
                    })
                    .unwrap_or_else(|panic| {
                        Reply::Failed(format!(
                            "replaying the trace: partner failed inside ({panic}); please report it"
                        ))
                    });
                    let _ = replies.send(reply);
                });
            }
        }
    }
}

/// Sends `op` to the host and says what came of it, in the console's
/// replies; an op whose answer changes a list the console shows reads
/// the list again after.
async fn ask(host: &dyn Host, op: HostOp) -> Vec<Reply> {
    let asked = Asked::of(&op);
    let wall = partner_core::clock::SystemClock.now_ms();
    let outcome = host.call(op).await;
    let mut replies = asked.replies(outcome, wall);
    if let Some(again) = asked.then() {
        let again_asked = Asked::of(&again);
        replies.extend(again_asked.replies(host.call(again).await, wall));
    }
    replies
}

/// What the console asked, kept to build its reply from the answer.
enum Asked {
    Status,
    Decision(String),
    Run(String),
    Queue,
    Trace,
    OlderTrace(partner_protocol::wire::TraceFilter, u64),
    Blocks(String),
    History(String, String),
    Search(String),
    Index,
    Rules,
    Revoke,
    Learned,
    Learn,
    Forget,
    Lisp(String),
    Save(String, String),
    Undo(String),
    Plan,
    Ran(String),
    /// Anything else: the host's words.
    Words,
}

impl Asked {
    fn of(op: &HostOp) -> Self {
        match op {
            HostOp::Status => Asked::Status,
            HostOp::Decide { request, .. } => Asked::Decision(request.clone()),
            HostOp::Run { agent, .. } => Asked::Run(agent.clone()),
            HostOp::Queue => Asked::Queue,
            HostOp::Trace { .. } => Asked::Trace,
            HostOp::OlderTrace { filter, before } => Asked::OlderTrace(filter.clone(), *before),
            HostOp::Blocks { agent } => Asked::Blocks(agent.clone()),
            HostOp::History { agent, label } => Asked::History(agent.clone(), label.clone()),
            HostOp::Search { query } => Asked::Search(query.clone()),
            HostOp::Index => Asked::Index,
            HostOp::Rules => Asked::Rules,
            HostOp::RevokeRule { .. } => Asked::Revoke,
            HostOp::Learned => Asked::Learned,
            HostOp::Learn { .. } => Asked::Learn,
            HostOp::Forget { .. } => Asked::Forget,
            HostOp::Lisp { agent, text } => Asked::Lisp(format!("{agent}: {text}")),
            HostOp::SaveBlock { agent, label, .. } => Asked::Save(agent.clone(), label.clone()),
            HostOp::UndoBlock { agent, .. } => Asked::Undo(agent.clone()),
            HostOp::PlanCommand { .. } => Asked::Plan,
            HostOp::RunCommand { command, .. } => Asked::Ran(command.clone()),
            _ => Asked::Words,
        }
    }

    /// What to read again once the answer is in: a list the op changed.
    fn then(&self) -> Option<HostOp> {
        match self {
            Asked::Revoke => Some(HostOp::Rules),
            Asked::Forget => Some(HostOp::Learned),
            Asked::Undo(agent) => Some(HostOp::Blocks {
                agent: agent.clone(),
            }),
            _ => None,
        }
    }

    /// The console's replies to `outcome`.
    fn replies(
        &self,
        outcome: Result<Answer, String>,
        wall: partner_core::clock::Millis,
    ) -> Vec<Reply> {
        match outcome {
            Ok(answer) => self.answered(answer, wall),
            Err(why) => vec![self.refused(why)],
        }
    }

    /// The reply when the host could not do it, or failed doing it.
    fn refused(&self, why: String) -> Reply {
        match self {
            Asked::Decision(id) => Reply::Decided {
                id: id.clone(),
                outcome: Err(why),
            },
            Asked::OlderTrace(filter, before) => {
                Reply::OlderTraceFailed(filter.clone(), *before, why)
            }
            Asked::Search(query) => Reply::Hits {
                query: query.clone(),
                found: Err(why),
            },
            Asked::Learn | Asked::Forget => Reply::Learned(Err(why)),
            Asked::Lisp(title) => Reply::Lisp(LispView::error(title.clone(), why)),
            Asked::Save(agent, label) => Reply::Saved {
                agent: agent.clone(),
                label: label.clone(),
                outcome: SaveOutcome::Failed(why),
            },
            Asked::Undo(_) => Reply::Notice(format!("not undone: {why}")),
            Asked::Revoke => Reply::Notice(why),
            Asked::Ran(command) => Reply::CommandRan(OutputView::ended(command, Err(why))),
            Asked::Status => Reply::Failed(format!("could not read the agents' state: {why}")),
            _ => Reply::Failed(why),
        }
    }

    /// The replies to an answer: its data read back as the console's own.
    fn answered(&self, answer: Answer, wall: partner_core::clock::Millis) -> Vec<Reply> {
        let Answer { message, data } = answer;
        let read = match self {
            Asked::Status => status(data, wall),
            Asked::Queue => views::decode::<Queue>(data, "queue").map(|q| {
                let mut replies = vec![Reply::Pending(q.requests, q.previews)];
                if q.left_out > 0 {
                    replies.push(Reply::Notice(format!(
                        "{} newer requests did not fit one answer; they show once these are decided",
                        q.left_out
                    )));
                }
                replies
            }),
            Asked::Trace => views::decode::<TracePage>(data, "trace")
                .map(|p| vec![Reply::Trace(p.records, p.next, p.restart)]),
            Asked::OlderTrace(filter, before) => {
                return vec![match views::decode::<OlderPage>(data, "older trace") {
                    Ok(page) => Reply::OlderTrace(filter.clone(), *before, page),
                    Err(why) => Reply::OlderTraceFailed(filter.clone(), *before, why),
                }];
            }
            Asked::Blocks(agent) => listed::<Block>(data, &message, "blocks", |items| {
                Reply::Blocks(agent.clone(), items)
            }),
            Asked::History(agent, label) => {
                listed::<BlockVersion>(data, &message, "history", |items| {
                    Reply::History(agent.clone(), label.clone(), items)
                })
            }
            Asked::Search(query) => {
                let found = views::decode::<Found>(data, "search").map(|f| (f.hits, f.note));
                return vec![Reply::Hits {
                    query: query.clone(),
                    found,
                }];
            }
            Asked::Index => views::decode::<Option<IndexStatus>>(data, "index")
                .map(|i| vec![Reply::Index(i)]),
            Asked::Rules => listed::<StandingRule>(data, &message, "standing rules", Reply::Rules),
            Asked::Learned => {
                listed::<LearnedRule>(data, &message, "learned phrasings", Reply::LearnedRules)
            }
            Asked::Learn | Asked::Forget => Ok(vec![Reply::Learned(Ok(message))]),
            Asked::Lisp(title) => Ok(vec![Reply::Lisp(
                match views::decode::<Evaluated>(data, "result") {
                    Ok(evaluated) => LispView::of(evaluated),
                    Err(why) => LispView::error(title.clone(), why),
                },
            )]),
            Asked::Save(agent, label) => Ok(vec![Reply::Saved {
                agent: agent.clone(),
                label: label.clone(),
                outcome: views::decode::<SaveOutcome>(data, "save")
                    .unwrap_or_else(SaveOutcome::Failed),
            }]),
            Asked::Plan => views::decode::<CommandPlan>(data, "plan")
                .map(|plan| vec![Reply::CommandPlan(plan)]),
            Asked::Ran(command) => {
                let report = views::decode::<partner_protocol::report::ActionReport>(data, "report");
                return vec![Reply::CommandRan(OutputView::ended(
                    command,
                    report.as_ref().map_err(Clone::clone),
                ))];
            }
            Asked::Decision(id) => Ok(vec![Reply::Decided {
                id: id.clone(),
                outcome: Ok(message),
            }]),
            Asked::Run(agent) => Ok(vec![Reply::Notice(format!(
                "as {agent}: {}",
                message.replace('\n', "; ")
            ))]),
            Asked::Revoke | Asked::Undo(_) | Asked::Words => Ok(vec![Reply::Notice(message)]),
        };
        read.unwrap_or_else(|why| vec![self.refused(why)])
    }
}

/// A list read back as the console's reply; a cut list also tells the
/// partner, in the host's words, how much did not fit.
fn listed<T: serde::de::DeserializeOwned>(
    data: Option<serde_json::Value>,
    message: &str,
    what: &str,
    into: impl FnOnce(Vec<T>) -> Reply,
) -> Result<Vec<Reply>, String> {
    let list: Listed<T> = views::decode(data, what)?;
    let mut replies = vec![into(list.items)];
    if list.left_out > 0 {
        replies.push(Reply::Notice(message.to_string()));
    }
    Ok(replies)
}

/// The agents' rows from a status, their next pulse in wall time.
fn status(
    data: Option<serde_json::Value>,
    wall: partner_core::clock::Millis,
) -> Result<Vec<Reply>, String> {
    let status: partner_protocol::Status = views::decode(data, "status")?;
    let rows = status
        .agents
        .into_iter()
        .map(|a| AgentLine {
            name: a.name,
            state: a.state,
            next_pulse_at: a
                .next_pulse_secs
                .map(|s| partner_core::clock::after(wall, std::time::Duration::from_secs(s))),
            host: a.host,
        })
        .collect();
    Ok(vec![Reply::Agents(rows)])
}
