//! Keeping what an approved command starts from outliving it: the
//! supervisor is a child subreaper, so every descendant stays in its
//! tree, found through `/proc` and stopped then killed in rounds until
//! none is left; where a cgroup v2 directory can be made the command also
//! runs in one, killed whole (`cgroup.kill`). Live runs are registered so
//! that partner quitting kills them ([`stop_all`]); cgroups left by a
//! partner that was killed are swept at the next run.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Rounds of stopping and killing before giving up.
const MAX_ROUNDS: usize = 200;
/// Longest the killing goes on.
const KILL_DEADLINE: Duration = Duration::from_secs(3);

/// Makes the calling process a child subreaper (between fork and exec).
pub(super) fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Starts a new session with no controlling terminal, killed when
/// partner goes (between fork and exec, for a command run without the
/// sandbox, which does the same).
pub(super) fn new_session() -> std::io::Result<()> {
    // SAFETY: setsid and prctl with integer arguments.
    unsafe {
        if libc::setsid() < 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    }
    Ok(())
}

/// The one live child of `pid`, if it has exactly one.
pub fn only_child(pid: i32) -> Option<i32> {
    let children: Vec<i32> = parents()
        .into_iter()
        .filter(|(_, ppid)| *ppid == pid)
        .map(|(child, _)| child)
        .collect();
    match children.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is
/// `procs` (between fork and exec; a failure leaves it where it was).
pub(super) fn join_cgroup(procs: &CString) {
    // SAFETY: open/write/close on a path built before the fork.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::write(fd, b"0".as_ptr().cast(), 1);
            libc::close(fd);
        }
    }
}

/// A copy of `fd` at 10 or above (between fork and exec): descriptors
/// lifted first cannot be overwritten when others are placed at low
/// numbers, nor overwrite one still needed (the sandbox's ruleset).
pub(super) fn lift_fd(fd: i32) -> std::io::Result<i32> {
    // SAFETY: fcntl on a descriptor this process holds.
    let high = unsafe { libc::fcntl(fd, libc::F_DUPFD, 10) };
    if high < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(high)
}

/// Puts a lifted descriptor at `target` without close-on-exec, and closes
/// the lifted copy (between fork and exec).
pub(super) fn place_fd(high: i32, target: i32) -> std::io::Result<()> {
    // SAFETY: dup2/close on descriptors this process holds.
    unsafe {
        if libc::dup2(high, target) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::close(high);
    }
    Ok(())
}

