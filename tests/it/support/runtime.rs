//! A running constellation for tests: scripted agents over a real SQLite
//! file, and a way to wait for an event.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use partner::core::clock::TokioClock;
use partner::runtime::{ConstellationConfig, Event, RuntimeHandle, start};
use tokio::sync::broadcast;

/// A constellation running on the current tokio runtime.
pub struct Running {
    pub dir: tempfile::TempDir,
    pub handle: RuntimeHandle,
    pub events: broadcast::Receiver<Event>,
}

impl Running {
    /// The database file.
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("c.db")
    }
}

/// Starts `config` (TOML after the scripted provider's section) with
/// `policy` and `script`, on the wall clock (other processes, the `partner`
/// binary, read the same rows); the policy is also written to
/// `policy.toml` in the directory, for them.
pub fn running(config: &str, policy: &str, script: &str) -> Running {
    running_with_clock(config, policy, script, TokioClock::now())
}

/// [`running`] on `clock` (one starting at [`super::START`] for tests
/// under tokio's paused time).
pub fn running_with_clock(config: &str, policy: &str, script: &str, clock: TokioClock) -> Running {
    let text = format!("[providers.scripted]\nkind = \"scripted\"\n{config}");
    let config =
        ConstellationConfig::from_toml(&text, "test", Path::new("."), Some(policy), Some(script))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.toml"), policy).unwrap();
    let clock = Arc::new(clock);
    let executor = Arc::new(
        partner::engine::exec::Executor::with_parts(
            Arc::new(
                partner::store::memory::MemoryStore::open(dir.path().join("c.db"))
                    .unwrap()
                    .into(),
            ),
            config.policy.clone(),
            config.exec.clone(),
            clock.clone(),
        )
        .unwrap(),
    );
    let (handle, _task) = start(&config, executor, clock);
    let events = handle.subscribe();
    Running {
        dir,
        handle,
        events,
    }
}

/// The first event matching `pred` within `within` (tokio time).
pub async fn wait_for(
    events: &mut broadcast::Receiver<Event>,
    within: Duration,
    pred: impl Fn(&Event) -> bool,
) -> Option<Event> {
    tokio::time::timeout(within, async {
        loop {
            match events.recv().await {
                Ok(e) if pred(&e) => return e,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
            }
        }
    })
    .await
    .ok()
}
