//! The sandbox an approved shell command runs in (Linux, Landlock and
//! seccomp, as codex-rs's `linux-sandbox` does): it may write only in its
//! working directory, a private temporary directory and the caches of
//! the build tools it runs; it may read everything but the secrets table
//! ([`super::protected::SECRETS`] and the partner's own files); it has no
//! network unless the command itself names a program that needs one and
//! the partner approved it seeing so. The queue shows the plan beside the
//! risk (`writes: ./  network: off`); where the kernel has no Landlock it
//! says "not sandboxed" and approving asks once more.
//!
//! The rules are built in the parent ([`Plan::prepare`]); the child only
//! applies them, between fork and exec ([`Prepared::apply`]).

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::protected::SECRETS;
use super::scene::Scene;
use super::syntax;

/// The Landlock ABI the rules are written for (newer kernels apply it;
/// older ones apply what they know of it).
const ABI_WANTED: ABI = ABI::V5;
/// Most directories walked to leave the secrets out of what may be read.
const MAX_WALK: usize = 20_000;

/// Programs that need the network to do their job, and the subcommands
/// that do (empty: any use).
const NETWORK: &[(&str, &[&str])] = &[
    ("curl", &[]),
    ("wget", &[]),
    ("ping", &[]),
    ("dig", &[]),
    ("nslookup", &[]),
    ("host", &[]),
    ("traceroute", &[]),
    ("ssh", &[]),
    ("scp", &[]),
    ("sftp", &[]),
    ("rsync", &[]),
    ("nc", &[]),
    ("ncat", &[]),
    ("socat", &[]),
    ("telnet", &[]),
    ("ftp", &[]),
    ("aria2c", &[]),
    ("gh", &[]),
    (
        "git",
        &[
            "clone",
            "fetch",
            "pull",
            "push",
            "ls-remote",
            "submodule",
            "remote",
        ],
    ),
    (
        "cargo",
        &[
            "build", "b", "run", "r", "test", "t", "check", "c", "fetch", "install", "update",
            "add", "publish", "search", "clippy", "doc", "tree", "bench",
        ],
    ),
    (
        "npm",
        &[
            "install", "i", "ci", "add", "update", "publish", "exec", "view", "audit",
        ],
    ),
    ("npx", &[]),
    ("yarn", &[]),
    ("pnpm", &[]),
    ("pip", &["install", "download", "search", "index"]),
    ("pip3", &["install", "download", "search", "index"]),
    ("go", &["get", "mod", "build", "run", "test", "install"]),
    (
        "apt",
        &[
            "install",
            "update",
            "upgrade",
            "full-upgrade",
            "download",
            "source",
        ],
    ),
    (
        "apt-get",
        &[
            "install",
            "update",
            "upgrade",
            "dist-upgrade",
            "download",
            "source",
        ],
    ),
    ("docker", &["pull", "push", "run", "build", "login"]),
    ("podman", &["pull", "push", "run", "build", "login"]),
];

/// Caches a build tool writes (relative to the home), when they exist.
const CACHES: &[(&str, &[&str])] = &[
    ("cargo", &[".cargo"]),
    ("npm", &[".npm"]),
    ("npx", &[".npm"]),
    ("yarn", &[".cache/yarn", ".yarn"]),
    ("pnpm", &[".local/share/pnpm", ".cache/pnpm"]),
    ("pip", &[".cache/pip", ".local"]),
    ("pip3", &[".cache/pip", ".local"]),
    ("go", &["go", ".cache/go-build"]),
];

/// Whether this kernel can sandbox a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock is there, at this ABI version.
    Landlock(i32),
    /// It is not: why.
    Missing(String),
}

/// What the kernel offers (asked once per call: cheap, one syscall).
pub fn support() -> Support {
    if !cfg!(target_os = "linux") {
        return Support::Missing("only Linux has Landlock".into());
    }
    if std::env::var_os("PARTNER_NO_SANDBOX").is_some() {
        return Support::Missing("PARTNER_NO_SANDBOX is set".into());
    }
    // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // SAFETY: with a null attribute and the version flag the call only
    // returns the ABI number; it touches no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    if abi >= 1 {
        Support::Landlock(abi as i32)
    } else {
        Support::Missing(format!(
            "this kernel has no Landlock ({})",
            std::io::Error::last_os_error()
        ))
    }
}

/// What a command may do when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Where it may write: the working directory first, then caches.
    pub writes: Vec<PathBuf>,
    /// The programs that need the network, when any does (network on).
    pub network: Vec<String>,
}

impl Plan {
    /// The plan for `command` run in `scene`.
    pub fn for_command(command: &str, scene: &Scene) -> Plan {
        let reading = syntax::read(command);
        let mut network = Vec::new();
        let mut writes = vec![scene.dir().to_path_buf()];
        for inv in &reading.invocations {
            let name = inv.name();
            let first_word = inv
                .args()
                .iter()
                .map(|a| a.text.as_str())
                .find(|a| !a.starts_with('-'));
            let needs = NETWORK.iter().any(|(n, subs)| {
                *n == name && (subs.is_empty() || first_word.is_some_and(|w| subs.contains(&w)))
            });
            if needs && !network.iter().any(|n| n == name) {
                network.push(name.to_string());
            }
            for (n, dirs) in CACHES {
                if *n == name {
                    for d in *dirs {
                        let p = scene.home().join(d);
                        if p.exists() && !writes.contains(&p) {
                            writes.push(p);
                        }
                    }
                }
            }
        }
        Plan { writes, network }
    }

