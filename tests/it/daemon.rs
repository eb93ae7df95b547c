//! `partner serve` and its protocol, with real processes: the protocol
//! round-trips every operation and message; one runtime per database; a
//! bad client (malformed, oversized, an old version) is refused and the
//! daemon carries on (TCP and partners' tokens: `partners.rs`); commands go through the
//! daemon; and after `kill -9` a new daemon resumes the pending request,
//! which a decision from a shell then lets the agent finish.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use partner::policy::Decision;
use partner::protocol::client::Client;
use partner::protocol::{AgentRow, Op, Request, Sequenced, ServerMsg, Snapshot, Status, VERSION};
use serde_json::Value;
use support::daemon::serve;
use support::partner_in;

/// A constellation of one scripted agent whose first pulse asks the
/// partner to post, and that thanks the partner once it has.
pub(crate) fn constellation(dir: &Path) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"served\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.join("script.toml"),
        "[agents.ada]\npulses = [\"/recall insert \\\"we ship friday\\\" ?ask\"]\ncontinuations = [\"Posted, thanks.\"]\n",
    )
    .unwrap();
}

pub(crate) fn status(client: &mut Client) -> Status {
    match client.request(Op::Status).unwrap().1 {
        partner::protocol::Returned::Status(status) => status,
        other => panic!("a status answered with {other:?}"),
    }
}

