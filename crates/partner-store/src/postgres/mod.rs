//! [`PgStore`]: a constellation's memory on PostgreSQL, for a team whose
//! daemons share one database. The same operations as the SQLite store
//! ([`crate::memory::backend::Memory`]), on PostgreSQL's own means:
//! identity columns, `tsvector` columns kept by the server with GIN
//! indexes, `websearch_to_tsquery` and `ts_rank_cd`. Its schema is
//! versioned in `partner_schema` and migrated under an advisory lock, so
//! any number of daemons may start at once.

pub mod copy;
mod inbox;
mod learned;
mod leases;
mod listen;
mod memory;
mod notices;
mod pool;
mod roster;
mod schema;
mod search;
mod trace;
mod vectors;

pub use leases::{Lease, LeaseError};
pub use listen::{Listener, Notice, channel};
pub use notices::TeamNotice;
use pool::Pool;
pub use pool::{POOL, Pooled};
pub use schema::MIGRATIONS;

use std::cell::{RefCell, RefMut};
use std::str::FromStr;

use std::time::Duration;

use postgres::{NoTls, Transaction};

use crate::memory::{MemoryError, MemoryResult};

/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest one statement may run (the server cancels it after).
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// A constellation's store on a PostgreSQL server. Its calls block (the
/// driver runs its own small runtime): make them off the async threads,
/// as the executor's work already is (`spawn_blocking`).
pub struct PgStore {
    /// Its connections, lent one operation or transaction at a time.
    pool: Pool,
    /// How to connect again (a listener needs a connection of its own).
    config: postgres::Config,
    /// Where it is, without a password.
    shown: String,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("at", &self.shown).finish()
    }
}

/// A PostgreSQL error as the store's (the server's code and message).
pub fn failed(e: postgres::Error) -> MemoryError {
    MemoryError::Postgres(match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    })
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db`)
    /// within [`CONNECT_TIMEOUT`] and brings its schema up to date.
    pub fn connect(url: &str) -> MemoryResult<Self> {
        let mut config = postgres::Config::from_str(url)
            .map_err(|e| MemoryError::Postgres(format!("not a PostgreSQL URL: {e}")))?;
        config
            .connect_timeout(CONNECT_TIMEOUT)
            .options(&format!(
                "-c statement_timeout={}",
                STATEMENT_TIMEOUT.as_millis()
            ))
            .application_name("partner");
        let shown = shown(&config);
        let mut client = config
            .connect(NoTls)
            .map_err(|e| MemoryError::Postgres(format!("cannot reach {shown}: {e}")))?;
        schema::migrate(&mut client)?;
        Ok(PgStore {
            pool: Pool::new(client, config.clone(), shown.clone()),
            config,
            shown,
        })
    }

    /// A second connection to the same database (its schema is up to
    /// date already): for work that must never queue behind this one's,
    /// such as renewing leases.
    pub fn connect_again(&self) -> MemoryResult<Self> {
        let client = self
            .config
            .connect(NoTls)
            .map_err(|e| MemoryError::Postgres(format!("cannot reach {}: {e}", self.shown)))?;
        Ok(PgStore {
            pool: Pool::new(client, self.config.clone(), self.shown.clone()),
            config: self.config.clone(),
            shown: self.shown.clone(),
        })
    }

    /// Opens all the connections the store may use now, rather than as
    /// work first needs them (a daemon, as it starts).
    pub fn warm(&self) -> MemoryResult<()> {
        self.pool.warm(POOL)
    }

    /// Where the store is, for messages (no password).
    pub fn location(&self) -> &str {
        &self.shown
    }

    /// A connection, for one operation or transaction at a time: for the
    /// crates that keep their own tables on this store (the queue). Up to
    /// `pool::POOL` are open at once; a closed one is never lent.
    pub fn client(&self) -> MemoryResult<Pooled<'_>> {
        self.pool.get()
    }
}

/// One transaction on a [`PgStore`]: every interface of the store runs
/// its operations on it, and they commit together (an action's effect,
/// its decision and its trace record) or not at all. What the executor
/// gets as an action's transaction on PostgreSQL.
pub struct PgTx<'a> {
    tx: RefCell<Transaction<'a>>,
}

impl<'a> PgTx<'a> {
    /// The transaction, for one operation at a time (an operation that
    /// needs it twice at once is a bug, and panics).
    pub fn conn(&self) -> RefMut<'_, Transaction<'a>> {
        self.tx.borrow_mut()
    }

    /// Runs `work` on the transaction.
    pub fn with<T>(
        &self,
        work: impl FnOnce(&mut Transaction<'a>) -> MemoryResult<T>,
    ) -> MemoryResult<T> {
        work(&mut self.conn())
    }
}

impl PgStore {
    /// Runs `work` in one transaction, committed when it returns `Ok` and
    /// rolled back otherwise.
    pub fn transaction<T, E: From<MemoryError>>(
        &self,
        work: impl FnOnce(&PgTx<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.transaction_from(work, true)
    }

    /// [`PgStore::transaction`]; when the transaction cannot begin because
    /// the server dropped the connection (it restarted, an administrator
    /// ended it) and `again` is set, the idle connections, likely dropped
    /// with it, are closed and it begins once more on a new one (nothing
    /// was done yet, so nothing is done twice).
    fn transaction_from<T, E: From<MemoryError>>(
        &self,
        work: impl FnOnce(&PgTx<'_>) -> Result<T, E>,
        again: bool,
    ) -> Result<T, E> {
        let mut client = self.client()?;
        let keep = client.keeper();
        let tx = match client.transaction() {
            Ok(tx) => tx,
            Err(e) => {
                // The connection may be gone before the driver has
                // noticed: it is closed, not lent again.
                keep.store(false, std::sync::atomic::Ordering::SeqCst);
                if again && dropped_by_server(&e) {
                    self.pool.close_idle();
                    return self.transaction_from(work, false);
                }
                return Err(failed(e).into());
            }
        };
        let session = PgTx {
            tx: RefCell::new(tx),
        };
        let out = work(&session)?;
        session.tx.into_inner().commit().map_err(failed)?;
        Ok(out)
    }
}

/// True when `e` says the server dropped the connection (class 08, a
/// connection exception, or 57P, an operator's intervention), or the
/// driver found it closed.
fn dropped_by_server(e: &postgres::Error) -> bool {
    e.is_closed()
        || e.code().is_some_and(|code| {
            let code = code.code();
            code.starts_with("08") || code.starts_with("57P")
        })
}

/// `user@host:port/db` of a configuration.
fn shown(config: &postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}
