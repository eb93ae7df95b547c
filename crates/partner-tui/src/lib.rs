//! The partner console: a full-screen terminal view over a running
//! constellation.
//!
//! This crate may not import the daemon or the commands. It still names
//! the engine, the runtime, the store and the policy (its local backend
//! runs them in process, and some panes read what they hold); reaching
//! them only through the protocol, behind one host, is the next step.

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