pub(crate) fn wait_for(what: &str, within: Duration, mut ok: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ok() {
        assert!(started.elapsed() < within, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_operation_and_message_round_trips() {
    let ops = vec![
        Op::Hello {
            version: VERSION,
            client: "t".into(),
            token: Some("x".into()),
            cookie: None,
        },
        Op::Subscribe,
        Op::Status,
        Op::Decide {
            request: "r1".into(),
            decision: Decision::ApproveOnce,
        },
        Op::Decide {
            request: "r1".into(),
            decision: Decision::ApproveAlways,
        },
        Op::Decide {
            request: "r1".into(),
            decision: Decision::ApproveFor(
                partner::core::clock::TimeSpan::from_secs(600)
                    .unwrap()
                    .get(),
            ),
        },
        Op::Decide {
            request: "r1".into(),
            decision: Decision::Deny(Some("not now".into())),
        },
        Op::Decide {
            request: "r1".into(),
            decision: Decision::DenyAlways(None),
        },
        Op::Decide {
            request: "r1".into(),
            decision: Decision::Escalate(None),
        },
        Op::Decide {
            request: "r1".into(),
            decision: Decision::Cancel,
        },
        Op::Decide {
            request: "r1".into(),
            decision: Decision::ApproveEdited("/post bluesky \"x\"".into()),
        },
        Op::Message {
            agent: "ada".into(),
            text: "hi".into(),
        },
        Op::Pulse {
            agent: "ada".into(),
        },
        Op::Sync,
        Op::Event { seq: 4, offset: 10 },
        Op::SetPulse {
            agent: "ada".into(),
            seconds: partner::core::clock::TimeSpan::from_secs(60).unwrap(),
        },
        Op::Halt {
            agent: "ada".into(),
            reason: "stop".into(),
        },
        Op::Resume {
            agent: "ada".into(),
        },
        Op::SetBlock {
            block: partner::store::trace::BlockSpec {
                agent: "ada".into(),
                label: "notes".into(),
                kind: partner::store::memory::BlockKind::Working,
                permission: partner::store::memory::BlockPermission::ReadWrite,
                char_limit: 100,
                description: String::new(),
                value: "v".into(),
                shared: false,
            },
        },
        Op::UndoBlock {
            agent: "ada".into(),
            label: "notes".into(),
        },
        Op::Run {
            agent: "ada".into(),
            text: "/recall notes".into(),
        },
    ];
    for (i, op) in ops.into_iter().enumerate() {
        let request = Request { id: i as u64, op };
        let text = partner::protocol::line(&request);
        assert!(text.ends_with('\n') && !text[..text.len() - 1].contains('\n'));
        let back: Request = partner::protocol::parse(&text).unwrap();
        assert_eq!(back, request, "{text}");
    }
    let status = Status {
        pid: 1,
        name: "n".into(),
        db: "c.db".into(),
        socket: "c.db.sock".into(),
        uptime_secs: 3,
        agents: vec![AgentRow {
            name: "ada".into(),
            state: partner::runtime::RunState::Waiting,
            next_pulse_secs: None,
            waiting: vec!["r1".into()],
            host: None,
        }],
        pending: 1,
        clients: 2,
    };
    let messages = vec![
        ServerMsg::Welcome {
            version: VERSION,
            pid: 1,
            name: "n".into(),
            partner: Some("partner:alice".into()),
        },
        ServerMsg::Reply {
            id: 3,
            ok: true,
            message: "done".into(),
            data: partner::protocol::Returned::Status(status.clone()),
        },
        ServerMsg::Snapshot {
            snapshot: Box::new(Snapshot {
                status: status.clone(),
                pending: Vec::new(),
                recent: vec![Sequenced {
                    seq: 1,
                    event: partner::runtime::Event::Token {
                        agent: "ada".into(),
                        text: "hel".into(),
                    },
                    cut: 3,
                }],
                left_out: 2,
                pending_left_out: 0,
            }),
        },
        ServerMsg::Event(Sequenced {
            seq: 2,
            event: partner::runtime::Event::AgentHalted {
                agent: "ada".into(),
                reason: "x".into(),
            },
            cut: 0,
        }),
        ServerMsg::Error {
            message: "bad".into(),
        },
    ];
    for m in messages {
        let text = partner::protocol::line(&m);
        let back: ServerMsg = partner::protocol::parse(&text).unwrap();
        assert_eq!(back, m, "{text}");
    }
    assert!(partner::protocol::parse::<Request>("{\"id\": 1, \"op\": \"fly\"}").is_err());
    assert!(partner::protocol::parse::<Request>(&"x".repeat(2 << 20)).is_err());
}

/// Sends raw lines and reads what comes back until the daemon closes.
pub(crate) fn raw(socket: &Path, lines: &[&[u8]]) -> Vec<Value> {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    for l in lines {
        if stream.write_all(l).is_err() {
            break;
        }
    }
    let mut out = Vec::new();
    for line in BufReader::new(stream).lines() {
        match line {
            Ok(l) => out.push(serde_json::from_str(&l).unwrap()),
            Err(_) => break,
        }
    }
    out
}

#[test]
fn one_daemon_per_database_and_bad_clients_are_refused_without_harm() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let daemon = serve(dir.path());
    let pid = daemon.child.id();

    // A second daemon, or a console, on the same database is refused and
    // told who runs it.
    let (code, _, err) = partner_in(
        dir.path(),
        &["serve", "--config", "partner.toml", "--db", "c.db"],
        "",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("pid {pid}")) && err.contains("c.db.sock"),
        "{err}"
    );
    let (code, _, err) = support::headless(dir.path(), "1s", &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("already runs this database"), "{err}");

    // Malformed, oversized, an old version, no hello: an error, then closed.
    // The owner's socket, but no cookie (or a wrong one) and no token:
    // refused, whoever the process is.
    for cookie in [None, Some("0".repeat(64))] {
        let hello = support::daemon::hello_line("raw", cookie.as_deref());
        let got = raw(
            &daemon.socket,
            &[hello.as_bytes(), b"{\"id\":1,\"op\":\"status\"}\n"],
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0]["type"], "error", "{got:?}");
        assert!(
            got[0]["message"].as_str().unwrap().contains("cookie"),
            "{got:?}"
        );
    }
    let hello = daemon.hello("raw");
    let got = raw(&daemon.socket, &[hello.as_bytes(), b"{not json\n"]);
    assert_eq!(got[0]["type"], "welcome", "{got:?}");
    assert_eq!(got.last().unwrap()["type"], "error", "{got:?}");
    let big = format!("{}\n", "x".repeat(2 << 20));
    let got = raw(&daemon.socket, &[hello.as_bytes(), big.as_bytes()]);
    assert!(
        got.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("bytes"),
        "{got:?}"
    );
    let got = raw(
        &daemon.socket,
        &[b"{\"id\":0,\"op\":\"hello\",\"version\":99,\"client\":\"old\"}\n"],
    );
    assert!(
        got[0]["message"].as_str().unwrap().contains("version 99"),
        "{got:?}"
    );
    let got = raw(&daemon.socket, &[b"{\"id\":0,\"op\":\"status\"}\n"]);
    assert!(
        got[0]["message"].as_str().unwrap().contains("hello"),
        "{got:?}"
    );

    // The daemon carries on.
    let mut client = Client::connect(&daemon.socket, "test").unwrap();
    let s = status(&mut client);
    assert_eq!(s.pid, pid);
    assert_eq!(s.agents.len(), 1);
    let e = client
        .request(Op::Message {
            agent: "nobody".into(),
            text: "x".into(),
        })
        .unwrap_err();
    assert!(e.to_string().contains("there is no agent nobody"), "{e}");
    // `run` acts only as an agent of the constellation (issue 28): nothing
    // is stored under a name that is not one.
    for name in ["ghost", "partner", ""] {
        let e = client
            .request(Op::Run {
                agent: name.into(),
                text: "/remember \"planted\"".into(),
            })
            .unwrap_err();
        assert!(e.to_string().contains("there is no agent"), "{name:?}: {e}");
    }
    // A duration past every bound is refused, and the runtime lives on:
    // a message after it is acknowledged and written (issue 28).
    // The typed protocol cannot even hold one: it is sent raw.
    for seconds in [u64::MAX, 400 * 365 * 86_400] {
        let hello = daemon.hello("t");
        let set =
            format!("{{\"id\":1,\"op\":\"set_pulse\",\"agent\":\"ada\",\"seconds\":{seconds}}}\n");
        let got = raw(&daemon.socket, &[hello.as_bytes(), set.as_bytes()]);
        let said = got.last().unwrap()["message"].as_str().unwrap().to_string();
        assert!(said.contains("too long"), "{seconds}: {said}");
    }
    assert_eq!(status(&mut client).agents.len(), 1);
    client
        .request(Op::Message {
            agent: "ada".into(),
            text: "after the huge pulse".into(),
        })
        .unwrap();
    drop(client);
    let conn = rusqlite::Connection::open(dir.path().join("c.db")).unwrap();
    wait_for("the message row", Duration::from_secs(10), || {
        conn.query_row(
            "SELECT count(*) FROM inbox WHERE content = 'after the huge pulse'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            == 1
    });
    let planted: i64 = conn
        .query_row(
            "SELECT count(*) FROM archival WHERE content LIKE '%planted%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(planted, 0);
}

#[test]
fn after_kill_9_a_new_daemon_resumes_the_pending_request_and_a_shell_decision_reaches_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let mut daemon = serve(dir.path());
    let mut client = Client::connect(&daemon.socket, "test").unwrap();
    wait_for("the request", Duration::from_secs(30), || {
        status(&mut client).pending == 1
    });
    // Shell commands see the daemon.
    let (code, out, _) = partner_in(dir.path(), &["status", "--db", "c.db"], "");
    assert_eq!(code, Some(0));
    assert!(
        out.contains("served is served by pid") && out.contains("1 pending"),
        "{out}"
    );
    // The command does not count itself: the one client here is ours.
    assert!(out.contains("1 pending, 1 other client\n"), "{out}");
    drop(client);

    // kill -9: the lock is the kernel's, and goes with the process.
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    let (code, out, _) = partner_in(dir.path(), &["status", "--db", "c.db", "--json"], "");
    assert_eq!(code, Some(1));
    assert!(out.contains("\"running\":false"), "{out}");

    let daemon = serve(dir.path());
    let mut client = Client::connect(&daemon.socket, "test").unwrap();
    let s = status(&mut client);
    assert_eq!(s.pending, 1, "the request survived: {s:?}");
    let (_, list, _) = partner_in(
        dir.path(),
        &["pending", "--db", "c.db", "list", "--json"],
        "",
    );
    let list: Vec<Value> = serde_json::from_str(list.trim()).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_string();

    // Subscribed: the decision, made from a shell through the daemon,
    // reaches the agent, which goes on.
    client.subscribe().unwrap();
    let (code, out, err) = partner_in(dir.path(), &["pending", "--db", "c.db", "approve", &id], "");
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("through the daemon"), "{out}");
    let started = Instant::now();
    let mut seen_snapshot = false;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the agent never went on"
        );
        match client.read().unwrap() {
            ServerMsg::Snapshot { snapshot } => {
                seen_snapshot = true;
                assert_eq!(snapshot.status.name, "served");
            }
            ServerMsg::Event(Sequenced {
                event: partner::runtime::Event::ReplyFinished { text, .. },
                ..
            }) if text.contains("Posted, thanks") => break,
            _ => {}
        }
    }
    assert!(seen_snapshot);
    let (_, trace, _) = partner_in(dir.path(), &["trace", "show", "--db", "c.db", "--json"], "");
    assert!(trace.contains("\"executed\""), "{trace}");
    drop(daemon);
}

