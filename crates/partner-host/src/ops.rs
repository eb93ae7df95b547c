//! What each operation of the protocol does in the daemon: runtime
//! commands through its handle, the partner's edits through the executor
//! (on the blocking pool), each answered with a reply.

use std::sync::Arc;

use super::Served;
use partner_policy::{Authority, Decision};
use partner_protocol::report::ActionStatus;
use partner_protocol::{AgentRow, Answer, Op, Returned, ServerMsg, Snapshot, Status};

/// The reply to request `id`.
fn reply(id: u64, outcome: Result<Answer, String>) -> ServerMsg {
    match outcome {
        Ok(Answer { message, data }) => ServerMsg::Reply {
            id,
            ok: true,
            message,
            data,
        },
        Err(message) => ServerMsg::Reply {
            id,
            ok: false,
            message,
            data: Returned::Nothing,
        },
    }
}

/// Runs blocking executor work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    served: &Served,
    work: impl FnOnce(&partner_engine::exec::Executor) -> T + Send + 'static,
) -> Result<T, String> {
    let executor = Arc::clone(served.handle.executor());
    // A failure inside partner is contained (the console's screen is not
    // written over) and answered as one.
    tokio::task::spawn_blocking(move || partner_core::isolate::contain(|| work(&executor)))
        .await
        .map_err(|e| format!("the work failed: {e}"))?
        .map_err(|panic| format!("partner failed inside ({panic}); please report it"))
}

/// The waiting requests, read on the blocking pool.
async fn waiting(served: &Served) -> Vec<partner_policy::PendingRequest> {
    blocking(served, |ex| {
        ex.store().read(|tx| tx.waiting()).unwrap_or_default()
    })
    .await
    .unwrap_or_default()
}

/// The daemon and every agent now, with `pending` requests waiting.
async fn status_with(served: &Served, pending: usize) -> Status {
    let agents = served
        .handle
        .status()
        .await
        .into_iter()
        .map(|s| AgentRow {
            name: s.name,
            state: s.state,
            next_pulse_secs: s.next_pulse.map(|d| d.as_secs()),
            waiting: s.waiting,
            host: s.host,
        })
        .collect();
    Status {
        pid: std::process::id(),
        name: served.name.clone(),
        db: served.db.display().to_string(),
        socket: served
            .socket
            .as_ref()
            .map(|s| s.display().to_string())
            .unwrap_or_default(),
        uptime_secs: served.started.elapsed().as_secs(),
        agents,
        pending,
        clients: served.clients.load(std::sync::atomic::Ordering::SeqCst),
    }
}

/// The daemon and every agent now.
pub async fn status(served: &Served) -> Status {
    let pending = waiting(served).await.len();
    status_with(served, pending).await
}

/// Everything a client needs before the events that follow `recent`.
pub async fn snapshot(served: &Served, recent: Vec<partner_protocol::Sequenced>) -> Snapshot {
    let pending = waiting(served).await;
    Snapshot {
        status: status_with(served, pending.len()).await,
        pending,
        recent,
        left_out: 0,
        pending_left_out: 0,
    }
}

/// Does what request `id` asks (all but hello and subscribe) and answers.
pub async fn run(served: &Served, id: u64, op: Op, by: &Authority) -> ServerMsg {
    reply(id, answer(served, op, by).await)
}

/// Words alone, for the operations that return no data.
fn said(outcome: Result<String, String>) -> Result<Answer, String> {
    outcome.map(Answer::said)
}

