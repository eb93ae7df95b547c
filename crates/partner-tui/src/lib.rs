//! The partner console: a full-screen terminal view over a running
//! constellation.
//!
//! This crate names the protocol, the dialect, the grammar engine and the
//! core, never the executor, the runtime, the daemon or the commands: it
//! reaches a constellation through a `Backend` over the protocol. The
//! protocol still names the store, the policy and the gate, so they are in
//! this crate's build (see `ARCHITECTURE.md`).

pub mod app;
pub mod backend;
pub mod command;
pub mod completion;
pub mod driver;
pub mod highlight;
pub mod keymap;
pub mod model;
pub mod panes;
pub mod prompt;
pub mod theme;
