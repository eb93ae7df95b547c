//! One code path for every console: the console's backend sends the
//! protocol's operations to a `Host` — the constellation in its own
//! process (`InProcess`) or a daemon over its socket (`RemoteHost`) — and
//! both answer with the same words. A fake host shows what the console
//! sends, with no runtime behind it.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use partner::console::ConsoleBackend;

use partner::policy::Decision;
use partner::protocol::host::Pending;
use partner::protocol::{Answer, Connection, Event, Host, Op as HostOp};
use partner::tui::backend::{Backend, BackendOp, Reply};
use tokio::sync::{broadcast, mpsc};

/// What a console sees when it decides the waiting request, halts an
/// agent that does not exist and runs a line as one that does.
#[derive(Debug, PartialEq)]
struct Seen {
    decided: Result<String, String>,
    halted_nobody: String,
    ran: String,
    archived: bool,
    blocks: Vec<String>,
    traced: Vec<String>,
}

/// Waits for the next reply `pick` keeps.
async fn reply<T>(
    replies: &mut mpsc::UnboundedReceiver<Reply>,
    mut pick: impl FnMut(Reply) -> Option<T>,
) -> T {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let r = replies.recv().await.expect("the backend answers");
            if let Some(kept) = pick(r) {
                return kept;
            }
        }
    })
    .await
    .expect("an answer within 30 s")
}

/// Drives a console's backend over `host` through a decision and two
/// commands to the runtime.
async fn drive(host: Arc<dyn Host>) -> Seen {
    let (tx, mut replies) = mpsc::unbounded_channel();
    let backend = ConsoleBackend::new(host, builtin_verbs(), tx);
    let _events = backend.events();
    // The agent's first pulse asks; the request waits for the partner.
    let started = std::time::Instant::now();
    let id = loop {
        backend.send(BackendOp::Host(partner::protocol::Op::Queue));
        let waiting = reply(&mut replies, |r| match r {
            Reply::Pending(list, _) => Some(list),
            _ => None,
        })
        .await;
        if let Some(first) = waiting.first() {
            break first.id.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no request came"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    backend.send(BackendOp::Host(HostOp::Decide {
        request: id.clone(),
        decision: Decision::ApproveOnce,
    }));
    let decided = reply(&mut replies, |r| match r {
        Reply::Decided { id: got, outcome } if got == id => Some(outcome),
        _ => None,
    })
    .await;
    backend.send(BackendOp::Host(
        partner::tui::command::AgentControl::Halt.op("nobody".into()),
    ));
    let halted_nobody = reply(&mut replies, |r| match r {
        Reply::Failed(why) => Some(why),
        _ => None,
    })
    .await;
    backend.send(BackendOp::Host(HostOp::Run {
        agent: "ada".into(),
        text: "/recall insert \"from the partner\"".into(),
    }));
    let ran = reply(&mut replies, |r| match r {
        Reply::Notice(n) if n.starts_with("as ada") => Some(n),
        _ => None,
    })
    .await;
    // The approved action ran: the archival entry it inserts is found,
    // through the console's own search.
    let started = std::time::Instant::now();
    let archived = loop {
        backend.send(BackendOp::Host(HostOp::Search {
            query: "friday".into(),
        }));
        let found = reply(&mut replies, |r| match r {
            Reply::Hits { found, .. } => Some(found.map(|(hits, _)| !hits.is_empty())),
            _ => None,
        })
        .await
        .unwrap_or(false);
        if found || started.elapsed() > Duration::from_secs(30) {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Memory and the trace read as the console reads them.
    backend.send(BackendOp::Host(HostOp::Blocks {
        agent: "ada".into(),
    }));
    let blocks = reply(&mut replies, |r| match r {
        Reply::Blocks(agent, list) if agent == "ada" => {
            Some(list.into_iter().map(|b| b.label).collect::<Vec<_>>())
        }
        _ => None,
    })
    .await;
    backend.send(BackendOp::Host(HostOp::Trace { after: 0 }));
    let traced = reply(&mut replies, |r| match r {
        Reply::Trace(records, ..) => Some(
            records
                .into_iter()
                .map(|r| format!("{} {}", r.agent, r.verb))
                .collect::<Vec<_>>(),
        ),
        _ => None,
    })
    .await;
    Seen {
        decided: decided.map(|words| words.replace(&id, "ID")),
        halted_nobody,
        ran,
        archived,
        blocks,
        traced,
    }
}

/// The built-in verbs, for replays the console opens.
fn builtin_verbs() -> Arc<partner::dialect::VerbTable> {
    Arc::new(partner::dialect::VerbTable::builtin())
}

#[test]
fn an_embedded_and_an_attached_console_run_the_same_operations_with_the_same_answers() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Embedded: the runtime in this process, served by `InProcess`.
    let here = tempfile::tempdir().unwrap();
    crate::daemon::constellation(here.path());
    let embedded = runtime.block_on(async {
        let config =
            partner::runtime::ConstellationConfig::load(&here.path().join("partner.toml")).unwrap();
        let db = here.path().join("c.db");
        let executor = partner::commands::open_constellation(&config, &db).unwrap();
        let (handle, _task) = partner::runtime::start(
            &config,
            executor,
            Arc::new(partner::core::clock::TokioClock::now()),
        );
        let host = Arc::new(partner::host::InProcess::new(handle.clone(), &config, &db));
        assert_eq!(host.connection(), Connection::Embedded);
        let seen = drive(host).await;
        handle.shutdown();
        seen
    });
    // Attached: a daemon in another process, over its socket.
    let there = tempfile::tempdir().unwrap();
    crate::daemon::constellation(there.path());
    let daemon = support::daemon::serve(there.path());
    let attached = runtime.block_on(async {
        let host = partner::host::remote::RemoteHost::connect(&partner::host::remote::Door::local(
            daemon.socket.clone(),
        ))
        .await
        .unwrap();
        assert_eq!(host.connection(), Connection::Attached);
        drive(host).await
    });
    assert!(embedded.decided.is_ok(), "{embedded:?}");
    assert!(embedded.archived, "the approved action ran: {embedded:?}");
    assert!(
        embedded.halted_nobody.contains("there is no agent nobody"),
        "{embedded:?}"
    );
    assert!(embedded.ran.contains("recall"), "{embedded:?}");
    assert!(
        embedded.traced.iter().any(|t| t == "ada recall"),
        "{embedded:?}"
    );
    assert_eq!(embedded, attached);
}