/// Does what `op` asks (all but hello and subscribe): the one place each
/// operation of the protocol is carried out, for a daemon's clients and
/// for a console in the constellation's own process alike.
/// `by` is the partner the client showed the token of (or the unnamed
/// local partner): a revoked partner's connection is refused from then on.
pub async fn answer(served: &Served, op: Op, by: &Authority) -> Result<Answer, String> {
    let handle = &served.handle;
    if let Authority::Named(name) = by {
        let name = name.clone();
        let active = blocking(served, move |ex| ex.store().partners().is_active(&name))
            .await?
            .map_err(|e| format!("cannot check the partner: {e}"))?;
        if !active {
            return Err(format!(
                "{by} was revoked; this connection may do nothing more"
            ));
        }
    }
    // An op that names an agent runs only for an agent of the
    // constellation: never under a name that would store what nobody runs.
    if let Some(agent) = op.agent()
        && !served.agents.iter().any(|a| a == agent)
    {
        return Err(format!(
            "there is no agent {agent}; the agents are {}",
            served.agents.join(", ")
        ));
    }
    match op {
        Op::Hello { .. } => Err("hello comes once, first".into()),
        Op::Subscribe => Err("subscribe is answered with a snapshot".into()),
        Op::Status => {
            let status = status(served).await;
            Ok(Answer {
                message: format!("{} agents, {} pending", status.agents.len(), status.pending),
                data: Returned::Status(status),
            })
        }
        Op::Decide { request, decision } => said(decide(served, request, decision, by).await),
        Op::Event { seq, offset } => event_piece(served, seq, offset),
        Op::Sync => {
            handle.sync();
            said(Ok("asked the runtime to look at the database now".into()))
        }
        edit @ (Op::SetBlock { .. } | Op::UndoBlock { .. }) => {
            said(partner_edit(served, edit, by.clone()).await)
        }
        Op::Run { agent, text } => {
            let sync = handle.clone();
            said(
                blocking(served, move |ex| {
                    let lines = ex.run_line_as(&agent, &text);
                    // Requests it made are announced now.
                    sync.sync();
                    lines.join("\n")
                })
                .await,
            )
        }
        Op::RunCommand { command, run } => super::own_command::run(served, command, run).await,
        Op::StopCommand { run } => super::own_command::stop(served, run),
        read @ (Op::Queue
        | Op::Trace { .. }
        | Op::OlderTrace { .. }
        | Op::Blocks { .. }
        | Op::History { .. }
        | Op::Search { .. }
        | Op::Index
        | Op::Rules
        | Op::RevokeRule { .. }
        | Op::Learned
        | Op::Learn { .. }
        | Op::Forget { .. }
        | Op::Lisp { .. }
        | Op::SaveBlock { .. }
        | Op::PlanCommand { .. }
        | Op::Verbs) => super::reads::answer(served, read, by).await,
        control => said(control_agent(served, control).await),
    }
}

/// A partner's edit of a block, recorded as `by`'s.
async fn partner_edit(served: &Served, op: Op, by: Authority) -> Result<String, String> {
    blocking(served, move |ex| {
        let report = match op {
            Op::SetBlock { block } => ex.partner_set_block(block, &by),
            Op::UndoBlock { agent, label } => ex.partner_undo(&agent, &label, &by),
            other => return Err(format!("not an edit of a block: {other:?}")),
        };
        report.map(|r| r.text).map_err(|e| e.to_string())
    })
    .await
    .and_then(|r| r)
}

/// A decision as the partner, through the runtime (an edit too: it runs
/// the edited line in the request's place).
async fn decide(
    served: &Served,
    request: String,
    decision: Decision,
    by: &Authority,
) -> Result<String, String> {
    let name = decision.name().replace('_', " ");
    let edited = matches!(decision, Decision::ApproveEdited(_));
    let report = served.handle.decide(&request, decision, by.clone()).await?;
    Ok(if report.status == ActionStatus::Pending {
        // A request that needs another partner's approval still waits:
        // the answer says so, not that it was approved.
        report.text
    } else if edited {
        format!("approved the edited {request}: {}", report.summary())
    } else {
        format!("{name}: {request}")
    })
}

/// A piece of recent event `seq`, whole, from `offset`.
fn event_piece(served: &Served, seq: u64, offset: usize) -> Result<Answer, String> {
    let event = served
        .hub
        .event(seq)
        .ok_or_else(|| format!("event {seq} is no longer held; only recent events are"))?;
    let json = serde_json::to_string(&event.event).unwrap_or_default();
    let (piece, next) = partner_protocol::fit::chunk(&json, offset);
    Ok(Answer {
        message: format!("event {seq}: {} bytes", json.len()),
        data: Returned::EventPiece {
            json: piece,
            next,
            total: json.len(),
        },
    })
}

/// A message to an agent, or a pulse, a pulse setting, a halt or a resume:
/// each answers once it is done (a message once its row is committed, a
/// setting or a halt once it is stored).
async fn control_agent(served: &Served, op: Op) -> Result<String, String> {
    let handle = &served.handle;
    match op {
        Op::Message { agent, text } => handle
            .deliver(&agent, &text)
            .await
            .map(|()| format!("sent to {agent}")),
        Op::Pulse { agent } => handle
            .pulse_now(&agent)
            .committed()
            .await
            .map(|()| format!("pulsed {agent}")),
        Op::SetPulse { agent, seconds } => handle
            .set_pulse(&agent, seconds.get())
            .committed()
            .await
            .map(|()| match seconds.as_secs() {
                0 => format!("{agent}: pulse off"),
                n => format!("{agent} pulses every {n}s"),
            }),
        Op::Halt { agent, reason } => handle
            .halt(&agent, &reason)
            .committed()
            .await
            .map(|()| format!("halted {agent}")),
        Op::Resume { agent } => handle
            .resume(&agent)
            .committed()
            .await
            .map(|()| format!("resumed {agent}")),
        other => Err(format!("not an operation on an agent: {other:?}")),
    }
}
