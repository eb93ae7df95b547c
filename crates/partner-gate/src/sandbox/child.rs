//! Entering the sandbox, between fork and exec. Built in the parent
//! ([`Prepared`]), carried out in the child with system calls only:
//!
//! 1. a new session with no controlling terminal (nothing the command
//!    does can type into the partner's console), killed if partner goes;
//! 2. with namespaces: new user, mount, PID, IPC and UTS namespaces (and
//!    network, with the network off), the user mapped to itself, the
//!    mount table of [`super::mounts`]; then a fork, so that the command's
//!    supervisor is the first process of its PID namespace (with a new
//!    `/proc`) and everything it starts dies with it, while the forked
//!    child waits for it and passes on how it ended;
//! 3. every capability dropped for good;
//! 4. Landlock, then the seccomp filters.
//!
//! A failure says which stage failed, through a pipe the parent reads.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use seccompiler::BpfProgram;

use super::mounts::Mounts;

/// The stages of entering the sandbox, as a failure names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Stage {
    /// The new session.
    Session = 1,
    /// The new namespaces.
    Namespaces,
    /// The user and group maps.
    IdMaps,
    /// Mounts made private to the namespace.
    Private,
    /// A detached copy of a mount.
    Clone,
    /// The whole tree made read-only.
    ReadOnly,
    /// A directory hidden.
    Hide,
    /// A mount point made.
    MountPoint,
    /// A writable directory attached.
    Attach,
    /// A file hidden.
    HideFile,
    /// A device link.
    Link,
    /// A hidden directory sealed.
    Seal,
    /// The fork into the new PID namespace.
    Fork,
    /// The new `/proc`.
    Proc,
    /// The working directory entered again.
    Chdir,
    /// Capabilities dropped.
    Capabilities,
    /// Landlock.
    Landlock,
    /// seccomp.
    Seccomp,
}

/// What each stage does, by its number.
const STAGES: &[&str] = &[
    "",
    "starting a new session",
    "making new namespaces",
    "mapping the user into its namespace",
    "making the mounts private",
    "copying a mount",
    "making the file system read-only",
    "hiding a directory",
    "making a mount point",
    "attaching a writable directory",
    "hiding a file",
    "linking a device",
    "sealing a hidden directory",
    "forking into the new PID namespace",
    "mounting a new /proc",
    "entering the working directory",
    "dropping capabilities",
    "applying Landlock",
    "applying seccomp",
];

/// The namespace wall of one command.
#[derive(Debug)]
pub(super) struct Namespaces {
    pub(super) mounts: Mounts,
    pub(super) uid_map: CString,
    pub(super) gid_map: CString,
    pub(super) workdir: CString,
    pub(super) network: bool,
}

/// The walls of one command, ready to raise in its child.
pub struct Prepared {
    pub(super) namespaces: Option<Namespaces>,
    /// The Landlock ruleset, its rules added.
    pub(super) ruleset: Option<OwnedFd>,
    pub(super) filters: Vec<BpfProgram>,
    pub(super) report: Option<OwnedFd>,
}

/// Where the parent learns why entering the sandbox failed.
pub struct Report(pub(super) Option<std::io::PipeReader>);