#[test]
fn a_client_too_slow_to_keep_up_gets_a_fresh_snapshot_not_a_stream_with_holes() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    // Ada answers any message with 30,000 words: as many token events.
    let long = "word ".repeat(30_000);
    std::fs::write(
        dir.path().join("script.toml"),
        format!("[agents.ada]\nunexpected = \"{long}\"\n"),
    )
    .unwrap();
    let daemon = serve(dir.path());
    let mut slow = Client::connect(&daemon.socket, "slow").unwrap();
    slow.subscribe().unwrap();
    let mut control = Client::connect(&daemon.socket, "control").unwrap();
    control
        .request(Op::Message {
            agent: "ada".into(),
            text: "talk".into(),
        })
        .unwrap();
    // The slow client reads nothing until the reply is over.
    let mut fast = Client::connect(&daemon.socket, "fast").unwrap();
    fast.subscribe().unwrap();
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the reply never ended"
        );
        if let ServerMsg::Event(Sequenced {
            event: partner::runtime::Event::ReplyFinished { .. },
            ..
        }) = fast.read().unwrap()
        {
            break;
        }
    }
    // Now it reads: snapshots where it fell behind, and between them
    // events without a hole.
    let mut snapshots = 0;
    let mut last: Option<u64> = None;
    loop {
        match slow.read().unwrap() {
            ServerMsg::Snapshot { snapshot } => {
                snapshots += 1;
                last = snapshot.recent.last().map(|e| e.seq);
            }
            ServerMsg::Event(e) => {
                if let Some(l) = last {
                    assert_eq!(e.seq, l + 1, "a hole in the stream");
                }
                last = Some(e.seq);
                if matches!(e.event, partner::runtime::Event::ReplyFinished { .. }) {
                    break;
                }
            }
            _ => {}
        }
    }
    assert!(snapshots >= 2, "the slow client was never resynchronised");
    // And the daemon still answers everyone.
    assert_eq!(status(&mut control).agents.len(), 1);
}

