//! What each command risks: deletions, disks, permissions, scripts from
//! the network or decoded payloads run by a shell, secrets, the machine's
//! network and firewall, and a table of commands known to only read or to
//! change things. A command the table does not know is `medium`.

use super::system::{git, kill, network, packages, services};
use super::tables::*;
use super::{Finding, Risk, finding};
use crate::gate::paths;
use crate::gate::syntax::{Arg, Invocation, Reading, Via};
use crate::gate::wrappers::is_shell;

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
        if a.text == "{}"
            && let Via::FindExec(roots) = &inv.via
        {
            out.extend(roots.iter().cloned());
            continue;
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
            .trim_start_matches(['@', '<'])
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
