//! The namespace wall's file system, laid out in the parent as a list of
//! steps and carried out in the child (between fork and exec, in its new
//! user and mount namespaces, with system calls only). The whole tree is
//! made read-only, no set-uid, no devices; then, deepest last:
//!
//! - the working directory and the build caches of the plan are attached
//!   writable again, and the private temporary directory at `/tmp` (and
//!   at `/dev/shm`);
//! - `/dev` is a new, sealed tmpfs holding only the devices a program
//!   needs; `/run`, `/var/run` and `/var/tmp` are empty sealed tmpfs, so
//!   no socket there (PostgreSQL's, a tmux server's, D-Bus) can be
//!   reached, and no tmux socket under `/tmp` either;
//! - every secret of the table and every one of the partner's own files
//!   is hidden: a directory under an empty sealed tmpfs, a file under
//!   `/dev/null` (so the database's directory, where nothing else is
//!   needed, is hidden whole);
//! - every path-named socket the kernel knows of is hidden under
//!   `/dev/null` as well.
//!
//! The new PID namespace's `/proc` is mounted by its first process.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::super::scene::Scene;
use super::child::Stage;
use super::plan::Plan;
use super::rules::DEVICES;

/// Most sockets hidden one by one.
const MAX_SOCKETS: usize = 4_096;
/// Most directories of a writable directory looked into for a repository.
const MAX_REPOS: usize = 256;

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// One step, every path made before the fork.
#[derive(Debug)]
pub(super) enum Step {
    /// A detached copy of `source` (its whole tree, for a directory),
    /// given `attr`, kept in slot `slot` to be attached later.
    Clone {
        source: CString,
        slot: usize,
        tree: bool,
        attr: u64,
    },
    /// The whole tree read-only, no set-uid, no devices.
    ReadOnly,
    /// An empty tmpfs at `target` (sealed read-only at the end).
    Tmpfs { target: CString, options: CString },
    /// A directory made to mount on (there already is fine).
    Dir { path: CString },
    /// An empty file made to mount on (there already is fine).
    File { path: CString },
    /// The copy in `slot` attached at `target`.
    Attach { slot: usize, target: CString },
    /// `/dev/null` over the file at `target` (gone meanwhile is fine).
    Null { target: CString },
    /// A link at `link` naming `target`.
    Link { target: CString, link: CString },
    /// The mount at `target` made read-only.
    Seal { target: CString },
}

impl Step {
    /// The stage of building the sandbox the step belongs to.
    pub(super) fn stage(&self) -> Stage {
        match self {
            Step::Clone { .. } => Stage::Clone,
            Step::ReadOnly => Stage::ReadOnly,
            Step::Tmpfs { .. } => Stage::Hide,
            Step::Dir { .. } | Step::File { .. } => Stage::MountPoint,
            Step::Attach { .. } => Stage::Attach,
            Step::Null { .. } => Stage::HideFile,
            Step::Link { .. } => Stage::Link,
            Step::Seal { .. } => Stage::Seal,
        }
    }
}

/// A mount placed in the new tree.
#[derive(Debug, Clone)]
struct Placed {
    target: PathBuf,
    /// Where it comes from: the host path for a bind, `None` for a tmpfs.
    source: Option<PathBuf>,
    file: bool,
    attr: u64,
}

impl Placed {
    /// Its content is ours (a tmpfs, or the private directory), not the
    /// host's at the same path: what is under it must be made.
    fn ours(&self) -> bool {
        self.source.as_ref() != Some(&self.target)
    }
}

/// The mount table of one command.
#[derive(Debug)]
pub(super) struct Mounts {
    pub(super) steps: Vec<Step>,
    /// The detached copies, by slot (filled in the child).
    pub(super) slots: Vec<i32>,
}

