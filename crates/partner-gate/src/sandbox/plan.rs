//! What an approved command may do, worked out from the command and where
//! it runs, before anybody is asked: where it may write (its working
//! directory and the caches of the build tools it names — never their
//! credentials, configuration or installed programs), whether it needs
//! the network (a program that cannot work without it, which the queue
//! names), and whether it may run there at all (never in a home, the
//! root, a system directory or a secret).

use std::path::{Path, PathBuf};

use super::super::protected::SECRETS;
use super::super::scene::Scene;
use super::super::syntax;

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

/// The caches a build tool writes (relative to the home), when they
/// exist: downloads and build outputs only. Never its credentials, its
/// configuration (`~/.cargo/config.toml` can name a `rustc-wrapper`) nor
/// where it installs programs (`~/.cargo/bin`, `~/.local`), which run
/// later outside the sandbox.
const CACHES: &[(&str, &[&str])] = &[
    ("cargo", &[".cargo/registry", ".cargo/git"]),
    ("npm", &[".npm/_cacache"]),
    ("npx", &[".npm/_cacache", ".npm/_npx"]),
    ("yarn", &[".cache/yarn"]),
    ("pnpm", &[".cache/pnpm", ".local/share/pnpm/store"]),
    ("pip", &[".cache/pip"]),
    ("pip3", &[".cache/pip"]),
    ("go", &["go/pkg/mod", ".cache/go-build"]),
];

/// What a command may do when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Where it may write: the working directory first, then caches (all
    /// canonical).
    pub writes: Vec<PathBuf>,
    /// The programs that need the network, when any does (network on).
    pub network: Vec<String>,
    /// Why it may not run where it would, if it may not.
    pub refused: Option<String>,
}

impl Plan {
    /// The plan for `command` run in `scene`.
    pub fn for_command(command: &str, scene: &Scene) -> Plan {
        let reading = syntax::read(command);
        let mut network = Vec::new();
        let dir = canonical(scene.dir());
        let mut writes = vec![dir.clone()];
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
                if *n != name {
                    continue;
                }
                for d in *dirs {
                    let p = scene.home().join(d);
                    // A cache reached through a link is not the cache.
                    if p.is_dir() && !p.is_symlink() && canonical(&p) == p && !writes.contains(&p) {
                        writes.push(p);
                    }
                }
            }
        }
        Plan {
            writes,
            network,
            refused: refusal(&dir, scene),
        }
    }

    /// Of the files `written`, those the sandbox keeps the command from
    /// changing: outside every place it may write (a write there fails;
    /// under /tmp it lands in the command's private tmp, thrown away).
    pub fn stops(&self, written: &[PathBuf]) -> Vec<PathBuf> {
        written
            .iter()
            .filter(|path| {
                let real = canonical_existing(path);
                !self.writes.iter().any(|w| real.starts_with(w))
            })
            .cloned()
            .collect()
    }

    /// The plan as the queue shows it: `writes: ./ + private tmp
    /// network: off`.
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
}

/// `path` with every link resolved, as far as it exists (the rest joined
/// on as written).
pub(crate) fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if parent != path => canonical(parent).join(name),
        _ => path.to_path_buf(),
    }
}

/// Why a command may not run with `dir` as its working directory: the
/// root, a home or a directory that holds one, a system directory, a
/// secret of the table or a directory inside one, or the partner's own
/// files. Writing there would reach what the sandbox exists to keep.
pub fn refusal(dir: &Path, scene: &Scene) -> Option<String> {
    let dir = canonical(dir);
    let shown = scene.show(&dir.to_string_lossy());
    let home = canonical(scene.home());
    let fix = "set [shell] dir in partner.toml to a project directory";
    if dir == Path::new("/") {
        return Some(format!("its working directory is the root ({fix})"));
    }
    if home.starts_with(&dir) {
        let what = if home == dir {
            "is your home"
        } else {
            "holds your home"
        };
        return Some(format!("its working directory {shown} {what} ({fix})"));
    }
    if super::super::protected::is_system_dir(&dir.to_string_lossy()) {
        return Some(format!(
            "its working directory {shown} is a system directory ({fix})"
        ));
    }
    for s in SECRETS {
        let path = match s.path.strip_prefix('~') {
            Some(rest) => format!("{}{rest}", home.to_string_lossy().trim_end_matches('/')),
            None => s.path.to_string(),
        };
        let pattern = glob::Pattern::new(&path).ok();
        let inside = dir
            .ancestors()
            .any(|a| pattern.as_ref().is_some_and(|p| p.matches_path(a)));
        if inside {
            return Some(format!(
                "its working directory {shown} is inside {} ({}) ({fix})",
                scene.show(&path),
                s.what
            ));
        }
    }
    for own in scene.protected() {
        if Path::new(own) == dir {
            return Some(format!(
                "its working directory {shown} is one of partner's own files ({fix})"
            ));
        }
    }
    None
}

/// `path` with its deepest existing ancestor made canonical (the file
/// itself may not exist yet, or any more).
fn canonical_existing(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (at.file_name().map(|n| n.to_owned()), at.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                at = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
