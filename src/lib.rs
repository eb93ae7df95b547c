//! partner: a terminal console for watching LLM agents, deciding what they
//! may do, and editing their memory.
//!
//! This crate holds the whole product as a library; the `partner` binary
//! only parses its command line and calls into [`commands`].
//!
//! - [`dialect`]: the action language agents write, and its parser.
//! - [`commands`]: the subcommands of the `partner` binary.
//! - [`error`]: the crate-level error type.

pub use error::{Error, Result};
pub use partner_core as core;
pub use partner_dialect as dialect;
pub use partner_engine as engine;
pub use partner_gate as gate;
pub use partner_grammar as grammar;
pub use partner_host as host;
pub use partner_lisp as lisp;
pub use partner_mcp as mcp;
pub use partner_policy as policy;
pub use partner_protocol as protocol;
pub use partner_runtime as runtime;
pub use partner_store as store;
pub use partner_tui as tui;

pub mod commands;
pub mod console;
pub mod error;
pub mod eval;
