//! Team mode's throughput: executed actions per second with 8 agents
//! writing memory at once through the whole pipeline (parse, permission
//! check, execute, trace; each action acknowledged once committed):
//!
//! - on SQLite, one process (one daemon) running all eight;
//! - on PostgreSQL, two processes (two daemons), four agents each, on the
//!   database `partner_bench_team` of the server `PARTNER_TEST_POSTGRES`
//!   names (made afresh each run).
//!
//! Prints actions/s and the p50 and p99 latency of an action for each,
//! and the ratio. Run: `PARTNER_TEST_POSTGRES=postgres://root@127.0.0.1:5432/test
//! cargo bench --bench team`.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

#[path = "common/writers.rs"]
mod writers;

use partner::engine::exec::{ExecConfig, Executor};
use partner::policy::Policy;
use partner_engine::store::StoreAt;

/// Actions each agent makes in a run.
const PER_AGENT: usize = 1_000;

/// Agents in all.
const AGENTS: usize = 8;

fn executor(at: &StoreAt) -> Arc<Executor> {
    let config = ExecConfig {
        agents: (0..AGENTS).map(|w| format!("agent{w}")).collect(),
        ..ExecConfig::default()
    };
    Arc::new(Executor::open_at(at, Policy::permissive(), config).unwrap())
}

fn report(what: &str, mut latencies: Vec<Duration>, took: Duration) -> f64 {
    latencies.sort();
    let rate = latencies.len() as f64 / took.as_secs_f64();
    println!(
        "{what}: {rate:.0} actions/s, p50 {:?}, p99 {:?} ({} actions in {took:.2?})",
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 99 / 100],
        latencies.len(),
    );
    rate
}

/// One daemon of the PostgreSQL run (a child process): writes with agents
/// `from..to` once the start time comes, then prints its latencies.
fn child(url: &str, from: usize, to: usize, start_at_ms: u128) {
    let exec = executor(&StoreAt::Postgres(url.to_string()));
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    };
    while now() < start_at_ms {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (latencies, took) = writers::write(&exec, from..to, PER_AGENT);
    let micros: Vec<String> = latencies
        .iter()
        .map(|l| l.as_micros().to_string())
        .collect();
    println!("took {}", took.as_micros());
    println!("latencies {}", micros.join(","));
}

fn postgres(admin: &str) -> Option<f64> {
    let name = "partner_bench_team";
    let url = match admin.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => panic!("not a PostgreSQL URL: {admin}"),
    };
    let mut client = postgres::Client::connect(admin, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    // Migrated once, before the daemons start.
    drop(executor(&StoreAt::Postgres(url.clone())));
    let start_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 1_500;
    let me = std::env::current_exe().unwrap();
    let half = AGENTS / 2;
    let daemons: Vec<_> = [(0, half), (half, AGENTS)]
        .into_iter()
        .map(|(from, to)| {
            Command::new(&me)
                .args([
                    "--team-daemon",
                    &url,
                    &from.to_string(),
                    &to.to_string(),
                    &start_at.to_string(),
                ])
                .output()
                .unwrap()
        })
        .collect::<Vec<_>>();
    let mut latencies = Vec::new();
    let mut took = Duration::ZERO;
    for out in &daemons {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            if let Some(t) = line.strip_prefix("took ") {
                took = took.max(Duration::from_micros(t.parse().unwrap()));
            } else if let Some(l) = line.strip_prefix("latencies ") {
                latencies.extend(
                    l.split(',')
                        .map(|m| Duration::from_micros(m.parse().unwrap())),
                );
            }
        }
    }
    Some(report("PostgreSQL, 2 daemons × 4 agents", latencies, took))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--team-daemon") {
        let parse = |i: usize| args[at + i].parse::<u128>().unwrap();
        child(
            &args[at + 1],
            parse(2) as usize,
            parse(3) as usize,
            parse(4),
        );
        return;
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let dir = tempfile::tempdir().unwrap();
    let sqlite = executor(&StoreAt::File(dir.path().join("team.db")));
    let (latencies, took) = writers::write(&sqlite, 0..AGENTS, PER_AGENT);
    let on_file = report("SQLite, 1 daemon × 8 agents", latencies, took);
    match std::env::var("PARTNER_TEST_POSTGRES") {
        Ok(admin) => {
            if let Some(on_server) = postgres(&admin) {
                println!(
                    "PostgreSQL with 2 daemons runs {:.2}× the actions/s of SQLite with one",
                    on_server / on_file
                );
            }
        }
        Err(_) => println!("PARTNER_TEST_POSTGRES is not set: PostgreSQL was not measured"),
    }
}