fn cstr(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

fn text(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

impl Mounts {
    /// The table for `plan` in `scene`: `tmp` (a directory of the host) is
    /// the private temporary directory, `hidden` the secrets and partner's
    /// own files as paths on this machine.
    pub(super) fn build(plan: &Plan, scene: &Scene, tmp: &Path, hidden: &[PathBuf]) -> Mounts {
        let mut placed = Vec::new();
        let bind = |source: &Path, target: &Path, file: bool, attr: u64| Placed {
            target: target.to_path_buf(),
            source: Some(source.to_path_buf()),
            file,
            attr,
        };
        let tmpfs = |target: &str| Placed {
            target: PathBuf::from(target),
            source: None,
            file: false,
            attr: 0,
        };
        for dir in &plan.writes {
            placed.push(bind(dir, dir, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
        }
        let read_only = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        for path in read_only_within(plan, scene) {
            placed.push(bind(&path, &path, !path.is_dir(), read_only));
        }
        let shm = tmp.join(".shm");
        let _ = std::fs::create_dir(&shm);
        placed.push(bind(
            tmp,
            Path::new("/tmp"),
            false,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        ));
        placed.push(tmpfs("/dev"));
        placed.push(bind(
            &shm,
            Path::new("/dev/shm"),
            false,
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        ));
        for dev in DEVICES {
            if Path::new(dev).exists() {
                let dev = Path::new(dev);
                placed.push(bind(dev, dev, true, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC));
            }
        }
        for dir in ["/run", "/var/run", "/var/tmp"] {
            let p = Path::new(dir);
            if p.is_dir() && !p.is_symlink() {
                placed.push(tmpfs(dir));
            }
        }
        let mut nulls = Vec::new();
        for path in hidden {
            if path.starts_with("/dev") || path.starts_with("/proc") {
                continue;
            }
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => placed.push(tmpfs(&path.to_string_lossy())),
                Ok(m) if !m.file_type().is_symlink() => nulls.push(path.clone()),
                _ => {}
            }
        }
        own_directories(&mut placed, &mut nulls, plan, scene);
        nulls.extend(sockets(plan));
        if !plan.network.is_empty() {
            keep_resolver(&mut placed);
        }
        Mounts::lay_out(placed, nulls)
    }

    /// The steps for what is placed and hidden.
    fn lay_out(placed: Vec<Placed>, nulls: Vec<PathBuf>) -> Mounts {
        // The first of two at one place stays (binds are placed first).
        let mut placed: Vec<Placed> = placed.into_iter().fold(Vec::new(), |mut kept, p| {
            if !kept.iter().any(|k: &Placed| k.target == p.target) {
                kept.push(p);
            }
            kept
        });
        placed.sort_by_key(|p| p.target.components().count());
        let mut steps = Vec::new();
        let mut slots = Vec::new();
        for p in placed.iter() {
            if let Some(source) = &p.source {
                steps.push(Step::Clone {
                    source: cstr(source),
                    slot: slots.len(),
                    tree: !p.file,
                    attr: p.attr,
                });
                slots.push(-1);
            }
        }
        steps.push(Step::ReadOnly);
        let mut slot = 0;
        for (i, p) in placed.iter().enumerate() {
            steps.extend(mount_points(&placed[..i], p));
            match &p.source {
                Some(_) => {
                    steps.push(Step::Attach {
                        slot,
                        target: cstr(&p.target),
                    });
                    slot += 1;
                }
                None => steps.push(Step::Tmpfs {
                    target: cstr(&p.target),
                    options: text("mode=0755,size=1m"),
                }),
            }
        }
        for (name, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
        ] {
            steps.push(Step::Link {
                target: text(target),
                link: text(&format!("/dev/{name}")),
            });
        }
        for path in nulls {
            if !hidden_under(&placed, &path) {
                steps.push(Step::Null {
                    target: cstr(&path),
                });
            }
        }
        for p in placed.iter().filter(|p| p.source.is_none()) {
            steps.push(Step::Seal {
                target: cstr(&p.target),
            });
        }
        Mounts { steps, slots }
    }
}

/// The steps that make `p`'s mount point where what encloses it (among
/// `before`) is ours: every directory down to it, then it.
fn mount_points(before: &[Placed], p: &Placed) -> Vec<Step> {
    let Some(within) = before
        .iter()
        .rev()
        .find(|q| p.target.starts_with(&q.target))
    else {
        return Vec::new();
    };
    if !within.ours() {
        return Vec::new();
    }
    let top = within.target.as_path();
    let mut chain: Vec<&Path> = p
        .target
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(top) && *a != top)
        .collect();
    chain.reverse();
    let mut steps: Vec<Step> = chain
        .into_iter()
        .map(|dir| Step::Dir { path: cstr(dir) })
        .collect();
    let path = cstr(&p.target);
    steps.push(if p.file {
        Step::File { path }
    } else {
        Step::Dir { path }
    });
    steps
}

/// What a writable directory holds that runs as code later, outside the
/// sandbox, and so stays read-only in it: a git repository's `config`,
/// `config.worktree`, `hooks` and `info` (its own and those of the
/// repositories one level down; a `.git` file as a whole), and the
/// constellation's own files the scene keeps.
fn read_only_within(plan: &Plan, scene: &Scene) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in &plan.writes {
        let below = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .take(MAX_REPOS)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path().join(".git"));
        for git in std::iter::once(dir.join(".git")).chain(below) {
            match std::fs::symlink_metadata(&git) {
                Ok(m) if m.is_dir() => out.extend(
                    ["config", "config.worktree", "hooks", "info"]
                        .iter()
                        .map(|p| git.join(p))
                        .filter(|p| {
                            p.symlink_metadata()
                                .is_ok_and(|m| !m.file_type().is_symlink())
                        }),
                ),
                Ok(m) if m.is_file() => out.push(git),
                _ => {}
            }
        }
    }
    for kept in scene.kept() {
        let kept = PathBuf::from(kept);
        if plan.writes.iter().any(|w| kept.starts_with(w)) && kept.symlink_metadata().is_ok() {
            out.push(kept);
        }
    }
    out
}

