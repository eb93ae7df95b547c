//! What each command risks: the order in which one command is judged,
//! and the rules for deletions, disks, permissions and writes. Targets
//! are expanded ([`crate::expand`]) and judged against the
//! protected table ([`crate::protected`]): a pattern that could
//! match a protected path counts as that path.

use super::system::{self, git, kill, network, packages, services};
use super::tables::*;
use super::{Cx, Finding, OPAQUE, Risk, allow, code, finding, reads, scan};
use crate::expand::{self, Candidate, Expansion, has_glob};
use crate::protected::{self, Reach};
use crate::syntax::{Arg, Invocation, Via};

/// Every finding about one command (none: nothing to say, `low`).
pub(super) fn findings(inv: &Invocation, cx: &Cx) -> Vec<Finding> {
    let mut out = Vec::new();
    let name = inv.name();
    if inv.self_spawning {
        out.push(finding(
            Risk::Blocked,
            format!("a fork bomb: `{name}` starts itself over and over"),
        ));
        return out;
    }
    redirects(inv, cx, &mut out);
    reads::check(inv, cx, &mut out);
    if name.is_empty() {
        return out;
    }
    let mut prog = Vec::new();
    let first = &inv.argv[0];
    if first.dynamic || first.split {
        prog.push(finding(
            Risk::High,
            format!(
                "{OPAQUE}: the program's name comes from a variable or is only known when it runs"
            ),
        ));
        prog.extend(scan::blocked_in(&[cx.line.to_string()], cx));
    }
    if has_glob(name) && name.chars().any(|c| c.is_ascii_alphanumeric()) {
        prog.push(finding(
            Risk::High,
            format!("{OPAQUE}: the program's name is a pattern (`{name}`)"),
        ));
        for known in known_names().filter(|n| glob_names(name, n)) {
            let mut as_known = inv.clone();
            as_known.argv[0].text = known.to_string();
            prog.extend(program(&as_known, cx));
        }
    }
    prog.extend(program(inv, cx));
    system::fed_scripts(inv, cx, &mut prog);
    prog.extend(code::findings(inv, cx));
    if prog.is_empty() {
        prog.extend(allow::fallback(inv, cx));
    }
    out.extend(prog);
    out
}

/// Every program name the tables know.
fn known_names() -> impl Iterator<Item = &'static str> {
    READERS
        .iter()
        .copied()
        .chain(CHANGERS.iter().map(|(n, _)| *n))
        .chain(SYSTEM_CHANGERS.iter().map(|(n, _)| *n))
        .chain(DISK_TOOLS.iter().copied())
        .chain(["rm", "shred", "mkfs", "mkfs.ext4", "wipefs"])
}

fn glob_names(pattern: &str, name: &str) -> bool {
    glob::Pattern::new(pattern).is_ok_and(|p| p.matches(name))
}

