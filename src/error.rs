//! The crate-level error: everything that can stop a `partner` command.

use std::path::PathBuf;

/// An error that stops a command, worded for a person at a terminal.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Standard input could not be read.
    #[error("cannot read standard input: {0}")]
    Stdin(std::io::Error),
    /// Output could not be written.
    #[error("cannot write output: {0}")]
    Write(std::io::Error),
    /// A verb extension file is wrong.
    #[error("in verb file {path}: {source}")]
    VerbFile {
        /// The file.
        path: PathBuf,
        /// What is wrong (TOML errors include line and column).
        source: crate::dialect::VerbTableError,
    },
    /// A policy file is wrong.
    #[error("in policy file {path}: {source}")]
    Policy {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        source: crate::policy::PolicyError,
    },
    /// The runtime refused or failed (no such request, database error…).
    #[error("{0}")]
    Runtime(String),
    /// The command line asked for something impossible.
    #[error("{0}")]
    Usage(String),
    /// The input is not UTF-8 text.
    #[error("{what} is not UTF-8 text (invalid byte at offset {offset})")]
    NotText {
        /// Which input.
        what: String,
        /// First invalid byte.
        offset: usize,
    },
}

impl From<crate::engine::exec::ExecError> for Error {
    fn from(e: crate::engine::exec::ExecError) -> Self {
        Error::Runtime(e.to_string())
    }
}

impl From<crate::store::memory::MemoryError> for Error {
    fn from(e: crate::store::memory::MemoryError) -> Self {
        Error::Runtime(e.to_string())
    }
}

/// A result whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