impl Report {
    /// The stage that failed and why, once the child is gone (`None`
    /// when it said nothing).
    pub fn read(self) -> Option<String> {
        use std::io::Read;
        let mut pipe = self.0?;
        let mut buf = [0u8; 5];
        let mut got = 0;
        while got < buf.len() {
            match pipe.read(&mut buf[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        if got < buf.len() {
            return None;
        }
        let stage = STAGES
            .get(buf[0] as usize)
            .copied()
            .unwrap_or("entering it");
        let errno = i32::from_le_bytes([buf[1], buf[2], buf[3], buf[4]]);
        Some(format!(
            "{stage} failed: {}",
            std::io::Error::from_raw_os_error(errno)
        ))
    }
}

impl Prepared {
    /// Raises the walls around the calling process (between fork and
    /// exec). With namespaces this forks: only the new PID namespace's
    /// first process returns; the caller's process waits for it and exits
    /// as it did.
    pub fn apply(&mut self) -> std::io::Result<()> {
        let report = self.report.as_ref().map_or(-1, |fd| fd.as_raw_fd());
        // SAFETY: system calls only, on values made before the fork.
        unsafe {
            if libc::setsid() < 0 {
                return Err(fail(report, Stage::Session));
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if let Some(ns) = self.namespaces.as_mut() {
                ns.enter(report)?;
            }
            if !drop_capabilities() {
                return Err(fail(report, Stage::Capabilities));
            }
        }
        if let Some(ruleset) = &self.ruleset {
            let fd = ruleset.as_raw_fd();
            // SAFETY: system calls on the ruleset's descriptor.
            let ok = unsafe {
                (self.namespaces.is_none() || allow_proc(fd))
                    && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                    && libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) == 0
            };
            if !ok {
                return Err(fail(report, Stage::Landlock));
            }
        }
        if super::filter::install(&self.filters).is_err() {
            return Err(fail(report, Stage::Seccomp));
        }
        Ok(())
    }
}

/// Lets the command read the new PID namespace's `/proc`: a rule on the
/// host's `/proc`, under it, does not reach through the new mount.
///
/// # Safety
/// Between fork and exec only, once `/proc` is mounted.
unsafe fn allow_proc(ruleset: i32) -> bool {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    const READ_FILE_AND_DIR: u64 = (1 << 2) | (1 << 3);
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    // SAFETY: open/landlock_add_rule/close on values of this frame.
    unsafe {
        let fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        );
        if fd < 0 {
            return false;
        }
        let rule = PathBeneath {
            allowed_access: READ_FILE_AND_DIR,
            parent_fd: fd,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        );
        libc::close(fd);
        added == 0
    }
}

/// Tells the parent which stage failed, with the thread's error number;
/// the error to return.
fn fail(report: i32, stage: Stage) -> std::io::Error {
    let error = std::io::Error::last_os_error();
    let errno = error.raw_os_error().unwrap_or(0).to_le_bytes();
    let buf = [stage as u8, errno[0], errno[1], errno[2], errno[3]];
    if report >= 0 {
        // SAFETY: write(2) of a stack buffer to a descriptor we hold.
        unsafe { libc::write(report, buf.as_ptr().cast(), buf.len()) };
    }
    error
}

impl Namespaces {
    /// Enters the namespaces and lays out the mounts, then forks: the
    /// child (the PID namespace's first process) mounts `/proc`, enters
    /// the working directory and returns; this process waits for it and
    /// never returns.
    ///
    /// # Safety
    /// Between fork and exec only.
    unsafe fn enter(&mut self, report: i32) -> std::io::Result<()> {
        let mut flags = libc::CLONE_NEWUSER
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS;
        if !self.network {
            flags |= libc::CLONE_NEWNET;
        }
        // SAFETY: system calls on values made before the fork.
        unsafe {
            if libc::unshare(flags) != 0 {
                return Err(fail(report, Stage::Namespaces));
            }
            if !write_file(c"/proc/self/setgroups", c"deny")
                || !write_file(c"/proc/self/uid_map", &self.uid_map)
                || !write_file(c"/proc/self/gid_map", &self.gid_map)
            {
                return Err(fail(report, Stage::IdMaps));
            }
            let (none, root) = (std::ptr::null(), c"/".as_ptr());
            if libc::mount(
                none,
                root,
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                none.cast(),
            ) != 0
            {
                return Err(fail(report, Stage::Private));
            }
            if let Err(stage) = self.mounts.apply() {
                return Err(fail(report, stage));
            }
            let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0);
            if pid < 0 {
                return Err(fail(report, Stage::Fork));
            }
            if pid > 0 {
                wait_and_exit(pid as libc::pid_t);
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            let proc_ = c"proc".as_ptr();
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if libc::mount(proc_, c"/proc".as_ptr(), proc_, flags, std::ptr::null()) != 0 {
                return Err(fail(report, Stage::Proc));
            }
            if libc::chdir(self.workdir.as_ptr()) != 0 {
                return Err(fail(report, Stage::Chdir));
            }
        }
        Ok(())
    }
}

/// Writes `value` to the file at `path`.
///
/// # Safety
/// Between fork and exec only.
unsafe fn write_file(path: &std::ffi::CStr, value: &std::ffi::CStr) -> bool {
    // SAFETY: open/write/close on C strings made before the fork.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let len = value.to_bytes().len();
        let written = libc::write(fd, value.as_ptr().cast(), len);
        libc::close(fd);
        written == len as isize
    }
}

/// The forked-from process: lets go of every descriptor (the command's
/// output and partner's pipes close when the command's tree is gone),
/// waits for the PID namespace's first process and exits as it did.
///
/// # Safety
/// Between fork and exec only; never returns.
unsafe fn wait_and_exit(pid: libc::pid_t) -> ! {
    // SAFETY: close_range/close/waitpid/kill/_exit, no allocation.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..1024 {
                libc::close(fd);
            }
        }
        let mut status = 0;
        loop {
            let got = libc::waitpid(pid, &mut status, 0);
            if got == pid {
                break;
            }
            if got < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(125);
            }
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Every capability dropped for good: none held, none in the bounding or
/// ambient sets, and running a program as root (or set-uid) gives none
/// back. For a process without the right to change these, what it may
/// not change it does not hold; the check at the end is what counts.
///
/// # Safety
/// Between fork and exec only.
unsafe fn drop_capabilities() -> bool {
    const SECURE_BITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x40 | 0x80;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // SAFETY: prctl/capset/capget on stack values.
    unsafe {
        libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0);
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let none = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &mut header as *mut Header, none.as_ptr());
        let mut held = [Data {
            effective: 1,
            permitted: 1,
            inheritable: 1,
        }; 2];
        let got = libc::syscall(
            libc::SYS_capget,
            &mut header as *mut Header,
            held.as_mut_ptr(),
        );
        got == 0
            && held
                .iter()
                .all(|d| d.effective == 0 && d.permitted == 0 && d.inheritable == 0)
    }
}
