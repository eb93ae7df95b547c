//! The console against a fake host: no database, no runtime, no terminal.
//! What the console shows comes only from the host's typed answers, and
//! everything it asks — reads of the queue and memory included — goes to
//! the host as the protocol's operations.

use crate::support::console::{request, scene};
use crate::support::driving::{after_window, key, screen};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::KeyCode;
use partner::console::ConsoleBackend;
use partner::policy::Authority;
use partner::protocol::host::Pending;
use partner::protocol::views::{Previews, Queue};
use partner::protocol::{Answer, Connection, Event, Host, Op as HostOp};
use partner::tui::app::Command;
use partner::tui::backend::{Backend, BackendOp, Reply};
use tokio::sync::{broadcast, mpsc};

/// A host that answers from a script and keeps every operation it was sent.
struct ScriptedHost {
    sent: Mutex<Vec<HostOp>>,
    events: broadcast::Sender<Event>,
}

/// An answer carrying `data`.
fn data(message: &str, data: partner::protocol::Returned) -> Result<Answer, String> {
    Ok(Answer {
        message: message.into(),
        data,
    })
}

/// What the script answers to `op`.
fn scripted(op: &HostOp) -> Result<Answer, String> {
    match op {
        HostOp::Queue => {
            let waiting = request(
                "r1",
                "ada",
                "/forget notes.draft !",
                Authority::Partner,
                "forgetting needs the partner",
                5,
            );
            let mut previews = Previews::default();
            previews
                .diffs
                .insert("r1".into(), "--- notes.draft v3\n-a draft to forget".into());
            let queue = Queue {
                requests: vec![waiting],
                previews,
                left_out: 0,
            };
            data("1 waiting", partner::protocol::Returned::Queue(queue))
        }
        HostOp::Blocks { agent } => {
            let block = serde_json::json!({
                "id": 1, "agent": agent, "label": "persona", "kind": "core",
                "description": "who ada is", "value": "a careful archivist",
                "char_limit": 5000, "permission": "read_write", "pinned": false,
                "shared": false, "version": 2, "created_at": 0, "updated_at": 0
            });
            let list = serde_json::json!({ "items": [block], "left_out": 3 });
            data(
                "1 blocks; 3 more did not fit one answer",
                partner::protocol::Returned::Blocks(serde_json::from_value(list).unwrap()),
            )
        }
        HostOp::Decide { request, .. } => Ok(Answer::said(format!("approve once: {request}"))),
        other => Err(format!("not in the script: {other:?}")),
    }
}

impl Host for ScriptedHost {
    fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    fn call(&self, op: HostOp) -> Pending<'_, Result<Answer, String>> {
        let answer = scripted(&op);
        self.sent.lock().unwrap().push(op);
        Box::pin(async move { answer })
    }

    fn connection(&self) -> Connection {
        Connection::Attached
    }
}

/// The next reply `pick` keeps, within ten seconds.
async fn next<T>(
    replies: &mut mpsc::UnboundedReceiver<Reply>,
    mut pick: impl FnMut(Reply) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(kept) = pick(replies.recv().await.expect("the backend answers")) {
                return kept;
            }
        }
    })
    .await
    .expect("an answer within 10 s")
}

#[tokio::test]
async fn the_console_reads_and_decides_through_its_host_alone() {
    let host = Arc::new(ScriptedHost {
        sent: Mutex::new(Vec::new()),
        events: broadcast::channel(8).0,
    });
    let (tx, mut replies) = mpsc::unbounded_channel();
    let verbs = Arc::new(partner::dialect::VerbTable::builtin());
    let backend = ConsoleBackend::new(host.clone(), verbs, tx);
    let mut app = scene("dark");
    app.size = (180, 48);

    // The queue, as the host answered it, is what the console shows.
    backend.send(BackendOp::Host(HostOp::Queue));
    let queue = next(&mut replies, |r| {
        matches!(r, Reply::Pending(..)).then_some(r)
    })
    .await;
    app.on_reply(queue);
    assert_eq!(app.queue.selected.as_deref(), Some("r1"));
    let shown = screen(&mut app, 180, 48);
    assert!(shown.contains("/forget notes.draft"), "{shown}");

    // A decision goes to the host as the protocol's, and its answer comes back.
    key(&mut app, KeyCode::Char('a'));
    let decided: Vec<HostOp> = after_window(&mut app)
        .into_iter()
        .filter_map(|c| match c {
            Command::Op(BackendOp::Host(op @ HostOp::Decide { .. })) => Some(op),
            _ => None,
        })
        .collect();
    assert_eq!(decided.len(), 1, "{decided:?}");
    backend.send(BackendOp::Host(decided[0].clone()));
    let outcome = next(&mut replies, |r| match r {
        Reply::Decided { id, outcome } if id == "r1" => Some(outcome),
        _ => None,
    })
    .await;
    assert_eq!(outcome, Ok("approve once: r1".to_string()));

    // Memory too; a list cut to fit is said to be cut, not shown as whole.
    backend.send(BackendOp::Host(HostOp::Blocks {
        agent: "ada".into(),
    }));
    let labels = next(&mut replies, |r| match r {
        Reply::Blocks(agent, list) if agent == "ada" => {
            Some(list.into_iter().map(|b| b.label).collect::<Vec<_>>())
        }
        _ => None,
    })
    .await;
    assert_eq!(labels, vec!["persona".to_string()]);
    let notice = next(&mut replies, |r| match r {
        Reply::Notice(n) => Some(n),
        _ => None,
    })
    .await;
    assert!(notice.contains("3 more did not fit"), "{notice}");

    // What the script does not know is a failure the partner reads.
    backend.send(BackendOp::Host(HostOp::Rules));
    let why = next(&mut replies, |r| match r {
        Reply::Failed(why) => Some(why),
        _ => None,
    })
    .await;
    assert!(why.contains("not in the script"), "{why}");

    let sent = host.sent.lock().unwrap().clone();
    assert!(matches!(sent[0], HostOp::Queue), "{sent:?}");
    assert!(matches!(&sent[1], HostOp::Decide { request, .. } if request == "r1"));
    assert!(matches!(&sent[2], HostOp::Blocks { agent } if agent == "ada"));
    assert!(matches!(sent[3], HostOp::Rules));
}
