//! What touches the machine's services, network and firewall, processes,
//! repositories and packages.

use super::tables::{FETCHERS, GUARD_UNITS, INTERPRETERS};
use super::{Cx, Finding, Risk, finding};
use crate::expand;
use crate::protected;
use crate::syntax::{Invocation, base_name};
use crate::wrappers::is_shell;

pub(super) fn services(inv: &Invocation, out: &mut Vec<Finding>) {
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
        "enable" | "link" | "edit" | "set-property" | "daemon-reload" | "preset" => {
            out.push(finding(
                Risk::High,
                format!("systemctl {verb} changes what runs at boot or login"),
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

pub(super) fn network(inv: &Invocation, out: &mut Vec<Finding>) {
    let words: Vec<String> = inv
        .args()
        .iter()
        .map(|a| a.text.to_ascii_lowercase())
        .collect();
    let has = |w: &str| words.iter().any(|x| x == w);
    let name = inv.name();
    let off = match name {
        "ufw" => has("disable") || has("reset") || (has("default") && has("deny")),
        "iptables" | "ip6tables" => {
            has("-f")
                || has("--flush")
                || (inv
                    .args()
                    .iter()
                    .any(|a| a.text == "-P" || a.text == "--policy")
                    && (has("accept") || has("drop")))
        }
        "nft" => has("flush") && has("ruleset"),
        "ip" => {
            let del = has("del") || has("delete") || has("flush");
            (has("link") && (has("down") || del))
                || (["route", "r", "ro", "rou", "addr", "a", "address", "neigh"]
                    .iter()
                    .any(|w| words.first().is_some_and(|f| f == w))
                    && del)
        }
        "route" => has("del") || has("delete") || has("flush"),
        "ifconfig" => has("down"),
        "ifdown" => true,
        "nmcli" => {
            (has("networking") && has("off"))
                || (has("radio") && has("off"))
                || has("disconnect")
                || ((has("connection") || has("con") || has("c")) && has("down"))
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

/// True when `name` is a guarded service's process (`sshd`, `ufw`).
fn guarded(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    GUARD_UNITS.contains(&name.as_str()) || name.starts_with("sshd") || name == "dropbear"
}

pub(super) fn kill(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    // `killall sshd`, `pkill -f sshd`, `kill $(pidof sshd)`.
    let by_name = matches!(inv.name(), "killall" | "pkill");
    let named = inv.args().iter().any(|a| {
        (by_name && !a.text.starts_with('-') && guarded(base_name(&a.text)))
            || a.inner.iter().any(|&i| {
                cx.reading.invocations.get(i).is_some_and(|up| {
                    matches!(up.name(), "pidof" | "pgrep")
                        && up.args().iter().any(|x| guarded(&x.text))
                })
            })
    });
    if named {
        out.push(finding(
            Risk::Blocked,
            "kills the SSH server or the firewall, cutting off access",
        ));
    } else if by_name {
        out.push(finding(Risk::Medium, "stops processes"));
    } else if inv.args().iter().any(|a| a.text == "-1") && inv.args().len() >= 2
        || inv
            .args()
            .last()
            .is_some_and(|a| a.text == "-1" || a.text == "1")
    {
        out.push(finding(Risk::High, "kills every process it may"));
    } else {
        out.push(finding(Risk::Medium, "stops processes"));
    }
}

/// Git's commands partner knows (any other may be an alias).
pub(super) const GIT_KNOWN: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "branch",
    "remote",
    "rev-parse",
    "blame",
    "ls-files",
    "tag",
    "describe",
    "shortlog",
    "grep",
    "stash",
    "add",
    "commit",
    "checkout",
    "switch",
    "restore",
    "pull",
    "fetch",
    "push",
    "merge",
    "rebase",
    "reset",
    "clean",
    "clone",
    "init",
    "config",
    "mv",
    "rm",
    "cherry-pick",
    "revert",
    "bisect",
    "submodule",
    "worktree",
    "reflog",
    "rev-list",
    "cat-file",
    "ls-tree",
    "ls-remote",
    "show-ref",
    "for-each-ref",
    "archive",
    "apply",
    "am",
    "format-patch",
    "notes",
    "gc",
    "fsck",
    "count-objects",
    "version",
    "help",
    "whatchanged",
    "range-diff",
    "name-rev",
    "merge-base",
    "sparse-checkout",
    "lfs",
    "filter-branch",
    "difftool",
    "mergetool",
    "hook",
    "maintenance",
    "cherry",
    "restore",
    "var",
];

/// Git's command: its first word after the global options.
pub(super) fn git_subcommand(args: &[String]) -> Option<&str> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => i += 2,
            a if a.starts_with('-') => i += 1,
            a => return Some(a),
        }
    }
    None
}

pub(super) fn git(inv: &Invocation, out: &mut Vec<Finding>) {
    let args: Vec<String> = inv.args().iter().map(|a| a.text.clone()).collect();
    let at = git_subcommand(&args)
        .and_then(|s| args.iter().position(|a| a == s))
        .unwrap_or(args.len());
    let words: Vec<&str> = args[at.min(args.len())..]
        .iter()
        .map(String::as_str)
        .collect();
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
            "status" | "log" | "diff" | "show" | "rev-parse" | "blame" | "ls-files" | "describe"
            | "shortlog" | "grep" | "reflog" | "rev-list" | "cat-file" | "ls-tree" | "show-ref"
            | "for-each-ref" | "count-objects" | "version" | "help" | "whatchanged" | "name-rev"
            | "merge-base" | "cherry" | "var" | "range-diff",
        ) => {}
        Some("branch" | "tag" | "remote")
            if words[1..].iter().all(|w| {
                w.starts_with('-') && !matches!(*w, "-d" | "-D" | "-m" | "-M" | "--delete" | "-f")
            }) => {}
        Some("stash") if words.get(1) == Some(&"list") => {}
        Some("config")
            if words
                .iter()
                .any(|w| w.starts_with("--get") || *w == "--list" || *w == "-l") => {}
        Some(other) if !GIT_KNOWN.contains(&other) => {}
        Some(other) => out.push(finding(
            Risk::Medium,
            format!("git {other} changes the repository"),
        )),
    }
}

pub(super) fn packages(inv: &Invocation, out: &mut Vec<Finding>) {
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

/// Accounts: locking or deleting root or the user locks people out.
pub(super) fn accounts(inv: &Invocation, out: &mut Vec<Finding>) {
    let args: Vec<&str> = inv.args().iter().map(|a| a.text.as_str()).collect();
    let locks = match inv.name() {
        "passwd" => args
            .iter()
            .any(|a| matches!(*a, "-l" | "--lock" | "-d" | "--delete" | "-e" | "--expire")),
        "usermod" => args.iter().any(|a| {
            matches!(
                *a,
                "-L" | "--lock" | "-e" | "--expiredate" | "-s" | "--shell"
            )
        }),
        _ => args.contains(&"root"),
    };
    if locks {
        out.push(finding(
            Risk::Blocked,
            format!("`{}` locks an account, cutting off access", inv.name()),
        ));
    }
}

/// `nc -e /bin/sh`, `socat exec:…`: a shell handed to the network.
pub(super) fn listeners(inv: &Invocation, out: &mut Vec<Finding>) {
    let gives_shell = inv.args().iter().any(|a| {
        let t = a.text.to_ascii_lowercase();
        matches!(
            t.as_str(),
            "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
        ) || t.starts_with("exec:")
            || t.starts_with("system:")
            || t.starts_with("--exec=")
    });
    if gives_shell {
        out.push(finding(
            Risk::Blocked,
            format!("`{}` hands a command to whoever connects", inv.name()),
        ));
    }
}

/// The files a fetcher writes: `curl -o F`, `curl -O URL`, `wget -O F`,
/// `wget URL`, `curl URL > F` (base names).
fn downloads(inv: &Invocation) -> Vec<String> {
    let args: Vec<&str> = inv.args().iter().map(|a| a.text.as_str()).collect();
    let url_name = || {
        args.iter()
            .filter(|a| a.contains("://"))
            .filter_map(|a| a.split(['?', '#']).next()?.rsplit('/').next())
            .filter(|n| !n.is_empty() && !n.contains(':'))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let value = || args.get(i + 1).map(|v| base_name(v).to_string());
        match *a {
            "-o" | "--output" | "-O" | "--output-document"
                if inv.name() == "wget" || *a != "-O" =>
            {
                out.extend(value())
            }
            "-O" | "--remote-name" => out.extend(url_name()),
            _ if inv.name() == "curl" && a.starts_with('-') && !a.starts_with("--") => {
                if a.contains('O') {
                    out.extend(url_name());
                }
                if a.ends_with('o') {
                    out.extend(value());
                }
            }
            _ if a.starts_with("--output-document=") || a.starts_with("--output=") => {
                out.push(base_name(a.split_once('=').map_or("", |x| x.1)).to_string())
            }
            _ => {}
        }
    }
    if inv.name() == "wget"
        && !args
            .iter()
            .any(|a| a.starts_with("-O") || a.starts_with("--output-document"))
    {
        out.extend(url_name());
    }
    for r in inv.redirects.iter().filter(|r| r.writes) {
        out.push(base_name(&r.target.text).to_string());
    }
    out.retain(|n| n != "-" && !n.is_empty());
    out
}

/// What an `echo`, `printf` or `cat` with a here-document writes, when
/// it is known.
fn printed_text(inv: &Invocation) -> Option<String> {
    match inv.name() {
        "echo" | "printf" if inv.args().iter().all(|a| !a.dynamic) => Some(
            inv.args()
                .iter()
                .skip_while(|a| matches!(a.text.as_str(), "-n" | "-e" | "-E"))
                .map(|a| a.text.replace("\\n", "\n"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "cat" | "tee" => inv.stdin.clone(),
        _ => None,
    }
}

/// A line that downloads a file and then runs it, or wires a shell to the
/// network (`bash -i >& /dev/tcp/…`, `cat <&5 | sh` after `exec 5<>/dev/tcp/…`).
pub(super) fn downloaded_then_run(cx: &Cx) -> Vec<Finding> {
    let invs = &cx.reading.invocations;
    let mut fetched: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let network_open = invs.iter().any(|inv| {
        inv.redirects.iter().any(|r| {
            expand::expand(&r.target, &inv.cwd, cx.scene)
                .candidates
                .iter()
                .any(protected::network_device)
        })
    });
    let mut written: Vec<(String, String)> = Vec::new();
    for inv in invs {
        let name = inv.name();
        if FETCHERS.contains(&name) {
            fetched.extend(downloads(inv));
            continue;
        }
        if let Some(text) = printed_text(inv) {
            for r in inv.redirects.iter().filter(|r| r.writes) {
                written.push((base_name(&r.target.text).to_string(), text.clone()));
            }
        }
        let runner =
            is_shell(name) || INTERPRETERS.contains(&name) || matches!(name, "source" | ".");
        let runs_file = if runner {
            inv.args()
                .iter()
                .find(|a| !a.text.starts_with('-'))
                .map(|a| base_name(&a.text).to_string())
        } else if inv
            .argv
            .first()
            .is_some_and(|a| a.text.contains('/') || fetched.contains(&a.text))
        {
            Some(base_name(name).to_string())
        } else {
            None
        };
        // `echo "rm -rf ~" > x.sh; bash x.sh`: what it wrote, it runs.
        if let Some(file) = &runs_file
            && let Some((_, text)) = written.iter().rev().find(|(f, _)| f == file)
        {
            out.extend(super::scan::blocked_in(std::slice::from_ref(text), cx));
        }
        if let Some(file) = runs_file
            && fetched.contains(&file)
        {
            out.push(finding(
                Risk::Blocked,
                format!("runs {file}, which the same line downloads, without it being read first"),
            ));
        }
        let wired = inv.redirects.iter().any(|r| {
            expand::expand(&r.target, &inv.cwd, cx.scene)
                .candidates
                .iter()
                .any(protected::network_device)
        });
        if (runner && (wired || (network_open && !inv.upstream.is_empty())))
            || (runner && network_open && inv.args().iter().any(|a| a.text == "-i"))
        {
            out.push(finding(
                Risk::Blocked,
                format!(
                    "connects `{name}` to the network: whoever is at the other end runs commands"
                ),
            ));
        }
    }
    out
}

/// A script brought by the network or decoded from a payload and run
/// unread: `curl … | sh`, `bash <(curl …)`, `eval "$(base64 -d …)"`,
/// `echo … | base64 -d | bash`.
pub(super) fn fed_scripts(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    let name = inv.name();
    let runs_code = is_shell(name)
        || INTERPRETERS.contains(&name)
        || name.starts_with("python")
        || matches!(
            name,
            "eval" | "source" | "." | "crontab" | "at" | "batch" | "xargs"
        );
    if !runs_code {
        return;
    }
    let feeds = |indices: &[usize]| -> Option<&'static str> {
        let mut kind = None;
        for &i in indices {
            let Some(up) = cx.reading.invocations.get(i) else {
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
    // Everything upstream in its pipeline, and what its arguments' and
    // its input's substitutions run.
    let mut upstream: Vec<usize> = inv.upstream.clone();
    let mut i = 0;
    while i < upstream.len() && upstream.len() < 64 {
        if let Some(up) = cx.reading.invocations.get(upstream[i]) {
            for a in up.args() {
                upstream.extend(a.inner.iter().copied());
            }
        }
        i += 1;
    }
    let inner: Vec<usize> = inv
        .args()
        .iter()
        .chain(inv.redirects.iter().map(|r| &r.target))
        .flat_map(|a| a.inner.iter().copied())
        .collect();
    if let Some(kind) = feeds(&inner).or(feeds(&upstream)) {
        out.push(finding(
            Risk::Blocked,
            format!("runs a {kind} script with `{name}` without it being read first"),
        ));
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
        "uudecode" | "gpg" | "rev" | "tac" => true,
        "printf" | "echo" => args.iter().any(|a| a.contains("\\x")),
        _ => false,
    }
}
