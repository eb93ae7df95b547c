//! The allow-list: programs known to only read, and the ways of using
//! them that keep them read-only (in the spirit of codex-rs's
//! `is_known_safe_command`). A program on it, used that way, is `low`; a
//! known program that changes things is `medium` or `high` by the tables;
//! every other program runs code partner cannot read.

use super::scan::blocked_in;
use super::tables::{CHANGERS, READERS, SYSTEM_CHANGERS};
use super::{Cx, Finding, OPAQUE, Risk, finding};
use crate::syntax::Invocation;

/// True when a short flag letter is set in an option cluster (`-rf` has
/// `r`).
pub(super) fn has_short(inv: &Invocation, letter: char) -> bool {
    super::rules::split_args(inv)
        .0
        .iter()
        .any(|a| !a.text.starts_with("--") && a.text[1..].contains(letter))
}

/// True when the long option is given exactly.
pub(super) fn has_long(inv: &Invocation, long: &str) -> bool {
    super::rules::split_args(inv)
        .0
        .iter()
        .any(|a| a.text == long)
}

/// True when a long option starting so is given (`--in-place=.bak`).
pub(super) fn has_long_prefix(inv: &Invocation, long: &str) -> bool {
    super::rules::split_args(inv)
        .0
        .iter()
        .any(|a| a.text.starts_with(long))
}

/// Why a reader used this way is not read-only, when it is not.
fn not_read_only(inv: &Invocation) -> Option<&'static str> {
    let args: Vec<&str> = inv.args().iter().map(|a| a.text.as_str()).collect();
    let has = |o: &str| {
        args.iter()
            .any(|a| *a == o || a.starts_with(&format!("{o}=")))
    };
    match inv.name() {
        "sort" if has("-o") || has("--output") => Some("sort writes its output to a file"),
        "uniq" if super::rules::split_args(inv).1.len() >= 2 => {
            Some("uniq writes its output to a file")
        }
        "tree" if has("-o") => Some("tree writes its output to a file"),
        "date" if has("-s") || has("--set") => Some("date sets the clock"),
        "hostname" if !args.is_empty() && !args.iter().all(|a| a.starts_with('-')) => {
            Some("hostname renames the machine")
        }
        "journalctl"
            if args
                .iter()
                .any(|a| a.starts_with("--vacuum") || *a == "--rotate" || *a == "--flush") =>
        {
            Some("journalctl deletes or rotates logs")
        }
        "dmesg" if has("-c") || has("-C") || has("--clear") => Some("dmesg clears the kernel log"),
        "history" if has("-c") || has("-d") || has("-w") => Some("history changes the history"),
        "find"
            if args
                .iter()
                .any(|a| a.starts_with("-fprint") || *a == "-fls") =>
        {
            Some("find writes what it finds to a file")
        }
        "timedatectl" | "hostnamectl" | "localectl"
            if args.first().is_some_and(|a| a.starts_with("set")) =>
        {
            Some("changes the machine's settings")
        }
        "ip" if args.iter().any(|a| {
            matches!(
                *a,
                "add" | "del" | "delete" | "set" | "change" | "replace" | "flush" | "append"
            )
        }) =>
        {
            Some("ip changes the network")
        }
        "env" if !args.is_empty() => Some("env runs a command"),
        "xxd" if has("-r") => None,
        _ => None,
    }
}

/// The level of a program no other rule had anything to say about.
pub(super) fn fallback(inv: &Invocation, cx: &Cx) -> Vec<Finding> {
    let name = inv.name();
    if READERS.contains(&name) {
        return match not_read_only(inv) {
            Some(why) => vec![finding(Risk::Medium, why)],
            None => Vec::new(),
        };
    }
    if crate::wrappers::is_shell(name) {
        // `bash -c 'ls'` was read through; `bash` alone opens a shell.
        let with_c = inv.args().iter().any(|a| {
            a.text.starts_with('-') && !a.text.starts_with("--") && a.text[1..].contains('c')
        });
        return if with_c {
            Vec::new()
        } else {
            vec![finding(Risk::Medium, format!("opens a `{name}` shell"))]
        };
    }
    if let Some((_, what)) = SYSTEM_CHANGERS.iter().find(|(n, _)| *n == name) {
        return vec![finding(Risk::High, format!("`{name}` {what}"))];
    }
    if let Some((_, what)) = CHANGERS.iter().find(|(n, _)| *n == name) {
        return vec![finding(Risk::Medium, format!("`{name}` {what}"))];
    }
    // A program partner does not know: what it does with its arguments
    // is not known either, so each tail of them is read as a command
    // (`chroot / rm -rf ~`, `tmux new 'rm -rf ~'`).
    let mut texts = vec![
        inv.args()
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    ];
    texts.extend(inv.args().iter().map(|a| a.text.clone()));
    texts.extend(inv.stdin.iter().cloned());
    let mut out = vec![finding(
        Risk::High,
        format!("{OPAQUE}: `{name}` is not a program partner knows"),
    )];
    out.extend(blocked_in(&texts, cx));
    out
}
