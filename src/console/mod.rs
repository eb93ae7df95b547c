//! The console wired to a constellation: the backend that carries out the
//! console's ops — what the runtime does sent to a `protocol::Host` (in
//! this process or a daemon's), reads and the partner's edits through the
//! executor — and the entry that runs the console over it. The console's
//! crate cannot name the executor, the runtime or the database; this is
//! where they meet it.

mod lisp;
mod local;

use std::sync::Arc;

use tokio::sync::mpsc;

pub use local::LocalBackend;
use partner_engine::exec::Executor;
use partner_protocol::Host;
use partner_tui::app::App;
use partner_tui::backend::Reply;
use partner_tui::driver::ConsoleSettings;

/// Runs the console over the constellation `host` serves (in this process
/// or a daemon's), reading the database through `executor`, until the
/// partner quits.
pub async fn run(
    host: Arc<dyn Host>,
    executor: Arc<Executor>,
    app: App,
    settings: ConsoleSettings,
) -> std::io::Result<()> {
    let (replies_tx, replies) = mpsc::unbounded_channel::<Reply>();
    let backend = LocalBackend::new(host, executor, replies_tx);
    partner_tui::driver::run_with(&backend, replies, app, settings).await
}
