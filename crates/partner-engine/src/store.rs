//! The store a constellation runs on: a SQLite file (the embedded
//! default, nothing to set up) or a PostgreSQL database (a team's, shared
//! by several daemons). Everything the executor, the runtime and the
//! console's host read and write goes through one of its two doors:
//! [`Store::transaction`] (an action, a decision, an edit: committed
//! together or not at all) and [`Store::read`]; both hand the work the
//! same interfaces ([`ActionTx`]) whichever the back end.

use std::path::{Path, PathBuf};

use partner_policy::partners::Partners;
use partner_store::memory::learned::Phrasings;
use partner_store::memory::{MemoryError, MemoryResult, MemoryStore};
use partner_store::postgres::PgStore;

use crate::exec::registry::ActionTx;

/// Where a constellation's store is, as the partner names it: a file
/// path, or a `postgres://` (or `postgresql://`) URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreAt {
    /// A SQLite database file.
    File(PathBuf),
    /// A PostgreSQL database.
    Postgres(String),
}

impl StoreAt {
    /// Reads what the partner wrote: a URL with a PostgreSQL scheme is a
    /// server, anything else a file.
    pub fn parse(text: &str) -> StoreAt {
        let lower = text.trim().to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            StoreAt::Postgres(text.trim().to_string())
        } else {
            StoreAt::File(PathBuf::from(text))
        }
    }

    /// The SQLite file, when it is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            StoreAt::File(path) => Some(path),
            StoreAt::Postgres(_) => None,
        }
    }
}

/// A constellation's store on one of its back ends.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one store per process, shared behind an Arc: never moved or copied"
)]
pub enum Store {
    /// A SQLite file (or an in-memory database).
    Sqlite(MemoryStore),
    /// A PostgreSQL database.
    Postgres(PgStore),
}

impl From<MemoryStore> for Store {
    fn from(store: MemoryStore) -> Self {
        Store::Sqlite(store)
    }
}

impl From<PgStore> for Store {
    fn from(store: PgStore) -> Self {
        Store::Postgres(store)
    }
}

impl Store {
    /// Opens (creating and migrating when needed) the store at `at`.
    pub fn open(at: &StoreAt) -> MemoryResult<Store> {
        Ok(match at {
            StoreAt::File(path) => Store::Sqlite(crate::exec::open_store(path)?),
            StoreAt::Postgres(url) => Store::Postgres(PgStore::connect(url)?),
        })
    }

    /// Runs `work` in one transaction: committed when it returns `Ok`,
    /// rolled back otherwise, and `Ok` only once committed.
    pub fn transaction<T, E>(
        &self,
        work: impl FnOnce(&dyn ActionTx) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<MemoryError> + From<rusqlite::Error>,
    {
        match self {
            Store::Sqlite(store) => store.transaction(|conn| work(conn)),
            Store::Postgres(store) => store.transaction(|tx| work(tx)),
        }
    }

    /// Runs `work` as a read: on SQLite a reading connection beside the
    /// writer (it sees every committed write), on PostgreSQL a
    /// transaction of its own (one consistent view for all it reads).
    pub fn read<T>(&self, work: impl FnOnce(&dyn ActionTx) -> MemoryResult<T>) -> MemoryResult<T> {
        match self {
            Store::Sqlite(store) => work(&*store.read()),
            Store::Postgres(store) => store.transaction(|tx| work(tx)),
        }
    }

    /// The learned phrasings of the constellation.
    pub fn phrasings(&self) -> &dyn Phrasings {
        match self {
            Store::Sqlite(store) => store,
            Store::Postgres(store) => store,
        }
    }

    /// The constellation's partners and their tokens.
    pub fn partners(&self) -> &dyn Partners {
        match self {
            Store::Sqlite(store) => store,
            Store::Postgres(store) => store,
        }
    }

    /// The SQLite store, when it is one (replay's scratch copies and the
    /// shell's sandbox use the file itself).
    pub fn sqlite(&self) -> Option<&MemoryStore> {
        match self {
            Store::Sqlite(store) => Some(store),
            Store::Postgres(_) => None,
        }
    }

    /// The PostgreSQL store, when it is one.
    pub fn postgres(&self) -> Option<&PgStore> {
        match self {
            Store::Sqlite(_) => None,
            Store::Postgres(store) => Some(store),
        }
    }

    /// Where the store is, for messages: the file, or the server and
    /// database without a password.
    pub fn location(&self) -> String {
        match self {
            Store::Sqlite(store) => store.path().display().to_string(),
            Store::Postgres(store) => store.location().to_string(),
        }
    }
}
