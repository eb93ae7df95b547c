//! The daemon against hostile sizes and hostile peers, with real
//! processes: a snapshot never outgrows the line limit (long texts are cut
//! with a marker and fetched whole on demand), and connections that never
//! say hello cannot lock the owner out.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use partner::protocol::client::Client;
use partner::protocol::{MAX_LINE, Op, ServerMsg, Status};
use partner::runtime::Event;
use support::daemon::serve;

/// One scripted agent that answers every message with `reply`.
fn answering(dir: &Path, reply: &str) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"bounds\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"off\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.join("script.toml"),
        format!("[agents.ada]\nunexpected = \"{reply}\"\n"),
    )
    .unwrap();
}

fn status(client: &mut Client) -> Status {
    match client.request(Op::Status).unwrap().1 {
        partner::protocol::Returned::Status(status) => status,
        other => panic!("a status answered with {other:?}"),
    }
}

/// Waits until `client` has read `n` finished replies.
fn replies_finished(client: &mut Client, n: usize, within: Duration) {
    let started = Instant::now();
    let mut seen = 0;
    while seen < n {
        assert!(
            started.elapsed() < within,
            "only {seen} of {n} replies ended"
        );
        if let Ok(ServerMsg::Event(e)) = client.read()
            && matches!(e.event, Event::ReplyFinished { .. })
        {
            seen += 1;
        }
    }
}

#[test]
fn a_console_attaches_after_ten_long_replies_and_two_long_messages_and_fetches_them_whole() {
    let dir = tempfile::tempdir().unwrap();
    // One 120 KB word: one token event and one finished reply of 120 KB.
    let long = "x".repeat(120_000);
    answering(dir.path(), &long);
    let daemon = serve(dir.path());
    let mut watcher =
        Client::connect_with(&daemon.socket, "watcher", None, daemon.cookie()).unwrap();
    watcher.subscribe().unwrap();
    assert!(matches!(
        watcher.read().unwrap(),
        ServerMsg::Snapshot { .. }
    ));
    let mut control =
        Client::connect_with(&daemon.socket, "control", None, daemon.cookie()).unwrap();
    // One at a time, so each message gets its own reply: two of 600 KB,
    // then eight short ones.
    for i in 0..10 {
        let text = if i < 2 {
            format!("{i}{}", "m".repeat(600_000))
        } else {
            format!("go {i}")
        };
        control
            .request(Op::Message {
                agent: "ada".into(),
                text,
            })
            .unwrap();
        replies_finished(&mut watcher, 1, Duration::from_secs(60));
    }

    // A new console attaches: its snapshot arrives, within the line limit.
    let mut console =
        Client::connect_with(&daemon.socket, "console", None, daemon.cookie()).unwrap();
    console.subscribe().unwrap();
    let snapshot = match console.read().expect("a snapshot within the line limit") {
        ServerMsg::Snapshot { snapshot } => snapshot,
        other => panic!("expected a snapshot, got {other:?}"),
    };
    let size = partner::protocol::line(&ServerMsg::Snapshot {
        snapshot: snapshot.clone(),
    })
    .len();
    assert!(size <= MAX_LINE, "a snapshot of {size} bytes");
    let finished: Vec<_> = snapshot
        .recent
        .iter()
        .filter(|e| matches!(e.event, Event::ReplyFinished { .. }))
        .collect();
    assert_eq!(finished.len(), 10, "every reply is in the snapshot");
    for e in &finished {
        let Event::ReplyFinished { text, .. } = &e.event else {
            unreachable!()
        };
        assert!(text.len() < 120_000, "a long text is cut in a snapshot");
        assert!(
            text.contains("cut"),
            "the cut is marked: {}",
            &text[text.len() - 80..]
        );
        assert!(e.cut > 0, "the event says how much was cut");
    }
    // On demand, the whole event comes back.
    let whole = partner::protocol::client::fetch_event(&mut console, finished[3].seq).unwrap();
    let Event::ReplyFinished { text, .. } = whole else {
        panic!("{whole:?}")
    };
    assert_eq!(text, long);
    let message = snapshot
        .recent
        .iter()
        .find(|e| matches!(&e.event, Event::MessageReceived { from, .. } if from == "partner"))
        .expect("the partner's message is in the snapshot");
    let Event::MessageReceived { text, .. } =
        partner::protocol::client::fetch_event(&mut console, message.seq).unwrap()
    else {
        panic!()
    };
    assert_eq!(text.len(), 600_001);

    // A console's link fetches the cut texts whole: it shows every
    // reply as the model wrote it.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let whole_replies = runtime.block_on(async {
        use partner::protocol::Host;
        let link = partner::host::remote::RemoteHost::connect(&partner::host::remote::Door::local(
            daemon.socket.clone(),
        ))
        .await
        .unwrap();
        let mut events = link.events();
        let mut replies = Vec::new();
        while replies.len() < 10 {
            match tokio::time::timeout(Duration::from_secs(30), events.recv()).await {
                Ok(Ok(Event::ReplyFinished { text, .. })) => replies.push(text),
                Ok(Ok(_)) => {}
                other => panic!("the console's link stopped: {other:?}"),
            }
        }
        replies
    });
    assert!(whole_replies.iter().all(|t| *t == long));

    // The daemon still answers.
    assert_eq!(status(&mut control).agents.len(), 1);
}

