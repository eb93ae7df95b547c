//! Running a command the partner approved, bounded: `bash -c` in a
//! configured working directory, with a scrubbed environment (only `PATH`,
//! `HOME`, `LANG`, `TERM` and `USER` pass), no input, output capped, a
//! timeout, and cancellation — the whole process group is killed when the
//! time is up or the run is cancelled. Probes use the same runner.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::net::Cancel;

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
}

/// Environment variables a command keeps.
const KEPT_ENV: &[&str] = &["PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME"];

/// Runs `program` with `args` (no shell) for probes: what it gave back, or
/// `None` when it cannot start or does not finish in `timeout`.
pub fn probe(program: &str, args: &[&str], timeout: Duration) -> Option<Ran> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    bounded(cmd, timeout, 8 * 1024 * 1024, None)
        .ok()
        .filter(|r| !r.timed_out)
}

/// Runs `command` with `bash -c` in `dir`.
pub fn run_shell(
    command: &str,
    dir: &Path,
    timeout: Duration,
    cap: usize,
    cancel: Option<&Cancel>,
) -> Result<Ran, String> {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(command).current_dir(dir).env_clear();
    for key in KEPT_ENV {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    bounded(cmd, timeout, cap, cancel)
}

fn bounded(
    mut cmd: Command,
    timeout: Duration,
    cap: usize,
    cancel: Option<&Cancel>,
) -> Result<Ran, String> {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start it: {e}"))?;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
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
    };
    let out = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let mut ran = Ran::default();
    let pid = child.id() as i32;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            ran.status = status.code();
            break;
        }
        let cancelled = cancel.is_some_and(|c| *c.borrow());
        if start.elapsed() >= timeout || cancelled {
            ran.timed_out = !cancelled;
            ran.cancelled = cancelled;
            // The whole group: what it started goes too.
            // kill(1) on the group: no libc binding needed.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // A process that left the group and still holds the pipes cannot
    // keep us waiting: the readers get a moment, then we go on.
    let grace = Duration::from_secs(1);
    let (stdout, t1) = out.recv_timeout(grace).unwrap_or_default();
    let (stderr, t2) = err.recv_timeout(grace).unwrap_or_default();
    ran.stdout = stdout;
    ran.stderr = stderr;
    ran.truncated = t1 || t2;
    Ok(ran)
}
