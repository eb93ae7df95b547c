//! What a path names, for the safety layer: the root, a system directory,
//! a home directory, a block device, a secret. Paths are compared after a
//! lexical clean-up (`//`, `/./`, `..`, a trailing `/` or `/.`), with the
//! directory a `cd` before them moved to.

/// Top-level directories whose loss breaks the system.
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/home",
    "/snap",
    "/mnt",
    "/media",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local",
    "/usr/share",
    "/usr/include",
    "/var/lib",
    "/var/log",
    "/etc/ssh",
    "/etc/systemd",
];

/// Directories under which a write changes the system's own files.
const SYSTEM_TREES: &[&str] = &[
    "/bin", "/boot", "/etc", "/lib", "/lib64", "/sbin", "/usr", "/sys", "/proc", "/root",
    "/var/lib",
];

/// Block-device name prefixes under `/dev`.
const BLOCK_DEVICES: &[&str] = &[
    "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "sr", "disk/", "mapper/", "loop", "nbd",
];

/// A path made absolute (when `cwd` is known and it is relative) and
/// cleaned: `~` kept as the home prefix.
pub fn resolve(path: &str, cwd: Option<&str>) -> String {
    let joined = if path.starts_with('/') || path.starts_with('~') {
        path.to_string()
    } else if let Some(cwd) = cwd {
        format!("{}/{}", cwd.trim_end_matches('/'), path)
    } else {
        path.to_string()
    };
    clean(&joined)
}

/// `//` → `/`, `/./` → `/`, `a/..` → `` (never above the root), no
/// trailing `/` or `/.`.
pub fn clean(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != ".." && *p != "~") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, true) => "/".into(),
        (true, false) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// The part of a path before a trailing glob (`/usr/*` → `/usr`, `/*` →
/// `/`, `~/.*` → `~`), and whether there was one.
fn without_glob(path: &str) -> (&str, bool) {
    for glob in ["/*", "/.*", "/**", "/*.*"] {
        if let Some(base) = path.strip_suffix(glob) {
            return (if base.is_empty() { "/" } else { base }, true);
        }
    }
    if path == "*" || path == ".*" {
        return (".", true);
    }
    (path, false)
}

/// What a destructive command would lose at `path` (resolved), when it is
/// the system or a home: "the root directory", "/etc", "the home
/// directory".
pub fn critical(path: &str) -> Option<String> {
    let (base, glob) = without_glob(path);
    let base = if glob { clean(base) } else { base.to_string() };
    let what = |s: &str| {
        if glob {
            format!("everything in {s}")
        } else {
            s.to_string()
        }
    };
    if base == "/" {
        return Some(what("the root directory"));
    }
    if base == "~" || base == "/root" {
        return Some(what("the home directory"));
    }
    if SYSTEM_DIRS.contains(&base.as_str()) {
        return Some(what(&base));
    }
    // A user's home: /home/NAME.
    if let Some(user) = base.strip_prefix("/home/")
        && !user.is_empty()
        && !user.contains('/')
    {
        return Some(what(&format!("{base} (a home directory)")));
    }
    None
}

/// True when `path` (resolved) is inside a system tree (`/etc/nginx`,
/// `/usr/bin/ls`).
pub fn in_system_tree(path: &str) -> bool {
    SYSTEM_TREES.iter().any(|t| {
        path == *t
            || path
                .strip_prefix(t)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// True for a block device (`/dev/sda`, `/dev/nvme0n1p2`, `/dev/disk/by-id/…`).
pub fn block_device(path: &str) -> bool {
    let Some(dev) = path.strip_prefix("/dev/") else {
        return false;
    };
    BLOCK_DEVICES.iter().any(|p| dev.starts_with(p))
}

/// True for a harmless device (`/dev/null`, the terminal, standard streams).
pub fn quiet_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null"
            | "/dev/zero"
            | "/dev/stdout"
            | "/dev/stderr"
            | "/dev/stdin"
            | "/dev/tty"
            | "/dev/urandom"
            | "/dev/random"
    ) || path.starts_with("/dev/fd/")
        || path.starts_with("/dev/pts/")
}

/// What secret `path` holds, when it is one: password hashes, a private
/// key, credentials.
pub fn secret(path: &str) -> Option<&'static str> {
    let path = clean(path);
    let name = path.rsplit('/').next().unwrap_or("");
    if matches!(
        path.as_str(),
        "/etc/shadow" | "/etc/gshadow" | "/etc/shadow-" | "/etc/gshadow-" | "/etc/security/opasswd"
    ) {
        return Some("password hashes");
    }
    let in_ssh = path.contains("/.ssh/") || path.starts_with("/etc/ssh/");
    if in_ssh
        && (name.starts_with("id_") || name.starts_with("ssh_host_"))
        && !name.ends_with(".pub")
    {
        return Some("a private SSH key");
    }
    if path.contains("/.gnupg/private-keys") || path.ends_with("/.gnupg/secring.gpg") {
        return Some("a private GnuPG key");
    }
    if path.ends_with("/.aws/credentials")
        || path.ends_with("/.netrc")
        || path.ends_with("/.docker/config.json")
    {
        return Some("stored credentials");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cleaned_and_classified() {
        assert_eq!(clean("//usr/./bin/../"), "/usr");
        assert_eq!(clean("/.."), "/");
        assert_eq!(resolve("*", Some("/")), "/*");
        assert_eq!(resolve("x/..", Some("/etc")), "/etc");
        assert!(critical("/").is_some());
        assert!(critical("/*").is_some());
        assert!(critical("~/*").is_some());
        assert!(critical("/home/ada").is_some());
        assert!(critical("~/Downloads/tmp").is_none());
        assert!(critical("/var/www").is_none());
        assert!(block_device("/dev/nvme0n1"));
        assert!(!block_device("/dev/null"));
        assert_eq!(secret("~/.ssh/id_ed25519"), Some("a private SSH key"));
        assert_eq!(secret("~/.ssh/id_ed25519.pub"), None);
    }
}
