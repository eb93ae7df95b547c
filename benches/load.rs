//! Durable executed actions per second: 1 and then 8 agents write memory
//! at once through the whole pipeline — parse, permission check, execute,
//! trace — each action acknowledged only once committed (SQLite WAL,
//! `synchronous=FULL`). Prints actions/s, the p50 and p99 latency of an
//! action, and how many commits the actions took (group commit).

use std::sync::Arc;
#[path = "common/writers.rs"]
mod writers;

use partner::engine::exec::{ExecConfig, Executor};
use partner::policy::Policy;

/// Actions each writer makes in a run.
const PER_WRITER: usize = 2_000;

fn run(exec: &Arc<Executor>, writers: usize) {
    let before = exec.store().sqlite().unwrap().commits();
    let (mut all, took) = writers::write(exec, 0..writers, PER_WRITER);
    all.sort();
    let (commits, held) = exec.store().sqlite().unwrap().commits();
    println!(
        "{writers} writer(s): {:.0} actions/s, p50 {:?}, p99 {:?}; {} actions in {} commits",
        all.len() as f64 / took.as_secs_f64(),
        all[all.len() / 2],
        all[all.len() * 99 / 100],
        held - before.1,
        commits - before.0,
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let agents: Vec<String> = (0..8).map(|w| format!("agent{w}")).collect();
    let config = ExecConfig {
        agents,
        ..ExecConfig::default()
    };
    let exec = Arc::new(
        Executor::open(&dir.path().join("load.db"), Policy::permissive(), config).unwrap(),
    );
    for writers in [1, 8] {
        run(&exec, writers);
    }
}
