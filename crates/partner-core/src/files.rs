//! Files partner creates are the user's alone: files 0600, directories
//! 0700. The binary sets its umask to 077 when it starts
//! ([`private_umask`]), so every file it makes (the database and its
//! WAL, the token, histories, exports, sockets) is private; what the
//! library makes itself is made private explicitly ([`create_private_file`],
//! [`create_private_dir`]); approved shell commands get the user's own
//! umask back ([`user_umask`]).

use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

/// The umask the process started with (what shell commands run with).
static USER_UMASK: AtomicU32 = AtomicU32::new(0o022);

/// Makes everything this process creates from now on private (umask 077),
/// keeping the user's umask for the commands it runs.
pub fn private_umask() {
    // SAFETY: umask(2) only swaps the process's file-creation mask.
    let old = unsafe { libc::umask(0o077) };
    USER_UMASK.store(old as u32, Ordering::Relaxed);
}

/// The umask the user started partner with.
pub fn user_umask() -> u32 {
    USER_UMASK.load(Ordering::Relaxed)
}

/// Creates `path` and its missing parents, each 0700.
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}

/// Creates `path` empty with mode 0600 when it does not exist yet (an
/// existing file is left as it is).
pub fn create_private_file(path: &Path) -> io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