/// The rules of the program itself.
fn program(inv: &Invocation, cx: &Cx) -> Vec<Finding> {
    let mut out = Vec::new();
    let name = inv.name();
    match name {
        "rm" | "unlink" | "rmdir" => rm(inv, cx, &mut out),
        "find" => find(inv, cx, &mut out),
        "dd" => dd(inv, cx, &mut out),
        "chmod" | "chown" | "chgrp" => permissions(inv, cx, &mut out),
        "cp" | "mv" | "install" | "rsync" | "ln" | "tee" | "shred" | "truncate" => {
            writers(inv, cx, &mut out)
        }
        "sed" | "gsed" => {
            if allow::has_short(inv, 'i') || allow::has_long_prefix(inv, "--in-place") {
                sed_in_place(inv, cx, &mut out);
            }
            let args: Vec<String> = inv.args().iter().map(|a| a.text.clone()).collect();
            // A write hidden in a script reads as anything but one: at
            // least high, as code partner cannot read would be.
            for file in code::sed_written(&args) {
                let e = expand::expand_text(&file, &inv.cwd, cx.scene);
                let mut found = Vec::new();
                written(&e, "sed's script (`w`)", false, cx, &mut found);
                out.extend(found.into_iter().map(|mut f| {
                    f.risk = f.risk.max(Risk::High);
                    f
                }));
            }
        }
        "systemctl" | "service" => services(inv, &mut out),
        "ufw" | "iptables" | "ip6tables" | "nft" | "ip" | "ifconfig" | "ifdown" | "nmcli"
        | "rfkill" | "route" => network(inv, &mut out),
        "kill" | "killall" | "pkill" => kill(inv, cx, &mut out),
        "git" => git(inv, &mut out),
        "passwd" | "usermod" | "userdel" => system::accounts(inv, &mut out),
        "nc" | "ncat" | "netcat" | "socat" => system::listeners(inv, &mut out),
        "crontab" if allow::has_short(inv, 'r') => out.push(finding(
            Risk::High,
            "deletes every scheduled job (crontab -r)",
        )),
        "tar"
            if inv.args().first().is_some_and(|a| {
                !a.text.starts_with("--") && a.text.contains(['x', 'c', 'r', 'u'])
            }) =>
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
    out
}

/// The options of a command (before `--`), and its other arguments.
pub(super) fn split_args(inv: &Invocation) -> (Vec<&Arg>, Vec<&Arg>) {
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

/// What the operands could name, with what `xargs` and `find -exec` give
/// the command (`{}` is each file found under find's roots).
pub(super) fn targets(inv: &Invocation, cx: &Cx) -> Expansion {
    let mut out = Expansion::default();
    let mut add = |e: Expansion| {
        out.anywhere |= e.anywhere;
        out.candidates.extend(e.candidates);
    };
    let roots = |roots: &[String]| -> Vec<String> {
        roots
            .iter()
            .flat_map(|r| [r.clone(), format!("{}/*", r.trim_end_matches('/'))])
            .collect()
    };
    for a in split_args(inv).1 {
        match &inv.via {
            Via::FindExec(r) if a.text == "{}" => {
                for root in roots(r) {
                    add(expand::expand_text(&root, &inv.cwd, cx.scene));
                }
            }
            Via::Xargs(Some(items)) if a.text == "{}" => {
                for item in items {
                    add(expand::expand_text(item, &inv.cwd, cx.scene));
                }
            }
            _ => add(expand::expand(a, &inv.cwd, cx.scene)),
        }
    }
    match &inv.via {
        Via::Xargs(Some(items)) => {
            for item in items {
                add(expand::expand_text(item, &inv.cwd, cx.scene));
            }
        }
        Via::Xargs(None) => out.anywhere = true,
        _ => {}
    }
    out
}

fn show(cx: &Cx, c: &Candidate) -> String {
    cx.scene.show(&c.path)
}

/// Marks the findings from `before` on as about writing `c` (so what a
/// sandbox stops can be said).
fn about_writing(out: &mut [Finding], before: usize, c: &Candidate) {
    for f in out.iter_mut().skip(before) {
        f.writes = Some(std::path::PathBuf::from(&c.path));
    }
}

fn rm(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    let recursive = allow::has_short(inv, 'r')
        || allow::has_short(inv, 'R')
        || allow::has_long(inv, "--recursive")
        || matches!(inv.via, Via::FindExec(_));
    if allow::has_long(inv, "--no-preserve-root") {
        out.push(finding(
            Risk::Blocked,
            "rm --no-preserve-root would delete the root directory",
        ));
    }
    let t = targets(inv, cx);
    for c in &t.candidates {
        let shown = show(cx, c);
        let before = out.len();
        if let Some(what) = protected::critical(c, cx.scene) {
            if recursive {
                out.push(finding(
                    Risk::Blocked,
                    format!("a recursive delete of {what}"),
                ));
            } else {
                out.push(finding(Risk::High, format!("deletes in {what}")));
            }
        } else if let Some(what) = protected::vital(c, cx.scene) {
            out.push(finding(Risk::Blocked, format!("deletes {what} ({shown})")));
        } else if let Some(Reach::Secret(what)) = protected::reach(c, true, cx.scene) {
            out.push(finding(Risk::Blocked, format!("deletes {what} ({shown})")));
        } else if recursive {
            out.push(finding(
                Risk::High,
                format!("deletes {shown} and everything under it"),
            ));
        } else if protected::in_system_tree(c, cx.scene) || protected::startup_file(c, cx.scene) {
            out.push(finding(
                Risk::High,
                format!("deletes {shown}, a system or start-up file"),
            ));
        } else {
            out.push(finding(Risk::Medium, format!("deletes {shown}")));
        }
        about_writing(out, before, c);
    }
    if t.anywhere {
        let risk = if recursive { Risk::High } else { Risk::Medium };
        out.push(finding(risk, "deletes files only known when it runs"));
    }
    if t.candidates.is_empty() && !t.anywhere {
        out.push(finding(Risk::Low, ""));
    }
}

fn find(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    if !inv.args().iter().any(|a| a.text == "-delete") {
        return;
    }
    let roots = match crate::wrappers::unwrap(&inv.argv) {
        crate::wrappers::Unwrapped::Find { roots, .. } => roots,
        _ => vec![".".into()],
    };
    for root in roots {
        let e = expand::expand_text(&root, &inv.cwd, cx.scene);
        for c in &e.candidates {
            let before = out.len();
            match protected::critical(c, cx.scene) {
                Some(what) => {
                    out.push(finding(Risk::Blocked, format!("find -delete under {what}")))
                }
                None => out.push(finding(
                    Risk::High,
                    format!("deletes what it finds under {}", show(cx, c)),
                )),
            }
            about_writing(out, before, c);
        }
        if e.anywhere {
            out.push(finding(
                Risk::Blocked,
                "find -delete under a directory only known when it runs",
            ));
        }
    }
}

fn dd(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    for a in inv.args() {
        if let Some(target) = a.text.strip_prefix("of=") {
            let arg = Arg {
                text: target.to_string(),
                ..a.clone()
            };
            written(
                &expand::expand(&arg, &inv.cwd, cx.scene),
                "dd",
                true,
                cx,
                out,
            );
        }
    }
}

/// The judgement of a file being written: disks, vital files and
/// protected trees are blocked; system and start-up files high.
fn written(e: &Expansion, name: &str, destroys: bool, cx: &Cx, out: &mut Vec<Finding>) {
    for c in &e.candidates {
        let shown = show(cx, c);
        let before = out.len();
        if protected::block_device(c) {
            out.push(finding(
                Risk::Blocked,
                format!("{name} writes over the disk {shown}"),
            ));
        } else if protected::quiet_device(c) {
        } else if let Some(what) = protected::vital(c, cx.scene) {
            out.push(finding(
                Risk::Blocked,
                format!("{name} overwrites {what} ({shown})"),
            ));
        } else if let Some(what) = protected::critical(c, cx.scene).filter(|_| destroys) {
            out.push(finding(Risk::Blocked, format!("{name} destroys {what}")));
        } else if let Some(Reach::Secret(what)) = protected::reach(c, false, cx.scene) {
            out.push(finding(
                Risk::Blocked,
                format!("{name} overwrites {what} ({shown})"),
            ));
        } else if protected::in_system_tree(c, cx.scene)
            || protected::critical(c, cx.scene).is_some()
        {
            out.push(finding(
                Risk::High,
                format!("{name} changes the system path {shown}"),
            ));
        } else if protected::startup_file(c, cx.scene) {
            out.push(finding(
                Risk::High,
                format!("{name} writes {shown}, a start-up file or dotfile (code that runs later)"),
            ));
        } else if destroys && name == "shred" {
            out.push(finding(
                Risk::High,
                format!("overwrites {shown} beyond recovery"),
            ));
        } else if name == "dd" {
            out.push(finding(Risk::Low, format!("dd writes {shown}")));
        } else {
            out.push(finding(Risk::Medium, format!("{name} writes {shown}")));
        }
        about_writing(out, before, c);
    }
    if e.anywhere {
        out.push(finding(
            Risk::Medium,
            format!("{name} writes a path only known when it runs"),
        ));
    }
}

fn permissions(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    let name = inv.name();
    let recursive = allow::has_short(inv, 'R') || allow::has_long(inv, "--recursive");
    let operands = split_args(inv).1;
    let mode = operands.first().map(|a| a.text.clone()).unwrap_or_default();
    let world = name == "chmod"
        && (mode.ends_with('7')
            || mode.ends_with('6')
            || mode.contains("o+w")
            || mode.contains("a+w"));
    for a in operands.iter().skip(1) {
        for c in &expand::expand(a, &inv.cwd, cx.scene).candidates {
            let shown = show(cx, c);
            let before = out.len();
            if let Some(what) = protected::vital(c, cx.scene) {
                out.push(finding(
                    Risk::Blocked,
                    format!("{name} on {what} breaks logins"),
                ));
                about_writing(out, before, c);
                continue;
            }
            match protected::critical(c, cx.scene) {
                Some(what) if recursive || c.path == "/" => out.push(finding(
                    Risk::Blocked,
                    format!("{name} -R on {what} breaks the system"),
                )),
                Some(what) => out.push(finding(Risk::High, format!("{name} on {what}"))),
                None if protected::in_system_tree(c, cx.scene) => out.push(finding(
                    Risk::High,
                    format!("{name} on the system file {shown}"),
                )),
                None if world => out.push(finding(
                    Risk::High,
                    format!("makes {shown} writable by everyone"),
                )),
                None if recursive => out.push(finding(
                    Risk::Medium,
                    format!("{name} on everything under {shown}"),
                )),
                None => out.push(finding(Risk::Medium, format!("{name} on {shown}"))),
            }
            about_writing(out, before, c);
        }
    }
}

fn writers(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    let name = inv.name();
    let operands = split_args(inv).1;
    let written_args: Vec<&Arg> = match name {
        "tee" | "shred" | "truncate" => operands.clone(),
        _ => operands.last().copied().into_iter().collect(),
    };
    let destroys = matches!(name, "shred" | "truncate")
        || (name == "rsync" && inv.args().iter().any(|a| a.text.starts_with("--delete")));
    for a in written_args {
        let e = expand::expand(a, &inv.cwd, cx.scene);
        written(&e, name, destroys, cx, out);
    }
    if name == "ln" {
        // A link to a secret lets a later, harmless-looking read reach it:
        // said as such (the read is judged by where the link leads, and
        // the sandbox never follows one to a secret).
        for a in operands.iter().take(operands.len().saturating_sub(1)) {
            for c in &expand::expand(a, &inv.cwd, cx.scene).candidates {
                if let Some(Reach::Secret(what) | Reach::Holds(what)) =
                    protected::reach(c, true, cx.scene)
                {
                    out.push(finding(
                        Risk::High,
                        format!("makes a link to {what} ({})", show(cx, c)),
                    ));
                }
            }
        }
    }
    if name == "mv" {
        for a in operands.iter().take(operands.len().saturating_sub(1)) {
            for c in &expand::expand(a, &inv.cwd, cx.scene).candidates {
                if let Some(what) =
                    protected::critical(c, cx.scene).or(protected::vital(c, cx.scene))
                {
                    out.push(finding(Risk::Blocked, format!("moves {what} away")));
                } else if let Some(Reach::Secret(what)) = protected::reach(c, true, cx.scene) {
                    out.push(finding(Risk::Blocked, format!("moves {what} away")));
                }
            }
        }
    }
}

fn sed_in_place(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    out.push(finding(Risk::Medium, "edits files in place"));
    let operands = split_args(inv).1;
    let files = if inv
        .args()
        .iter()
        .any(|a| a.text == "-e" || a.text.starts_with("-f"))
    {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or(&[])
    };
    for a in files {
        written(
            &expand::expand(a, &inv.cwd, cx.scene),
            "sed -i",
            false,
            cx,
            out,
        );
    }
}

fn redirects(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    for r in inv.redirects.iter().filter(|r| r.writes) {
        if r.target.text.starts_with('&') {
            continue;
        }
        let e = expand::expand(&r.target, &inv.cwd, cx.scene);
        let name = if inv.name().is_empty() {
            "a redirection"
        } else {
            "it"
        };
        let mut found = Vec::new();
        written(&e, name, false, cx, &mut found);
        out.extend(found.into_iter().map(|mut f| {
            f.reason = f.reason.replacen("it writes", "writes", 1);
            f
        }));
    }
}

/// Findings about the line as a whole: a file downloaded and then run, a
/// shell wired to the network.
pub(super) fn line(cx: &Cx) -> Vec<Finding> {
    system::downloaded_then_run(cx)
}
