//! [`MemoryStore`]: one SQLite database per constellation, opened in WAL
//! mode with migrations applied, shared between threads: one connection
//! writes (each write transaction takes the database's write lock when it
//! begins), a small pool of read-only connections reads beside it, so a
//! long write never holds up the console's reads.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags};

use super::error::{MemoryError, MemoryResult};
use super::schema::{MIGRATIONS, current_version};

/// The constellation's database. Every method locks the one connection for
/// the duration of a statement or transaction, so it can be shared by
/// threads (a batch runs its actions on several).
#[derive(Debug)]
pub struct MemoryStore {
    conn: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    path: PathBuf,
    in_memory: bool,
    /// A batch is open ([`MemoryStore::begin_batch`]): transactions are
    /// savepoints of it.
    batch: std::sync::atomic::AtomicBool,
    /// Transactions from several threads sharing one commit.
    group: super::group::GroupCommit,
}

/// Most idle read connections kept: enough for every agent's turn and
/// the console's reads at once, so that a read does not open a connection
/// (which loads the schema and has none of its statements prepared).
const READERS: usize = 16;

/// Prepared statements each connection keeps (rusqlite's default, 16, is
/// fewer than an action's path uses, so they were prepared again and again).
const STATEMENTS: usize = 96;

/// A connection for reading: one of the pool's, or the writer's for an
/// in-memory database (which has no second connection).
pub enum Reader<'a> {
    /// A read-only connection, returned to the pool when dropped.
    Pooled {
        /// The connection.
        conn: Option<Connection>,
        /// Where it goes back.
        store: &'a MemoryStore,
    },
    /// The writer's connection, locked.
    Writer(MutexGuard<'a, Connection>),
}

impl Deref for Reader<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        match self {
            Reader::Pooled { conn, .. } => conn.as_ref().expect("present until dropped"),
            Reader::Writer(guard) => guard,
        }
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Reader::Pooled { conn, store } = self
            && let Some(conn) = conn.take()
        {
            let mut pool = store.readers.lock().unwrap_or_else(|e| e.into_inner());
            if pool.len() < READERS {
                pool.push(conn);
            }
        }
    }
}

