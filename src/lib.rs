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

pub use error::{Error, Result};
/// Lets a type that names itself on the wire be compared with that name:
/// `status == "executed"` reads as the JSON does.
macro_rules! wire_name_eq {
    ($type:ty, $name:ident) => {
        impl PartialEq<str> for $type {
            fn eq(&self, other: &str) -> bool {
                self.$name() == other
            }
        }
        impl PartialEq<&str> for $type {
            fn eq(&self, other: &&str) -> bool {
                self.$name() == *other
            }
        }
    };
}
pub(crate) use wire_name_eq;

pub mod agent;
pub mod bounds;
pub mod clock;
pub mod commands;
pub mod daemon;
pub mod dialect;
pub mod embed;
pub mod error;
pub mod eval;
pub mod exec;
pub mod files;
pub mod gate;
pub mod grammar;
pub mod isolate;
pub mod lisp;
pub mod memory;
pub mod net;
pub mod permission;
pub mod protocol;
pub mod trace;
pub mod tui;
