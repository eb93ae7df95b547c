//! What must not be read, sent, deleted or overwritten, as one table the
//! safety layer and the sandbox both apply: secrets (keys, credentials,
//! password hashes, keyrings, browser profiles, the partner's own token,
//! config and databases), the system's own directories and the homes,
//! and the start-up files a write could turn into code. Paths and
//! patterns are compared component by component, so `/etc/sha*`,
//! `~/.ss?/*` and `/h?me` count as what they could match.

use super::expand::Candidate;
use super::scene::Scene;

/// One entry of the secrets table.
pub struct Secret {
    /// The path, `~` for the home; a component may be a glob.
    pub path: &'static str,
    /// What it holds.
    pub what: &'static str,
    /// Everything under it is secret (but the names in `except`).
    pub tree: bool,
    /// Names under a tree that are not secret (`*.pub`).
    pub except: &'static [&'static str],
}

const fn file(path: &'static str, what: &'static str) -> Secret {
    Secret {
        path,
        what,
        tree: false,
        except: &[],
    }
}

const fn tree(path: &'static str, what: &'static str) -> Secret {
    Secret {
        path,
        what,
        tree: true,
        except: &[],
    }
}

/// Secrets: reading one by any program, or sending one anywhere, is
/// blocked; the sandbox denies reading them.
pub const SECRETS: &[Secret] = &[
    file("/etc/shadow", "password hashes"),
    file("/etc/gshadow", "password hashes"),
    file("/etc/shadow-", "password hashes"),
    file("/etc/gshadow-", "password hashes"),
    file("/etc/security/opasswd", "password hashes"),
    file("/etc/ssh/ssh_host_*_key", "the machine's private SSH keys"),
    tree("/etc/ssl/private", "TLS private keys"),
    file("/proc/*/environ", "a process's environment (API keys)"),
    file("/proc/*/mem", "a process's memory"),
    file("/dev/mem", "the machine's memory"),
    file("/dev/kmem", "the machine's memory"),
    Secret {
        path: "~/.ssh",
        what: "a private SSH key",
        tree: true,
        except: &[
            "*.pub",
            "known_hosts",
            "known_hosts.old",
            "authorized_keys",
            "config",
        ],
    },
    tree("~/.gnupg", "GnuPG keys"),
    tree("~/.aws", "cloud credentials"),
    tree("~/.azure", "cloud credentials"),
    tree("~/.config/gcloud", "cloud credentials"),
    tree("~/.kube", "cluster credentials"),
    tree("~/.docker", "registry credentials"),
    tree("~/.password-store", "a password store"),
    tree("~/.local/share/keyrings", "a keyring"),
    tree("~/.gnome2/keyrings", "a keyring"),
    tree("~/.mozilla", "a browser profile"),
    tree("~/.thunderbird", "a mail profile"),
    tree("~/.config/google-chrome", "a browser profile"),
    tree("~/.config/chromium", "a browser profile"),
    tree("~/.config/BraveSoftware", "a browser profile"),
    tree("~/.config/gh", "GitHub credentials"),
    tree("~/.config/partner", "the partner's token and config"),
    tree("~/.local/share/partner", "the partner's databases"),
    file("~/.netrc", "stored credentials"),
    file("~/.git-credentials", "stored credentials"),
    file("~/.pgpass", "stored credentials"),
    file("~/.my.cnf", "stored credentials"),
    file("~/.npmrc", "stored credentials"),
    file("~/.pypirc", "stored credentials"),
    file("~/.vault-token", "stored credentials"),
    file("~/.cargo/credentials", "stored credentials"),
    file("~/.cargo/credentials.toml", "stored credentials"),
];

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

/// Whether `path` (absolute, clean) is one of the system's own
/// directories (`/etc`, `/usr/lib`…), whose loss breaks the system.
pub fn is_system_dir(path: &str) -> bool {
    SYSTEM_DIRS.contains(&path)
}

