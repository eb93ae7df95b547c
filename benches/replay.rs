//! `replay --verify` at scale: a database whose trace holds `REPLAY_STEPS`
//! executed actions (100,000 unless set; the figure is for
//! 1,000,000) — memory writes and calculations in turn, as agents make
//! them — is verified the way `partner replay --verify` does, and the bench
//! prints the steps per second and the peak resident memory of the
//! verification alone. The database is made once and kept under the
//! target directory.

#[path = "common/memory.rs"]
mod memory;

use std::path::PathBuf;
use std::time::Instant;

use partner::engine::exec::{ExecConfig, Executor, TurnContext};
use partner::policy::Policy;
use partner::store::trace::TraceInput;

/// A database with `steps` actions in its trace (made if missing).
fn database(steps: usize) -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| PathBuf::from("target"), Into::into)
        .join("replay-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("steps-{steps}.db"));
    if path.exists() {
        return path;
    }
    let partial = dir.join(format!("steps-{steps}.partial.db"));
    let _ = std::fs::remove_file(&partial);
    let exec = Executor::open(&partial, Policy::permissive(), ExecConfig::default()).unwrap();
    exec.store()
        .sqlite()
        .unwrap()
        .conn()
        .pragma_update(None, "synchronous", "OFF")
        .unwrap();
    let started = Instant::now();
    for i in 0..steps {
        let agent = ["ada", "bob", "cy"][i % 3];
        let mut ctx = TurnContext::new(agent, "main", &format!("turn-{i}"));
        let text = if i % 2 == 0 {
            format!("/recall insert \"note {i}: the launch moved to Friday\"")
        } else {
            format!("/calc {i} * 3 + 1")
        };
        exec.run_turn(&mut ctx, &text);
    }
    // Everything into the main file: it is renamed without its WAL.
    let busy: i64 = exec
        .store()
        .sqlite()
        .unwrap()
        .conn()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
        .unwrap();
    assert_eq!(busy, 0, "the checkpoint could not finish");
    drop(exec);
    eprintln!("made {steps} steps in {:.1?}", started.elapsed());
    std::fs::rename(&partial, &path).unwrap();
    path
}

fn main() {
    let steps: usize = std::env::var("REPLAY_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let path = database(steps);
    // Only the verification's own peak is reported.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let base = memory::status_mb("VmHWM");
    let started = Instant::now();
    let verification = partner::engine::exec::replay::verify(&TraceInput::Database(path)).unwrap();
    let took = started.elapsed();
    assert!(verification.divergence.is_none(), "{verification:?}");
    println!(
        "replay --verify of {} steps ({} redone): {:.2} s, {:.0} steps/s, peak resident {:.0} MB (from {:.0} MB)",
        verification.steps,
        verification.redone,
        took.as_secs_f64(),
        verification.steps as f64 / took.as_secs_f64(),
        memory::status_mb("VmHWM"),
        base
    );
}