/// A host that answers every operation with `answer` and keeps what it
/// was sent.
struct FakeHost {
    sent: Mutex<Vec<HostOp>>,
    answer: Result<String, String>,
    events: broadcast::Sender<Event>,
    /// It fails inside (a bug) instead of answering.
    panics: bool,
}

impl Host for FakeHost {
    fn events(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    fn call(&self, op: HostOp) -> Pending<'_, Result<Answer, String>> {
        assert!(!self.panics, "a host with a bug");
        self.sent.lock().unwrap().push(op);
        let answer = self.answer.clone().map(Answer::said);
        Box::pin(async move { answer })
    }

    fn connection(&self) -> Connection {
        Connection::Attached
    }
}

fn fake(answer: Result<String, String>) -> Arc<FakeHost> {
    Arc::new(FakeHost {
        sent: Mutex::new(Vec::new()),
        answer,
        events: broadcast::channel(8).0,
        panics: false,
    })
}

#[tokio::test]
async fn the_console_sends_the_protocols_operations_and_says_what_the_host_answered() {
    let host = fake(Ok("approve once: r7".into()));
    let (tx, mut replies) = mpsc::unbounded_channel();
    let backend = ConsoleBackend::new(host.clone(), builtin_verbs(), tx);
    assert_eq!(backend.connection(), Connection::Attached);
    backend.send(BackendOp::Host(HostOp::Decide {
        request: "r7".into(),
        decision: Decision::ApproveFor(Duration::from_secs(600)),
    }));
    let outcome = reply(&mut replies, |r| match r {
        Reply::Decided { id, outcome } if id == "r7" => Some(outcome),
        _ => None,
    })
    .await;
    assert_eq!(outcome, Ok("approve once: r7".into()));
    backend.send(BackendOp::Host(HostOp::Decide {
        request: "r8".into(),
        decision: Decision::ApproveEdited("/recall x".into()),
    }));
    reply(&mut replies, |r| {
        matches!(r, Reply::Decided { .. }).then_some(())
    })
    .await;
    backend.send(BackendOp::Host(HostOp::Message {
        agent: "ada".into(),
        text: "hello".into(),
    }));
    for agent in ["ada", "bo"] {
        let every = partner::tui::command::AgentControl::SetPulse(Duration::from_secs(90));
        backend.send(BackendOp::Host(every.op(agent.into())));
    }
    let started = std::time::Instant::now();
    while host.sent.lock().unwrap().len() < 5 {
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut sent = host.sent.lock().unwrap().clone();
    // The two pulse settings go out concurrently: compare them as a set.
    sent[3..].sort_by_key(|op| format!("{op:?}"));
    let ninety = partner::core::clock::TimeSpan::from_secs(90).unwrap();
    assert_eq!(
        sent,
        vec![
            HostOp::Decide {
                request: "r7".into(),
                decision: Decision::ApproveFor(
                    partner::core::clock::TimeSpan::from_secs(600)
                        .unwrap()
                        .get()
                ),
            },
            HostOp::Decide {
                request: "r8".into(),
                decision: Decision::ApproveEdited("/recall x".into()),
            },
            HostOp::Message {
                agent: "ada".into(),
                text: "hello".into()
            },
            HostOp::SetPulse {
                agent: "ada".into(),
                seconds: ninety
            },
            HostOp::SetPulse {
                agent: "bo".into(),
                seconds: ninety
            },
        ]
    );
}

#[tokio::test]
async fn what_the_host_refuses_reaches_the_partner_instead_of_vanishing() {
    let host = fake(Err("the daemon is not reachable now".into()));
    let (tx, mut replies) = mpsc::unbounded_channel();
    let backend = ConsoleBackend::new(host, builtin_verbs(), tx);
    backend.send(BackendOp::Host(HostOp::Decide {
        request: "r1".into(),
        decision: Decision::Deny(None),
    }));
    let outcome = reply(&mut replies, |r| match r {
        Reply::Decided { outcome, .. } => Some(outcome),
        _ => None,
    })
    .await;
    assert_eq!(outcome, Err("the daemon is not reachable now".into()));
    // A message and a halt nobody received are said to have failed.
    backend.send(BackendOp::Host(HostOp::Message {
        agent: "ada".into(),
        text: "hi".into(),
    }));
    backend.send(BackendOp::Host(
        partner::tui::command::AgentControl::Halt.op("ada".into()),
    ));
    for _ in 0..2 {
        let why = reply(&mut replies, |r| match r {
            Reply::Failed(why) => Some(why),
            _ => None,
        })
        .await;
        assert_eq!(why, "the daemon is not reachable now");
    }
    // The status: none is shown rather than an empty constellation.
    backend.send(BackendOp::Host(partner::protocol::Op::Status));
    let said = reply(&mut replies, |r| match r {
        Reply::Agents(rows) => Some(format!("{} agents", rows.len())),
        Reply::Failed(why) => Some(why),
        _ => None,
    })
    .await;
    assert_eq!(
        said,
        "could not read the agents' state: the daemon is not reachable now"
    );
}

/// A host that answers an op with data of another kind (here, words
/// alone where a queue or a status is asked) is refused as such: the
/// console shows no empty queue or constellation it was not sent.
#[tokio::test]
async fn an_answer_of_the_wrong_kind_is_refused_not_taken_for_nothing() {
    let host = fake(Ok("fine".into()));
    let (tx, mut replies) = mpsc::unbounded_channel();
    let backend = ConsoleBackend::new(host, builtin_verbs(), tx);
    backend.send(BackendOp::Host(HostOp::Status));
    let said = reply(&mut replies, |r| match r {
        Reply::Agents(rows) => Some(format!("{} agents", rows.len())),
        Reply::Failed(why) => Some(why),
        _ => None,
    })
    .await;
    assert_eq!(
        said,
        "could not read the agents' state: the host answered with nothing where this asks for its own"
    );
    backend.send(BackendOp::Host(HostOp::Queue));
    let said = reply(&mut replies, |r| match r {
        Reply::Pending(list, _) => Some(format!("{} waiting", list.len())),
        Reply::Failed(why) => Some(why),
        _ => None,
    })
    .await;
    assert!(said.contains("answered with nothing"), "{said}");
    // Words alone are the answer where words are asked for.
    backend.send(BackendOp::Host(HostOp::Sync));
    let said = reply(&mut replies, |r| match r {
        Reply::Notice(text) | Reply::Failed(text) => Some(text),
        _ => None,
    })
    .await;
    assert_eq!(said, "fine");
}

#[test]
fn the_console_flags_what_the_verbs_handler_flags_whatever_the_verb_is_called() {
    use partner::dialect::Verb;
    use partner::protocol::ActionStatus;
    let executed = |verb: Verb, flagged: bool| Event::ActionExecuted {
        agent: "ada".into(),
        action_id: None,
        verb,
        op: None,
        canonical: "/unsure \"sarcasm?\"".into(),
        status: ActionStatus::Executed,
        result: "done".into(),
        trace_id: None,
        system_error: false,
        flagged,
    };
    let flags = |model: &partner::tui::model::Model| {
        model
            .notifications
            .iter()
            .filter(|n| n.kind == partner::tui::model::NoticeKind::Flag)
            .count()
    };
    let mut model = partner::tui::model::Model::default();
    model.apply(&executed(Verb::Uncertain, false), 0);
    assert_eq!(flags(&model), 0, "a verb's name is not its meaning");
    model.apply(&executed(Verb::Custom("doubt".into()), true), 0);
    assert_eq!(flags(&model), 1);
}

#[tokio::test]
async fn an_operation_that_fails_inside_partner_is_answered_not_left_waiting() {
    let host = Arc::new(FakeHost {
        sent: Mutex::new(Vec::new()),
        answer: Ok(String::new()),
        events: broadcast::channel(8).0,
        panics: true,
    });
    let (tx, mut replies) = mpsc::unbounded_channel();
    let backend = ConsoleBackend::new(host, builtin_verbs(), tx);
    // The decision's own answer says it failed: the queue does not wait.
    backend.send(BackendOp::Host(HostOp::Decide {
        request: "r4".into(),
        decision: Decision::ApproveOnce,
    }));
    let outcome = reply(&mut replies, |r| match r {
        Reply::Decided { id, outcome } if id == "r4" => Some(outcome),
        _ => None,
    })
    .await;
    let why = outcome.unwrap_err();
    assert!(why.contains("partner failed inside"), "{why}");
    // Any other operation is answered with a failure too.
    backend.send(BackendOp::Host(partner::protocol::Op::Status));
    let why = reply(&mut replies, |r| match r {
        Reply::Failed(why) => Some(why),
        _ => None,
    })
    .await;
    assert!(why.contains("could not read the agents' state"), "{why}");
    assert!(why.contains("partner failed inside"), "{why}");
}

#[test]
fn a_trace_larger_than_a_line_reaches_an_attached_console_newest_first() {
    // A trace of more than two megabytes, written before the daemon starts.
    let dir = tempfile::tempdir().unwrap();
    crate::daemon::constellation(dir.path());
    let config =
        partner::runtime::ConstellationConfig::load(&dir.path().join("partner.toml")).unwrap();
    let executor =
        partner::commands::open_constellation(&config, &dir.path().join("c.db")).unwrap();
    let words = "lorem ipsum ".repeat(400);
    for i in 0..500 {
        let mut ctx = partner::engine::exec::TurnContext::new("ada", "main", "fill");
        executor.run_turn(&mut ctx, &format!("/recall insert \"{i} {words}\""));
    }
    let newest = executor.trace().unwrap().0.last().unwrap().seq;
    drop(executor);
    let daemon = support::daemon::serve(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (records, next, restart) = runtime.block_on(async {
        let host = partner::host::remote::RemoteHost::connect(&partner::host::remote::Door::local(
            daemon.socket.clone(),
        ))
        .await
        .unwrap();
        let answer = host.call(HostOp::Trace { after: 0 }).await.unwrap();
        let partner::protocol::Returned::Trace(page) = answer.data else {
            panic!("a trace answered with {:?}", answer.data);
        };
        (page.records, page.next, page.restart)
    });
    assert!(!records.is_empty(), "some records came");
    assert!(
        records.len() < 500,
        "not all fit one line: {}",
        records.len()
    );
    assert!(restart, "the console is told older ones were left out");
    assert_eq!(records.last().unwrap().seq, newest, "the newest came");
    assert_eq!(next, newest);
    assert!(
        records.windows(2).all(|w| w[0].seq < w[1].seq),
        "oldest first"
    );
}

#[test]
fn an_attached_console_knows_the_constellations_own_verbs() {
    let dir = tempfile::tempdir().unwrap();
    crate::daemon::constellation(dir.path());
    let config = dir.path().join("partner.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        "\n[verbs.shout]\naliases = [\"yell\"]\nsummary = \"tell ada something loudly\"\naction = { kind = \"tell\", agent = \"ada\" }\n\n[verbs.recall]\naliases = [\"memo\"]\n",
    );
    std::fs::write(&config, text).unwrap();
    let daemon = support::daemon::serve(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let verbs = runtime.block_on(async {
        let host = partner::host::remote::RemoteHost::connect(&partner::host::remote::Door::local(
            daemon.socket.clone(),
        ))
        .await
        .unwrap();
        partner::console::constellation_verbs(host.as_ref())
            .await
            .unwrap()
    });
    let names = |phrase: &str| {
        verbs
            .lookup(phrase)
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| verbs.spec(e.spec).verb.name().to_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert_eq!(names("shout"), vec!["shout".to_string()]);
    assert_eq!(names("yell"), vec!["shout".to_string()]);
    assert_eq!(names("memo"), vec!["recall".to_string()]);
    assert!(
        names("post").contains(&"post".to_string()),
        "built-ins kept"
    );
}
