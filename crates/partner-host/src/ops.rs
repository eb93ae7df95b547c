//! What each operation of the protocol does in the daemon: runtime
//! commands through its handle, the partner's edits through the executor
//! (on the blocking pool), each answered with a reply.

use std::sync::Arc;

use super::Daemon;
use partner_policy::Authority;
use partner_protocol::{AgentRow, DecisionSpec, Op, ServerMsg, Snapshot, Status};

/// The reply to request `id`.
fn reply(id: u64, outcome: Result<String, String>) -> ServerMsg {
    match outcome {
        Ok(message) => ServerMsg::Reply {
            id,
            ok: true,
            message,
            data: None,
        },
        Err(message) => ServerMsg::Reply {
            id,
            ok: false,
            message,
            data: None,
        },
    }
}

/// Runs blocking executor work off the async threads.
async fn blocking<T: Send + 'static>(
    daemon: &Arc<Daemon>,
    work: impl FnOnce(&partner_engine::exec::Executor) -> T + Send + 'static,
) -> Result<T, String> {
    let executor = Arc::clone(daemon.handle.executor());
    tokio::task::spawn_blocking(move || work(&executor))
        .await
        .map_err(|e| format!("the work failed: {e}"))
}

/// The waiting requests, read on the blocking pool.
async fn waiting(daemon: &Arc<Daemon>) -> Vec<partner_policy::PendingRequest> {
    blocking(daemon, |ex| {
        partner_policy::pending::waiting(&ex.store().read()).unwrap_or_default()
    })
    .await
    .unwrap_or_default()
}

/// The daemon and every agent now, with `pending` requests waiting.
async fn status_with(daemon: &Arc<Daemon>, pending: usize) -> Status {
    let agents = daemon
        .handle
        .status()
        .await
        .into_iter()
        .map(|s| AgentRow {
            name: s.name,
            state: s.state,
            next_pulse_secs: s.next_pulse.map(|d| d.as_secs()),
            waiting: s.waiting,
        })
        .collect();
    Status {
        pid: std::process::id(),
        name: daemon.name.clone(),
        db: daemon.db.display().to_string(),
        socket: daemon.socket.display().to_string(),
        uptime_secs: daemon.started.elapsed().as_secs(),
        agents,
        pending,
        clients: daemon.clients.load(std::sync::atomic::Ordering::SeqCst),
    }
}

/// The daemon and every agent now.
pub async fn status(daemon: &Arc<Daemon>) -> Status {
    let pending = waiting(daemon).await.len();
    status_with(daemon, pending).await
}

/// Everything a client needs before the events that follow `recent`.
pub async fn snapshot(daemon: &Arc<Daemon>, recent: Vec<partner_protocol::Sequenced>) -> Snapshot {
    let pending = waiting(daemon).await;
    Snapshot {
        status: status_with(daemon, pending.len()).await,
        pending,
        recent,
        left_out: 0,
        pending_left_out: 0,
    }
}

/// Does what request `id` asks (all but hello and subscribe) and answers.
pub async fn run(daemon: &Arc<Daemon>, id: u64, op: Op) -> ServerMsg {
    let handle = &daemon.handle;
    // An op that names an agent runs only for an agent of the
    // constellation: never under a name that would store what nobody runs.
    if let Some(agent) = op.agent()
        && !daemon.agents.iter().any(|a| a == agent)
    {
        return reply(
            id,
            Err(format!(
                "there is no agent {agent}; the agents are {}",
                daemon.agents.join(", ")
            )),
        );
    }
    let outcome = match op {
        Op::Hello { .. } => Err("hello comes once, first".into()),
        Op::Subscribe => Err("subscribe is answered with a snapshot".into()),
        Op::Status => {
            let status = status(daemon).await;
            return ServerMsg::Reply {
                id,
                ok: true,
                message: format!("{} agents, {} pending", status.agents.len(), status.pending),
                data: serde_json::to_value(&status).ok(),
            };
        }
        Op::Decide { request, decision } => match decision {
            DecisionSpec::Edited { text } => {
                let sync = handle.clone();
                blocking(daemon, move |ex| {
                    let done = ex
                        .approve_edited(&request, &text, &Authority::Partner)
                        .map(|report| {
                            format!("approved the edited {request}: {}", report.summary())
                        })
                        .map_err(|e| e.to_string());
                    sync.sync();
                    done
                })
                .await
                .and_then(|r| r)
            }
            other => match other.decision() {
                Some(decision) => {
                    let name = decision.name().replace('_', " ");
                    handle
                        .decide(&request, decision)
                        .await
                        .map(|()| format!("{name}: {request}"))
                }
                None => Err("not a decision".into()),
            },
        },
        Op::Event { seq, offset } => {
            return match daemon.hub.event(seq) {
                Some(event) => {
                    let json = serde_json::to_string(&event.event).unwrap_or_default();
                    let (piece, next) = partner_protocol::fit::chunk(&json, offset);
                    ServerMsg::Reply {
                        id,
                        ok: true,
                        message: format!("event {seq}: {} bytes", json.len()),
                        data: Some(serde_json::json!({
                            "json": piece,
                            "next": next,
                            "total": json.len(),
                        })),
                    }
                }
                None => reply(
                    id,
                    Err(format!(
                        "event {seq} is no longer held; only recent events are"
                    )),
                ),
            };
        }
        Op::Sync => {
            handle.sync();
            Ok("asked the runtime to look at the database now".into())
        }
        // Each answers once it is done: a message once its row is
        // committed, a pulse setting or a halt once it is stored.
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
            .map(|()| format!("{agent} pulses every {}s", seconds.as_secs())),
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
        Op::SetBlock { block } => blocking(daemon, move |ex| {
            ex.partner_set_block(block)
                .map(|report| report.text)
                .map_err(|e| e.to_string())
        })
        .await
        .and_then(|r| r),
        Op::UndoBlock { agent, label } => blocking(daemon, move |ex| {
            ex.partner_undo(&agent, &label)
                .map(|report| report.text)
                .map_err(|e| e.to_string())
        })
        .await
        .and_then(|r| r),
        Op::Run { agent, text } => {
            let sync = handle.clone();
            blocking(daemon, move |ex| {
                let lines = ex.run_line_as(&agent, &text);
                // Requests it made are announced now.
                sync.sync();
                lines.join("\n")
            })
            .await
        }
    };
    reply(id, outcome)
}
