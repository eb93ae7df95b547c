//! MCP servers' tools as verbs, with real servers: the reference
//! filesystem server from npm (installed by `.ci/run` under
//! `$PARTNER_TEST_MCP`), and a hostile server written here in Node that
//! crashes, floods and stalls on request. Without `$PARTNER_TEST_MCP` the
//! tests that need npm's servers say they were skipped; with it set and
//! the servers missing, they fail.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use partner::engine::exec::{ActionReport, ActionStatus};
use partner::mcp::{McpHub, ServerConfig, ServerState};
use partner::policy::{Authority, Decision, Policy};
use support::{Rig, rig};

/// The folder the npm servers are installed in, when the environment
/// names one (a named folder without them is a failure).
pub(crate) fn npm_servers() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PARTNER_TEST_MCP")?);
    let bin = dir.join("node_modules/.bin/mcp-server-filesystem");
    assert!(
        bin.exists(),
        "PARTNER_TEST_MCP={} holds no {}",
        dir.display(),
        bin.display()
    );
    Some(dir)
}

pub(crate) fn skipped(what: &str) {
    eprintln!("SKIPPED {what}: PARTNER_TEST_MCP is not set (.ci/run installs the npm servers)");
}

pub(crate) fn stdio(name: &str, command: &Path, args: &[&str]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        command: Some(command.display().to_string()),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: Default::default(),
        cwd: None,
        url: None,
        token_env: None,
        token_file: None,
        agents: Vec::new(),
        timeout_secs: Some(3),
        writes: Vec::new(),
        network: false,
        sandbox: true,
    }
}

fn hub(configs: &[ServerConfig]) -> McpHub {
    McpHub::start(configs, Path::new("."), Duration::from_secs(30)).expect("the hub starts")
}

const POLICY: &str = r#"
default = "allow"
[[rules]]
verb = "fs.read*"
decide = "allow"
[[rules]]
verb = "fs.list*"
decide = "allow"
"#;

pub(crate) fn request_of(report: &ActionReport) -> String {
    assert_eq!(report.status, ActionStatus::Pending, "{}", report.text);
    report.request.as_ref().unwrap().id.clone()
}

/// A rig whose executor calls the filesystem server over `root`.
pub(crate) fn fs_rig(servers: &Path, root: &Path) -> Rig {
    let mut r = rig(Policy::from_toml(POLICY).unwrap());
    let bin = servers.join("node_modules/.bin/mcp-server-filesystem");
    let mut config = stdio("fs", &bin, &[&root.display().to_string()]);
    config.writes = vec![root.to_path_buf()];
    let hub = hub(&[config]);
    let status = hub.status();
    assert_eq!(status[0].state, ServerState::Ready, "{status:?}");
    let skipped = r.exec.attach_mcp(Arc::new(hub)).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    r
}

#[test]
fn an_agent_reads_freely_and_writes_only_once_the_partner_approves() {
    let Some(servers) = npm_servers() else {
        return skipped("the filesystem server's test");
    };
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    std::fs::write(root.join("notes.md"), "ship on friday\n").unwrap();
    let r = fs_rig(&servers, &root);
    let verbs: Vec<String> = r
        .exec
        .registry()
        .table()
        .specs()
        .iter()
        .map(|s| s.verb.name().to_string())
        .filter(|v| v.starts_with("fs."))
        .collect();
    assert!(
        verbs.contains(&"fs.write_file".to_string())
            && verbs.iter().any(|v| v.starts_with("fs.read")),
        "{verbs:?}"
    );

    let listed = r.ok(
        "ada",
        &format!("/fs.list_directory path=\"{}\"", root.display()),
    );
    assert!(listed.text.contains("notes.md"), "{}", listed.text);
    let read = r.ok(
        "ada",
        &format!(
            "/fs.read_text_file path=\"{}\"",
            root.join("notes.md").display()
        ),
    );
    assert!(read.text.contains("ship on friday"), "{}", read.text);

    // A write may change things: asked, and nothing written meanwhile.
    let target = root.join("plan.md");
    let asked = r.one(
        "ada",
        &format!(
            "/fs.write_file path=\"{}\" content=\"launch monday\"",
            target.display()
        ),
    );
    let id = request_of(&asked);
    let request = asked.request.as_ref().unwrap();
    assert!(
        request.canonical.contains("launch monday"),
        "{}",
        request.canonical
    );
    assert!(
        request.reason.contains("change or delete"),
        "{}",
        request.reason
    );
    assert!(
        !target.exists(),
        "nothing is written before the partner decides"
    );
    let done = r
        .exec
        .decide(&id, Decision::ApproveOnce, &Authority::Partner, None)
        .unwrap();
    assert_eq!(done.status, ActionStatus::Executed, "{}", done.text);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "launch monday");

    // A denied write writes nothing.
    let other = root.join("other.md");
    let asked = r.one(
        "ada",
        &format!("/fs.write_file path=\"{}\" content=\"x\"", other.display()),
    );
    let id = request_of(&asked);
    r.exec
        .decide(
            &id,
            Decision::Deny(Some("not now".into())),
            &Authority::Partner,
            None,
        )
        .unwrap();
    assert!(!other.exists());

    // The trace holds each call's arguments and result.
    let trace = r.trace();
    let write = trace
        .iter()
        .find(|t| t.verb == "fs.write_file" && t.outcome.as_str() == "executed")
        .expect("the write is traced");
    assert_eq!(write.data["mcp"]["arguments"]["content"], "launch monday");
    assert_eq!(write.data["mcp"]["server"], "fs");
    assert!(write.external, "replay reuses the recorded result");
}

