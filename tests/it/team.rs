//! Team mode with real processes: two and three `partner serve --store
//! postgres://… --host-name` daemons share the demo's constellation. Each
//! agent runs in exactly one of them; `kill -9` of the one running them
//! has another take them over within 10 s, again and again, with nothing
//! acknowledged lost and the trace numbered once; a decision sent through
//! one daemon reaches the agent running on another within a second; a
//! console on any daemon shows every agent and where it runs.

use std::path::{Path, PathBuf};

use partner::policy::Decision;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use partner::protocol::client::Client;
use partner::protocol::{Op, RunState, Sequenced, ServerMsg};
use partner::runtime::Event;
use serde_json::Value;

use crate::support::daemon::{TeamHost, team_host};
use crate::support::postgres;

/// Longest a takeover may take (the bound).
const TAKEOVER: Duration = Duration::from_secs(10);

/// One of the demo's team daemons on `url`, as host `host`.
fn serve(dir: &Path, url: &str, host: &str) -> TeamHost {
    team_host(dir, url, host, &["--demo"])
}

fn partner(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .env_remove("PARTNER_STORE")
        .output()
        .unwrap();
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Agent → host of a lease in force, as `partner status --store` says.
pub(crate) fn placement(dir: &Path, url: &str) -> Vec<(String, String)> {
    let (_, out) = partner(dir, &["status", "--store", url, "--json"]);
    let Ok(status) = serde_json::from_str::<Value>(out.trim()) else {
        return Vec::new();
    };
    status["agents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["running"] == true)
        .map(|a| {
            (
                a["agent"].as_str().unwrap_or("").to_string(),
                a["host"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Waits until every demo agent runs on `host`; how long that took.
fn all_on(dir: &Path, url: &str, host: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let placed = placement(dir, url);
        if placed.len() == 3 && placed.iter().all(|(_, h)| h == host) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "the agents did not all reach {host} within {within:?}: {placed:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How long after `killed` died every agent runs again, none there (the
/// daemons left may share them out).
fn takeover_of(dir: &Path, url: &str, killed: &str, round: usize) -> Duration {
    let started = Instant::now();
    loop {
        let placed = placement(dir, url);
        if placed.len() == 3 && placed.iter().all(|(_, h)| h != killed) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < TAKEOVER + Duration::from_secs(5),
            "round {round}: nobody took {killed}'s agents: {placed:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The store's own word on a team run: the first agent's lease changed
/// hands at least `kills` times, and the trace is numbered once.
fn leases_and_trace_hold(url: &str, kills: i64) {
    let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
    let epoch: i64 = client
        .query_one("SELECT epoch FROM agent_leases WHERE agent = 'anchor'", &[])
        .unwrap()
        .get(0);
    assert!(epoch > kills, "anchor's lease: epoch {epoch}");
    let seqs: Vec<i64> = client
        .query("SELECT seq FROM trace ORDER BY seq", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(!seqs.is_empty());
    assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>());
}

fn log(dir: &Path, host: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{host}.log"))).unwrap_or_default()
}

#[test]
fn three_daemons_each_agent_in_one_and_a_killed_ones_agents_taken_over_within_ten_seconds() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut daemons = vec![serve(d, &db.url, "h1")];
    all_on(d, &db.url, "h1", Duration::from_secs(30));
    daemons.push(serve(d, &db.url, "h2"));
    daemons.push(serve(d, &db.url, "h3"));
    std::thread::sleep(Duration::from_secs(3));
    // The later daemons took nothing the first holds.
    assert!(
        placement(d, &db.url).iter().all(|(_, h)| h == "h1"),
        "{:?}",
        placement(d, &db.url)
    );
    let mut takeovers = Vec::new();
    for round in 0..3 {
        // Something acknowledged just before the kill.
        let value = format!("written before kill {round}");
        let (code, out) = partner(
            d,
            &[
                "memory",
                "set",
                "ada",
                &format!("k{round}"),
                &value,
                "--store",
                &db.url,
            ],
        );
        assert_eq!(code, Some(0), "{out}");
        // The daemon running the first agent is killed.
        let killed = placement(d, &db.url)[0].1.clone();
        let holder = killed[1..].parse::<usize>().unwrap() - 1;
        daemons[holder].child.kill().unwrap();
        daemons[holder].child.wait().unwrap();
        let taken = takeover_of(d, &db.url, &killed, round);
        takeovers.push(taken);
        // The killed daemon comes back, and takes nothing from the others.
        daemons[holder] = serve(d, &db.url, &killed);
        let (_, shown) = partner(
            d,
            &[
                "memory",
                "show",
                "ada",
                &format!("k{round}"),
                "--store",
                &db.url,
            ],
        );
        assert!(shown.contains(&value), "round {round}: {shown}");
    }
    std::thread::sleep(Duration::from_secs(3));
    let placed = placement(d, &db.url);
    assert_eq!(placed.len(), 3, "{placed:?}");
    eprintln!("takeovers after kill -9: {takeovers:?}");
    for t in &takeovers {
        assert!(*t < TAKEOVER, "a takeover took {t:?}: {takeovers:?}");
    }
    // The first agent's lease changed hands at every kill (its daemon was
    // the one killed), and the trace is numbered once, whoever wrote it.
    leases_and_trace_hold(&db.url, 3);
    let logs: String = ["h1", "h2", "h3"].iter().map(|h| log(d, h)).collect();
    assert!(!logs.contains("panicked"), "{logs}");
}

#[test]
fn a_decision_through_one_daemon_reaches_the_agent_on_another_within_a_second() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = serve(d, &db.url, "h1");
    all_on(d, &db.url, "h1", Duration::from_secs(30));
    let second = serve(d, &db.url, "h2");
    // The console's view through the daemon that runs nothing: every
    // agent, run elsewhere, and where.
    let mut client = connect(&second.socket);
    let started = Instant::now();
    let status = loop {
        let partner::protocol::Returned::Status(status) = client.request(Op::Status).unwrap().1
        else {
            panic!("a status without its data");
        };
        if status.agents.len() == 3 && status.agents.iter().all(|a| a.host.is_some()) {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{status:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    for agent in &status.agents {
        assert_eq!(agent.state, RunState::Elsewhere, "{agent:?}");
        assert_eq!(agent.host.as_deref(), Some("h1"), "{agent:?}");
    }
    // And a console attached to it, in a real terminal, says so.
    console_shows_h1(&second.socket);
    // The demo's public post waits on the partner; decided through h2.
    let mut pg = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    let id = waiting_on_partner(&mut pg);
    let (message, _) = client
        .request(Op::Decide {
            request: id.clone(),
            decision: Decision::ApproveOnce,
        })
        .unwrap();
    assert!(message.contains(&id), "{message}");
    // Routed to the agent by h1, which runs it.
    let (decided, routed) = routed(&mut pg, partner_id(&id));
    eprintln!(
        "decided through h2, routed by h1 after {} ms",
        routed - decided
    );
    assert!(routed - decided < 1000, "{} ms", routed - decided);
    // The partner's message through h2 to an agent h1 runs: h1 hears of
    // it and sage answers there.
    answered_on(&first.socket, &mut client, d);
    drop((first, second));
}

/// A console attached through `socket` shows every agent run by h1, and
/// says their turns stream there.
fn console_shows_h1(socket: &Path) {
    let command = format!(
        "env TERM=xterm-256color {} attach --socket {}; exec sh",
        env!("CARGO_BIN_EXE_partner"),
        socket.display()
    );
    let tmux = crate::support::tmux::Tmux::sized("team-console", &command, 160, 30);
    let screen = tmux.wait(
        "the agents and their daemon",
        Duration::from_secs(20),
        |s| s.contains("◇ anchor@h1") && s.contains("◇ sage@h1") && s.contains("◇ scout@h1"),
    );
    let flat = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Turns of agents run by h1 stream there"),
        "{screen}"
    );
}

/// The id of the demo's public post once it waits on the partner.
fn waiting_on_partner(pg: &mut ::postgres::Client) -> String {
    let started = Instant::now();
    loop {
        let row = pg
            .query_opt(
                "SELECT id FROM pending WHERE status = 'waiting' AND verb = 'post'
                 AND authority_index > 0 ORDER BY id LIMIT 1",
                &[],
            )
            .unwrap();
        if let Some(row) = row {
            return format!("r{}", row.get::<_, i64>(0));
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no request waits on the partner"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// When request `row` was approved and when it was routed to its agent.
fn routed(pg: &mut ::postgres::Client, row: i64) -> (i64, i64) {
    let started = Instant::now();
    loop {
        let r = pg
            .query_one(
                "SELECT decided_at, routed_at, status FROM pending WHERE id = $1",
                &[&row],
            )
            .unwrap();
        if let Some(routed) = r.get::<_, Option<i64>>(1) {
            assert_eq!(r.get::<_, String>(2), "approved");
            return (r.get::<_, i64>(0), routed);
        }
        assert!(started.elapsed() < Duration::from_secs(5), "never routed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The partner's message sent through `client` to sage, which the daemon
/// at `socket` runs: that daemon hears of it, and sage answers there.
fn answered_on(socket: &Path, client: &mut Client, dir: &Path) {
    let mut on_first = connect(socket);
    on_first.subscribe().unwrap();
    client
        .request(Op::Message {
            agent: "sage".into(),
            text: "hello from the other daemon".into(),
        })
        .unwrap();
    let started = Instant::now();
    let mut heard = false;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "sage never answered the message sent through h2 (heard: {heard}): {}",
            log(dir, "h1")
        );
        match on_first.read().unwrap() {
            ServerMsg::Event(Sequenced {
                event: Event::MessageReceived { agent, text, .. },
                ..
            }) if agent == "sage" && text == "hello from the other daemon" => heard = true,
            ServerMsg::Event(Sequenced {
                event: Event::ReplyFinished { agent, .. },
                ..
            }) if heard && agent == "sage" => break,
            _ => {}
        }
    }
}

fn partner_id(id: &str) -> i64 {
    id.trim_start_matches('r').parse().unwrap()
}

fn connect(socket: &Path) -> Client {
    let started = Instant::now();
    loop {
        match Client::connect(socket, "test") {
            Ok(client) => return client,
            Err(e) => {
                assert!(
                    started.elapsed() < Duration::from_secs(15),
                    "cannot reach {}: {e}",
                    socket.display()
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

#[test]
fn a_daemon_that_lost_an_agents_lease_commits_nothing_for_it() {
    use partner::engine::exec::{ExecConfig, Executor, TurnContext};
    use partner::store::memory::roster::Fence;
    use partner_engine::store::StoreAt;
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (code, out) = partner(
        dir.path(),
        &["memory", "set", "ada", "notes", "alpha", "--store", &db.url],
    );
    assert_eq!(code, Some(0), "{out}");
    let exec = Executor::open_at(
        &StoreAt::Postgres(db.url.clone()),
        partner::policy::Policy::permissive(),
        ExecConfig {
            agents: vec!["ada".into()],
            ..ExecConfig::default()
        },
    )
    .unwrap();
    let pg = exec.store().postgres().unwrap();
    let ttl = Duration::from_millis(300);
    let h1 = pg.acquire("ada", "h1", ttl).unwrap();
    let fence = |lease: &partner::store::postgres::Lease| Fence {
        host: lease.host.clone(),
        epoch: lease.epoch,
    };
    let run = |f: &Fence, text: &str| {
        let mut ctx = TurnContext::new("ada", "main", "t");
        ctx.fence = Some(f.clone());
        exec.run_turn(&mut ctx, text).actions.remove(0)
    };
    // Under its lease, h1's action commits.
    let ran = run(&fence(&h1), "/recall notes + \"beta\"");
    assert_eq!(ran.status.to_string(), "executed", "{}", ran.text);
    // h1 stalls; its lease lapses and h2 takes the agent over.
    std::thread::sleep(ttl + Duration::from_millis(200));
    let h2 = pg.acquire("ada", "h2", Duration::from_secs(30)).unwrap();
    assert!(h2.epoch > h1.epoch);
    let trace_before = partner(dir.path(), &["trace", "show", "--store", &db.url]).1;
    // h1 wakes and goes on with its turn: nothing of it is kept.
    let late = run(&fence(&h1), "/recall notes + \"gamma\"");
    assert_ne!(late.status.to_string(), "executed", "{}", late.text);
    assert!(late.text.contains("lease was taken over"), "{}", late.text);
    let asked = run(&fence(&h1), "/post bluesky \"late\" ?public");
    assert_ne!(asked.status.to_string(), "pending", "{}", asked.text);
    let (_, shown) = partner(
        dir.path(),
        &["memory", "show", "ada", "notes", "--store", &db.url],
    );
    assert!(
        shown.contains("beta") && !shown.contains("gamma"),
        "{shown}"
    );
    let trace_after = partner(dir.path(), &["trace", "show", "--store", &db.url]).1;
    assert_eq!(trace_before, trace_after);
    let (_, pending) = partner(dir.path(), &["pending", "list", "--store", &db.url]);
    assert!(pending.contains("no requests are waiting"), "{pending}");
    // Under h2's lease the same action commits.
    let now = run(&fence(&h2), "/recall notes + \"gamma\"");
    assert_eq!(now.status.to_string(), "executed", "{}", now.text);
}

#[test]
fn a_daemon_stopped_cleanly_gives_its_agents_up_at_once() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut first = serve(d, &db.url, "h1");
    all_on(d, &db.url, "h1", Duration::from_secs(30));
    let _second = serve(d, &db.url, "h2");
    std::thread::sleep(Duration::from_secs(2));
    // SIGTERM, as systemd stops it: it exits cleanly and gives its leases
    // up, so h2 takes the agents at its next round, not when they lapse.
    let pid = i32::try_from(first.child.id()).unwrap();
    // SAFETY: a plain signal to a child process this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = first.child.wait().unwrap();
    assert!(status.success(), "{status:?}: {}", log(d, "h1"));
    let taken = all_on(d, &db.url, "h2", Duration::from_secs(10));
    eprintln!("taken over {taken:?} after a clean stop");
    assert!(
        taken < partner::runtime::LEASE_TTL,
        "{taken:?}: the leases were not given up"
    );
    assert!(!log(d, "h1").contains("panic"), "{}", log(d, "h1"));
}

#[test]
fn partner_msg_reaches_an_agent_through_this_machines_daemon_of_the_team() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let home = d.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let with_home = |command: &mut Command| {
        command
            .current_dir(d)
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("PARTNER_STORE", &db.url);
    };
    // With no daemon here: said, and how to start one.
    let mut msg = Command::new(env!("CARGO_BIN_EXE_partner"));
    with_home(msg.args(["msg", "sage", "are", "you", "there?"]));
    let out = msg.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no daemon of the team runs on this machine"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A daemon named after the machine, at its default socket.
    let mut serve = Command::new(env!("CARGO_BIN_EXE_partner"));
    with_home(serve.args(["serve", "--demo"]));
    let child = serve
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(d.join("here.log")).unwrap())
        .spawn()
        .unwrap();
    let _daemon = TeamHost {
        child,
        socket: PathBuf::new(),
    };
    let machine = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    all_on(d, &db.url, &machine, Duration::from_secs(30));
    let mut msg = Command::new(env!("CARGO_BIN_EXE_partner"));
    with_home(msg.args(["msg", "sage", "are", "you", "there?"]));
    let out = msg.output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pg = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    // Kept in sage's inbox when the command said so.
    let stored: i64 = pg
        .query_one(
            "SELECT count(*) FROM inbox WHERE agent = 'sage' AND content = 'are you there?'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 1);
}

#[test]
fn a_daemon_whose_connections_the_server_drops_comes_back_by_itself() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut first = serve(d, &db.url, "h1");
    all_on(d, &db.url, "h1", Duration::from_secs(30));
    // The server drops every connection of the daemon (a restart, a
    // failover of the database, an administrator's hand).
    let mut admin = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    let name: String = admin
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    let dropped: i64 = admin
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = $1 AND pid <> pg_backend_pid()) t",
            &[&name],
        )
        .unwrap()
        .get(0);
    assert!(dropped >= 3, "only {dropped} connections were dropped");
    // It reconnects and goes on: its agents run again, and a message
    // through it is answered.
    std::thread::sleep(Duration::from_secs(1));
    all_on(d, &db.url, "h1", Duration::from_secs(20));
    assert!(
        first.child.try_wait().unwrap().is_none(),
        "{}",
        log(d, "h1")
    );
    let mut client = connect(&first.socket);
    let (said, _) = client
        .request(Op::Message {
            agent: "sage".into(),
            text: "still there?".into(),
        })
        .unwrap();
    assert!(!said.is_empty());
    let started = Instant::now();
    loop {
        let answered: i64 = admin
            .query_one(
                "SELECT count(*) FROM messages m WHERE m.agent = 'sage' AND m.role = 'assistant'
                   AND m.id > (SELECT max(id) FROM messages
                               WHERE position('still there?' in content) = 1)",
                &[],
            )
            .unwrap()
            .get(0);
        if answered > 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "sage never answered after the reconnect: {}",
            log(d, "h1")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(!log(d, "h1").contains("panic"), "{}", log(d, "h1"));
}
