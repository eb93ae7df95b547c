//! Running a command the partner approved, bounded and contained: `bash`
//! in a configured working directory, with a scrubbed environment (only
//! [`KEPT_ENV`] and a private `TMPDIR` pass: never a provider's key, a
//! token or a `PARTNER_*` setting), no input, a new session with no
//! controlling terminal, output capped, a timeout, cancellation, the
//! sandbox of [`super::sandbox`] — and nothing outlives it.
//!
//! Containment: the command runs under a supervisor shell. Behind the
//! namespace wall the supervisor is the first process of its own PID
//! namespace, which the kernel empties when it ends; without it the
//! supervisor is a child subreaper (`PR_SET_CHILD_SUBREAPER`). Either way
//! every process the command starts — backgrounded, `setsid`, `nohup`,
//! double-forked — stays in the supervisor's tree, where
//! [`super::containment`] finds and kills it when the command ends, times
//! out or is cancelled, or partner quits ([`stop_all`]). Where a cgroup
//! can be made the command runs in its own too, and the cgroup is killed
//! whole; cgroups a partner killed with `kill -9` left behind are swept at
//! the next run. Probes use the same runner, without the sandbox.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::containment::{self, Cgroup, Live};
use super::sandbox::{Plan, Prepared, Report, Walls, walls};
use super::scene::Scene;
use partner_core::cancel::Cancel;

/// What a run gave back.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Ran {
    /// The exit status (`None` when it was killed).
    pub status: Option<i32>,
    /// Its output, at most the cap (lossy UTF-8).
    pub stdout: String,
    /// Its error output, at most the cap.
    pub stderr: String,
    /// It ran out of time.
    pub timed_out: bool,
    /// It was cancelled.
    pub cancelled: bool,
    /// Output beyond the cap was dropped.
    pub truncated: bool,
    /// How it was sandboxed (`None`: it was not).
    pub sandbox: Option<String>,
    /// How what it started was kept from outliving it (`cgroup` or
    /// `subreaper`).
    pub contained: String,
    /// Processes it left behind that were killed when it ended.
    pub killed_leftovers: usize,
}

/// Environment variables a command keeps (and `TMPDIR`, its own).
pub const KEPT_ENV: &[&str] = &[
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME",
];

/// The supervisor: runs the command as its child, reports its status on
/// fd 3, then waits (holding every leftover in its tree) until partner
/// closes fd 4.
const SUPERVISOR: &str = r#"bash -c "$1" 3>&- 4<&-
s=$?
printf '%s\n' "$s" >&3
exec 3>&-
read -r _ <&4
exit "$s""#;

/// How to run a command.
#[derive(Clone, Copy)]
pub struct RunOptions<'a> {
    /// The working directory.
    pub dir: &'a Path,
    /// Longest it may run.
    pub timeout: Duration,
    /// Most bytes of each output stream kept.
    pub cap: usize,
    /// Cancellation (the agent halted, partner quitting).
    pub cancel: Option<&'a Cancel>,
    /// The sandbox, with the scene its plan was made for; `None` runs it
    /// unsandboxed.
    pub sandbox: Option<(&'a Plan, &'a Scene)>,
    /// The walls to raise; `None`: every wall this machine has
    /// ([`walls`]).
    pub walls: Option<&'a Walls>,
    /// Try a cgroup (else the subreaper alone).
    pub cgroup: bool,
}

/// Runs `program` with `args` (no shell) for probes: what it gave back, or
/// `None` when it cannot start or does not finish in `timeout`.
pub fn probe(program: &str, args: &[&str], timeout: Duration) -> Option<Ran> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    plain(cmd, timeout, 8 * 1024 * 1024)
        .ok()
        .filter(|r| !r.timed_out)
}

/// Runs `command` with `bash -c` in `dir`, contained, unsandboxed.
pub fn run_shell(
    command: &str,
    dir: &Path,
    timeout: Duration,
    cap: usize,
    cancel: Option<&Cancel>,
) -> Result<Ran, String> {
    run(
        command,
        &RunOptions {
            dir,
            timeout,
            cap,
            cancel,
            sandbox: None,
            walls: None,
            cgroup: true,
        },
    )
}