#[test]
fn a_bad_argument_is_named_to_the_agent_and_nothing_is_sent_or_asked() {
    let Some(servers) = npm_servers() else {
        return skipped("the schema test");
    };
    let root = tempfile::tempdir().unwrap();
    let r = fs_rig(&servers, root.path());
    for (line, field) in [
        ("/fs.write_file path=\"a.md\"", "content"),
        ("/fs.write_file {\"path\": 3, \"content\": \"x\"}", "path"),
        ("/fs.read_text_file path=\"a\" head=three", "head"),
    ] {
        let report = r.one("ada", line);
        assert_eq!(
            report.status,
            ActionStatus::Failed,
            "{line}: {}",
            report.text
        );
        assert!(report.text.contains(field), "{line}: {}", report.text);
        assert!(report.request.is_none(), "{line}: nothing is asked");
    }
    assert!(std::fs::read_dir(root.path()).unwrap().next().is_none());
}

/// A server that answers `initialize` and `tools/list`, then on
/// `tools/call`: `echo` answers, `crash` exits mid-call, `flood` sends a
/// line past the bound, `stall` never answers.
const HOSTILE: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
const tool = (name) => ({ name, description: name, inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, annotations: { readOnlyHint: true, openWorldHint: false } });
process.stderr.write('hostile server up\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') {
    send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1' } } });
  } else if (m.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: m.id, result: { tools: ['echo', 'crash', 'flood', 'stall', 'write', 'peek'].map(tool) } });
  } else if (m.method === 'tools/call') {
    const name = m.params.name;
    if (name === 'echo') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'echo ' + (m.params.arguments.text || '') }] } });
    if (name === 'crash') process.exit(3);
    if (name === 'write') {
      let text;
      try { require('fs').writeFileSync(m.params.arguments.text, 'x'); text = 'wrote'; } catch (e) { text = 'refused: ' + e.code; }
      send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text }] } });
    }
    if (name === 'peek') {
      let text;
      try { require('net').connect(m.params.arguments.text).on('error', (e) => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'refused: ' + e.code }] } })).on('connect', () => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'connected' }] } })); } catch (e) { send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'refused: ' + e.code }] } }); }
    }
    if (name === 'flood') process.stdout.write('{"jsonrpc":"2.0","id":' + m.id + ',"result":{"content":[{"type":"text","text":"' + 'x'.repeat(6 * 1024 * 1024) + '"}]}}\n');
  }
});
"#;

/// Whether `node` runs here (the hostile server is a Node script).
fn node() -> bool {
    let ok = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: no node on this machine for the hostile MCP server");
    }
    ok
}

fn hostile_rig() -> (Rig, tempfile::TempDir) {
    hostile_rig_for(&[])
}

fn hostile_rig_for(agents: &[&str]) -> (Rig, tempfile::TempDir) {
    hostile_rig_with(agents, Policy::permissive())
}

fn hostile_rig_with(agents: &[&str], policy: Policy) -> (Rig, tempfile::TempDir) {
    // Not under /tmp: inside the sandbox /tmp is the server's own.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let script = dir.path().join("hostile.js");
    std::fs::write(&script, HOSTILE).unwrap();
    std::fs::create_dir(dir.path().join("roots")).unwrap();
    let node = PathBuf::from("node");
    let mut config = stdio("bad", &node, &[&script.display().to_string()]);
    config.timeout_secs = Some(2);
    config.writes = vec![dir.path().join("roots")];
    config.agents = agents.iter().map(|a| a.to_string()).collect();
    let hub = hub(&[config]);
    let status = hub.status();
    assert_eq!(status[0].state, ServerState::Ready, "{status:?}");
    assert_eq!(status[0].tools.len(), 6, "{status:?}");
    let mut r = rig(policy);
    r.exec.attach_mcp(Arc::new(hub)).unwrap();
    (r, dir)
}