/// Belt and braces to the sandbox: a process inside a command's sandbox
/// is turned away even when it shows the daemon's cookie — one in another
/// user namespace, and one under an approved command's supervisor.
#[test]
fn a_client_inside_a_sandbox_is_refused_even_with_the_cookie() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let daemon = serve(dir.path());
    let hello = daemon.hello("inside");
    let client = format!(
        "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect({:?})\ns.sendall({:?}.encode())\nprint(s.makefile().readline())",
        daemon.socket.display().to_string(),
        hello
    );
    std::fs::write(dir.path().join("client.py"), &client).unwrap();
    let run = |argv: &[&str]| {
        let out = std::process::Command::new(argv[0])
            .args(&argv[1..])
            .current_dir(dir.path())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    // The same client, from the partner's own shell, is let in.
    let outside = run(&["/usr/bin/python3", "client.py"]);
    assert!(outside.contains("welcome"), "{outside}");
    // In a user namespace of its own.
    let in_userns = run(&["unshare", "--user", "/usr/bin/python3", "client.py"]);
    assert!(
        in_userns.contains("error") && in_userns.contains("another user namespace"),
        "{in_userns}"
    );
    // Under a supervisor as an approved command has one.
    let supervised = run(&[
        "bash",
        "-c",
        "/usr/bin/python3 client.py; true",
        partner::core::doorman::SUPERVISOR_NAME,
    ]);
    assert!(
        supervised.contains("error") && supervised.contains("approved command"),
        "{supervised}"
    );
}

/// A decision on the wire is what clients have always sent
/// (`{"kind": "approve"}`, `{"kind": "for", "seconds": 600}`,
/// `{"kind": "edited", "text": …}`…), whichever door sends it.
#[test]
fn a_decision_keeps_its_wire_form() {
    let cases = [
        (
            Decision::ApproveOnce,
            serde_json::json!({"kind": "approve"}),
        ),
        (
            Decision::ApproveAlways,
            serde_json::json!({"kind": "always"}),
        ),
        (
            Decision::ApproveFor(Duration::from_secs(600)),
            serde_json::json!({"kind": "for", "seconds": 600}),
        ),
        (
            Decision::Deny(Some("not now".into())),
            serde_json::json!({"kind": "deny", "reason": "not now"}),
        ),
        (
            Decision::DenyAlways(None),
            serde_json::json!({"kind": "deny_always"}),
        ),
        (
            Decision::Escalate(None),
            serde_json::json!({"kind": "escalate"}),
        ),
        (Decision::Cancel, serde_json::json!({"kind": "cancel"})),
        (
            Decision::ApproveEdited("/recall x".into()),
            serde_json::json!({"kind": "edited", "text": "/recall x"}),
        ),
    ];
    for (decision, json) in cases {
        assert_eq!(serde_json::to_value(&decision).unwrap(), json);
        assert_eq!(serde_json::from_value::<Decision>(json).unwrap(), decision);
    }
    let too_long = serde_json::json!({"kind": "for", "seconds": 1_000_000_000_000u64});
    assert!(serde_json::from_value::<Decision>(too_long).is_err());
    assert!(serde_json::from_value::<Decision>(serde_json::json!({"kind": "yes"})).is_err());
}