/// What reading a candidate would touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// A secret.
    Secret(&'static str),
    /// A directory that holds a secret, read whole (`grep -r . ~`).
    Holds(&'static str),
}

fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

/// True when the candidate component `cand` could name `name` (either
/// may be a glob; a template `*` is any name).
fn comp_match(cand: &str, name: &str) -> bool {
    if cand == name || name == "*" && !cand.is_empty() {
        return true;
    }
    let glob = |pat: &str, text: &str| {
        glob::Pattern::new(&pat.replace("**", "*")).is_ok_and(|p| {
            p.matches_with(
                text,
                glob::MatchOptions {
                    case_sensitive: true,
                    require_literal_separator: true,
                    require_literal_leading_dot: false,
                },
            )
        })
    };
    (super::expand::has_glob(cand) && glob(cand, name))
        || (super::expand::has_glob(name) && glob(name, cand))
}

/// How the candidate path relates to a template path.
#[derive(Debug, PartialEq, Eq)]
enum Relation {
    /// It could be the template.
    Same,
    /// It could be under it; the last component.
    Under,
    /// It could be above it.
    Above,
    /// Neither.
    Apart,
}

fn relate(cand: &str, template: &str) -> Relation {
    let (c, t) = (components(cand), components(template));
    let shared = c.len().min(t.len());
    if !(0..shared).all(|i| comp_match(c[i], t[i])) {
        return Relation::Apart;
    }
    match c.len().cmp(&t.len()) {
        std::cmp::Ordering::Equal => Relation::Same,
        std::cmp::Ordering::Greater => Relation::Under,
        std::cmp::Ordering::Less => Relation::Above,
    }
}

fn home_template(path: &str, scene: &Scene) -> String {
    match path.strip_prefix('~') {
        Some(rest) => format!("{}{rest}", scene.home_str().trim_end_matches('/')),
        None => path.to_string(),
    }
}

/// What reading `cand` (`recursive`: a directory read whole) reaches.
pub fn reach(cand: &Candidate, recursive: bool, scene: &Scene) -> Option<Reach> {
    let mut holds = None;
    let own = scene.protected().iter().map(|p| (p.as_str(), false));
    // A secret of the home is one in every home (`/root/.ssh/id_rsa`).
    let templates = SECRETS.iter().flat_map(|s| {
        let homes: Vec<String> = if s.path.starts_with('~') {
            vec![
                home_template(s.path, scene),
                s.path.replacen('~', "/root", 1),
                s.path.replacen('~', "/home/*", 1),
            ]
        } else {
            vec![s.path.to_string()]
        };
        homes.into_iter().map(move |t| (s, t))
    });
    for (s, template) in templates {
        match relate(&cand.path, &template) {
            Relation::Same if !s.tree || recursive => return Some(Reach::Secret(s.what)),
            Relation::Under if s.tree => {
                let last = components(&cand.path).pop().unwrap_or("");
                let excepted = !cand.pattern && s.except.iter().any(|e| comp_match(e, last));
                if !excepted {
                    return Some(Reach::Secret(s.what));
                }
            }
            Relation::Above if recursive => holds = holds.or(Some(s.what)),
            _ => {}
        }
    }
    for (path, _) in own {
        match relate(&cand.path, path) {
            Relation::Same => return Some(Reach::Secret("the partner's own files")),
            Relation::Above if recursive => holds = holds.or(Some("the partner's own files")),
            _ => {}
        }
    }
    holds.map(Reach::Holds)
}

/// True when a name pattern would match most names (`*`, `.[a-z]*`,
/// `?*`): deleting it empties the directory.
fn broad(last: &str) -> bool {
    const SAMPLES: &[&str] = &[
        "bin",
        "etc",
        "usr",
        "Documents",
        "src",
        "a",
        ".ssh",
        ".config",
    ];
    super::expand::has_glob(last) && SAMPLES.iter().filter(|s| comp_match(last, s)).count() >= 2
}

/// What a destructive command would lose at `cand`, when it is the
/// system, a home or everything in one: "the root directory", "/etc",
/// "everything in the home directory".
pub fn critical(cand: &Candidate, scene: &Scene) -> Option<String> {
    let home = scene.home_str();
    let mut templates: Vec<(String, String)> = vec![
        ("/".into(), "the root directory".into()),
        (home.to_string(), "the home directory".into()),
        ("/root".into(), "the home directory of root".into()),
        ("/home/*".into(), "a home directory".into()),
    ];
    templates.extend(SYSTEM_DIRS.iter().map(|d| (d.to_string(), d.to_string())));
    let c = components(&cand.path);
    for (t, what) in &templates {
        let tc = components(t);
        if relate(&cand.path, t) == Relation::Same && (c.len() == tc.len()) {
            return Some(what.clone());
        }
    }
    // A directory that holds the home directory (`~/..`).
    if relate(&cand.path, home) == Relation::Above {
        return Some(format!("{} (it holds the home directory)", cand.path));
    }
    // Everything in one of them: `/*`, `~/.[a-z]*`, `/usr/*`.
    if let Some((last, parent)) = c.split_last()
        && broad(last)
    {
        let parent = format!("/{}", parent.join("/"));
        for (t, what) in &templates {
            if relate(&parent, t) == Relation::Same {
                return Some(format!("everything in {what}"));
            }
        }
    }
    None
}

/// True when `cand` is under a directory whose files are the system's own
/// (and not in the home directory, which may be `/root`).
pub fn in_system_tree(cand: &Candidate, scene: &Scene) -> bool {
    if matches!(
        relate(&cand.path, scene.home_str()),
        Relation::Same | Relation::Under
    ) && !cand.path.starts_with('*')
    {
        return false;
    }
    const TREES: &[&str] = &[
        "/bin", "/boot", "/etc", "/lib", "/lib64", "/sbin", "/usr", "/sys", "/proc", "/root",
        "/var/lib",
    ];
    TREES
        .iter()
        .any(|t| matches!(relate(&cand.path, t), Relation::Same | Relation::Under))
}

/// True for a dotfile or anything in a dot-directory of the home (start-up
/// files, autostart entries, user services, `authorized_keys`): a write
/// there can become code that runs later.
pub fn startup_file(cand: &Candidate, scene: &Scene) -> bool {
    let home = components(scene.home_str());
    let c = components(&cand.path);
    c.len() > home.len()
        && (0..home.len()).all(|i| comp_match(c[i], home[i]))
        && c[home.len()].starts_with('.')
}

/// Files whose loss or overwrite locks people out or stops the machine
/// booting: deleting, moving or overwriting one is blocked.
const VITAL: &[(&str, &str)] = &[
    ("/etc/passwd", "the user accounts"),
    ("/etc/shadow", "the password hashes"),
    ("/etc/group", "the groups"),
    ("/etc/gshadow", "the group passwords"),
    ("/etc/sudoers", "who may use sudo"),
    ("/etc/ssh/sshd_config", "the SSH server's configuration"),
    ("/etc/resolv.conf", "name resolution"),
    ("/etc/nsswitch.conf", "name resolution"),
    ("/etc/fstab", "the file systems mounted at boot"),
    ("/etc/pam.d/*", "how people log in"),
    ("/boot/*", "the boot files"),
    ("~/.ssh/authorized_keys", "the keys allowed to log in"),
];

/// What losing `cand` would break, when it is a vital file.
pub fn vital(cand: &Candidate, scene: &Scene) -> Option<String> {
    VITAL.iter().find_map(|(path, what)| {
        let template = home_template(path, scene);
        (relate(&cand.path, &template) == Relation::Same).then(|| what.to_string())
    })
}

/// True for a harmless device (`/dev/null`, the terminal, standard
/// streams).
pub fn quiet_device(cand: &Candidate) -> bool {
    let p = cand.path.as_str();
    matches!(
        p,
        "/dev/null"
            | "/dev/zero"
            | "/dev/stdout"
            | "/dev/stderr"
            | "/dev/stdin"
            | "/dev/tty"
            | "/dev/urandom"
            | "/dev/random"
    ) || p.starts_with("/dev/fd/")
        || p.starts_with("/dev/pts/")
}

/// True for a network connection opened as a file (`/dev/tcp/HOST/PORT`).
pub fn network_device(cand: &Candidate) -> bool {
    cand.path.starts_with("/dev/tcp/") || cand.path.starts_with("/dev/udp/")
}

/// True for a block device (`/dev/sda`, `/dev/nvme0n1p2`, `/dev/disk/…`).
pub fn block_device(cand: &Candidate) -> bool {
    const PREFIXES: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "sr", "loop", "nbd",
    ];
    let c = components(&cand.path);
    match c.as_slice() {
        ["dev", "disk" | "mapper", ..] => true,
        ["dev", name] => PREFIXES
            .iter()
            .any(|p| name.starts_with(p) || (cand.pattern && comp_match(name, &format!("{p}a")))),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn cand(p: &str) -> Candidate {
        Candidate {
            path: p.into(),
            pattern: super::super::expand::has_glob(p),
        }
    }

    #[test]
    fn patterns_count_as_what_they_could_match() {
        let scene = Scene::new(Path::new("/home/ada"), Path::new("/home/ada/work"));
        assert!(critical(&cand("/h?me"), &scene).is_some());
        assert!(critical(&cand("/[h]ome"), &scene).is_some());
        assert!(critical(&cand("/*"), &scene).is_some());
        assert!(critical(&cand("/home/ada/*"), &scene).is_some());
        assert!(critical(&cand("/home/ada/work"), &scene).is_none());
        assert!(critical(&cand("/home/ada/*.txt"), &scene).is_none());
        assert_eq!(
            reach(&cand("/etc/sha*"), false, &scene),
            Some(Reach::Secret("password hashes"))
        );
        assert!(reach(&cand("/home/ada/.ss?/id_rsa"), false, &scene).is_some());
        assert!(reach(&cand("/home/ada/.ssh/id_rsa.pub"), false, &scene).is_none());
        assert!(reach(&cand("/home/ada/.ssh/*"), false, &scene).is_some());
        assert!(reach(&cand("/home/ada/.ssh"), false, &scene).is_none());
        assert!(reach(&cand("/home/ada/.ssh"), true, &scene).is_some());
        assert_eq!(
            reach(&cand("/home/ada"), true, &scene),
            Some(Reach::Holds("a private SSH key"))
        );
        assert!(startup_file(&cand("/home/ada/.bashrc"), &scene));
        assert!(!startup_file(&cand("/home/ada/work/x"), &scene));
        assert!(block_device(&cand("/dev/sda")));
        assert!(!block_device(&cand("/dev/null")));
    }
}