#[test]
fn a_server_that_crashes_floods_or_stalls_fails_the_call_and_is_started_again() {
    if !node() {
        return;
    }
    let (r, _dir) = hostile_rig();
    let echo = r.ok("ada", "/bad.echo text=\"hi\"");
    assert_eq!(echo.text, "echo hi");

    // Stalls: the call ends at the server's timeout, the server stays.
    let started = Instant::now();
    let stalled = r.one("ada", "/bad.stall");
    assert_eq!(stalled.status, ActionStatus::Failed, "{}", stalled.text);
    assert!(stalled.text.contains("longer than 2s"), "{}", stalled.text);
    assert!(started.elapsed() < Duration::from_secs(10));

    // Floods: the line past the bound is dropped, the call times out.
    let flooded = r.one("ada", "/bad.flood");
    assert_eq!(flooded.status, ActionStatus::Failed, "{}", flooded.text);

    // Crashes mid-call: the call fails, and the server is started again.
    let crashed = r.one("ada", "/bad.crash");
    assert_eq!(crashed.status, ActionStatus::Failed, "{}", crashed.text);
    let hub = r.exec.mcp().unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let status = &hub.status()[0];
        if status.state == ServerState::Ready && status.restarts >= 1 {
            break;
        }
        assert!(Instant::now() < until, "not started again: {status:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(r.ok("ada", "/bad.echo text=again").text, "echo again");
}

/// `partner replay --verify` of `db`: how it ended and what it said.
fn replay_verify(db: &Path) -> (std::process::Output, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["replay", "--verify", "--db"])
        .arg(db)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out, text)
}

#[test]
fn replay_of_a_trace_with_mcp_calls_calls_no_server() {
    if !node() {
        return;
    }
    let (r, _dir) = hostile_rig();
    r.ok("ada", "/bad.echo text=\"recorded\"");
    let db = r.db();
    let Rig {
        dir: _keep, exec, ..
    } = r;
    drop(exec);
    // The servers are gone with the executor; replay reads the record.
    let (out, text) = replay_verify(&db);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("all 1 steps matched"), "{text}");

    // A record whose call's arguments differ from its action's: reported.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let changed = conn
        .execute(
            "UPDATE trace SET record = json_set(record, '$.data.mcp.arguments.text', 'forged')",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let (out, text) = replay_verify(&db);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("arguments") && text.contains("forged"),
        "{text}"
    );
}

#[test]
fn a_stdio_server_writes_only_in_its_roots_and_reaches_no_socket() {
    if !node() {
        return;
    }
    let (r, dir) = hostile_rig();
    let inside = dir.path().join("roots/made.txt");
    let wrote = r.ok("ada", &format!("/bad.write text=\"{}\"", inside.display()));
    assert_eq!(wrote.text, "wrote");
    assert!(inside.exists());
    let outside = dir.path().join("escaped.txt");
    let refused = r.ok("ada", &format!("/bad.write text=\"{}\"", outside.display()));
    assert!(refused.text.starts_with("refused"), "{}", refused.text);
    assert!(
        !outside.exists(),
        "the sandbox kept the server from writing outside its roots"
    );
    // A Unix socket beside it (a daemon's, a database's): not reachable.
    let socket_path = dir.path().join("daemon.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let peeked = r.ok(
        "ada",
        &format!("/bad.peek text=\"{}\"", socket_path.display()),
    );
    assert!(peeked.text.starts_with("refused"), "{}", peeked.text);
}