/// Serves `dir` over `c.db` with TCP on a free loopback port too (its
/// token under `dir/home`); the daemon and the address.
fn serve_tcp(dir: &Path) -> (support::daemon::Daemon, std::net::SocketAddr) {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let listen = addr.to_string();
    let daemon = support::daemon::serve_with(
        dir,
        &["--listen", &listen],
        &[
            ("HOME", home.clone()),
            ("XDG_CONFIG_HOME", home.join(".config")),
            // The socket's cookie where this process's commands look.
            (
                "XDG_DATA_HOME",
                support::daemon::data_dir_with(&[])
                    .parent()
                    .unwrap()
                    .to_path_buf(),
            ),
        ],
    );
    (daemon, addr)
}

#[test]
fn three_hundred_silent_tcp_connections_do_not_lock_the_owner_out() {
    let dir = tempfile::tempdir().unwrap();
    answering(dir.path(), "noted");
    let (code, added, err) = support::partner_in(
        dir.path(),
        &["partners", "add", "ann", "--db", "c.db", "--json"],
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    let added: serde_json::Value = serde_json::from_str(added.trim()).unwrap();
    let token = added["token"].as_str().unwrap().to_string();
    let (daemon, addr) = serve_tcp(dir.path());
    let mut silent = Vec::new();
    for _ in 0..300 {
        if let Ok(s) = std::net::TcpStream::connect(addr) {
            silent.push(s);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    // The owner, over the Unix socket, while all 300 are held.
    let (code, out, err) = support::partner_in(dir.path(), &["status", "--db", "c.db"], "");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("served by pid"), "{out}");
    let (code, out, err) = support::partner_in(
        dir.path(),
        &["msg", "--db", "c.db", "ada", "still here?"],
        "",
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let mut console =
        Client::connect_with(&daemon.socket, "console", None, daemon.cookie()).unwrap();
    console.subscribe().unwrap();
    assert!(matches!(
        console.read().unwrap(),
        ServerMsg::Snapshot { .. }
    ));
    // Silent connections are closed within their two seconds.
    std::thread::sleep(Duration::from_millis(2_500));
    let mut closed = 0;
    for s in &mut silent {
        use std::io::Read;
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = [0u8; 256];
        // An error line then the end, or the end: either way, closed.
        loop {
            match s.read(&mut buf) {
                Ok(0) => {
                    closed += 1;
                    break;
                }
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    closed += 1;
                    break;
                }
                Err(_) => break,
            }
        }
    }
    assert_eq!(closed, silent.len(), "every silent connection is closed");
    // And a TCP client that says hello in time is served.
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    use std::io::{BufRead, Write};
    writeln!(
        stream,
        "{{\"id\":0,\"op\":\"hello\",\"version\":{},\"client\":\"t\",\"token\":\"{}\"}}",
        partner::protocol::VERSION,
        token.trim()
    )
    .unwrap();
    let mut welcome = String::new();
    std::io::BufReader::new(stream)
        .read_line(&mut welcome)
        .unwrap();
    assert!(welcome.contains("welcome"), "{welcome}");
}

/// Values no field expects: zero, negative, past `u64`, not numbers,
/// huge text, deep JSON.
fn extremes() -> Vec<String> {
    vec![
        "0".into(),
        "-1".into(),
        "18446744073709551615".into(),
        "18446744073709551616".into(),
        "1e308".into(),
        "-0.5".into(),
        "NaN".into(),
        "null".into(),
        "true".into(),
        "{}".into(),
        format!("\"{}\"", "x".repeat(300_000)),
        format!("{}{}", "[".repeat(50_000), "]".repeat(50_000)),
        "\"ada\"".into(),
        "\"\\u0000\"".into(),
    ]
}

/// Every op with a good value in each field; `@` marks the field the walk
/// replaces.
const OPS: &[(&str, &[&str])] = &[
    ("hello", &["version", "client", "token"]),
    ("subscribe", &[]),
    ("status", &[]),
    ("message", &["agent", "text"]),
    ("pulse", &["agent"]),
    ("set_pulse", &["agent", "seconds"]),
    ("halt", &["agent", "reason"]),
    ("resume", &["agent"]),
    ("undo_block", &["agent", "label"]),
    ("sync", &[]),
    ("event", &["seq", "offset"]),
    ("run", &["agent", "text"]),
    ("decide", &["request", "decision"]),
    ("set_block", &["block"]),
];

/// A good value for a field.
fn good(field: &str) -> &'static str {
    match field {
        "version" | "seq" | "offset" | "seconds" => "1",
        "agent" => "\"ada\"",
        "text" => "\"/recall read notes\"",
        "decision" => "{\"kind\":\"for\",\"seconds\":60}",
        "block" => {
            "{\"agent\":\"ada\",\"label\":\"notes\",\"kind\":\"working\",\"permission\":\"read_write\",\"char_limit\":100,\"description\":\"\",\"value\":\"v\"}"
        }
        "request" => "\"r1\"",
        _ => "\"x\"",
    }
}

/// Sends `line` after a hello on a connection of its own: the first line
/// that comes back.
fn answer(daemon: &support::daemon::Daemon, line: &str) -> Result<String, String> {
    let socket = &daemon.socket;
    use std::io::{BufRead, Write};
    let stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let hello = daemon.hello("walk");
    writer
        .write_all(hello.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut welcome = String::new();
    reader.read_line(&mut welcome).map_err(|e| e.to_string())?;
    // The daemon may close the connection before reading all of a line
    // it refuses: that is an answer too, if an error line came first.
    let _ = writer.write_all(format!("{line}\n").as_bytes());
    let mut got = String::new();
    reader
        .read_line(&mut got)
        .map_err(|e| format!("no answer: {e}"))?;
    Ok(got)
}

#[test]
fn every_op_and_field_with_extreme_values_gets_a_clear_answer_and_the_runtime_lives() {
    let dir = tempfile::tempdir().unwrap();
    answering(dir.path(), "noted");
    let daemon = serve(dir.path());
    let mut lines = Vec::new();
    for (op, fields) in OPS {
        let with = |replaced: Option<(&str, &str)>| {
            let mut parts = vec![format!("\"id\":7"), format!("\"op\":\"{op}\"")];
            for f in *fields {
                let value = match replaced {
                    Some((name, v)) if name == *f => v.to_string(),
                    _ => good(f).to_string(),
                };
                parts.push(format!("\"{f}\":{value}"));
            }
            format!("{{{}}}", parts.join(","))
        };
        lines.push(with(None));
        for f in *fields {
            for value in extremes() {
                lines.push(with(Some((f, &value))));
            }
        }
        for value in extremes() {
            lines.push(format!("{{\"id\":{value},\"op\":\"{op}\"}}"));
        }
    }
    let mut answered = 0;
    for line in &lines {
        let got = answer(&daemon, line)
            .unwrap_or_else(|e| panic!("{e}: {}", &line[..line.len().min(200)]));
        let value: serde_json::Value =
            serde_json::from_str(&got).unwrap_or_else(|e| panic!("not JSON ({e}): {got:.200}"));
        let kind = value["type"].as_str().unwrap_or_default();
        assert!(
            matches!(kind, "reply" | "error" | "snapshot"),
            "{got:.200} for {line:.200}"
        );
        if kind == "error" || value["ok"] == false {
            let message = value["message"].as_str().unwrap_or_default();
            assert!(!message.is_empty() && message.len() < 2_000, "{got:.300}");
            assert!(!message.contains("panicked"), "{message}");
        }
        answered += 1;
    }
    assert_eq!(answered, lines.len());
    // The runtime lives: ada answers a message, and the row is there.
    let mut client = Client::connect_with(&daemon.socket, "after", None, daemon.cookie()).unwrap();
    client
        .request(Op::Resume {
            agent: "ada".into(),
        })
        .unwrap();
    client.subscribe().unwrap();
    client
        .request(Op::Message {
            agent: "ada".into(),
            text: "after the walk".into(),
        })
        .unwrap();
    replies_finished(&mut client, 1, Duration::from_secs(30));
    let status = status(&mut client);
    assert_eq!(status.agents.len(), 1);
    assert!(
        std::fs::read_to_string(dir.path().join("serve.log"))
            .unwrap()
            .lines()
            .all(|l| !l.contains("panicked")),
        "the daemon logged a panic"
    );
}

#[test]
fn an_ok_from_the_daemon_means_the_row_is_committed() {
    let dir = tempfile::tempdir().unwrap();
    answering(dir.path(), "noted");
    let daemon = serve(dir.path());
    let mut client = Client::connect_with(&daemon.socket, "t", None, daemon.cookie()).unwrap();
    let db = rusqlite::Connection::open(dir.path().join("c.db")).unwrap();
    let count = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    for i in 0..20 {
        let text = format!("note {i}");
        client
            .request(Op::Message {
                agent: "ada".into(),
                text: text.clone(),
            })
            .unwrap();
        // Read at once, from another connection: the row is there (in
        // ada's inbox, until a turn answers it).
        let rows = count(&format!(
            "SELECT count(*) FROM inbox WHERE agent = 'ada' AND content = '{text}'"
        ));
        assert_eq!(rows, 1, "message {i} acknowledged before it was written");
    }
    client
        .request(Op::Halt {
            agent: "ada".into(),
            reason: "stop".into(),
        })
        .unwrap();
    assert_eq!(count("SELECT halted FROM agents WHERE name = 'ada'"), 1);
    client
        .request(Op::SetPulse {
            agent: "ada".into(),
            seconds: partner::core::clock::TimeSpan::from_secs(90).unwrap(),
        })
        .unwrap();
    assert_eq!(
        count("SELECT pulse_secs FROM agents WHERE name = 'ada'"),
        90
    );
    client
        .request(Op::Resume {
            agent: "ada".into(),
        })
        .unwrap();
    assert_eq!(count("SELECT halted FROM agents WHERE name = 'ada'"), 0);
}
