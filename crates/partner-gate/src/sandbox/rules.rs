//! The Landlock wall: a ruleset, built in the parent, under which a
//! command may read everything but the secrets table and the partner's
//! own files, write only where its plan says (less any secret inside),
//! reach only the devices a program needs, signal no process outside its
//! sandbox and connect to no abstract socket made outside it; with the
//! network off, no TCP port either. Links are never followed while the
//! rules are built, so a link planted in the working directory cannot
//! widen them.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope,
};

use super::super::protected::SECRETS;
use super::super::scene::Scene;
use super::plan::Plan;

/// The Landlock ABI the rules are written for (newer kernels apply it;
/// older ones apply what they know of it): file rights of ABI 5 and the
/// signal and abstract-socket scopes of ABI 6.
const ABI_WANTED: ABI = ABI::V6;
/// Most directories walked to leave the secrets out of a grant.
const MAX_WALK: usize = 20_000;
/// Devices a command may use (nothing else under `/dev`).
pub(super) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The ruleset for `plan` in `scene`, its private temporary directory
/// `tmp` writable. Landlock's grants add up (a directory granted is
/// granted whole), so a path kept from a writable directory splits it into
/// its other entries, and nothing new can be made at its top: behind
/// `namespaces` the partner's own files there are already hidden by the
/// mounts, and only the secrets split it.
pub(super) fn ruleset(
    plan: &Plan,
    scene: &Scene,
    tmp: &Path,
    namespaces: bool,
) -> Result<RulesetCreated, String> {
    let fs_all = AccessFs::from_all(ABI_WANTED);
    let read = AccessFs::from_read(ABI_WANTED);
    let mut ruleset = Ruleset::default()
        .handle_access(fs_all)
        .map_err(|e| e.to_string())?
        .scope(Scope::from_all(ABI_WANTED))
        .map_err(|e| e.to_string())?;
    if plan.network.is_empty() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI_WANTED))
            .map_err(|e| e.to_string())?;
    }
    let mut created: RulesetCreated = ruleset.create().map_err(|e| e.to_string())?;
    let mut denied = denied(scene);
    let own: Vec<PathBuf> = scene.protected().iter().map(PathBuf::from).collect();
    let kept_from_writes: Vec<PathBuf> = denied
        .iter()
        .filter(|d| !namespaces || !own.iter().any(|o| d == &o))
        .cloned()
        .collect();
    // Devices only as listed below.
    denied.push(PathBuf::from("/dev"));
    for path in cover(Path::new("/"), &denied) {
        created = add(created, &path, read)?;
    }
    // Listing any directory is not reading a secret.
    created = add(created, Path::new("/"), AccessFs::ReadDir.into())?;
    // The private directory's `.shm` is attached at `/dev/shm` on its own:
    // Landlock does not look through a mount to the directory beneath.
    let shm = tmp.join(".shm");
    for dir in plan.writes.iter().map(PathBuf::as_path).chain([tmp, &shm]) {
        for path in cover(dir, &kept_from_writes) {
            created = add(created, &path, fs_all)?;
        }
    }
    for dev in DEVICES {
        created = add(created, Path::new(dev), AccessFs::from_file(ABI_WANTED))?;
    }
    Ok(created)
}

fn add(
    created: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, String> {
    // Opened without following a final link (the walk never passes one).
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
    else {
        return Ok(created);
    };
    let is_dir = file.metadata().is_ok_and(|m| m.is_dir());
    // A file takes only file rights.
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(ABI_WANTED)
    };
    created
        .add_rule(PathBeneath::new(file, access))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The secrets and the partner's own files as paths on this machine
/// (globs expanded; a tree with exceptions as each entry that is not
/// one). `/proc` is left to the kernel: Landlock already keeps a
/// sandboxed process from another's environment and memory.
pub(super) fn denied(scene: &Scene) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for s in SECRETS {
        let path = match s.path.strip_prefix('~') {
            Some(rest) => format!("{}{rest}", scene.home_str().trim_end_matches('/')),
            None => s.path.to_string(),
        };
        if super::super::expand::has_glob(&path) {
            out.extend(
                super::super::expand::on_disk(&path)
                    .into_iter()
                    .map(PathBuf::from),
            );
        } else if s.except.is_empty() {
            out.push(PathBuf::from(path));
        } else {
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
    out.retain(|p| p.symlink_metadata().is_ok() && !p.starts_with("/proc"));
    // A secret reached through links is denied where it really is.
    let real: Vec<PathBuf> = out
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    out.extend(real);
    out.sort();
    out.dedup();
    out
}

/// Paths that together cover `top` but nothing `denied` holds: the whole
/// of a directory that holds no denied path, else each of its entries in
/// turn. Links are left out: what one names is covered (or not) where it
/// really is.
pub(super) fn cover(top: &Path, denied: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut walked = 0;
    walk(top, denied, &mut out, &mut walked);
    out
}

fn walk(dir: &Path, denied: &[PathBuf], out: &mut Vec<PathBuf>, walked: &mut usize) {
    if denied.iter().any(|d| dir.starts_with(d)) {
        return;
    }
    let holds = denied.iter().any(|d| d.starts_with(dir) && d != dir);
    if !holds {
        out.push(dir.to_path_buf());
        return;
    }
    if *walked > MAX_WALK {
        // Too many to walk: leave it out rather than grant a secret.
        return;
    }
    *walked += 1;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        walk(&entry.path(), denied, out, walked);
    }
}