#[test]
fn mcp_list_shows_each_server_its_walls_state_and_tools() {
    if !node() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(dir.path().join("hostile.js"), HOSTILE).unwrap();
    std::fs::write(
        dir.path().join("partner.toml"),
        r#"
name = "tools"
[[mcp]]
name = "bad"
command = "node"
args = ["hostile.js"]
cwd = "."
[[mcp]]
name = "gone"
command = "/nonexistent/mcp-server"
[[agents]]
name = "ada"
model = "ollama:llama3.1"
"#,
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["mcp", "list", "--config"])
        .arg(dir.path().join("partner.toml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "a server is down: {text}");
    // The walls raised, as the gate found them here, not as asked.
    let walls = partner::gate::sandbox::walls();
    let raised = if walls.complete() {
        format!("sandboxed ({})", walls.raised())
    } else {
        format!("PARTLY SANDBOXED ({}", walls.raised())
    };
    let expected = format!("bad (node hostile.js; {raised}");
    assert!(text.contains(&expected), "{text}");
    let allowed = format!(
        "writes {}, network off): ready, 6 tools",
        dir.path().join(".").display()
    );
    assert!(text.contains(&allowed), "{text}");
    assert!(text.contains("/bad.echo  [reads]"), "{text}");
    assert!(
        text.contains("gone (/nonexistent/mcp-server; sandboxed") && text.contains("down: "),
        "{text}"
    );
}

/// The time partner adds to a tool call over the server's own: the whole
/// action (parse, check, call, commit with its trace record) less what
/// the server took, median of 40 calls. Printed for the figures; held
/// under a bound a debug build keeps.
#[test]
fn partner_adds_little_to_a_tool_call() {
    if !node() {
        return;
    }
    let (r, _dir) = hostile_rig();
    r.ok("ada", "/bad.echo text=warm");
    let mut added: Vec<f64> = (0..40)
        .map(|i| {
            let started = Instant::now();
            let report = r.ok("ada", &format!("/bad.echo text=n{i}"));
            let whole = started.elapsed().as_secs_f64() * 1e3;
            let server_us = report.data["mcp"]["server_us"].as_u64().unwrap();
            whole - server_us as f64 / 1e3
        })
        .collect();
    added.sort_by(f64::total_cmp);
    let (p50, p90) = (added[20], added[36]);
    println!(
        "partner adds to an MCP call: p50 {p50:.2} ms, p90 {p90:.2} ms (server's own time left out)"
    );
    assert!(p50 < 50.0, "p50 {p50:.2} ms");
}

#[test]
fn a_server_for_some_agents_is_in_their_prompts_only_and_refuses_the_others() {
    if !node() {
        return;
    }
    let (r, _dir) = hostile_rig_for(&["bob"]);
    let names = |agent: &str| -> Vec<String> {
        partner::runtime::turn::allowed_verbs(&r.exec, agent, false)
            .iter()
            .map(|s| s.verb.name().to_string())
            .filter(|v| v.starts_with("bad."))
            .collect()
    };
    assert_eq!(names("bob").len(), 6, "{:?}", names("bob"));
    assert!(names("ada").is_empty(), "{:?}", names("ada"));
    let refused = r.one("ada", "/bad.echo text=hi");
    assert_eq!(refused.status, ActionStatus::Failed, "{}", refused.text);
    assert!(
        refused.text.contains("may not use MCP server bad"),
        "{}",
        refused.text
    );
    assert_eq!(r.ok("bob", "/bad.echo text=hi").text, "echo hi");
}

#[test]
fn a_streamable_http_server_is_reached_by_url_and_its_tools_called() {
    let Some(servers) = npm_servers() else {
        return skipped("the streamable-HTTP test");
    };
    let addr = support::free_port();
    let bin = servers.join("node_modules/.bin/mcp-server-everything");
    let mut server = std::process::Command::new(&bin)
        .arg("streamableHttp")
        .env("PORT", addr.port().to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < until, "the HTTP server did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "secret-token\n").unwrap();
    let mut config = stdio("ev", Path::new("unused"), &[]);
    config.command = None;
    config.url = Some(format!("http://{addr}/mcp"));
    config.token_file = Some(dir.path().join("token"));
    let mut r = rig(Policy::permissive());
    r.exec.attach_mcp(Arc::new(hub(&[config]))).unwrap();
    let status = r.exec.mcp().unwrap().status();
    assert_eq!(status[0].state, ServerState::Ready, "{status:?}");
    let echoed = r.one("ada", "/ev.echo message=\"over http\"");
    server.kill().ok();
    let _ = server.wait();
    assert_eq!(echoed.status, ActionStatus::Executed, "{}", echoed.text);
    assert!(echoed.text.contains("over http"), "{}", echoed.text);
}

#[test]
fn a_call_naming_an_inner_host_is_refused_and_a_servers_calls_are_rate_limited() {
    if !node() {
        return;
    }
    let policy = "default = \"allow\"\n[rate_limits]\n\"bad.*\" = { burst = 2, per_minute = 1 }\n";
    let (r, _dir) = hostile_rig_with(&[], Policy::from_toml(policy).unwrap());
    // A URL to this machine or a private network among the arguments: the
    // network rules refuse it, whatever else the arguments name.
    for line in [
        r#"/bad.echo text="http://127.0.0.1:9200/_search""#,
        r#"/bad.echo {"text": "https://example.com", "also": {"next": "http://10.0.0.7/admin"}}"#,
    ] {
        let report = r.one("ada", line);
        assert_eq!(
            report.status,
            ActionStatus::Denied,
            "{line}: {}",
            report.text
        );
        assert!(
            report.text.contains("may not reach"),
            "{line}: {}",
            report.text
        );
    }
    // A public one goes; then the server's bucket is empty.
    let first = r.one("ada", r#"/bad.echo text="https://example.com/a""#);
    assert_eq!(first.status, ActionStatus::Executed, "{}", first.text);
    let second = r.one("ada", "/bad.echo text=two");
    assert_eq!(second.status, ActionStatus::Executed, "{}", second.text);
    let third = r.one("ada", "/bad.echo text=three");
    assert_ne!(third.status, ActionStatus::Executed, "{}", third.text);
    assert!(third.text.contains("rate"), "{}", third.text);
}
