//! Errors of the memory store, worded so they can go back to the agent.

use thiserror::Error;

/// Something the memory store refused or could not do.
#[derive(Debug, Error)]
pub enum MemoryError {
    /// The database file could not be opened or queried.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The PostgreSQL server refused or could not be reached.
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    /// The agent's lease was taken over by another daemon: this one no
    /// longer runs it, and nothing of the action was kept.
    #[error("{0}")]
    Fenced(String),
    /// The database was written by a newer partner.
    #[error(
        "the database schema is version {found}, newer than the {known} this partner knows; use a newer partner (nothing was changed)"
    )]
    NewerSchema {
        /// The version found in the file.
        found: i64,
        /// The newest version this binary knows.
        known: i64,
    },
    /// The file is not a partner database this binary can use.
    #[error("this database cannot be used: {0}")]
    BadSchema(String),
    /// Someone else (perhaps another process) changed it first.
    #[error("{0}")]
    Conflict(String),
    /// No such block.
    #[error("no block '{label}' for agent {agent}")]
    NoBlock {
        /// The agent.
        agent: String,
        /// The label asked for.
        label: String,
    },
    /// A block with that label exists already.
    #[error("block '{label}' already exists for agent {agent}")]
    BlockExists {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
    },
    /// A write would make the block longer than its limit.
    #[error(
        "block '{label}' would hold {chars} characters, {over} over its limit of {limit}; shorten it or archive something first"
    )]
    OverLimit {
        /// The block label.
        label: String,
        /// Characters after the write.
        chars: usize,
        /// The block's limit.
        limit: usize,
        /// By how much the write exceeds it.
        over: usize,
    },
    /// Replace text that is not in the block.
    #[error("'{old}' is not in block '{label}'; nothing was replaced")]
    TextNotFound {
        /// The block label.
        label: String,
        /// The text looked for.
        old: String,
    },
    /// Replace text that occurs more than once.
    #[error(
        "'{old}' appears {count} times in block '{label}'; quote more of it so only one matches"
    )]
    TextAmbiguous {
        /// The block label.
        label: String,
        /// The text looked for.
        old: String,
        /// How often it occurs.
        count: usize,
    },
    /// A patch that does not parse or does not apply.
    #[error("the patch for block '{label}' does not apply: {reason}")]
    BadPatch {
        /// The block label.
        label: String,
        /// Why.
        reason: String,
    },
    /// No such version in a block's history.
    #[error("block '{label}' has no version {version}")]
    NoVersion {
        /// The block label.
        label: String,
        /// The version asked for.
        version: i64,
    },
    /// A stored value has a shape this binary does not know.
    #[error("the database holds an unknown {what} '{value}'")]
    Corrupt {
        /// Which field.
        what: &'static str,
        /// Its value.
        value: String,
    },
    /// Nothing to undo.
    #[error("block '{label}' has no earlier version to go back to")]
    NothingToUndo {
        /// The block label.
        label: String,
    },
}

/// A result whose error is [`MemoryError`].
pub type MemoryResult<T> = Result<T, MemoryError>;

impl From<partner_protocol::memory::UnknownName> for MemoryError {
    fn from(e: partner_protocol::memory::UnknownName) -> Self {
        MemoryError::Corrupt {
            what: e.what,
            value: e.value,
        }
    }
}
