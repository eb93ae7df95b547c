//! What each command risks: deletions, disks, permissions, scripts from
//! the network or decoded payloads run by a shell, secrets, the machine's
//! network and firewall, and a table of commands known to only read or to
//! change things. A command the table does not know is `medium`.

use super::{Finding, Risk, finding};
use crate::gate::paths;
use crate::gate::syntax::{Arg, Invocation, Reading, Via};
use crate::gate::wrappers::is_shell;

/// Commands that only read or report.
const READERS: &[&str] = &[
    "ls",
    "cat",
    "echo",
    "printf",
    "pwd",
    "df",
    "du",
    "free",
    "uptime",
    "whoami",
    "id",
    "date",
    "cal",
    "uname",
    "hostname",
    "ps",
    "pgrep",
    "top",
    "htop",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "head",
    "tail",
    "less",
    "more",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "which",
    "type",
    "whereis",
    "file",
    "stat",
    "printenv",
    "lsblk",
    "lscpu",
    "lsusb",
    "lspci",
    "ss",
    "netstat",
    "ping",
    "traceroute",
    "dig",
    "nslookup",
    "host",
    "journalctl",
    "dmesg",
    "history",
    "man",
    "help",
    "true",
    "false",
    "test",
    "[",
    "sleep",
    "tree",
    "locate",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "diff",
    "cmp",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "mkdir",
    "touch",
    "dpkg-query",
    "apt-cache",
    "nproc",
    "vmstat",
    "iostat",
    "lsof",
    "w",
    "who",
    "last",
    "env",
    "cd",
    "column",
    "jq",
    "xxd",
    "od",
    "hexdump",
    "strings",
    "nl",
    "tac",
    "seq",
    "yes",
    "expr",
    "bc",
    "timedatectl",
    "hostnamectl",
    "localectl",
    "findmnt",
    "blkid",
    "groups",
    "getent",
    "locale",
    "nmcli",
    "sensors",
    "lsmod",
    "exit",
    "clear",
    "zcat",
    "base64",
    "gzip",
    "gunzip",
    "dd",
    "awk",
    "sed",
    "tar",
    "find",
    "xargs",
    "ip",
    "systemctl",
    "service",
    "git",
    "dpkg",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "snap",
    "flatpak",
    "crontab",
    "kill",
    "iptables",
    "ufw",
    "nft",
    "ifconfig",
];

/// Commands that change files, packages, services or processes.
const CHANGERS: &[(&str, &str)] = &[
    ("cp", "copies files"),
    ("mv", "moves files"),
    ("ln", "makes links"),
    ("install", "installs files"),
    ("rsync", "copies files"),
    ("tee", "writes files"),
    ("chmod", "changes permissions"),
    ("chown", "changes owners"),
    ("chgrp", "changes groups"),
    ("pkill", "stops processes"),
    ("killall", "stops processes"),
    ("rmdir", "removes directories"),
    ("unlink", "deletes a file"),
    ("truncate", "empties files"),
    ("curl", "reaches the network"),
    ("wget", "downloads from the network"),
    ("pip", "installs Python packages"),
    ("pip3", "installs Python packages"),
    ("npm", "runs npm"),
    ("cargo", "runs cargo"),
    ("make", "runs a build"),
    ("docker", "runs docker"),
    ("podman", "runs podman"),
    ("zip", "writes an archive"),
    ("unzip", "unpacks an archive"),
    ("xdg-open", "opens a file or address"),
    ("python", "runs Python code"),
    ("python3", "runs Python code"),
    ("perl", "runs Perl code"),
    ("ruby", "runs Ruby code"),
    ("node", "runs JavaScript code"),
    ("ssh", "connects to another machine"),
    ("scp", "copies over the network"),
    ("mount", "mounts a file system"),
    ("umount", "unmounts a file system"),
];

/// Commands that change the machine itself.
const SYSTEM_CHANGERS: &[(&str, &str)] = &[
    ("shutdown", "shuts the machine down"),
    ("reboot", "restarts the machine"),
    ("halt", "halts the machine"),
    ("poweroff", "powers the machine off"),
    ("init", "changes the run level"),
    ("telinit", "changes the run level"),
    ("userdel", "deletes a user"),
    ("usermod", "changes a user"),
    ("useradd", "adds a user"),
    ("passwd", "changes a password"),
    ("chpasswd", "changes passwords"),
    ("visudo", "edits who may use sudo"),
    ("swapoff", "turns swap off"),
    ("sysctl", "changes kernel settings"),
    ("rmmod", "unloads a kernel module"),
    ("modprobe", "loads or unloads kernel modules"),
    ("chattr", "changes file attributes"),
    ("shred", "overwrites files beyond recovery"),
    ("su", "switches user"),
    ("sudo", "opens a root shell"),
    ("doas", "opens a root shell"),
    ("mkswap", "formats swap space"),
];

