//! Shared test helpers: an executor over a real SQLite file in a temp dir,
//! with a manual clock, and a tiny HTTP server on 127.0.0.1.

#![allow(dead_code)]

pub mod console;
pub mod daemon;
pub mod dialect;
pub mod driving;
pub mod models;
pub mod paths;
pub mod places;
pub mod postgres;
pub mod runtime;
pub mod sandbox;
pub mod tmux;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;

use partner::core::clock::ManualClock;
use partner::engine::exec::{ActionReport, ActionStatus, ExecConfig, Executor, TurnContext};
use partner::policy::Policy;
use partner::store::memory::backend::Memory;
use partner::store::memory::{BlockKind, BlockPermission, MemoryStore};
use partner::store::trace::BlockSpec;

/// A deterministic stream of numbers (xorshift), for tests that make many
/// cases from a seed.
pub struct Rng(pub u64);

impl Rng {
    /// A number below `below`.
    pub fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below as u64) as usize
    }

    /// One to `most` of `words`, joined by spaces.
    pub fn text(&mut self, words: &[&str], most: usize) -> String {
        (0..1 + self.next(most))
            .map(|_| words[self.next(words.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Noon, 2026-11-21 (UTC), in milliseconds.
pub const START: i64 = 1_795_262_400_000;

pub struct Rig {
    pub dir: tempfile::TempDir,
    pub exec: Executor,
    pub clock: ManualClock,
}

pub fn rig_with(policy: Policy, config: ExecConfig) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("constellation.db");
    let clock = ManualClock::new(START);
    let store = Arc::new(MemoryStore::open(&db).unwrap().into());
    let mut config = config;
    if config.agents.is_empty() {
        config.agents = vec!["ada".into(), "anchor".into(), "worker".into()];
    }
    let exec = Executor::with_parts(store, policy, config, Arc::new(clock.clone())).unwrap();
    Rig { dir, exec, clock }
}

pub fn rig(policy: Policy) -> Rig {
    rig_with(policy, ExecConfig::default())
}

impl Rig {
    /// What waits in `agent`'s inbox (messages no turn has answered yet),
    /// oldest first.
    pub fn inbox(&self, agent: &str) -> Vec<partner::store::memory::inbox::Delivery> {
        use partner::store::memory::inbox::Inbox;
        let store = self.exec.store().sqlite().unwrap();
        let conn = store.conn();
        conn.waiting_for(agent, 100).unwrap()
    }

    /// The database file.
    pub fn db(&self) -> std::path::PathBuf {
        self.dir.path().join("constellation.db")
    }

    pub fn block(
        &self,
        agent: &str,
        label: &str,
        kind: BlockKind,
        permission: BlockPermission,
        value: &str,
    ) {
        self.exec
            .partner_set_block(
                BlockSpec {
                    agent: agent.into(),
                    label: label.into(),
                    kind,
                    permission,
                    char_limit: 5000,
                    description: String::new(),
                    value: value.into(),
                    shared: false,
                },
                &partner::policy::Authority::Partner,
            )
            .unwrap();
    }

    /// Runs a turn for `agent` and returns every report.
    pub fn turn(&self, agent: &str, text: &str) -> Vec<ActionReport> {
        let mut ctx = TurnContext::new(agent, "main", "turn-1");
        let report = self.exec.run_turn(&mut ctx, text);
        assert!(report.errors.is_empty(), "{text:?}: {:?}", report.errors);
        report.actions
    }

    /// Runs one action and returns its only report.
    pub fn one(&self, agent: &str, text: &str) -> ActionReport {
        let reports = self.turn(agent, text);
        assert_eq!(reports.len(), 1, "{text:?}: {reports:?}");
        reports.into_iter().next().unwrap()
    }

    pub fn ok(&self, agent: &str, text: &str) -> ActionReport {
        let report = self.one(agent, text);
        assert_eq!(
            report.status,
            ActionStatus::Executed,
            "{text:?}: {}",
            report.text
        );
        report
    }

    pub fn value(&self, agent: &str, label: &str) -> Option<String> {
        (self.exec.store().sqlite().unwrap().conn())
            .block(agent, label)
            .unwrap()
            .map(|b| b.value)
    }

    pub fn trace(&self) -> Vec<partner::store::trace::TraceRecord> {
        let (records, warnings) = self.exec.trace().unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        records
    }
}

/// Serves each request with `respond(path)` → (status, content type, body),
/// on a thread, until the process ends. Returns the base URL.
pub fn http_server(
    respond: impl Fn(&str) -> (u16, &'static str, String) + Send + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                    break;
                }
            }
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .to_string();
            let (status, content_type, body) = respond(&path);
            let reason = if status == 200 { "OK" } else { "Error" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

/// A request the streaming server received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the streaming server answers: a status, extra headers, and body
/// chunks written with `pause` between them.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub chunks: Vec<String>,
    pub pause: std::time::Duration,
}

impl Answer {
    pub fn sse(chunks: Vec<String>) -> Self {
        Answer {
            status: 200,
            headers: vec![("content-type", "text/event-stream".into())],
            chunks,
            pause: std::time::Duration::ZERO,
        }
    }

    pub fn status(status: u16, body: &str) -> Self {
        Answer {
            status,
            headers: vec![("content-type", "application/json".into())],
            chunks: vec![body.to_string()],
            pause: std::time::Duration::ZERO,
        }
    }
}

/// A server on 127.0.0.1 that records each request and answers with
/// `respond(request number from 0, request)`. The body is sent without a
/// length and the connection closed after it, as streaming servers do.
pub fn streaming_server(
    respond: impl Fn(usize, &Seen) -> Answer + Send + 'static,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Seen>>>) {
    use std::io::Read;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).map_or(true, |n| n == 0) || line == "\r\n" {
                    break;
                }
                if let Some((k, v)) = line.trim_end().split_once(':') {
                    headers.push((k.trim().to_string(), v.trim().to_string()));
                }
            }
            let length: usize = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            let request = Seen {
                path: request_line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("/")
                    .to_string(),
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            };
            log.lock().unwrap().push(request.clone());
            let answer = respond(n, &request);
            let mut head = format!("HTTP/1.1 {} X\r\nconnection: close\r\n", answer.status);
            for (k, v) in &answer.headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            if stream.write_all(head.as_bytes()).is_err() {
                continue;
            }
            for chunk in &answer.chunks {
                if !answer.pause.is_zero() {
                    std::thread::sleep(answer.pause);
                }
                if stream
                    .write_all(chunk.as_bytes())
                    .and_then(|_| stream.flush())
                    .is_err()
                {
                    break;
                }
            }
        }
    });
    (base, seen)
}

