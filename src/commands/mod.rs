//! The subcommands of the `partner` binary, as library functions so they
//! can be tested without a process.

mod parse;

pub use parse::{ParseOptions, run_parse};