/// Commands that format or partition disks.
const DISK_TOOLS: &[&str] = &[
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "wipefs",
    "blkdiscard",
    "mke2fs",
    "cryptsetup",
];

/// Units whose stopping cuts the machine off or drops its firewall.
const GUARD_UNITS: &[&str] = &[
    "ssh",
    "sshd",
    "ufw",
    "firewalld",
    "nftables",
    "iptables",
    "ip6tables",
    "netfilter-persistent",
    "networkmanager",
    "systemd-networkd",
    "networking",
    "systemd-resolved",
    "wpa_supplicant",
    "network",
];

/// Commands that bring text from the network.
const FETCHERS: &[&str] = &[
    "curl", "wget", "fetch", "aria2c", "http", "https", "nc", "ncat", "socat", "lynx", "links",
];

/// Interpreters that run a program read from their input.
const INTERPRETERS: &[&str] = &[
    "python", "python2", "python3", "perl", "ruby", "node", "php", "lua",
];

/// Every finding about one command (none: nothing to say, `low`).
pub(super) fn findings(inv: &Invocation, reading: &Reading) -> Vec<Finding> {
    let mut out = Vec::new();
    let name = inv.name();
    if inv.self_spawning {
        out.push(finding(
            Risk::Blocked,
            format!("a fork bomb: `{name}` starts itself over and over"),
        ));
        return out;
    }
    redirects(inv, &mut out);
    secrets(inv, &mut out);
    if name.is_empty() {
        return out;
    }
    if inv.argv[0].dynamic {
        out.push(finding(
            Risk::High,
            "the command's name is only known when it runs",
        ));
    }
    match name {
        "rm" => rm(inv, &mut out),
        "find" => find(inv, &mut out),
        "dd" => dd(inv, &mut out),
        "chmod" | "chown" | "chgrp" => permissions(inv, &mut out),
        "cp" | "mv" | "install" | "rsync" | "ln" | "tee" | "shred" | "truncate" => {
            writers(inv, &mut out)
        }
        "systemctl" | "service" => services(inv, &mut out),
        "ufw" | "iptables" | "ip6tables" | "nft" | "ip" | "ifconfig" | "ifdown" | "nmcli"
        | "rfkill" => network(inv, &mut out),
        "kill" => kill(inv, &mut out),
        "git" => git(inv, &mut out),
        "crontab" if has_flag(inv, 'r') => out.push(finding(
            Risk::High,
            "deletes every scheduled job (crontab -r)",
        )),
        "sed"
            if inv
                .args()
                .iter()
                .any(|a| a.text.starts_with("-i") || a.text == "--in-place") =>
        {
            out.push(finding(Risk::Medium, "edits files in place"));
        }
        "tar"
            if inv
                .args()
                .first()
                .is_some_and(|a| a.text.contains(['x', 'c'])) =>
        {
            out.push(finding(
                Risk::Medium,
                "writes files from or into an archive",
            ));
        }
        "apt" | "apt-get" | "dnf" | "yum" | "pacman" | "zypper" | "snap" | "flatpak" | "dpkg" => {
            packages(inv, &mut out)
        }
        _ if name.starts_with("mkfs") || DISK_TOOLS.contains(&name) => {
            out.push(finding(
                Risk::Blocked,
                format!("`{name}` formats or partitions disks"),
            ));
        }
        _ => {}
    }
    if is_shell(name)
        || matches!(name, "eval" | "source" | "." | "watch")
        || INTERPRETERS.contains(&name)
    {
        scripts(inv, reading, &mut out);
    }
    if out.is_empty() {
        if let Some((_, what)) = SYSTEM_CHANGERS.iter().find(|(n, _)| *n == name) {
            out.push(finding(Risk::High, format!("`{name}` {what}")));
        } else if let Some((_, what)) = CHANGERS.iter().find(|(n, _)| *n == name) {
            out.push(finding(Risk::Medium, format!("`{name}` {what}")));
        } else if !READERS.contains(&name)
            && !is_shell(name)
            && !matches!(name, "eval" | "source" | ".")
        {
            out.push(finding(
                Risk::Medium,
                format!("`{name}` is not a command the gate knows; what it does is not checked"),
            ));
        }
    }
    out
}

