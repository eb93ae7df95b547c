//! Which walls this machine can raise around a command, found out once:
//! new namespaces (user, mount, PID, IPC, UTS and network — tried for
//! real, in a child, the first time they are asked about), Landlock (its
//! ABI version) and seccomp. Where a wall is missing the queue names it
//! and why, and approving asks once more.

use std::sync::OnceLock;

/// The walls a command can be put behind here, each there or not with
/// the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walls {
    /// New namespaces with a file system of their own.
    pub namespaces: Result<(), String>,
    /// Landlock, at this ABI version.
    pub landlock: Result<i32, String>,
    /// seccomp filters.
    pub seccomp: Result<(), String>,
}

impl Walls {
    /// No walls at all, for `why`.
    pub fn none(why: &str) -> Walls {
        Walls {
            namespaces: Err(why.to_string()),
            landlock: Err(why.to_string()),
            seccomp: Err(why.to_string()),
        }
    }

    /// Every wall is there.
    pub fn complete(&self) -> bool {
        self.namespaces.is_ok() && self.landlock.is_ok() && self.seccomp.is_ok()
    }

    /// No wall is there: the command would run as the partner would.
    pub fn absent(&self) -> bool {
        self.namespaces.is_err() && self.landlock.is_err() && self.seccomp.is_err()
    }

    /// The walls that are there, by name (`namespaces, Landlock 7, seccomp`).
    pub fn raised(&self) -> String {
        let mut names = Vec::new();
        if self.namespaces.is_ok() {
            names.push("namespaces".to_string());
        }
        if let Ok(abi) = self.landlock {
            names.push(format!("Landlock {abi}"));
        }
        if self.seccomp.is_ok() {
            names.push("seccomp".to_string());
        }
        names.join(", ")
    }

    /// The walls that are missing and why (`namespaces (…); seccomp (…)`),
    /// or `None` when none is. Missing all for one reason, that reason.
    pub fn missing(&self) -> Option<String> {
        if let (Err(a), Err(b), Err(c)) = (&self.namespaces, &self.landlock, &self.seccomp)
            && a == b
            && b == c
        {
            return Some(a.clone());
        }
        let mut parts = Vec::new();
        if let Err(why) = &self.namespaces {
            parts.push(format!("no namespaces ({why})"));
        }
        if let Err(why) = &self.landlock {
            parts.push(format!("no Landlock ({why})"));
        }
        if let Err(why) = &self.seccomp {
            parts.push(format!("no seccomp ({why})"));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The walls this machine raises. `PARTNER_NO_SANDBOX` takes them all
/// down and `PARTNER_NO_NAMESPACES` the namespaces (for a machine where
/// they misbehave, and to test what the queue says without them); both
/// are the partner's own settings, read each time.
pub fn walls() -> Walls {
    if !cfg!(target_os = "linux") {
        return Walls::none("only Linux can sandbox a command");
    }
    if std::env::var_os("PARTNER_NO_SANDBOX").is_some() {
        return Walls::none("PARTNER_NO_SANDBOX is set");
    }
    let namespaces = if std::env::var_os("PARTNER_NO_NAMESPACES").is_some() {
        Err("PARTNER_NO_NAMESPACES is set".to_string())
    } else {
        namespaces().clone()
    };
    Walls {
        namespaces,
        landlock: landlock(),
        seccomp: seccomp(),
    }
}

/// Whether commands can be given namespaces of their own: a real command
/// started behind them once, the answer kept for the process.
fn namespaces() -> &'static Result<(), String> {
    static FOUND: OnceLock<Result<(), String>> = OnceLock::new();
    FOUND.get_or_init(super::probe_namespaces)
}

/// The Landlock ABI this kernel offers (one syscall).
fn landlock() -> Result<i32, String> {
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
        Ok(abi as i32)
    } else {
        Err(format!(
            "this kernel has no Landlock: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// Whether this kernel takes seccomp filters that answer with an error
/// number (what the sandbox's filters do).
fn seccomp() -> Result<(), String> {
    const SECCOMP_GET_ACTION_AVAIL: libc::c_uint = 2;
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: seccomp(2) reads the one u32 the pointer names.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "this kernel has no seccomp filters: {}",
            std::io::Error::last_os_error()
        ))
    }
}