/// Whether `path` is already out of sight: the deepest mount over it is
/// ours (an empty tmpfs or the private directory), so the host's file is
/// not there.
fn hidden_under(placed: &[Placed], path: &Path) -> bool {
    placed
        .iter()
        .filter(|q| path.starts_with(&q.target))
        .max_by_key(|q| q.target.components().count())
        .is_some_and(Placed::ours)
}

/// The partner's own files: the directory that holds them hidden whole
/// when nothing the command needs is there (not the working directory, a
/// cache, the home or anything holding them), else each file.
fn own_directories(placed: &mut Vec<Placed>, nulls: &mut Vec<PathBuf>, plan: &Plan, scene: &Scene) {
    let home = scene.home();
    for own in scene.protected() {
        let own = Path::new(own);
        let Some(dir) = own.parent() else { continue };
        let needed = plan.writes.iter().any(|w| w.starts_with(dir))
            || home.starts_with(dir)
            || dir == Path::new("/")
            || super::super::protected::is_system_dir(&dir.to_string_lossy());
        if !needed && dir.is_dir() {
            placed.push(Placed {
                target: dir.to_path_buf(),
                source: None,
                file: false,
                attr: 0,
            });
        } else if own.symlink_metadata().is_ok() {
            nulls.push(own.to_path_buf());
        }
    }
}

/// Every path-named socket the kernel lists (`/proc/net/unix`) but those
/// in the working directory.
fn sockets(plan: &Plan) -> Vec<PathBuf> {
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let mut out: Vec<PathBuf> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let path = line.splitn(8, ' ').nth(7)?.trim();
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .filter(|p| !plan.writes.first().is_some_and(|w| p.starts_with(w)))
        .filter(|p| p.symlink_metadata().is_ok())
        .take(MAX_SOCKETS)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// With the network on, the resolver's configuration stays readable where
/// a hidden directory would take it (`/etc/resolv.conf` naming a file
/// under `/run`).
fn keep_resolver(placed: &mut Vec<Placed>) {
    let Ok(real) = std::fs::canonicalize("/etc/resolv.conf") else {
        return;
    };
    if real != Path::new("/etc/resolv.conf") && hidden_under(placed, &real) {
        placed.push(Placed {
            target: real.clone(),
            source: Some(real),
            file: true,
            attr: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        });
    }
}

/// The calling thread's last error number.
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `mount_setattr(2)` setting `set` on the mount at `path` (relative to
/// `dirfd`).
///
/// # Safety
/// `path` must be a valid C string for the call.
unsafe fn set_attr(dirfd: i32, path: &std::ffi::CStr, flags: libc::c_uint, set: u64) -> bool {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `attr` lives across the call; the size is its own.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        ) == 0
    }
}

