//! A daemon's connections to PostgreSQL: up to [`POOL`] open at once,
//! each lent to one operation or transaction at a time, so the agents'
//! work runs side by side instead of queueing on one connection. A
//! connection the server closed is dropped, not lent again; one that
//! failed to begin a transaction is discarded by its borrower. (A small
//! pool of our own: the driver is the blocking `postgres` crate, and no
//! pool crate for it is in this build's registry.)

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use postgres::{Client, Config, NoTls};

use crate::memory::{MemoryError, MemoryResult};

/// Most connections a store opens.
pub const POOL: usize = 8;

/// Longest an operation waits for a connection when all are lent.
pub const WAIT: Duration = Duration::from_secs(30);

/// The connections: those idle, and how many are open in all.
#[derive(Default)]
struct Slots {
    idle: Vec<Client>,
    open: usize,
}

/// A pool of connections to one database.
pub(super) struct Pool {
    slots: Mutex<Slots>,
    freed: Condvar,
    config: Config,
    shown: String,
}

/// A connection lent by the pool, given back when dropped.
pub struct Pooled<'a> {
    pool: &'a Pool,
    client: Option<Client>,
    /// Cleared when the connection must be closed, not given back.
    keep: Arc<AtomicBool>,
}

impl Pool {
    /// A pool holding `first` (already connected).
    pub(super) fn new(first: Client, config: Config, shown: String) -> Pool {
        Pool {
            slots: Mutex::new(Slots {
                idle: vec![first],
                open: 1,
            }),
            freed: Condvar::new(),
            config,
            shown,
        }
    }

    /// Opens connections until `want` are open (a daemon's, at start: so
    /// the first busy moment does not wait for connections to be made).
    pub(super) fn warm(&self, want: usize) -> MemoryResult<()> {
        let want = want.min(POOL);
        let mut opened = Vec::new();
        while self.slots().open + opened.len() < want {
            opened.push(
                self.config.connect(NoTls).map_err(|e| {
                    MemoryError::Postgres(format!("cannot reach {}: {e}", self.shown))
                })?,
            );
        }
        let mut slots = self.slots();
        slots.open += opened.len();
        slots.idle.extend(opened);
        Ok(())
    }

    /// Closes the idle connections (the server dropped one: the others
    /// likely went with it); the next work opens new ones.
    pub(super) fn close_idle(&self) {
        let mut slots = self.slots();
        let idle = std::mem::take(&mut slots.idle);
        slots.open -= idle.len();
        drop(slots);
        close(idle);
        self.freed.notify_all();
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle connection, a new one while fewer than [`POOL`] are open,
    /// else the next one given back (waiting at most [`WAIT`]).
    pub(super) fn get(&self) -> MemoryResult<Pooled<'_>> {
        let deadline = std::time::Instant::now() + WAIT;
        let mut slots = self.slots();
        loop {
            while let Some(client) = slots.idle.pop() {
                if !client.is_closed() {
                    return Ok(Pooled::lent(self, client));
                }
                slots.open -= 1;
            }
            if slots.open < POOL {
                slots.open += 1;
                drop(slots);
                return match self.config.connect(NoTls) {
                    Ok(client) => Ok(Pooled::lent(self, client)),
                    Err(e) => {
                        self.slots().open -= 1;
                        self.freed.notify_one();
                        Err(MemoryError::Postgres(format!(
                            "cannot reach {}: {e}",
                            self.shown
                        )))
                    }
                };
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(MemoryError::Postgres(format!(
                    "all {POOL} connections to {} stayed busy for {} s",
                    self.shown,
                    WAIT.as_secs()
                )));
            }
            slots = self
                .freed
                .wait_timeout(slots, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl<'a> Pooled<'a> {
    fn lent(pool: &'a Pool, client: Client) -> Self {
        Pooled {
            pool,
            client: Some(client),
            keep: Arc::new(AtomicBool::new(true)),
        }
    }

    /// What closes this connection instead of giving it back, when set
    /// to false (it may be broken in a way the driver has not noticed):
    /// usable while the connection is borrowed.
    pub fn keeper(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.keep)
    }
}

impl Deref for Pooled<'_> {
    type Target = Client;

    fn deref(&self) -> &Client {
        self.client
            .as_ref()
            .expect("a lent connection is there until dropped")
    }
}

impl DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client
            .as_mut()
            .expect("a lent connection is there until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        let mut slots = self.pool.slots();
        match self.client.take() {
            Some(client) if !client.is_closed() && self.keep.load(Ordering::SeqCst) => {
                slots.idle.push(client)
            }
            Some(client) => {
                slots.open -= 1;
                close(vec![client]);
            }
            None => slots.open -= 1,
        }
        drop(slots);
        self.pool.freed.notify_one();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        close(std::mem::take(&mut self.slots().idle));
    }
}

/// Closes connections on a thread of their own: the driver blocks while
/// it closes one, which it may not do on an async runtime's thread (a
/// store dropped as a daemon stops).
fn close(clients: Vec<Client>) {
    if clients.is_empty() {
        return;
    }
    let held = Arc::new(Mutex::new(Some(clients)));
    let theirs = Arc::clone(&held);
    let spawned = std::thread::Builder::new()
        .name("partner-pg-close".into())
        .spawn(move || drop(theirs.lock().unwrap_or_else(|e| e.into_inner()).take()));
    if spawned.is_err() {
        // Left open rather than closed where blocking is not allowed: the
        // server notices the sockets go when the process ends.
        std::mem::forget(held.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}