/// A private temporary directory, removed when dropped.
struct PrivateTmp(PathBuf);

impl PrivateTmp {
    fn new() -> Result<PrivateTmp, String> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = std::env::temp_dir().join(format!(
            "partner-run-{}-{:016x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("could not make its temporary directory: {e}"))?;
        Ok(PrivateTmp(dir))
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `command` with `bash`, as `opts` says.
pub fn run(command: &str, opts: &RunOptions) -> Result<Ran, String> {
    let tmp = PrivateTmp::new()?;
    let walls = match (opts.sandbox, opts.walls) {
        (None, _) => Walls::none("no sandbox was asked for"),
        (Some(_), Some(w)) => w.clone(),
        (Some(_), None) => walls(),
    };
    let (prepared, report) = match opts.sandbox {
        Some((plan, scene)) => {
            let (p, r) = plan
                .prepare(scene, &tmp.0, &walls)
                .map_err(|e| format!("could not build its sandbox: {e}"))?;
            (Some(p), Some(r))
        }
        None => (None, None),
    };
    let cgroup = if opts.cgroup { Cgroup::create() } else { None };
    let (status_r, status_w) = std::io::pipe().map_err(|e| e.to_string())?;
    let (hold_r, hold_w) = std::io::pipe().map_err(|e| e.to_string())?;
    let inner_tmp = if walls.namespaces.is_ok() {
        Path::new("/tmp")
    } else {
        tmp.0.as_path()
    };
    let mut cmd = supervised(command, opts.dir, inner_tmp);
    let (sw, hr) = (status_w.as_raw_fd(), hold_r.as_raw_fd());
    prepare_child(&mut cmd, sw, hr, cgroup.as_ref(), prepared);
    let spawned = cmd.spawn();
    // The parent's copies of the child's ends (the report's among them,
    // held by the command) go, so that the pipes close with the child.
    drop(cmd);
    drop(status_w);
    drop(hold_r);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let why = report
                .and_then(Report::read)
                .unwrap_or_else(|| e.to_string());
            return Err(format!("could not start it: {why}"));
        }
    };
    // Behind namespaces the supervisor is the child's own child.
    let supervisor = match walls.namespaces {
        Ok(()) => containment::only_child(child.id() as i32).unwrap_or(child.id() as i32),
        Err(_) => child.id() as i32,
    };
    let live = Live::register(supervisor, child.id() as i32, cgroup);
    let out = read_capped(child.stdout.take(), opts.cap);
    let err = read_capped(child.stderr.take(), opts.cap);
    let mut ran = Ran {
        sandbox: opts
            .sandbox
            .map(|(plan, scene)| format!("{}; {}", walls.raised(), plan.summary(scene))),
        contained: live.kind(walls.namespaces.is_ok()).into(),
        ..Ran::default()
    };
    wait_for(&mut child, read_status(status_r), opts, &mut ran)?;
    // Whatever it left running is killed before the supervisor may go.
    ran.killed_leftovers = live.stop();
    drop(hold_w);
    let deadline = Instant::now() + Duration::from_secs(2);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    live.finish();
    collect(&mut ran, &out, &err);
    if ran.timed_out || ran.cancelled {
        ran.status = None;
    }
    drop(tmp);
    Ok(ran)
}

/// The supervisor's command: `bash` running [`SUPERVISOR`] with the
/// command, in `dir`, its environment scrubbed, `TMPDIR` its own.
fn supervised(command: &str, dir: &Path, tmp: &Path) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(SUPERVISOR)
        .arg("partner-run")
        .arg(command)
        .current_dir(dir)
        .env_clear();
    for key in KEPT_ENV {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    cmd.env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// What the child does between fork and exec: become a subreaper, join
/// its cgroup, enter its sandbox (or, without one, a new session with no
/// controlling terminal) and put the status and hold pipes at fds 3 and
/// 4.
fn prepare_child(
    cmd: &mut Command,
    status_fd: i32,
    hold_fd: i32,
    cgroup: Option<&Cgroup>,
    mut prepared: Option<Prepared>,
) {
    use std::os::unix::process::CommandExt;
    let join = cgroup.map(Cgroup::procs_path);
    // The command creates files as the user would, not as partner does.
    let umask = partner_core::files::user_umask() as libc::mode_t;
    // SAFETY: between fork and exec the closure makes only
    // async-signal-safe calls (umask, prctl, open, write, close, fcntl,
    // dup2, setsid, and the sandbox's system calls) and applies walls
    // built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(umask);
            containment::become_subreaper()?;
            if let Some(path) = &join {
                containment::join_cgroup(path);
            }
            // The pipes go to 3 and 4 only once the sandbox is raised:
            // its own descriptors may be at either until then.
            let status = containment::lift_fd(status_fd)?;
            let hold = containment::lift_fd(hold_fd)?;
            match prepared.as_mut() {
                Some(p) => p.apply()?,
                None => containment::new_session()?,
            }
            containment::place_fd(status, 3)?;
            containment::place_fd(hold, 4)?;
            Ok(())
        });
    }
}

