//! The constellation's MCP servers when it runs: started before its
//! agents, their tools made verbs of the executor, stopped with it.

use std::sync::Arc;
use std::time::Duration;

use partner_engine::exec::Executor;
use partner_mcp::McpHub;

use crate::config::ConstellationConfig;

/// Longest the start waits for the servers to list their tools (a server
/// still starting after it gets its verbs when it is ready — not before
/// the next start).
pub const START_WAIT: Duration = Duration::from_secs(20);

/// Starts `config`'s `[[mcp]]` servers and gives their tools to
/// `executor` as verbs; what went wrong with any, in words (a server that
/// is down is said, not fatal: its tools are missing until a restart).
pub fn attach(
    executor: &mut Executor,
    config: &ConstellationConfig,
) -> Result<Vec<String>, String> {
    if config.mcp.is_empty() {
        return Ok(Vec::new());
    }
    let hub = McpHub::start(&config.mcp, &config.base, START_WAIT)?;
    let mut warnings: Vec<String> = hub
        .status()
        .into_iter()
        .flat_map(|s| {
            let down = match &s.state {
                partner_mcp::ServerState::Ready => None,
                other => Some(format!("MCP server {}: {other:?}", s.name)),
            };
            down.into_iter().chain(
                s.left_out
                    .into_iter()
                    .map(move |why| format!("MCP server {}: left out {why}", s.name)),
            )
        })
        .collect();
    warnings.extend(
        executor
            .attach_mcp(Arc::new(hub))
            .map_err(|e| e.to_string())?,
    );
    for w in &warnings {
        tracing::warn!("{w}");
    }
    Ok(warnings)
}