/// The options of a command (before `--`), and its other arguments.
fn split_args(inv: &Invocation) -> (Vec<&Arg>, Vec<&Arg>) {
    let (mut options, mut operands) = (Vec::new(), Vec::new());
    let mut ended = false;
    for a in inv.args() {
        if !ended && a.text == "--" {
            ended = true;
        } else if !ended && a.text.starts_with('-') && a.text.len() > 1 {
            options.push(a);
        } else {
            operands.push(a);
        }
    }
    (options, operands)
}

/// True when a short flag letter is set (`-rf` has `r`), or its long form.
fn has_flag(inv: &Invocation, letter: char) -> bool {
    split_args(inv)
        .0
        .iter()
        .any(|a| !a.text.starts_with("--") && a.text[1..].contains(letter))
}

fn has_long(inv: &Invocation, long: &str) -> bool {
    split_args(inv).0.iter().any(|a| a.text == long)
}

/// The operands, with what `xargs` or `find -exec` give the command.
fn targets(inv: &Invocation) -> (Vec<String>, bool) {
    let mut unknown = false;
    let mut out = Vec::new();
    for a in split_args(inv).1 {
        if a.dynamic {
            unknown = true;
        }
        if a.text == "{}" {
            if let Via::FindExec(roots) = &inv.via {
                out.extend(roots.iter().cloned());
                continue;
            }
        }
        out.push(a.text.clone());
    }
    match &inv.via {
        Via::Xargs(Some(items)) => out.extend(items.iter().cloned()),
        Via::Xargs(None) => unknown = true,
        _ => {}
    }
    (out, unknown)
}

fn resolved(inv: &Invocation, path: &str) -> String {
    paths::resolve(path, inv.cwd.as_deref())
}

fn rm(inv: &Invocation, out: &mut Vec<Finding>) {
    let recursive = has_flag(inv, 'r')
        || has_flag(inv, 'R')
        || has_long(inv, "--recursive")
        || matches!(inv.via, Via::FindExec(_));
    if has_long(inv, "--no-preserve-root") {
        out.push(finding(
            Risk::Blocked,
            "rm --no-preserve-root would delete the root directory",
        ));
    }
    let (targets, unknown) = targets(inv);
    for t in &targets {
        let path = resolved(inv, t);
        match paths::critical(&path) {
            Some(what) if recursive => {
                out.push(finding(
                    Risk::Blocked,
                    format!("a recursive delete of {what}"),
                ));
            }
            Some(what) => out.push(finding(Risk::High, format!("deletes in {what}"))),
            None if recursive => out.push(finding(
                Risk::High,
                format!("deletes {t} and everything under it"),
            )),
            None if paths::in_system_tree(&path) => {
                out.push(finding(Risk::High, format!("deletes the system file {t}")))
            }
            None => out.push(finding(Risk::Medium, format!("deletes {t}"))),
        }
    }
    if unknown {
        let risk = if recursive { Risk::High } else { Risk::Medium };
        out.push(finding(risk, "deletes files only known when it runs"));
    }
    if targets.is_empty() && !unknown {
        out.push(finding(Risk::Low, ""));
    }
}

fn find(inv: &Invocation, out: &mut Vec<Finding>) {
    if !inv.args().iter().any(|a| a.text == "-delete") {
        return;
    }
    let roots = match crate::gate::wrappers::unwrap(&inv.argv) {
        crate::gate::wrappers::Unwrapped::Find { roots, .. } => roots,
        _ => vec![".".into()],
    };
    for root in roots {
        let path = resolved(inv, &root);
        match paths::critical(&path) {
            Some(what) => out.push(finding(Risk::Blocked, format!("find -delete under {what}"))),
            None => out.push(finding(
                Risk::High,
                format!("deletes what it finds under {root}"),
            )),
        }
    }
}

