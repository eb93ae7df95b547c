//! `partner mcp serve` in its own process, spoken to by the MCP SDK's
//! client as another agent tool would: a question lands in the queue and
//! the partner's decision comes back — edited arguments and a chosen
//! option included — whether the partner answers from the command line,
//! on PostgreSQL, or with `a` in a console attached to `partner serve`; a
//! permission prompt gets the prompt's shape; a question nobody answers
//! is withdrawn; the queue reads; a note reaches an agent's inbox; and
//! nothing the tools do decides anything.

use crate::support;
use crate::support::daemon::team_host;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

/// `partner mcp serve` and the SDK's client speaking to it.
struct Served {
    client: RunningService<RoleClient, ()>,
    runtime: tokio::runtime::Runtime,
}

fn store_args(store: &str) -> Vec<String> {
    if store.contains("://") {
        vec!["--store".into(), store.into()]
    } else {
        vec!["--db".into(), store.into()]
    }
}

fn mcp_serve(dir: &Path, store: &str, extra: &[&str]) -> Served {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let client = runtime.block_on(async {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_partner"))
            .current_dir(dir)
            .args(["mcp", "serve"])
            .args(store_args(store))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("mcp-serve.log")).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let input = child.stdin.take().unwrap();
        // The child lives as long as the runtime's tasks.
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        ().serve((out, input)).await.unwrap_or_else(|e| {
            panic!(
                "no MCP session: {e}: {}",
                std::fs::read_to_string(dir.join("mcp-serve.log")).unwrap_or_default()
            )
        })
    });
    Served { client, runtime }
}

impl Served {
    /// Calls `tool` on a task of its own; the result comes on the handle.
    fn call(&self, tool: &str, args: Value) -> tokio::task::JoinHandle<Value> {
        let peer = self.client.peer().clone();
        let tool = tool.to_string();
        self.runtime.spawn(async move {
            let mut params = CallToolRequestParams::new(tool);
            params.arguments = args.as_object().cloned();
            let result = peer.call_tool(params).await.expect("the call");
            json!({
                "is_error": result.is_error,
                "structured": result.structured_content,
                "text": result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n"),
            })
        })
    }

    fn wait(&self, handle: tokio::task::JoinHandle<Value>) -> Value {
        self.runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(60), handle)
                .await
                .expect("the tool answered within a minute")
                .unwrap()
        })
    }
}

