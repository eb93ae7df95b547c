//! The sandbox an approved shell command runs in (Linux): three walls,
//! each standing where the others could fall.
//!
//! 1. **Namespaces** ([`mounts`], [`child`]) — done directly with
//!    `unshare(2)` between fork and exec, as bubblewrap and Flatpak do, so
//!    that Landlock and seccomp are raised in the same process after the
//!    mounts (bubblewrap would need a helper binary inside the sandbox for
//!    that) and nothing needs installing: a new user namespace (the user
//!    mapped to itself, every capability dropped), mount namespace (the
//!    whole tree read-only; the working directory, the build caches the
//!    plan names and a private `/tmp` writable; `/dev` new and minimal;
//!    `/run`, `/var/run`, `/var/tmp`, the secrets, the partner's own files
//!    and every listed socket hidden), PID namespace (the command's
//!    supervisor is its first process, so nothing outlives it and no
//!    signal reaches a process outside), IPC and UTS namespaces, and —
//!    with the network off — a network namespace with nothing in it.
//! 2. **Landlock** ([`rules`]): reads of everything but the secrets,
//!    writes only as planned, no signal or abstract socket across the
//!    sandbox's edge, no TCP with the network off.
//! 3. **seccomp** ([`filter`]): no `AF_UNIX` socket (so no daemon's
//!    socket, PostgreSQL's or a tmux server's, whatever the file system
//!    shows), no typing into a terminal, no ptrace, no io_uring, no new
//!    namespaces or mounts; with the network off no socket at all.
//!
//! Every command also starts in a new session with no controlling
//! terminal and dies with partner. The queue shows the plan and the walls
//! (`sandbox: writes: ./ + private tmp  network: off`); where a wall is
//! missing it says which and why, and approving asks once more
//! ([`describe`]). A command may not run at all where its working
//! directory is a home, the root, a system directory or a secret
//! ([`plan::refusal`]).
//!
//! The walls are built in the parent ([`Plan::prepare`]); the child only
//! raises them ([`Prepared::apply`]).

mod child;
mod filter;
mod mounts;
pub mod plan;
mod rules;
pub mod server;
mod walls;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub use child::{Prepared, Report};
pub use plan::{Plan, refusal};
pub use walls::{Walls, walls};

use super::scene::Scene;

impl Plan {
    /// The walls for this plan in `scene` with `tmp` as its private
    /// temporary directory, as far as `walls` says this machine has them;
    /// and where the child says why raising them failed.
    pub fn prepare(
        &self,
        scene: &Scene,
        tmp: &Path,
        walls: &Walls,
    ) -> Result<(Prepared, Report), String> {
        if let Some(why) = &self.refused {
            return Err(format!("it may not run here: {why}"));
        }
        let hidden = rules::denied(scene);
        let namespaces = walls.namespaces.is_ok().then(|| {
            // SAFETY: getuid/getgid cannot fail.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            child::Namespaces {
                mounts: mounts::Mounts::build(self, scene, tmp, &hidden),
                uid_map: CString::new(format!("{uid} {uid} 1")).unwrap_or_default(),
                gid_map: CString::new(format!("{gid} {gid} 1")).unwrap_or_default(),
                workdir: CString::new(self.writes[0].as_os_str().as_bytes()).unwrap_or_default(),
                network: !self.network.is_empty(),
            }
        });
        let ruleset = match walls.landlock {
            Ok(_) => Option::<std::os::fd::OwnedFd>::from(rules::ruleset(
                self,
                scene,
                tmp,
                namespaces.is_some(),
            )?),
            Err(_) => None,
        };
        let filters = match walls.seccomp {
            Ok(()) => filter::filters(!self.network.is_empty())?,
            Err(_) => Vec::new(),
        };
        let (read, write) = std::io::pipe().map_err(|e| e.to_string())?;
        Ok((
            Prepared {
                namespaces,
                ruleset,
                filters,
                report: Some(write.into()),
            },
            Report(Some(read)),
        ))
    }
}

/// What the queue says about how an approved command would run: `sandbox:
/// PLAN`, `PARTLY SANDBOXED (no namespaces (why)): PLAN`, `NOT SANDBOXED:
/// why`, or `NOT RUNNABLE HERE: why`. Anything but the first makes
/// approving ask once more, or refuses it.
pub fn describe(command: &str, scene: &Scene) -> String {
    describe_with(command, scene, &walls())
}

/// [`describe`] with the walls given.
pub fn describe_with(command: &str, scene: &Scene, walls: &Walls) -> String {
    let plan = Plan::for_command(command, scene);
    if let Some(why) = &plan.refused {
        return format!("NOT RUNNABLE HERE: {why}");
    }
    if walls.absent() {
        let why = walls.missing().unwrap_or_default();
        return format!("NOT SANDBOXED: {why}");
    }
    let mut summary = plan.summary(scene);
    let stopped = plan.stops(&crate::safety::written_in(command, scene));
    if !stopped.is_empty() {
        let shown: Vec<String> = stopped
            .iter()
            .map(|p| scene.show(&p.to_string_lossy()))
            .collect();
        summary.push_str(&format!(
            " — it keeps the command from changing {} (outside what it may write: that part fails, or under /tmp lands in its private tmp)",
            shown.join(", ")
        ));
    }
    match walls.missing() {
        None => format!("sandbox: {summary}"),
        Some(missing) => format!("PARTLY SANDBOXED ({missing}): {summary}"),
    }
}

/// The sandbox part of a request's reason or a described plan, read back:
/// `Ok(plan)` when every wall stands, `Err(what is missing)` otherwise.
pub fn read_description(text: &str) -> Option<Result<String, String>> {
    for marker in [
        "NOT RUNNABLE HERE: ",
        "NOT SANDBOXED: ",
        "PARTLY SANDBOXED (",
    ] {
        if let Some(at) = text.rfind(marker) {
            return Some(Err(text[at..].trim().to_string()));
        }
    }
    let at = text.rfind("sandbox: ")?;
    Some(Ok(text[at + "sandbox: ".len()..].trim().to_string()))
}

/// Whether namespaces work here: a real command (`exit 0`) started behind
/// them, in a directory of its own.
fn probe_namespaces() -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!(
        "partner-probe-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot try them: {e}"))?;
    let scene = Scene::current().in_dir(&dir);
    let plan = Plan {
        writes: vec![plan::canonical(&dir)],
        network: Vec::new(),
        refused: None,
    };
    let only = Walls {
        namespaces: Ok(()),
        landlock: Err("not tried".into()),
        seccomp: Err("not tried".into()),
    };
    let options = super::process::RunOptions {
        dir: &dir,
        timeout: std::time::Duration::from_secs(10),
        cap: 4096,
        cancel: None,
        sandbox: Some((&plan, &scene)),
        walls: Some(&only),
        cgroup: false,
    };
    let ran = super::process::run("exit 0", &options);
    let _ = std::fs::remove_dir_all(&dir);
    match ran {
        Ok(ran) if ran.status == Some(0) => Ok(()),
        Ok(ran) => Err(format!(
            "a command behind them did not run: {}",
            ran.stderr.trim()
        )),
        Err(e) => Err(e),
    }
}
