//! Who may come in through a daemon's Unix socket. The socket file is
//! the owner's alone (0600), but a command the partner approved runs as
//! the owner too, so the file's mode says nothing about who is there. A
//! client is the partner only when it shows the daemon's **cookie** — a
//! random secret the daemon writes, when it starts, where no sandboxed
//! command can read it (the partner's data directory, which the sandbox
//! hides) — or a partner's token. And whatever it shows, a client whose
//! process runs inside a command's sandbox is turned away ([`Peer`]).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes of randomness in a cookie (written as hex).
const COOKIE_BYTES: usize = 32;
/// Most cookie files looked at when sweeping those of gone daemons.
const MAX_SWEEP: usize = 4096;

/// partner's data directory: `$XDG_DATA_HOME/partner`, else
/// `~/.local/share/partner` (as the binary's own `data_dir`).
pub fn data_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".local/share"),
    };
    Some(base.join("partner"))
}

/// Where the cookie of the daemon listening on `socket` is kept: the data
/// directory's `cookies/`, named by the socket's real path.
pub fn cookie_path(socket: &Path) -> Option<PathBuf> {
    cookie_in(&data_dir()?, socket)
}

/// Where a daemon whose data directory is `data` keeps the cookie of
/// `socket`.
pub fn cookie_in(data: &Path, socket: &Path) -> Option<PathBuf> {
    let dir = socket.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = match dir {
        Some(d) => std::fs::canonicalize(d).ok()?,
        None => std::env::current_dir().ok()?,
    };
    let real = dir.join(socket.file_name()?);
    // FNV-1a, 64 bits: a name, not a secret.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in real.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Some(data.join("cookies").join(format!("{hash:016x}")))
}

/// Makes a new cookie for the daemon on `socket` and keeps it (0600, in a
/// 0700 directory, written whole before it appears, with the socket's
/// path on its second line): the cookie. Cookies of daemons whose socket
/// is gone (killed outright) are swept first.
pub fn make_cookie(socket: &Path) -> io::Result<String> {
    let path = cookie_path(socket)
        .ok_or_else(|| io::Error::other("no home directory to keep the daemon's cookie in"))?;
    let dir = path.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(dir)?;
    crate::files::create_private_dir(dir)?;
    sweep(dir);
    let real = std::fs::canonicalize(socket.parent().unwrap_or(Path::new(".")))
        .map(|d| d.join(socket.file_name().unwrap_or_default()))
        .unwrap_or_else(|_| socket.to_path_buf());
    let mut random = [0u8; COOKIE_BYTES];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
    let cookie: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let partial = dir.join(format!(
        ".{}.{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)?;
        file.write_all(format!("{cookie}\n{}\n", real.display()).as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&partial, &path)?;
    Ok(cookie)
}

/// The cookie of the daemon on `socket`, when this process can read it.
pub fn read_cookie(socket: &Path) -> Option<String> {
    read_cookie_at(&cookie_path(socket)?)
}

/// The cookie kept at `path`, when it can be read and is one.
pub fn read_cookie_at(path: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(8192)
        .read_to_string(&mut text)
        .ok()?;
    let cookie = text.lines().next().unwrap_or("").trim();
    (cookie.len() == 2 * COOKIE_BYTES).then(|| cookie.to_string())
}

/// Removes the cookies in `dir` whose daemon's socket is gone.
fn sweep(dir: &Path) {
    for entry in std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .take(MAX_SWEEP)
    {
        let path = entry.path();
        let mut text = String::new();
        let read = std::fs::File::open(&path).and_then(|f| f.take(8192).read_to_string(&mut text));
        let socket = text.lines().nth(1).map(str::trim).unwrap_or("");
        let gone = read.is_ok() && !socket.is_empty() && std::fs::symlink_metadata(socket).is_err();
        if gone {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Removes the cookie of the daemon on `socket` (when it stops).
pub fn remove_cookie(socket: &Path) {
    if let Some(path) = cookie_path(socket) {
        let _ = std::fs::remove_file(path);
    }
}

/// Whether `shown` is `cookie`, in time that does not depend on where
/// they differ.
pub fn same_cookie(shown: &str, cookie: &str) -> bool {
    shown.len() == cookie.len()
        && shown
            .bytes()
            .zip(cookie.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The process at the other end of a Unix socket, as the kernel says
/// (`SO_PEERCRED`), and whether it runs inside a command's sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Its process id (0 when the kernel could not say).
    pub pid: i32,
    /// Its user id.
    pub uid: u32,
}

/// The argument partner's sandboxed commands carry as their supervisor's
/// name (`bash -c SUPERVISOR partner-run COMMAND`).
pub const SUPERVISOR_NAME: &str = "partner-run";

impl Peer {
    /// Why a process that says it is the partner cannot be: it runs in
    /// another user namespace (a sandbox's), or under the supervisor of
    /// an approved command. `None` when neither is so.
    pub fn sandboxed(&self) -> Option<String> {
        if self.pid <= 0 {
            return Some("the kernel did not say which process it is".into());
        }
        let ns = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/user")).ok();
        if let (Some(theirs), Some(ours)) = (ns(&self.pid.to_string()), ns("self"))
            && theirs != ours
        {
            return Some(format!(
                "process {} runs in another user namespace (a command's sandbox)",
                self.pid
            ));
        }
        let mut pid = self.pid;
        for _ in 0..64 {
            let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if args.split(|b| *b == 0).nth(3) == Some(SUPERVISOR_NAME.as_bytes()) {
                return Some(format!(
                    "process {} runs under an approved command (process {pid})",
                    self.pid
                ));
            }
            match parent_of(pid) {
                Some(p) if p > 1 => pid = p,
                _ => break,
            }
        }
        None
    }
}

/// A process's parent, from `/proc`.
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_compare_whole() {
        assert!(same_cookie("abcd", "abcd"));
        assert!(!same_cookie("abcd", "abce"));
        assert!(!same_cookie("abc", "abcd"));
        assert!(!same_cookie("", "abcd"));
    }

    #[test]
    fn this_process_is_not_sandboxed() {
        let me = Peer {
            pid: std::process::id() as i32,
            uid: 0,
        };
        assert_eq!(me.sandboxed(), None);
    }
}