fn dd(inv: &Invocation, out: &mut Vec<Finding>) {
    for a in inv.args() {
        if let Some(target) = a.text.strip_prefix("of=") {
            let path = resolved(inv, target);
            if paths::block_device(&path) {
                out.push(finding(
                    Risk::Blocked,
                    format!("dd writes over the disk {target}"),
                ));
            } else if paths::in_system_tree(&path) {
                out.push(finding(
                    Risk::High,
                    format!("dd overwrites the system file {target}"),
                ));
            } else if !paths::quiet_device(&path) {
                out.push(finding(Risk::Low, format!("dd writes {target}")));
            }
        }
    }
}

fn permissions(inv: &Invocation, out: &mut Vec<Finding>) {
    let name = inv.name();
    let recursive = has_flag(inv, 'R') || has_long(inv, "--recursive");
    let (targets, _) = targets(inv);
    let mode = targets.first().cloned().unwrap_or_default();
    let world = name == "chmod"
        && (mode.ends_with('7')
            || mode.ends_with('6')
            || mode.contains("o+w")
            || mode.contains("a+w"));
    for t in targets.iter().skip(1) {
        let path = resolved(inv, t);
        match paths::critical(&path) {
            Some(what) if recursive || path == "/" => {
                out.push(finding(
                    Risk::Blocked,
                    format!("{name} -R on {what} breaks the system"),
                ));
            }
            Some(what) => out.push(finding(Risk::High, format!("{name} on {what}"))),
            None if paths::in_system_tree(&path) => out.push(finding(
                Risk::High,
                format!("{name} on the system file {t}"),
            )),
            None if world => out.push(finding(
                Risk::High,
                format!("makes {t} writable by everyone"),
            )),
            None if recursive => out.push(finding(
                Risk::Medium,
                format!("{name} on everything under {t}"),
            )),
            None => out.push(finding(Risk::Medium, format!("{name} on {t}"))),
        }
    }
}

fn writers(inv: &Invocation, out: &mut Vec<Finding>) {
    let name = inv.name();
    let (targets, _) = targets(inv);
    let written: Vec<&String> = match name {
        "tee" | "shred" | "truncate" => targets.iter().collect(),
        _ => targets.last().into_iter().collect(),
    };
    for t in written {
        let path = resolved(inv, t);
        if paths::block_device(&path) {
            out.push(finding(
                Risk::Blocked,
                format!("{name} writes over the disk {t}"),
            ));
        } else if paths::quiet_device(&path) {
        } else if paths::critical(&path).is_some() && matches!(name, "shred" | "truncate") {
            out.push(finding(Risk::Blocked, format!("{name} destroys {t}")));
        } else if paths::in_system_tree(&path) || paths::critical(&path).is_some() {
            out.push(finding(
                Risk::High,
                format!("{name} changes the system path {t}"),
            ));
        } else if name == "shred" {
            out.push(finding(
                Risk::High,
                format!("overwrites {t} beyond recovery"),
            ));
        } else {
            out.push(finding(Risk::Medium, format!("{name} writes {t}")));
        }
    }
    if name == "mv" {
        for t in targets.iter().take(targets.len().saturating_sub(1)) {
            if let Some(what) = paths::critical(&resolved(inv, t)) {
                out.push(finding(Risk::High, format!("moves {what} away")));
            }
        }
    }
}

fn redirects(inv: &Invocation, out: &mut Vec<Finding>) {
    for r in &inv.redirects {
        let path = resolved(inv, &r.target.text);
        if !r.writes {
            continue;
        }
        if paths::block_device(&path) {
            out.push(finding(
                Risk::Blocked,
                format!("writes over the disk {}", r.target.text),
            ));
        } else if paths::quiet_device(&path) || r.target.text.starts_with('&') {
        } else if paths::in_system_tree(&path) {
            out.push(finding(
                Risk::High,
                format!("overwrites the system file {}", r.target.text),
            ));
        } else {
            out.push(finding(Risk::Medium, format!("writes {}", r.target.text)));
        }
    }
}

