//! `partner mcp list`: the constellation's MCP servers started as a run
//! would start them, each with its state and tools (the verbs agents
//! write), then stopped; `partner mcp serve` is `mcp_serve`.

use std::io::Write;
use std::path::PathBuf;

use super::common::{line, write_json};
use crate::error::{Error, Result};
use crate::mcp::{McpHub, ServerState};

/// `partner mcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct McpOptions {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// What `partner mcp` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum McpCommand {
    /// Start each `[[mcp]]` server of the constellation, show its state and
    /// tools, and stop it.
    List {
        /// The constellation's config (`partner.toml` here when absent).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print one JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Serve partner over MCP on standard input and output: another agent
    /// tool asks the partner for decisions (they land in the queue), reads
    /// the queue and leaves notes for agents.
    Serve(super::mcp_serve::McpServeOptions),
}

impl McpOptions {
    /// True for `partner mcp serve`, which owns standard input and output.
    pub fn serves(&self) -> bool {
        matches!(self.command, McpCommand::Serve(_))
    }
}

/// Runs `partner mcp`.
pub fn run_mcp(options: &McpOptions, out: &mut dyn Write, _err: &mut dyn Write) -> Result<i32> {
    let (config, json) = match &options.command {
        McpCommand::List { config, json } => (config, json),
        McpCommand::Serve(serve) => return super::mcp_serve::run_mcp_serve(serve),
    };
    let path = config
        .clone()
        .unwrap_or_else(|| PathBuf::from("partner.toml"));
    let config = crate::runtime::ConstellationConfig::load(&path)
        .map_err(|e| Error::Usage(e.to_string()))?;
    if config.mcp.is_empty() {
        line(
            out,
            format!("{} names no MCP server ([[mcp]])", path.display()),
        )?;
        return Ok(0);
    }
    let hub = McpHub::start(&config.mcp, &config.base, crate::runtime::mcp::START_WAIT)
        .map_err(Error::Usage)?;
    let status = hub.status();
    if *json {
        write_json(out, &status)?;
        return Ok(0);
    }
    for server in &status {
        let state = match &server.state {
            ServerState::Ready => format!("ready, {} tools", server.tools.len()),
            ServerState::Down { why } => format!("down: {why}"),
            ServerState::Starting => "still starting".into(),
            ServerState::Stopped => "stopped".into(),
        };
        // The walls raised when it started, and what its entry lets it do.
        let walls = match config.mcp.iter().find(|c| c.name == server.name) {
            Some(c)
                if server.walls.starts_with("sandboxed") || server.walls.starts_with("PARTLY") =>
            {
                // Where it starts is writable too.
                let places: Vec<String> = c
                    .cwd
                    .iter()
                    .chain(&c.writes)
                    .map(|w| config.base.join(w).display().to_string())
                    .collect();
                let places = if places.is_empty() {
                    "only a directory of its own".to_string()
                } else {
                    places.join(", ")
                };
                let network = if c.network { "on" } else { "off" };
                format!("{}: writes {places}, network {network}", server.walls)
            }
            _ => server.walls.clone(),
        };
        line(
            out,
            format!("{} ({}; {walls}): {state}", server.name, server.reached),
        )?;
        for tool in &server.tools {
            let effects = match (tool.read_only, tool.destructive, tool.open_world) {
                (true, _, false) => "reads",
                (true, _, true) => "reads, reaches out",
                (false, true, _) => "may change or delete",
                (false, false, _) => "changes",
            };
            line(
                out,
                format!("  /{}  [{effects}]  {}", tool.verb, tool.summary(100)),
            )?;
        }
        for why in &server.left_out {
            line(out, format!("  left out: {why}"))?;
        }
    }
    let down = status.iter().any(|s| s.state != ServerState::Ready);
    Ok(i32::from(down))
}