/// A detached copy of the mount (tree) at `source` with `attr` set; its
/// descriptor, or -1. A link at `source` is not followed: a path swapped
/// for a link since the table was made fails to copy, never copies what
/// the link names.
///
/// # Safety
/// Between fork and exec only.
unsafe fn clone_mount(source: &std::ffi::CStr, tree: bool, attr: u64) -> i32 {
    let recursive = if tree { AT_RECURSIVE } else { 0 };
    // SAFETY: open_tree(2) on a C string made before the fork.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            source.as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC as libc::c_uint
                | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint
                | recursive,
        ) as i32
    };
    let flags = libc::AT_EMPTY_PATH as libc::c_uint | recursive;
    // SAFETY: as above, on the descriptor just opened.
    if fd >= 0 && unsafe { set_attr(fd, c"", flags, attr) } {
        fd
    } else {
        -1
    }
}

/// Makes `path` (a directory, or an empty file) to mount on; there
/// already is fine.
///
/// # Safety
/// Between fork and exec only.
unsafe fn mount_point(path: &std::ffi::CStr, file: bool) -> bool {
    // SAFETY: mkdir/open/close on a C string made before the fork.
    unsafe {
        if !file {
            return libc::mkdir(path.as_ptr(), 0o755) == 0 || errno() == libc::EEXIST;
        }
        let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW;
        let fd = libc::open(path.as_ptr(), flags, 0o644);
        if fd >= 0 {
            libc::close(fd);
        }
        fd >= 0 || errno() == libc::EEXIST
    }
}

impl Step {
    /// Carries out the step; false when it failed (the error number is
    /// the thread's).
    ///
    /// # Safety
    /// Between fork and exec only, in the new mount namespace.
    unsafe fn carry_out(&self, slots: &mut [i32]) -> bool {
        // SAFETY: system calls on C strings and descriptors made before
        // the fork.
        unsafe {
            match self {
                Step::Clone {
                    source,
                    slot,
                    tree,
                    attr,
                } => {
                    let fd = clone_mount(source, *tree, *attr);
                    if let Some(s) = slots.get_mut(*slot) {
                        *s = fd;
                    }
                    fd >= 0
                }
                Step::ReadOnly => set_attr(
                    libc::AT_FDCWD,
                    c"/",
                    AT_RECURSIVE,
                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                ),
                Step::Tmpfs { target, options } => {
                    libc::mount(
                        c"tmpfs".as_ptr(),
                        target.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        options.as_ptr().cast(),
                    ) == 0
                }
                Step::Dir { path } => mount_point(path, false),
                Step::File { path } => mount_point(path, true),
                Step::Attach { slot, target } => {
                    let fd = slots.get(*slot).copied().unwrap_or(-1);
                    let ok = libc::syscall(
                        libc::SYS_move_mount,
                        fd,
                        c"".as_ptr(),
                        libc::AT_FDCWD,
                        target.as_ptr(),
                        MOVE_MOUNT_F_EMPTY_PATH,
                    ) == 0;
                    libc::close(fd);
                    ok
                }
                Step::Null { target } => {
                    let null = c"/dev/null".as_ptr();
                    libc::mount(
                        null,
                        target.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ) == 0
                        || errno() == libc::ENOENT
                }
                Step::Link { target, link } => {
                    libc::symlink(target.as_ptr(), link.as_ptr()) == 0 || errno() == libc::EEXIST
                }
                Step::Seal { target } => set_attr(libc::AT_FDCWD, target, 0, MOUNT_ATTR_RDONLY),
            }
        }
    }
}

impl Mounts {
    /// Carries out the steps (between fork and exec, in the new mount
    /// namespace); on failure, the stage that failed.
    ///
    /// # Safety
    /// Call only in a child between fork and exec: it changes the mount
    /// table of the calling process's namespace.
    pub(super) unsafe fn apply(&mut self) -> Result<(), Stage> {
        for step in &self.steps {
            // SAFETY: as this function's.
            if !unsafe { step.carry_out(&mut self.slots) } {
                return Err(step.stage());
            }
        }
        Ok(())
    }
}