impl MemoryStore {
    /// Opens (creating if needed) the database at `path` and migrates it.
    pub fn open(path: impl AsRef<Path>) -> MemoryResult<Self> {
        let path = path.as_ref().to_path_buf();
        // A new database is the user's alone; SQLite gives its WAL and
        // shared-memory files the same mode.
        if path.parent().is_some_and(Path::is_dir) {
            let _ = partner_core::files::create_private_file(&path);
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        Self::prepare(conn, path)
    }

    /// An in-memory database (for replay verification and tests).
    pub fn open_in_memory() -> MemoryResult<Self> {
        let mut store = Self::prepare(Connection::open_in_memory()?, PathBuf::from(":memory:"))?;
        store.in_memory = true;
        Ok(store)
    }

    fn prepare(mut conn: Connection, path: PathBuf) -> MemoryResult<Self> {
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        // Switching a new file to WAL, and migrating it, can meet another
        // process doing the same; SQLite then answers "busy" at once, without
        // waiting, so wait here (up to the busy timeout) and try again.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let setup = conn
                .pragma_update(None, "journal_mode", "WAL")
                .map_err(MemoryError::from)
                .and_then(|()| migrate(&mut conn));
            match setup {
                Err(MemoryError::Sqlite(e))
                    if is_busy(&e) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => {
                    other?;
                    break;
                }
            }
        }
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS);
        Ok(MemoryStore {
            conn: Mutex::new(conn),
            readers: Mutex::new(Vec::new()),
            path,
            in_memory: false,
            batch: std::sync::atomic::AtomicBool::new(false),
            group: Default::default(),
        })
    }

    /// A connection to read with, beside the writer (WAL lets readers see
    /// every committed write without waiting for the writer).
    pub fn read(&self) -> Reader<'_> {
        if self.in_memory {
            return Reader::Writer(self.conn());
        }
        let pooled = self.readers.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = pooled.or_else(|| {
            let conn = Connection::open_with_flags(
                &self.path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .ok()?;
            conn.busy_timeout(std::time::Duration::from_secs(10)).ok()?;
            conn.set_prepared_statement_cache_capacity(STATEMENTS);
            Some(conn)
        });
        match conn {
            Some(conn) => Reader::Pooled {
                conn: Some(conn),
                store: self,
            },
            None => Reader::Writer(self.conn()),
        }
    }

    /// How long a write waits for another process's write to finish
    /// before failing as busy (10 seconds unless set).
    pub fn set_busy_timeout(&self, wait: std::time::Duration) -> MemoryResult<()> {
        self.conn().busy_timeout(wait)?;
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The writing connection, locked. A poisoned lock (a panic elsewhere)
    /// is recovered: SQLite's own transactions keep the data consistent.
    pub fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` in one transaction: committed when it returns `Ok`, rolled
    /// back otherwise, and `Ok` only once committed. The transaction takes
    /// the database's write lock as it begins, so what it reads (a next
    /// sequence number) no other process can write before it commits.
    /// Transactions that queue for the connection meanwhile share one
    /// commit (group commit: each a savepoint of one transaction).
    pub fn transaction<T, E>(&self, f: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<rusqlite::Error>,
    {
        if self.batch.load(std::sync::atomic::Ordering::Acquire) {
            // Inside a batch: a savepoint, undone alone when `f` fails.
            return in_savepoint(&self.conn(), f);
        }
        self.group.transaction(&self.conn, f)
    }

    /// Opens a batch: every transaction begun until [`MemoryStore::end_batch`]
    /// joins one (each a savepoint of it, undone alone when it fails),
    /// committed once at the end. For a store one thread works through
    /// step by step with no step needing its own commit (replay's scratch
    /// store): nothing is durable before the end.
    pub fn begin_batch(&self) -> MemoryResult<()> {
        let conn = self.conn();
        conn.execute_batch("BEGIN IMMEDIATE")?;
        if let Err(e) = super::deferred::defer(&conn) {
            conn.execute_batch("ROLLBACK")?;
            return Err(e.into());
        }
        self.batch.store(true, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// Ends the batch: commits it (`keep`), its changes to the text index
    /// applied first (a batch defers them, as a group commit does), or
    /// rolls it back.
    pub fn end_batch(&self, keep: bool) -> MemoryResult<()> {
        self.batch
            .store(false, std::sync::atomic::Ordering::Release);
        let conn = self.conn();
        if keep {
            let finished = super::deferred::finish(&conn);
            if finished.is_err() {
                conn.execute_batch("ROLLBACK")?;
            }
            finished?;
        }
        conn.execute_batch(if keep { "COMMIT" } else { "ROLLBACK" })?;
        Ok(())
    }

    /// How many commits transactions have made, and how many transactions
    /// they held (more transactions than commits: group commit at work).
    pub fn commits(&self) -> (u64, u64) {
        self.group.counts()
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> MemoryResult<i64> {
        Ok(self
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }
}

/// Runs `f` in a savepoint of `conn`'s open transaction: released when
/// it returns `Ok`, undone when it fails or panics. The savepoint's
/// statements are prepared once per connection (rusqlite's `Savepoint`
/// prepares its SQL anew each time: a tenth of a step of replay).
pub(super) fn in_savepoint<T, E>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<rusqlite::Error>,
{
    /// Undoes the savepoint unless disarmed.
    struct Undo<'c>(Option<&'c Connection>);
    impl Drop for Undo<'_> {
        fn drop(&mut self) {
            if let Some(conn) = self.0 {
                // Nothing more can be done when undoing fails: the
                // transaction that holds it is rolled back by its owner.
                let _ = conn
                    .prepare_cached("ROLLBACK TO partner_step")
                    .and_then(|mut s| s.execute([]));
                let _ = conn
                    .prepare_cached("RELEASE partner_step")
                    .and_then(|mut s| s.execute([]));
            }
        }
    }
    conn.prepare_cached("SAVEPOINT partner_step")?.execute([])?;
    let mut undo = Undo(Some(conn));
    let value = f(conn)?;
    conn.prepare_cached("RELEASE partner_step")?.execute([])?;
    undo.0 = None;
    Ok(value)
}

/// True for SQLite's "busy" and "locked" answers.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn schema_version(conn: &Connection) -> MemoryResult<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Refuses a version this binary cannot work with.
fn check_version(conn: &Connection, found: i64, known: i64) -> MemoryResult<()> {
    if found < 0 {
        return Err(MemoryError::BadSchema(format!(
            "its schema version is {found}, which no partner writes; it is not a partner database or it was damaged (nothing was changed)"
        )));
    }
    if found > known {
        return Err(MemoryError::NewerSchema { found, known });
    }
    if found == 0 {
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(MemoryError::BadSchema(format!(
                "it holds {tables} tables but no partner schema version (user_version 0); it is not a partner database or it was damaged (nothing was changed)"
            )));
        }
    }
    Ok(())
}

fn migrate(conn: &mut Connection) -> MemoryResult<()> {
    let known = current_version();
    let found = schema_version(conn)?;
    if found == known {
        return Ok(());
    }
    if found < 0 || found > known {
        return check_version(conn, found, known);
    }
    // Another process may be migrating the same file: take the write lock,
    // then look again.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
    let found = schema_version(&tx)?;
    check_version(&tx, found, known)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.execute_batch(sql).map_err(|e| {
            let reason = match &e {
                rusqlite::Error::SqliteFailure(_, Some(message)) => {
                    message.lines().next().unwrap_or("").to_string()
                }
                other => other.to_string().lines().next().unwrap_or("").to_string(),
            };
            MemoryError::BadSchema(format!(
                "updating it to schema version {} failed: {reason} (nothing was changed)",
                index + 1
            ))
        })?;
    }
    tx.pragma_update(None, "user_version", known)?;
    tx.commit()?;
    Ok(())
}
