//! MCP servers' tools for partner's agents. A constellation's `[[mcp]]`
//! entries name servers — a program speaking MCP over its stdio, started
//! and supervised here, or a streamable-HTTP endpoint — whose tools become
//! dialect verbs named `server.tool`. This crate starts and stops them,
//! lists their tools with every size bounded, reads an agent's arguments
//! into the JSON a tool takes and checks them against its schema, and
//! calls a tool with a deadline; deciding whether a call may run, and
//! recording it, are the permission engine's and the executor's.
//!
//! It also serves partner itself over MCP (`desk`): the tools another
//! agent tool calls to have the partner decide in partner's console.

pub mod arguments;
pub mod config;
pub mod desk;
pub mod desk_http;
pub mod hub;
pub mod server;
pub mod tools;

pub use arguments::read_arguments;
pub use config::ServerConfig;
pub use desk::{Desk, DeskServer};
pub use hub::{CallError, McpHub, ToolResult};
pub use server::{ServerState, ServerStatus};
pub use tools::ToolInfo;