    /// The plan as the queue shows it: `writes: ./  network: off`.
    pub fn summary(&self, scene: &Scene) -> String {
        let writes: Vec<String> = self
            .writes
            .iter()
            .map(|p| scene.show_dir(&p.to_string_lossy()))
            .collect();
        let network = if self.network.is_empty() {
            "off".to_string()
        } else {
            format!("on ({})", self.network.join(", "))
        };
        format!(
            "writes: {} + private tmp  network: {network}",
            writes.join(" ")
        )
    }

    /// The rules, built in the parent: a Landlock ruleset and, with the
    /// network off, a seccomp filter that refuses internet sockets.
    pub fn prepare(&self, scene: &Scene, tmp: &Path) -> Result<Prepared, String> {
        let fs_all = AccessFs::from_all(ABI_WANTED);
        let read = AccessFs::from_read(ABI_WANTED);
        let mut ruleset = Ruleset::default()
            .handle_access(fs_all)
            .map_err(|e| e.to_string())?;
        if self.network.is_empty() {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI_WANTED))
                .map_err(|e| e.to_string())?;
        }
        let mut created: RulesetCreated = ruleset.create().map_err(|e| e.to_string())?;
        let denied = denied_reads(scene);
        for path in readable(&denied) {
            created = add(created, &path, read)?;
        }
        // Listing any directory is not reading a secret.
        created = add(created, Path::new("/"), AccessFs::ReadDir.into())?;
        for path in self.writes.iter().map(PathBuf::as_path).chain([tmp]) {
            created = add(created, path, fs_all)?;
        }
        for dev in ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"] {
            created = add(created, Path::new(dev), AccessFs::from_file(ABI_WANTED))?;
        }
        let filter = if self.network.is_empty() {
            Some(no_network_filter()?)
        } else {
            None
        };
        Ok(Prepared {
            ruleset: Some(created),
            filter,
        })
    }
}

fn add(
    created: RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<RulesetCreated, String> {
    let Ok(fd) = PathFd::new(path) else {
        return Ok(created);
    };
    // A file takes only file rights.
    let access = if path.is_dir() {
        access
    } else {
        access & AccessFs::from_file(ABI_WANTED)
    };
    created
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The secrets as paths on this machine (globs expanded).
fn denied_reads(scene: &Scene) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for s in SECRETS {
        let path = match s.path.strip_prefix('~') {
            Some(rest) => format!("{}{rest}", scene.home_str().trim_end_matches('/')),
            None => s.path.to_string(),
        };
        if super::expand::has_glob(&path) {
            out.extend(super::expand::on_disk(&path).into_iter().map(PathBuf::from));
        } else if s.except.is_empty() {
            out.push(PathBuf::from(path));
        } else {
            // A tree with exceptions: each entry that is not one.
            let dir = PathBuf::from(&path);
            for entry in std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .take(512)
            {
                let name = entry.file_name().to_string_lossy().into_owned();
                let excepted = s
                    .except
                    .iter()
                    .any(|e| glob::Pattern::new(e).is_ok_and(|p| p.matches(&name)));
                if !excepted {
                    out.push(entry.path());
                }
            }
        }
    }
    out.extend(scene.protected().iter().map(PathBuf::from));
    // `/proc` and `/dev` stay readable as a whole: Landlock already keeps
    // a sandboxed process from reading another's environment or memory
    // (ptrace rules), and walking `/proc` would take every process.
    out.retain(|p| p.exists() && !p.starts_with("/proc") && !p.starts_with("/dev"));
    out
}

/// Paths that together cover everything but `denied`: the whole of a
/// directory that holds no denied path, else each of its entries in turn.
fn readable(denied: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut walked = 0;
    cover(Path::new("/"), denied, &mut out, &mut walked);
    out
}

fn cover(dir: &Path, denied: &[PathBuf], out: &mut Vec<PathBuf>, walked: &mut usize) {
    if denied.iter().any(|d| d == dir) {
        return;
    }
    let holds = denied.iter().any(|d| d.starts_with(dir) && d != dir);
    if !holds || *walked > MAX_WALK {
        out.push(dir.to_path_buf());
        return;
    }
    *walked += 1;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // Symbolic links are followed by Landlock to what they name.
        cover(&path, denied, out, walked);
    }
}

/// seccomp: sockets of any family but local (`AF_UNIX`) and netlink are
/// refused, and io_uring (which could open them) is not available.
fn no_network_filter() -> Result<BpfProgram, String> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let not = |family: i32| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, family as u64)
            .map_err(|e| e.to_string())
    };
    let socket = SeccompRule::new(vec![not(libc::AF_UNIX)?, not(libc::AF_NETLINK)?])
        .map_err(|e| e.to_string())?;
    let rules = [
        (libc::SYS_socket, vec![socket]),
        (libc::SYS_io_uring_setup, vec![]),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// Rules ready to apply in the child.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    filter: Option<BpfProgram>,
}

impl Prepared {
    /// Applies the rules to the calling process (between fork and exec):
    /// no new privileges, Landlock, then seccomp.
    pub fn apply(&mut self) -> std::io::Result<()> {
        if let Some(ruleset) = self.ruleset.take() {
            ruleset
                .restrict_self()
                .map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        if let Some(filter) = &self.filter {
            seccompiler::apply_filter(filter).map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        Ok(())
    }
}

/// What the queue says about how an approved command would run.
pub fn describe(command: &str, scene: &Scene) -> String {
    match support() {
        Support::Landlock(_) => format!(
            "sandbox: {}",
            Plan::for_command(command, scene).summary(scene)
        ),
        Support::Missing(why) => format!("NOT SANDBOXED: {why}"),
    }
}
