//! Group commit: transactions that arrive while another runs share its
//! commit. Each runs as a savepoint of one open transaction (undone alone
//! when it fails); the last of them — the one that finds nobody waiting
//! for the connection — commits for all, and each returns only once the
//! commit that holds its work is durable. One writer alone commits at
//! once, as before; eight writers pay for one `fsync` between them, and
//! for one write of the text index (`deferred`). Waiters stay awake for a
//! moment (yielding) before they sleep: on a virtual machine waking a
//! sleeping thread took longer than a member's turn with the connection,
//! and eight writers spent more time handing it over than using it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::Connection;

/// Most transactions one commit takes before it is made anyway.
const MAX_MEMBERS: usize = 512;

/// Longest a transaction waits for the commit that holds its work.
const COMMIT_WAIT: Duration = Duration::from_secs(60);

/// Failed commits remembered for those that wait on them.
const FAILURES_KEPT: usize = 64;

/// The store's group commit.
#[derive(Debug, Default)]
pub(super) struct GroupCommit {
    /// Transactions waiting for the writer connection.
    queued: AtomicUsize,
    groups: Mutex<Groups>,
    settled: Condvar,
    /// `Groups::settled`, read without the lock by those waiting awake.
    settled_upto: AtomicU64,
    /// Commits made, and transactions they held.
    counts: Mutex<(u64, u64)>,
}

#[derive(Debug, Default)]
struct Groups {
    /// The open group's number and how many transactions it holds.
    open: Option<(u64, usize)>,
    /// The last number given to a group.
    last: u64,
    /// Every group up to this number is committed or failed.
    settled: u64,
    /// Groups whose commit failed, and why.
    failed: VecDeque<(u64, String)>,
}

/// Longest a transaction waits for the connection awake before it sleeps.
const AWAKE: Duration = Duration::from_micros(200);

/// Longest a transaction waits awake for the commit that holds its work.
const AWAKE_COMMIT: Duration = Duration::from_micros(1_000);

/// Asks `ready` again and again, yielding between, for at most `limit`:
/// its answer once it has one. Waking a sleeping thread takes tens of
/// microseconds on a virtual machine — about as long as a member of a
/// group holds the connection — so a waiter stays awake for a while
/// before it sleeps.
fn awake_for<T>(limit: Duration, mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let started = Instant::now();
    loop {
        if let Some(answer) = ready() {
            return Some(answer);
        }
        if started.elapsed() >= limit {
            return None;
        }
        std::thread::yield_now();
    }
}

/// Takes the connection, waiting awake for a while first ([`awake_for`]).
fn take(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    let tried = awake_for(AWAKE, || match conn.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    });
    tried.unwrap_or_else(|| conn.lock().unwrap_or_else(|e| e.into_inner()))
}

/// An error that reaches every member of a failed commit.
fn commit_error(message: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
        Some(message),
    )
}

impl GroupCommit {
    fn groups(&self) -> MutexGuard<'_, Groups> {
        self.groups.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` in a transaction of `conn`'s, sharing its commit with the
    /// transactions that queue meanwhile; `Ok` only once it is durable.
    pub(super) fn transaction<T, E>(
        &self,
        conn: &Mutex<Connection>,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<rusqlite::Error>,
    {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let guard = take(conn);
        self.queued.fetch_sub(1, Ordering::SeqCst);
        let (group, joined) = self.join(&guard)?;
        // From here on every way out goes through the commit decision. A
        // panic in `f` undoes its savepoint and is carried on past the
        // group's commit: the work of those who left it to this one still
        // commits (they would otherwise wait out the deadline, told it
        // failed, and the next group commit it after all).
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::store::in_savepoint(&guard, |conn| {
                // One that joins a group defers its text index (undone
                // with its savepoint when it fails).
                if joined {
                    super::deferred::defer(conn)?;
                }
                f(conn)
            })
        }));
        let members = self.groups().open.map_or(0, |(_, n)| n);
        if self.queued.load(Ordering::SeqCst) > 0 && members < MAX_MEMBERS {
            // Whoever takes the connection next commits this work too.
            drop(guard);
            return match outcome {
                Ok(Ok(value)) => self.wait_for(group).map(|()| value).map_err(E::from),
                Ok(Err(e)) => Err(e),
                Err(panic) => std::panic::resume_unwind(panic),
            };
        }
        let committed = self.commit(&guard, group, members);
        drop(guard);
        let outcome = outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match committed {
            Err(e) if outcome.is_ok() => Err(e.into()),
            _ => outcome,
        }
    }

    /// Commits the open `group` of `members` transactions on `conn` (its
    /// deferred text index written first), or rolls it back when that
    /// fails, and tells its members.
    fn commit(&self, conn: &Connection, group: u64, members: usize) -> rusqlite::Result<()> {
        let committed = super::deferred::finish(conn).and_then(|()| conn.execute_batch("COMMIT"));
        {
            let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
            counts.0 += 1;
            counts.1 += members as u64;
        }
        if committed.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        self.settle(group, committed.as_ref().err().map(ToString::to_string));
        committed
    }

    /// Commits made so far, and the transactions they held.
    pub(super) fn counts(&self) -> (u64, u64) {
        *self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The open group's number, opening one when none is, and whether it
    /// was open. Those that join a group defer its text index (the one
    /// that opens it writes its own at once: a commit of one transaction
    /// alone, a writer by itself, then writes no page for the deferral).
    fn join(&self, conn: &Connection) -> rusqlite::Result<(u64, bool)> {
        if let Some((group, members)) = self.groups().open.as_mut()
            && !conn.is_autocommit()
        {
            *members += 1;
            return Ok((*group, true));
        }
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let mut groups = self.groups();
        groups.last += 1;
        let group = groups.last;
        groups.open = Some((group, 1));
        Ok((group, false))
    }

    /// Marks `group` committed (or failed, with why) and wakes its members.
    fn settle(&self, group: u64, failure: Option<String>) {
        let mut groups = self.groups();
        groups.open = None;
        groups.settled = groups.settled.max(group);
        self.settled_upto.store(groups.settled, Ordering::Release);
        if let Some(why) = failure {
            if groups.failed.len() >= FAILURES_KEPT {
                groups.failed.pop_front();
            }
            groups.failed.push_back((group, why));
        }
        drop(groups);
        self.settled.notify_all();
    }

    /// Waits until `group` is settled: `Err` when its commit failed or did
    /// not come within [`COMMIT_WAIT`].
    fn wait_for(&self, group: u64) -> rusqlite::Result<()> {
        let deadline = Instant::now() + COMMIT_WAIT;
        // Awake for a while first: a commit takes a few hundred
        // microseconds.
        awake_for(AWAKE_COMMIT, || {
            (self.settled_upto.load(Ordering::Acquire) >= group).then_some(())
        });
        let mut groups = self.groups();
        while groups.settled < group {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(commit_error(format!(
                    "the commit holding this write did not finish within {} s",
                    COMMIT_WAIT.as_secs()
                )));
            }
            groups = self
                .settled
                .wait_timeout(groups, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        match groups.failed.iter().find(|(g, _)| *g == group) {
            Some((_, why)) => Err(commit_error(format!("the commit failed: {why}"))),
            None => Ok(()),
        }
    }
}
