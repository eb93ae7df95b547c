//! `partner mcp serve`: partner as an MCP server over standard input and
//! output, for another agent tool (one that can hand its permission
//! prompts to an MCP tool) to use partner's console as its approval
//! screen. Its questions are `/ask` requests of the asker named by
//! `--as`, in the queue of whichever console or daemon runs the store;
//! it reads the queue and leaves notes, and decides nothing.

mod asker;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::common::{DbArg, open_executor};
use crate::error::{Error, Result};
use crate::mcp::{Desk, DeskServer};
use crate::protocol::question::PartnerQuestion;
pub use asker::Asker;

/// Options of `partner mcp serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct McpServeOptions {
    #[command(flatten)]
    /// The constellation's store.
    pub db: DbArg,
    /// A policy file (the one the constellation runs with).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The name the asking tool's requests carry in the queue (not an
    /// agent of the constellation).
    #[arg(long = "as", value_name = "NAME", default_value = "outside")]
    pub asker: String,
    /// How long a question waits for the partner before it is withdrawn
    /// (`90s`, `10m`).
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub wait: String,
    /// Serve over streamable HTTP on this address (`127.0.0.1:7071`)
    /// instead of standard input and output; each request needs a
    /// partner's token (`partner partners add NAME`) as `Authorization:
    /// Bearer TOKEN`.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// Let `--listen` bind an address that is not loopback.
    #[arg(long, requires = "listen")]
    pub public: bool,
}

impl Desk for Asker {
    fn ask(&self, question: Value, stop: &dyn Fn() -> bool) -> Value {
        let outcome = match serde_json::from_value::<PartnerQuestion>(question) {
            Ok(question) => self.ask(&question, stop),
            Err(e) => asker::AskOutcome {
                request: None,
                decision: "refused",
                by: None,
                answer: crate::protocol::question::PartnerAnswer {
                    approved: false,
                    choice: None,
                    arguments: None,
                    note: Some(format!("the question does not read: {e}")),
                },
            },
        };
        outcome.to_json()
    }

    fn queue(&self) -> std::result::Result<Value, String> {
        Asker::queue(self)
    }

    fn note(&self, agent: &str, text: &str) -> std::result::Result<String, String> {
        Asker::note(self, agent, text)
    }

    fn asker(&self) -> &str {
        self.name()
    }
}

/// The asker's name, checked: a partner-style name, and not an agent of
/// the constellation (whose runtime would take its decisions).
fn asker_name(name: &str, agents: &[String]) -> Result<String> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !fine {
        return Err(Error::Usage(format!(
            "--as {name:?}: a name of letters, digits, - and _ (at most 64)"
        )));
    }
    if agents.iter().any(|a| a == name) {
        return Err(Error::Usage(format!(
            "--as {name}: {name} is an agent of the constellation; name the asking tool something else"
        )));
    }
    Ok(name.to_string())
}

/// Runs `partner mcp serve` until the client closes standard input.
pub fn run_mcp_serve(options: &McpServeOptions) -> Result<i32> {
    let wait = crate::core::clock::parse_span(&options.wait)
        .map_err(|e| Error::Usage(format!("--wait: {e}")))?;
    let wait = wait.min(Duration::from_secs(24 * 3600));
    let at = options.db.store_at()?;
    let executor = open_executor(&at, options.policy.as_deref(), &[])?;
    let agents = executor
        .store()
        .read(|tx| Ok(executor.agents(tx)))
        .map_err(|e| Error::Runtime(e.to_string()))?;
    let name = asker_name(&options.asker, &agents)?;
    let desk = Asker::new(executor, name, wait);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the MCP server: {e}")))?;
    let Some(addr) = options.listen else {
        runtime
            .block_on(DeskServer::new(desk).serve_stdio())
            .map_err(Error::Runtime)?;
        return Ok(0);
    };
    if !addr.ip().is_loopback() && !options.public {
        return Err(Error::Usage(format!(
            "--listen {addr} is not a loopback address; add --public to serve it beyond this machine"
        )));
    }
    let checker = desk.clone();
    let admit: crate::mcp::desk_http::Admit = std::sync::Arc::new(move |t| checker.partner_of(t));
    runtime
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            tracing::info!(%addr, "partner mcp serve listening");
            crate::mcp::desk_http::serve_http(
                DeskServer::new(desk),
                listener,
                admit,
                options.public,
            )
            .await
        })
        .map_err(Error::Runtime)?;
    Ok(0)
}