fn secrets(inv: &Invocation, out: &mut Vec<Finding>) {
    // Using a key without showing it is not reading it.
    let uses_key = matches!(
        inv.name(),
        "ssh"
            | "scp"
            | "sftp"
            | "ssh-add"
            | "ssh-copy-id"
            | "ssh-keygen"
            | "git"
            | "chmod"
            | "chown"
            | "chgrp"
            | "ls"
            | "stat"
            | "test"
            | "["
    );
    let args = inv.argv.iter().skip(1).map(|a| &a.text);
    let reads = inv
        .redirects
        .iter()
        .filter(|r| !r.writes)
        .map(|r| &r.target.text);
    for text in args.chain(reads) {
        let path = text
            .trim_start_matches(|c| c == '@' || c == '<')
            .split('=')
            .next_back()
            .unwrap_or(text);
        if let Some(what) = paths::secret(&resolved(inv, path)) {
            if uses_key && what == "a private SSH key" {
                continue;
            }
            out.push(finding(Risk::Blocked, format!("reads {what} ({text})")));
        }
    }
}

fn services(inv: &Invocation, out: &mut Vec<Finding>) {
    let args: Vec<String> = inv
        .args()
        .iter()
        .map(|a| a.text.to_ascii_lowercase())
        .collect();
    let (verb, units): (&str, Vec<&String>) = if inv.name() == "service" {
        (
            args.get(1).map_or("", String::as_str),
            args.first().into_iter().collect(),
        )
    } else {
        let verb = args
            .iter()
            .find(|a| !a.starts_with('-'))
            .map_or("", String::as_str);
        (
            verb,
            args.iter()
                .filter(|a| !a.starts_with('-'))
                .skip(1)
                .collect(),
        )
    };
    match verb {
        "" | "status" | "show" | "is-active" | "is-enabled" | "is-failed" | "list-units"
        | "list-unit-files" | "cat" | "list-timers" | "--status-all" => {}
        "poweroff" | "reboot" | "halt" | "suspend" | "hibernate" | "kexec" | "rescue"
        | "emergency" | "isolate" => {
            out.push(finding(
                Risk::High,
                format!("systemctl {verb} takes the machine down or away"),
            ));
        }
        "stop" | "disable" | "mask" | "kill" => {
            for unit in units {
                let name = unit
                    .trim_end_matches(".service")
                    .trim_end_matches(".socket");
                if GUARD_UNITS.contains(&name) {
                    out.push(finding(
                        Risk::Blocked,
                        format!("stops {name}, cutting off access or dropping the firewall"),
                    ));
                } else {
                    out.push(finding(Risk::Medium, format!("{verb}s the service {unit}")));
                }
            }
        }
        _ => out.push(finding(Risk::Medium, format!("{verb} on services"))),
    }
}

fn network(inv: &Invocation, out: &mut Vec<Finding>) {
    let words: Vec<String> = inv
        .args()
        .iter()
        .map(|a| a.text.to_ascii_lowercase())
        .collect();
    let has = |w: &str| words.iter().any(|x| x == w);
    let name = inv.name();
    let off = match name {
        "ufw" => has("disable") || has("reset"),
        "iptables" | "ip6tables" => has("-f") || has("--flush") || (has("-p") && has("accept")),
        "nft" => has("flush") && has("ruleset"),
        "ip" => has("link") && has("down"),
        "ifconfig" => has("down"),
        "ifdown" => true,
        "nmcli" => {
            (has("networking") && has("off"))
                || (has("radio") && has("off"))
                || has("disconnect")
                || (has("connection") && has("down"))
        }
        "rfkill" => has("block"),
        _ => false,
    };
    if off {
        out.push(finding(
            Risk::Blocked,
            format!("`{name}` turns off the network or the firewall"),
        ));
    } else if matches!(name, "iptables" | "ip6tables" | "nft" | "ufw")
        && !words.is_empty()
        && !has("status")
        && !has("-l")
        && !has("list")
    {
        out.push(finding(Risk::High, "changes the firewall"));
    }
}

fn kill(inv: &Invocation, out: &mut Vec<Finding>) {
    if inv.args().iter().any(|a| a.text == "-1") && inv.args().len() >= 2
        || inv.args().last().is_some_and(|a| a.text == "-1")
    {
        out.push(finding(Risk::High, "kills every process it may"));
    } else {
        out.push(finding(Risk::Medium, "stops processes"));
    }
}

