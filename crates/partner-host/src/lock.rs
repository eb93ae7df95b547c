//! One runtime per database: a lock file beside it (`FILE.lock`), held
//! exclusively for as long as the runtime runs and released by the
//! operating system when the process ends however it ends (so a daemon
//! killed with `kill -9` leaves nothing to clean up by hand). The file
//! says who holds it: pid, socket, start time.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Who holds a database's runtime lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// Where it listens (none for an embedded console).
    pub socket: Option<String>,
    /// When it started (milliseconds since the epoch).
    pub started_at: i64,
}

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub struct RuntimeLock {
    _file: File,
    path: PathBuf,
}

impl RuntimeLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The lock file of `db`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes `db`'s runtime lock for `holder`, or says who has it.
pub fn acquire(db: &Path, holder: &Holder) -> Result<RuntimeLock, String> {
    let path = lock_path(db);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(match holder_of(&mut file) {
                Some(Holder {
                    pid,
                    socket: Some(socket),
                    ..
                }) => format!(
                    "a partner daemon (pid {pid}) already runs this database; it listens on {socket} (partner status, partner attach)"
                ),
                Some(Holder { pid, .. }) => format!(
                    "partner (pid {pid}) already runs this database in a console; one runtime per database"
                ),
                None => "another partner already runs this database".into(),
            });
        }
        Err(TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    let text = serde_json::to_string(holder).unwrap_or_default();
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(text.as_bytes()))
        .and_then(|()| file.flush())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(RuntimeLock { _file: file, path })
}

fn holder_of(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(64 * 1024).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// Where the daemon running `db` listens: the socket its lock names, else
/// the default beside the database.
pub fn socket_of(db: &Path) -> PathBuf {
    holder(db)
        .and_then(|h| h.socket)
        .map(PathBuf::from)
        .unwrap_or_else(|| partner_protocol::socket_for(db))
}

/// Who holds `db`'s runtime lock now, if anyone.
pub fn holder(db: &Path) -> Option<Holder> {
    let mut file = File::open(lock_path(db)).ok()?;
    match file.try_lock_shared() {
        // Nobody holds it: what the file says is from a runtime that ended.
        Ok(()) => None,
        Err(_) => holder_of(&mut file),
    }
}
