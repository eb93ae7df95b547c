//! The console wired to a constellation: the backend that carries out the
//! console's ops — everything of the constellation sent to a
//! `protocol::Host` (in this process or a daemon's), a trace opened for
//! replay read here — and the entry that runs the console over it. The
//! console's crate cannot name the executor, the runtime or the database;
//! neither does this: the host is where they meet it.

mod backend;
mod replay;

use std::sync::Arc;

use tokio::sync::mpsc;

pub use backend::ConsoleBackend;
use partner_dialect::VerbTable;
use partner_protocol::Host;
use partner_tui::app::App;
use partner_tui::backend::Reply;
use partner_tui::driver::ConsoleSettings;

/// Runs the console over the constellation `host` serves (in this process
/// or a daemon's), replaying traces with `verbs`, until the partner quits.
pub async fn run(
    host: Arc<dyn Host>,
    verbs: Arc<VerbTable>,
    app: App,
    settings: ConsoleSettings,
) -> std::io::Result<()> {
    let (replies_tx, replies) = mpsc::unbounded_channel::<Reply>();
    let backend = ConsoleBackend::new(host, verbs, replies_tx);
    partner_tui::driver::run_with(&backend, replies, app, settings).await
}

/// The verbs of the constellation `host` serves: the built-in ones and
/// what its verb files and tools add, as its registry holds them.
pub async fn constellation_verbs(host: &dyn Host) -> Result<VerbTable, String> {
    let answer = host.call(partner_protocol::Op::Verbs).await?;
    let partner_protocol::Returned::Verbs(extensions) = answer.data else {
        return Err("the host did not say the constellation's verbs".into());
    };
    let mut verbs = VerbTable::builtin();
    if !extensions.is_empty() {
        verbs
            .extend_from_toml(&extensions)
            .map_err(|e| format!("the constellation's verbs could not be read: {e}"))?;
    }
    Ok(verbs)
}