/// Waits until the command reports its status, the supervisor dies, the
/// time is up or the run is cancelled.
fn wait_for(
    child: &mut std::process::Child,
    status: mpsc::Receiver<Option<i32>>,
    opts: &RunOptions,
    ran: &mut Ran,
) -> Result<(), String> {
    let start = Instant::now();
    loop {
        if let Ok(code) = status.try_recv() {
            ran.status = code;
            return Ok(());
        }
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            // The supervisor itself was killed: what is left is cleaned up.
            return Ok(());
        }
        let cancelled = opts.cancel.is_some_and(|c| *c.borrow());
        if start.elapsed() >= opts.timeout || cancelled {
            ran.timed_out = !cancelled;
            ran.cancelled = cancelled;
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The command's exit status as the supervisor reports it.
fn read_status(mut pipe: std::io::PipeReader) -> mpsc::Receiver<Option<i32>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let mut buf = [0u8; 32];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 || text.len() > 64 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(&buf[..n]));
            if text.contains('\n') {
                let _ = tx.send(text.trim().parse::<i32>().ok());
                return;
            }
        }
    });
    rx
}

fn read_capped<R: Read + Send + 'static>(
    pipe: Option<R>,
    cap: usize,
) -> mpsc::Receiver<(String, bool)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut truncated = false;
        if let Some(mut pipe) = pipe {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                truncated |= n > room;
            }
        }
        let _ = tx.send((String::from_utf8_lossy(&kept).into_owned(), truncated));
    });
    rx
}

/// A probe: one program, its process group killed at the timeout.
fn plain(mut cmd: Command, timeout: Duration, cap: usize) -> Result<Ran, String> {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start it: {e}"))?;
    let out = read_capped(child.stdout.take(), cap);
    let err = read_capped(child.stderr.take(), cap);
    let start = Instant::now();
    let mut ran = Ran {
        contained: "process group".into(),
        ..Ran::default()
    };
    let pid = child.id() as i32;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            ran.status = status.code();
            break;
        }
        if start.elapsed() >= timeout {
            ran.timed_out = true;
            // SAFETY: kill(2) on our own child's process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    collect(&mut ran, &out, &err);
    Ok(ran)
}

/// The output the readers kept. A process that escaped and still holds
/// the pipes cannot keep us waiting: the readers get a moment, then we go
/// on.
fn collect(
    ran: &mut Ran,
    out: &mpsc::Receiver<(String, bool)>,
    err: &mpsc::Receiver<(String, bool)>,
) {
    let grace = Duration::from_secs(1);
    let (stdout, t1) = out.recv_timeout(grace).unwrap_or_default();
    let (stderr, t2) = err.recv_timeout(grace).unwrap_or_default();
    ran.stdout = stdout;
    ran.stderr = stderr;
    ran.truncated = t1 || t2;
}

/// Kills every approved command still running and what it started (for
/// partner quitting).
pub fn stop_all() -> usize {
    containment::stop_all()
}