/// A cgroup made for one run.
#[derive(Debug)]
pub struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// A new cgroup under this process's own, when the cgroup v2 file
    /// system is there and writable.
    pub fn create() -> Option<Cgroup> {
        let parent = own_cgroup()?;
        sweep(&parent);
        let dir = parent.join(format!(
            "partner-run-{}-{:x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        std::fs::create_dir(&dir).ok()?;
        Some(Cgroup { dir })
    }

    /// Its `cgroup.procs`, as the child writes it.
    pub fn procs_path(&self) -> CString {
        CString::new(self.dir.join("cgroup.procs").to_string_lossy().as_bytes()).unwrap_or_default()
    }

    fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Kills everything in it; the number it held.
    fn kill(&self) -> usize {
        let held = self.pids().len();
        if std::fs::write(self.dir.join("cgroup.kill"), "1").is_err() {
            for pid in self.pids() {
                signal(pid, libc::SIGKILL);
            }
        }
        held
    }

    /// Removes it once it is empty (waiting a moment for the kernel).
    fn remove(&self) {
        let deadline = Instant::now() + KILL_DEADLINE;
        while std::fs::remove_dir(&self.dir).is_err() && Instant::now() < deadline {
            if !self.pids().is_empty() {
                self.kill();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// This process's cgroup v2 directory.
fn own_cgroup() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        right
            .starts_with("cgroup2 ")
            .then(|| left.split(' ').nth(4).map(PathBuf::from))?
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(mount.join(rel.trim_start_matches('/')))
}

/// Kills and removes the run cgroups of partners no longer running.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(owner) = name
            .strip_prefix("partner-run-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if owner != std::process::id() as i32 && !Path::new(&format!("/proc/{owner}")).exists() {
            let stale = Cgroup { dir: entry.path() };
            stale.kill();
            stale.remove();
        }
    }
}

fn signal(pid: i32, sig: i32) {
    if pid > 1 {
        // SAFETY: kill(2) with a positive pid other than init.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Every live process's parent, from `/proc` (zombies left out).
fn parents() -> HashMap<i32, i32> {
    let mut out = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) S ppid …`: comm may hold spaces and parentheses.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        if let (false, Some(ppid)) = (state == "Z", fields.next().and_then(|p| p.parse().ok())) {
            out.insert(pid, ppid);
        }
    }
    out
}

/// Every live descendant of `root`.
pub fn descendants(root: i32) -> Vec<i32> {
    let parents = parents();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &ppid) in &parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut queue = vec![root];
    while let Some(p) = queue.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if !out.contains(&c) && out.len() < 100_000 {
                out.push(c);
                queue.push(c);
            }
        }
    }
    out
}

/// Stops then kills every descendant of `root` (not `root` itself), in
/// rounds, until none is left or the deadline passes; the number killed.
fn kill_descendants(root: i32) -> usize {
    let deadline = Instant::now() + KILL_DEADLINE;
    let mut killed: Vec<i32> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let found = descendants(root);
        if found.is_empty() || Instant::now() > deadline {
            break;
        }
        // Stopped first, so that none forks while the others die.
        for &p in &found {
            signal(p, libc::SIGSTOP);
        }
        for p in descendants(root).into_iter().chain(found) {
            signal(p, libc::SIGKILL);
            if !killed.contains(&p) {
                killed.push(p);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    killed.len()
}

/// A run in progress: its supervisor, the process partner started (the
/// supervisor itself, or, behind namespaces, the one that waits for it)
/// and its cgroup.
pub struct Live {
    pid: i32,
    started: i32,
    cgroup: Option<Cgroup>,
}

static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static CGROUPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

impl Live {
    /// Registers a run whose supervisor is `pid`, started as `started`.
    pub fn register(pid: i32, started: i32, cgroup: Option<Cgroup>) -> Live {
        if let Ok(mut live) = LIVE.lock() {
            live.push(pid);
        }
        if let (Some(c), Ok(mut all)) = (&cgroup, CGROUPS.lock()) {
            all.push(c.dir.clone());
        }
        Live {
            pid,
            started,
            cgroup,
        }
    }

    /// How it is contained: `pid namespace`, `cgroup` or `subreaper`
    /// (the strongest that holds).
    pub fn kind(&self, namespaces: bool) -> &'static str {
        match (namespaces, self.cgroup.is_some()) {
            (true, true) => "pid namespace + cgroup",
            (true, false) => "pid namespace",
            (false, true) => "cgroup",
            (false, false) => "subreaper",
        }
    }

    /// Kills everything the command started (the supervisor stays, to be
    /// let go); the number of processes killed.
    pub fn stop(&self) -> usize {
        let mut killed = kill_descendants(self.pid);
        if let Some(c) = &self.cgroup {
            // What is left in the cgroup but the supervisor and the
            // process that waits for it.
            let ours = [self.pid, self.started];
            for pid in c.pids().into_iter().filter(|p| !ours.contains(p)) {
                signal(pid, libc::SIGKILL);
                killed += 1;
            }
        }
        killed
    }

    /// The run is over: its cgroup is killed and removed.
    pub fn finish(self) {
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|p| *p != self.pid);
        }
        if let Some(c) = &self.cgroup {
            c.kill();
            c.remove();
            if let Ok(mut all) = CGROUPS.lock() {
                all.retain(|d| *d != c.dir);
            }
        }
    }
}

/// Kills every registered run and what it started; the number of runs.
pub fn stop_all() -> usize {
    let pids: Vec<i32> = LIVE.lock().map(|l| l.clone()).unwrap_or_default();
    for &pid in &pids {
        kill_descendants(pid);
        signal(pid, libc::SIGKILL);
    }
    let dirs: Vec<PathBuf> = CGROUPS.lock().map(|c| c.clone()).unwrap_or_default();
    for dir in dirs {
        let c = Cgroup { dir };
        c.kill();
        c.remove();
    }
    pids.len()
}
