//! `partner mcp serve --listen`: partner as an MCP server over streamable
//! HTTP, in its own process. A request without a partner's token, or
//! with one nobody holds, is refused before anything is read; partner's
//! own MCP client (an `[[mcp]]` entry with `url` and `token_file`) reaches
//! it with a partner's token — so the token does reach the server — lists
//! its tools and asks a question the partner answers; a body over 1 MiB
//! is refused.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use partner::mcp::{McpHub, ServerConfig, ServerState};
use serde_json::json;

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn partner(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .args(["--db", "c.db"])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `partner mcp serve --listen` on a free port, once it answers.
fn serve_http(dir: &Path) -> (Served, String) {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(["mcp", "serve", "--db", "c.db", "--as", "claude", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("http.log")).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "it did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (Served(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// One raw HTTP/1.1 POST: its status and body.
fn post(url: &str, token: Option<&str>, body: String) -> (u16, String) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer and close before the whole body is sent.
    let _ = stream.write_all(body.as_bytes());
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

#[test]
fn partner_served_over_http_admits_only_partners_and_answers_with_the_partners_decision() {
    let dir = tempfile::tempdir().unwrap();
    let added = partner(dir.path(), &["partners", "add", "sam"]);
    assert!(added.status.success(), "{added:?}");
    let token = String::from_utf8_lossy(&added.stdout)
        .split_whitespace()
        .find(|w| w.starts_with("ptk_"))
        .unwrap()
        .to_string();
    let (_served, url) = serve_http(dir.path());

    // No token, or one nobody holds: refused before the body is read.
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    assert_eq!(post(&url, None, hello.clone()).0, 401);
    assert_eq!(post(&url, Some("ptk_forged"), hello.clone()).0, 401);
    // A partner's token, and a good request: answered; the same request
    // past the bound: refused.
    let sized = |name: String| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}})
        .to_string()
    };
    let (status, answer) = post(&url, Some(&token), sized("t".into()));
    assert_eq!(status, 200, "{answer}");
    let (status, _) = post(&url, Some(&token), sized("t".repeat(2 * 1024 * 1024)));
    assert!(status >= 400, "an oversized body got {status}");

    // partner's own client, the token from a file: the tools, and a
    // question answered from the command line.
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, &token).unwrap();
    let config = ServerConfig {
        name: "desk".into(),
        command: None,
        args: Vec::new(),
        env: Default::default(),
        cwd: None,
        url: Some(url.clone()),
        token_env: None,
        token_file: Some(token_file),
        agents: Vec::new(),
        timeout_secs: Some(60),
        writes: Vec::new(),
        network: false,
        sandbox: true,
    };
    let hub = McpHub::start(&[config], dir.path(), Duration::from_secs(20)).unwrap();
    let status = hub.status();
    assert_eq!(status[0].state, ServerState::Ready, "{status:?}");
    assert_eq!(status[0].walls, "reached over HTTP");
    let verbs: Vec<String> = hub.tools().into_iter().map(|t| t.verb).collect();
    assert!(verbs.contains(&"desk.ask_partner".to_string()), "{verbs:?}");
    let hub = std::sync::Arc::new(hub);
    let asking = {
        let hub = hub.clone();
        std::thread::spawn(move || {
            let args = json!({"title": "Merge it?", "options": ["yes", "later"]});
            hub.call("desk.ask_partner", args.as_object().unwrap().clone(), None)
        })
    };
    let started = Instant::now();
    let id = loop {
        let out = partner(dir.path(), &["pending", "list", "--json"]);
        let listed: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
        if let Some(r) = listed.iter().find(|r| r["agent"] == "claude") {
            break r["id"].as_str().unwrap().to_string();
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no question came"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let edited = r#"/ask {"title":"Merge it?","options":["yes","later"],"choice":"later"}"#;
    assert!(
        partner(dir.path(), &["pending", "edit", &id, edited])
            .status
            .success()
    );
    let result = asking.join().unwrap().expect("the call");
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(
        result.result["structuredContent"]["choice"], "later",
        "{}",
        result.result
    );
}
