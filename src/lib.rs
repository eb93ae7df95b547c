//! partner: a terminal console for watching LLM agents, deciding what they
//! may do, and editing their memory.
//!
//! This crate holds the whole product as a library; the `partner` binary
//! only parses its command line and calls into [`commands`].
//!
//! - [`dialect`]: the action language agents write, and its parser.
//! - [`commands`]: the subcommands of the `partner` binary.
//! - [`error`]: the crate-level error type.

#![warn(missing_docs)]

pub mod agent;
pub mod clock;
pub mod commands;
pub mod dialect;
pub mod error;
pub mod exec;
pub mod isolate;
pub mod memory;
pub mod permission;
pub mod trace;
pub mod tui;

pub use error::{Error, Result};