fn git(inv: &Invocation, out: &mut Vec<Finding>) {
    let words: Vec<&str> = inv.args().iter().map(|a| a.text.as_str()).collect();
    match words.first().copied() {
        Some("clean") if words.iter().any(|w| w.starts_with('-') && w.contains('f')) => {
            out.push(finding(Risk::High, "git clean deletes untracked files"));
        }
        Some("reset") if words.contains(&"--hard") => {
            out.push(finding(Risk::High, "git reset --hard discards changes"))
        }
        Some("push") if words.iter().any(|w| *w == "-f" || w.starts_with("--force")) => {
            out.push(finding(
                Risk::High,
                "git push --force rewrites shared history",
            ));
        }
        None
        | Some(
            "status" | "log" | "diff" | "show" | "branch" | "remote" | "rev-parse" | "blame"
            | "ls-files" | "tag",
        ) => {}
        Some(other) => out.push(finding(
            Risk::Medium,
            format!("git {other} changes the repository"),
        )),
    }
}

fn packages(inv: &Invocation, out: &mut Vec<Finding>) {
    let words: Vec<&str> = inv
        .args()
        .iter()
        .map(|a| a.text.as_str())
        .filter(|w| !w.starts_with('-'))
        .collect();
    let first = inv.args().first().map_or("", |a| a.text.as_str());
    let reading = matches!(
        words.first().copied(),
        None | Some("list" | "search" | "show" | "info" | "policy" | "query")
    ) || (inv.name() == "dpkg"
        && matches!(first, "-l" | "-s" | "-L" | "-S" | "--list" | "--status"));
    if !reading {
        let what = words.first().copied().unwrap_or(first);
        out.push(finding(
            Risk::Medium,
            format!("{} {what} changes installed packages", inv.name()),
        ));
    }
}

fn scripts(inv: &Invocation, reading: &Reading, out: &mut Vec<Finding>) {
    let name = inv.name();
    let feeds = |indices: &[usize]| -> Option<&'static str> {
        let mut kind = None;
        for &i in indices {
            let Some(up) = reading.invocations.get(i) else {
                continue;
            };
            if FETCHERS.contains(&up.name()) {
                return Some("downloaded");
            }
            if decodes(up) {
                kind = Some("decoded");
            }
        }
        kind
    };
    // What its input brings (`curl … | sh`), and what its arguments run
    // (`bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(base64 -d …)"`).
    let from_input = feeds(&inv.upstream);
    let inner: Vec<usize> = inv
        .args()
        .iter()
        .flat_map(|a| a.inner.iter().copied())
        .collect();
    let from_args = feeds(&inner);
    let reads_input = inv
        .args()
        .iter()
        .all(|a| a.text.starts_with('-') && !a.text.contains('c') && !a.text.contains('e'))
        || inv
            .args()
            .iter()
            .any(|a| a.text == "-" || a.text == "/dev/stdin");
    if let Some(kind) = from_args.or(from_input.filter(|_| reads_input || is_shell(name))) {
        out.push(finding(
            Risk::Blocked,
            format!("runs a {kind} script with `{name}` without it being read first"),
        ));
        return;
    }
    let dynamic = inv.args().iter().any(|a| a.dynamic);
    if dynamic && (is_shell(name) || name == "eval") {
        out.push(finding(
            Risk::High,
            format!("`{name}` runs code that is only known when it runs"),
        ));
    } else if !inv.upstream.is_empty() && reads_input {
        out.push(finding(
            Risk::High,
            format!("`{name}` runs a script from its input"),
        ));
    } else if is_shell(name) || matches!(name, "source" | ".") {
        if inv.args().iter().all(|a| a.text.starts_with('-')) && inv.upstream.is_empty() {
            out.push(finding(Risk::Medium, format!("opens a `{name}` shell")));
        } else if !inv
            .args()
            .iter()
            .any(|a| a.text.starts_with('-') && a.text.contains('c'))
        {
            out.push(finding(
                Risk::Medium,
                format!("runs a script file with `{name}`"),
            ));
        }
    }
}

/// True for a command that decodes a hidden payload.
fn decodes(inv: &Invocation) -> bool {
    let args: Vec<&str> = inv.args().iter().map(|a| a.text.as_str()).collect();
    match inv.name() {
        "base64" | "base32" | "basenc" => args.iter().any(|a| {
            matches!(*a, "-d" | "--decode" | "-D")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('d'))
        }),
        "openssl" => args
            .iter()
            .any(|a| *a == "-d" || *a == "base64" || *a == "enc"),
        "xxd" => args.iter().any(|a| a.starts_with("-r")),
        "uudecode" | "gpg" | "rev" => true,
        "printf" | "echo" => args.iter().any(|a| a.contains("\\x")),
        _ => false,
    }
}