/// Runs the `partner` binary in `dir` with `args`, `stdin` on its input,
/// and returns what it left: status, output and error output as bytes.
pub fn partner_output(dir: &std::path::Path, args: &[&str], stdin: &str) -> std::process::Output {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// A run's output and error output, one after the other.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs the `partner` binary in `dir` with `args`, `stdin` on its input:
/// its exit status, output and error output.
pub fn partner_in(
    dir: &std::path::Path,
    args: &[&str],
    stdin: &str,
) -> (Option<i32>, String, String) {
    partner_env(dir, args, stdin, &[])
}

/// `partner run --headless --config partner.toml --db c.db --for
/// run_for` in `dir`, with `args` after: its exit status, the events it
/// printed (one JSON object a line) and its error output.
pub fn headless(
    dir: &std::path::Path,
    run_for: &str,
    args: &[&str],
) -> (Option<i32>, Vec<serde_json::Value>, String) {
    let mut all = vec![
        "run",
        "--headless",
        "--config",
        "partner.toml",
        "--db",
        "c.db",
        "--for",
        run_for,
    ];
    all.extend_from_slice(args);
    let (code, out, err) = partner_in(dir, &all, "");
    let events = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (code, events, err)
}

/// [`partner_in`] with environment variables set (`None` removes one).
pub fn partner_env(
    dir: &std::path::Path,
    args: &[&str],
    stdin: &str,
    env: &[(&str, Option<&std::path::Path>)],
) -> (Option<i32>, String, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_partner"));
    for (name, value) in env {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let mut child = command
        .current_dir(dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A port on 127.0.0.1 nothing listens on (a model server that is down).
/// A loopback address nothing listens on yet, for a daemon's `--listen`.
pub fn free_port() -> std::net::SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

pub fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Creates `dir/c.db` the way a user would (`partner exec`), for commands
/// that read a database and refuse one that does not exist.
pub fn made_database(dir: &std::path::Path) {
    let (code, _, err) = partner_in(
        dir,
        &["exec", "--db", "c.db", "--agent", "ada", "-"],
        "/recall insert \"x\"",
    );
    assert_eq!(code, Some(0), "{err}");
}

/// `2026-11-26T20:44:01Z` → `TIME`, `[123µs]` → `[µs]`.
pub fn mask_times(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let stamp = rest.len() >= 20
            && rest.is_char_boundary(20)
            && rest[..20]
                .chars()
                .zip("dddd-dd-ddTdd:dd:ddZ".chars())
                .all(|(c, p)| if p == 'd' { c.is_ascii_digit() } else { c == p });
        if stamp {
            out.push_str("TIME");
            rest = &rest[20..];
            continue;
        }
        if let Some(after) = rest.strip_prefix('[') {
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            if digits > 0 && after[digits..].starts_with("µs]") {
                out.push_str("[µs]");
                rest = &after[digits + "µs]".len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}