fn partner(dir: &Path, store: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .args(store_args(store))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The waiting requests `partner pending list --json` shows.
fn waiting(dir: &Path, store: &str) -> Vec<Value> {
    let out = partner(dir, store, &["pending", "list", "--json"]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

/// Waits for a request of `asker` to wait in the queue: its id.
fn asked(dir: &Path, store: &str, asker: &str) -> (String, Value) {
    let started = Instant::now();
    loop {
        if let Some(r) = waiting(dir, store)
            .into_iter()
            .find(|r| r["agent"] == asker)
        {
            return (r["id"].as_str().unwrap().to_string(), r);
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no request from {asker} in the queue: {}",
            std::fs::read_to_string(dir.join("mcp-serve.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The whole round on `store`, the partner deciding from the command line.
fn questions_answered_from_the_command_line(dir: &Path, store: &str) {
    // An agent for notes to reach.
    let made = partner(dir, store, &["memory", "set", "ada", "notes", "x"]);
    assert!(made.status.success(), "{made:?}");
    let served = mcp_serve(dir, store, &["--as", "claude"]);
    let listed = served
        .runtime
        .block_on(served.client.peer().list_all_tools())
        .unwrap();
    let names: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "ask_partner",
            "permission_prompt",
            "read_queue",
            "post_note"
        ]
    );

    // A question with options and arguments; the partner edits both in.
    let call = served.call(
        "ask_partner",
        json!({"title": "Deploy the site?", "options": ["staging", "production"],
               "tool": "deploy", "arguments": {"env": "staging", "force": false}}),
    );
    let (id, request) = asked(dir, store, "claude");
    assert_eq!(request["verb"], "ask", "{request}");
    assert!(
        request["canonical"]
            .as_str()
            .unwrap()
            .contains("Deploy the site?")
    );
    let queue = served.wait(served.call("read_queue", json!({})));
    assert_eq!(
        queue["structured"]["requests"][0]["id"],
        id.as_str(),
        "{queue}"
    );
    let edited = r#"/ask {"title":"Deploy the site?","options":["staging","production"],"tool":"deploy","arguments":{"env":"production","force":false},"choice":"production"}"#;
    let out = partner(dir, store, &["pending", "edit", &id, edited]);
    assert!(out.status.success(), "{out:?}");
    let answer = served.wait(call);
    let answer = &answer["structured"];
    assert_eq!(answer["decision"], "approved", "{answer}");
    assert_eq!(answer["choice"], "production");
    assert_eq!(
        answer["arguments"],
        json!({"env": "production", "force": false})
    );
    assert_eq!(answer["request"], id.as_str());

    // A permission prompt, denied with a reason: the prompt's shape.
    let call = served.call(
        "permission_prompt",
        json!({"tool_name": "Bash", "input": {"command": "rm -rf build"}, "tool_use_id": "t1"}),
    );
    let (id, _) = asked(dir, store, "claude");
    let out = partner(
        dir,
        store,
        &["pending", "deny", &id, "--reason", "not before the release"],
    );
    assert!(out.status.success(), "{out:?}");
    let answer = served.wait(call);
    let prompt: Value = serde_json::from_str(answer["text"].as_str().unwrap()).unwrap();
    assert_eq!(prompt["behavior"], "deny", "{prompt}");
    assert!(
        prompt["message"]
            .as_str()
            .unwrap()
            .contains("not before the release")
    );

    // Approved as it is: allowed with the input unchanged.
    let call = served.call(
        "permission_prompt",
        json!({"tool_name": "Read", "input": {"path": "a.md"}}),
    );
    let (id, _) = asked(dir, store, "claude");
    assert!(
        partner(dir, store, &["pending", "approve", &id])
            .status
            .success()
    );
    let prompt: Value = serde_json::from_str(served.wait(call)["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        prompt,
        json!({"behavior": "allow", "updatedInput": {"path": "a.md"}})
    );

    // A bad question is refused before anything waits.
    let bad = served.wait(served.call("ask_partner", json!({"title": ""})));
    assert_eq!(bad["structured"]["decision"], "refused", "{bad}");
    assert!(waiting(dir, store).is_empty());

    // Notes: to an agent, from the asker; to nobody, refused.
    let note = served.wait(served.call(
        "post_note",
        json!({"agent": "ada", "text": "build is green"}),
    ));
    assert_eq!(note["is_error"], json!(false), "{note}");
    let none = served.wait(served.call("post_note", json!({"agent": "zed", "text": "hi"})));
    assert_eq!(none["is_error"], json!(true), "{none}");
    assert!(
        none["text"]
            .as_str()
            .unwrap()
            .contains("no agent named zed")
    );
}

#[test]
fn an_outside_tool_asks_and_gets_the_partners_answer_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    questions_answered_from_the_command_line(dir.path(), "c.db");
}

#[test]
fn an_outside_tool_asks_on_postgresql_too() {
    let Some(pg) = support::postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    questions_answered_from_the_command_line(dir.path(), &pg.url);
}

#[test]
fn a_question_nobody_answers_is_withdrawn_and_the_asker_is_never_an_agent() {
    let dir = tempfile::tempdir().unwrap();
    let made = partner(dir.path(), "c.db", &["memory", "set", "ada", "notes", "x"]);
    assert!(made.status.success(), "{made:?}");
    // Named as an agent of the constellation: refused.
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir.path())
        .args(["mcp", "serve", "--db", "c.db", "--as", "ada"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is an agent of the constellation"));

    let served = mcp_serve(dir.path(), "c.db", &["--as", "claude", "--wait", "2s"]);
    let started = Instant::now();
    let answer = served.wait(served.call("ask_partner", json!({"title": "Anyone?"})));
    let answer = &answer["structured"];
    assert_eq!(answer["decision"], "timed out", "{answer}");
    assert_eq!(answer["approved"], false);
    assert!(started.elapsed() < Duration::from_secs(15));
    // Withdrawn: nothing waits, and a late approval finds nothing.
    assert!(waiting(dir.path(), "c.db").is_empty());
    let id = answer["request"].as_str().unwrap();
    let late = partner(dir.path(), "c.db", &["pending", "approve", id]);
    assert!(!late.status.success(), "{late:?}");
}

/// The partner answers with `a` in `console`, which shows the question
/// field by field, its arguments pretty-printed.
fn answered_with_a_key(dir: &Path, console: &support::tmux::Tmux) {
    let served = mcp_serve(dir, "c.db", &["--as", "claude"]);
    let call = served.call(
        "permission_prompt",
        json!({"tool_name": "Write", "input": {"path": "notes.md", "content": "hi"}}),
    );
    let screen = console.wait("the question in the queue", Duration::from_secs(30), |s| {
        support::tmux::first_partner_request(s).is_some() && s.contains("claude")
    });
    assert!(screen.contains("/ask"), "{screen}");
    let screen = console.wait(
        "the question field by field",
        Duration::from_secs(10),
        |s| s.contains("claude asks to use Write") && s.contains("\"path\": \"notes.md\""),
    );
    assert!(screen.contains("Write"), "{screen}");
    console.keys(&["a"]);
    let prompt: Value = serde_json::from_str(served.wait(call)["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        prompt,
        json!({"behavior": "allow", "updatedInput": {"path": "notes.md", "content": "hi"}})
    );
}

#[test]
fn the_partner_answers_an_outside_tool_with_a_key_in_an_attached_console() {
    let dir = tempfile::tempdir().unwrap();
    support::tmux::constellation(dir.path(), "", "default = \"allow\"\n", "\"Resting.\"");
    let _daemon = support::daemon::serve(dir.path());
    let console = support::tmux::Tmux::start(
        "mcp-serve-attach",
        &format!(
            "cd {} && env TERM=xterm-256color COLORTERM= {} attach --db c.db --no-bell; exec sh",
            dir.path().display(),
            env!("CARGO_BIN_EXE_partner"),
        ),
    );
    console.wait("the attached console", Duration::from_secs(20), |s| {
        s.contains("Turns") && s.contains("attached")
    });
    answered_with_a_key(dir.path(), &console);
}

#[test]
fn the_partner_answers_an_outside_tool_with_a_key_in_the_embedded_console() {
    let dir = tempfile::tempdir().unwrap();
    support::tmux::constellation(dir.path(), "", "default = \"allow\"\n", "\"Resting.\"");
    let console = support::tmux::console("mcp-serve-embedded", dir.path(), "");
    answered_with_a_key(dir.path(), &console);

    // `E`: the question's JSON as it reads, a choice written in, saved.
    let served = mcp_serve(dir.path(), "c.db", &["--as", "claude"]);
    let call = served.call(
        "ask_partner",
        json!({"title": "Which stage?", "options": ["staging", "production"]}),
    );
    let screen = console.wait("the question", Duration::from_secs(30), |s| {
        support::tmux::first_partner_request(s).is_some() && s.contains("Which stage?")
    });
    let id = support::tmux::first_partner_request(&screen).unwrap();
    console.keys(&["E"]);
    console.wait("the action editor", Duration::from_secs(10), |s| {
        s.contains(&format!("editing the action of {id}")) && s.contains(r#"/ask {"title""#)
    });
    console.keys(&["End", "BSpace", r#","choice":"production"}"#, "C-s"]);
    let answer = served.wait(call);
    assert_eq!(answer["structured"]["decision"], "approved", "{answer}");
    assert_eq!(answer["structured"]["choice"], "production", "{answer}");
}

#[test]
fn in_team_mode_a_console_on_either_daemon_answers_an_outside_tool() {
    let Some(pg) = support::postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    support::tmux::constellation(dir.path(), "", "default = \"allow\"\n", "\"Resting.\"");
    let _a = team_host(dir.path(), &pg.url, "a", &["--config", "partner.toml"]);
    let _b = team_host(dir.path(), &pg.url, "b", &["--config", "partner.toml"]);
    let consoles: Vec<support::tmux::Tmux> = ["a", "b"]
        .iter()
        .map(|host| {
            let console = support::tmux::Tmux::start(
                &format!("mcp-serve-team-{host}"),
                &format!(
                    "cd {} && sleep 2 && env TERM=xterm-256color COLORTERM= {} attach --socket {host}.sock --no-bell; exec sh",
                    dir.path().display(),
                    env!("CARGO_BIN_EXE_partner"),
                ),
            );
            console.wait("the attached console", Duration::from_secs(30), |s| {
                s.contains("Turns") && s.contains("attached")
            });
            console
        })
        .collect();
    // What a console hears: the daemons' event streams.
    let listeners: Vec<_> = ["a", "b"]
        .iter()
        .map(|host| {
            let socket = dir.path().join(format!("{host}.sock"));
            let data = support::daemon::data_dir_with(&[]);
            let cookie = support::daemon::cookie_of(&data, &socket);
            let mut client =
                partner::protocol::client::Client::connect_with(&socket, "test", None, cookie)
                    .unwrap();
            client.subscribe().unwrap();
            client.set_timeout(Duration::from_millis(200)).unwrap();
            client
        })
        .collect();
    let served = mcp_serve(dir.path(), &pg.url, &["--as", "claude"]);
    let call = served.call("ask_partner", json!({"title": "Rotate the keys?"}));
    // A daemon announces it as new, as for an agent's request (the bell).
    let announced = |mut client: partner::protocol::client::Client| {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            if let Ok(partner::protocol::ServerMsg::Event(e)) = client.read()
                && let partner::protocol::Event::PermissionRequested { agent, .. } = e.event
                && agent == "claude"
            {
                return true;
            }
        }
        false
    };
    let heard: Vec<_> = listeners
        .into_iter()
        .map(|c| std::thread::spawn(move || announced(c)))
        .collect();
    let heard: Vec<bool> = heard.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(heard.contains(&true), "no daemon announced the question");
    for console in &consoles {
        console.wait("the question", Duration::from_secs(30), |s| {
            support::tmux::first_partner_request(s).is_some() && s.contains("Rotate the keys?")
        });
    }
    consoles[1].keys(&["a"]);
    let answer = served.wait(call);
    assert_eq!(answer["structured"]["decision"], "approved", "{answer}");
}

#[test]
fn a_flood_on_standard_input_is_dropped_and_the_server_goes_on() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir.path())
        .args(["mcp", "serve", "--db", "c.db", "--as", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    writeln!(input, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    output.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    writeln!(
        input,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // Two MiB on one line, then a request: the line is dropped, the
    // request answered.
    let flood = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"{}\"}}",
        "x".repeat(2 << 20)
    );
    writeln!(input, "{flood}").unwrap();
    writeln!(input, r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list"}}"#).unwrap();
    let started = Instant::now();
    loop {
        line.clear();
        assert!(
            output.read_line(&mut line).unwrap() > 0,
            "the server stopped"
        );
        assert!(line.len() < 1 << 20, "it answered the flood at length");
        if line.contains("\"id\":3") {
            assert!(line.contains("ask_partner"), "{line}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20));
    }
    // Its client gone, it ends.
    drop(input);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "it outlived its client"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
