//! [`ConsoleBackend`]: the console's ops carried out. Everything of the
//! constellation — its state, the queue, the trace, memory, decisions,
//! edits, messages, the partner's own commands — is the protocol's
//! operation sent to a [`Host`] (the constellation in this process, or a
//! daemon's over its socket: the same operations either way), its answer
//! turned into the console's reply. Only a trace the partner opens for
//! replay is read here. Nothing runs on the console's task.

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};

use partner_core::clock::{Clock, Millis};
use partner_dialect::VerbTable;
use partner_protocol::views::{Listed, Queue, SaveOutcome};
use partner_protocol::{Answer, Connection, Event, Host, Op as HostOp, Returned};
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
                let asked = op.clone();
                tokio::spawn(async move {
                    // A failure inside partner is answered, so nothing
                    // stays "waiting for the answer…".
                    let said = tokio::spawn(async move { ask(host.as_ref(), op).await })
                        .await
                        .unwrap_or_else(|e| {
                            vec![refused(
                                &asked,
                                format!("partner failed inside ({e}); please report it"),
                            )]
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
    let wall = partner_core::clock::SystemClock.now_ms();
    let again = then(&op);
    let outcome = host.call(op.clone()).await;
    let mut said = replies(&op, outcome, wall);
    if let Some(again) = again {
        let outcome = host.call(again.clone()).await;
        said.extend(replies(&again, outcome, wall));
    }
    said
}

/// The console's replies to `op`'s outcome.
fn replies(op: &HostOp, outcome: Result<Answer, String>, wall: Millis) -> Vec<Reply> {
    match outcome {
        Ok(answer) => answered(op, answer, wall),
        Err(why) => vec![refused(op, why)],
    }
}

/// What to read again once the answer is in: a list the op changed.
fn then(op: &HostOp) -> Option<HostOp> {
    match op {
        HostOp::RevokeRule { .. } => Some(HostOp::Rules),
        HostOp::Forget { .. } => Some(HostOp::Learned),
        HostOp::UndoBlock { agent, .. } => Some(HostOp::Blocks {
            agent: agent.clone(),
        }),
        _ => None,
    }
}

/// The reply when the host could not do `op`, or failed doing it.
fn refused(op: &HostOp, why: String) -> Reply {
    match op {
        HostOp::Decide { request, .. } => Reply::Decided {
            id: request.clone(),
            outcome: Err(why),
        },
        HostOp::OlderTrace { filter, before } => {
            Reply::OlderTraceFailed(filter.clone(), *before, why)
        }
        HostOp::Search { query } => Reply::Hits {
            query: query.clone(),
            found: Err(why),
        },
        HostOp::Learn { .. } | HostOp::Forget { .. } => Reply::Learned(Err(why)),
        HostOp::Lisp { agent, text } => {
            Reply::Lisp(LispView::error(format!("{agent}: {text}"), why))
        }
        HostOp::SaveBlock { agent, label, .. } => Reply::Saved {
            agent: agent.clone(),
            label: label.clone(),
            outcome: SaveOutcome::Failed(why),
        },
        HostOp::UndoBlock { .. } => Reply::Notice(format!("not undone: {why}")),
        HostOp::RevokeRule { .. } => Reply::Notice(why),
        HostOp::RunCommand { command, .. } => {
            Reply::CommandRan(OutputView::ended(command, Err(why)))
        }
        HostOp::Status => Reply::Failed(format!("could not read the agents' state: {why}")),
        _ => Reply::Failed(why),
    }
}

/// The replies to `op`'s answer: its typed data as the console's own. An
/// answer of another kind than the op's is refused as such.
fn answered(op: &HostOp, answer: Answer, wall: Millis) -> Vec<Reply> {
    let Answer { message, data } = answer;
    match (op, data) {
        (HostOp::Status, Returned::Status(status)) => agents(status, wall),
        (HostOp::Queue, Returned::Queue(q)) => queue(q),
        (HostOp::Trace { .. }, Returned::Trace(p)) => {
            vec![Reply::Trace(p.records, p.next, p.restart)]
        }
        (HostOp::OlderTrace { filter, before }, Returned::OlderTrace(page)) => {
            vec![Reply::OlderTrace(filter.clone(), *before, page)]
        }
        (HostOp::Blocks { agent }, Returned::Blocks(list)) => {
            listed(list, &message, |items| Reply::Blocks(agent.clone(), items))
        }
        (HostOp::History { agent, label }, Returned::History(list)) => {
            listed(list, &message, |items| {
                Reply::History(agent.clone(), label.clone(), items)
            })
        }
        (HostOp::Search { query }, Returned::Found(found)) => vec![Reply::Hits {
            query: query.clone(),
            found: Ok((found.hits, found.note)),
        }],
        (HostOp::Index, Returned::Index(index)) => vec![Reply::Index(index)],
        (HostOp::Rules, Returned::Rules(list)) => listed(list, &message, Reply::Rules),
        (HostOp::Learned, Returned::Learned(list)) => listed(list, &message, Reply::LearnedRules),
        (HostOp::Lisp { .. }, Returned::Evaluated(evaluated)) => {
            vec![Reply::Lisp(LispView::of(evaluated))]
        }
        (HostOp::SaveBlock { agent, label, .. }, Returned::Saved(outcome)) => vec![Reply::Saved {
            agent: agent.clone(),
            label: label.clone(),
            outcome,
        }],
        (HostOp::PlanCommand { .. }, Returned::Plan(plan)) => vec![Reply::CommandPlan(*plan)],
        (HostOp::RunCommand { command, .. }, Returned::Report(report)) => {
            vec![Reply::CommandRan(OutputView::ended(command, Ok(&report)))]
        }
        (HostOp::Decide { request, .. }, Returned::Nothing) => vec![Reply::Decided {
            id: request.clone(),
            outcome: Ok(message),
        }],
        (HostOp::Run { agent, .. }, Returned::Nothing) => vec![Reply::Notice(format!(
            "as {agent}: {}",
            message.replace('\n', "; ")
        ))],
        (HostOp::Learn { .. } | HostOp::Forget { .. }, Returned::Nothing) => {
            vec![Reply::Learned(Ok(message))]
        }
        (op, Returned::Nothing) if !op.returns_data() => vec![Reply::Notice(message)],
        (op, other) => vec![refused(
            op,
            format!(
                "the host answered with {} where this asks for its own",
                other.kind()
            ),
        )],
    }
}

/// The queue's reply; a cut queue also tells the partner.
fn queue(q: Queue) -> Vec<Reply> {
    let mut replies = vec![Reply::Pending(q.requests, q.previews)];
    if q.left_out > 0 {
        replies.push(Reply::Notice(format!(
            "{} newer requests did not fit one answer; they show once these are decided",
            q.left_out
        )));
    }
    replies
}

/// A list as the console's reply; a cut list also tells the partner, in
/// the host's words, how much did not fit.
fn listed<T>(list: Listed<T>, message: &str, into: impl FnOnce(Vec<T>) -> Reply) -> Vec<Reply> {
    let mut replies = vec![into(list.items)];
    if list.left_out > 0 {
        replies.push(Reply::Notice(message.to_string()));
    }
    replies
}

/// The agents' rows from a status, their next pulse in wall time.
fn agents(status: partner_protocol::Status, wall: Millis) -> Vec<Reply> {
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
    vec![Reply::Agents(rows)]
}
