//! Secrets: a command that reads one, by any program and through any
//! expansion (glob, brace, `~user`, variable, substitution), or sends one
//! anywhere, is blocked. Every path-like piece of every argument counts
//! (`f=@/etc/shadow`, `if=~/.ssh/id_rsa`, `host:path`); the exceptions
//! are the programs that only look at a file's name or metadata, and a
//! key given to ssh as the key it should use.

use super::{Cx, Finding, Risk, finding};
use crate::expand::{self, Candidate};
use crate::protected::{self, Reach};
use crate::syntax::{Arg, Invocation, Via};

/// Programs that read a path's name or metadata, never its content.
const METADATA: &[&str] = &[
    "ls", "stat", "test", "[", "chmod", "chown", "chgrp", "touch", "mkdir", "cd", "pushd", "echo",
    "printf", "file", "du", "df", "which", "type", "basename", "dirname", "realpath", "readlink",
    "rm", "unlink", "rmdir", "mv", "find", "tree", "locate",
];

/// Programs that read a directory whole when given one.
fn recursive(inv: &Invocation) -> bool {
    let clustered = |letters: &[char]| {
        inv.args().iter().any(|a| {
            a.text.starts_with('-')
                && !a.text.starts_with("--")
                && a.text[1..].chars().any(|c| letters.contains(&c))
        })
    };
    let long = |names: &[&str]| inv.args().iter().any(|a| names.contains(&a.text.as_str()));
    match inv.name() {
        "rg" | "ag" | "ack" | "rsync" | "tar" | "7z" | "bsdtar" | "du" => true,
        "grep" | "egrep" | "fgrep" => clustered(&['r', 'R']) || long(&["--recursive"]),
        "cp" | "scp" => clustered(&['r', 'R', 'a']) || long(&["--recursive", "--archive"]),
        "zip" => clustered(&['r']) || long(&["--recurse-paths"]),
        "git" => long(&["add", "commit", "archive", "push", "init"]),
        _ => matches!(inv.via, Via::FindExec(_)),
    }
}

/// The values that name the key ssh should use (`-i KEY`,
/// `-oIdentityFile=KEY`), which are not sent.
fn key_values(inv: &Invocation) -> Vec<usize> {
    let mut out = Vec::new();
    if !matches!(inv.name(), "ssh" | "scp" | "sftp" | "ssh-copy-id" | "sshfs") {
        return out;
    }
    let args = inv.args();
    for (i, a) in args.iter().enumerate() {
        if a.text == "-i" {
            out.push(i + 1);
        } else if a.text.starts_with("-i") || a.text.contains("IdentityFile") {
            out.push(i);
        }
    }
    out
}

/// The path-like pieces of an argument's text: the whole, and what
/// follows `=`, `@`, `:` and `,` (`f=@/etc/shadow`, `if=KEY`, `host:PATH`).
pub(super) fn pieces(text: &str) -> Vec<String> {
    let mut out = vec![text.to_string()];
    // `curl file:///etc/shadow` reads the file.
    if let Some(path) = text.strip_prefix("file://") {
        out.push(path.to_string());
    }
    for piece in text.split(['=', '@', ',', '<', '>', '"', '\'', '(', ')', ' ']) {
        if piece.is_empty() || piece == text {
            continue;
        }
        out.push(piece.to_string());
        if let Some((_, after)) = piece.split_once(':') {
            out.push(after.to_string());
        }
    }
    if let Some((_, after)) = text.split_once(':')
        && !text.contains("://")
    {
        out.push(after.to_string());
    }
    out.retain(|p| p.contains('/') || p.starts_with('~') || !p.starts_with('-'));
    out
}

/// Findings about what `inv` reads.
pub(super) fn check(inv: &Invocation, cx: &Cx, out: &mut Vec<Finding>) {
    let name = inv.name();
    let whole = recursive(inv);
    // What its input redirections read, whatever the program.
    for r in inv.redirects.iter().filter(|r| !r.writes) {
        judge_arg(&r.target, inv, false, cx, out);
    }
    let uses_keys = matches!(name, "ssh-add" | "ssh-keygen");
    // `find ~/.ssh -exec cat {} \;` reads through the `cat`.
    if METADATA.contains(&name) || uses_keys {
        return;
    }
    let skip = key_values(inv);
    let mut git_dir = false;
    for (i, a) in inv.args().iter().enumerate() {
        if skip.contains(&i) {
            continue;
        }
        // `git -C DIR add .` reads DIR whole.
        let whole_here = whole || git_dir;
        git_dir = name == "git" && matches!(a.text.as_str(), "-C" | "--git-dir" | "--work-tree");
        judge_arg(a, inv, whole_here || git_dir, cx, out);
    }
    if let Via::FindExec(roots) | Via::Xargs(Some(roots)) = &inv.via {
        for root in roots {
            let e = expand::expand_text(
                &format!("{}/*", root.trim_end_matches('/')),
                &inv.cwd,
                cx.scene,
            );
            for c in &e.candidates {
                judge(c, true, cx, out);
            }
        }
    }
}

fn judge_arg(a: &Arg, inv: &Invocation, whole: bool, cx: &Cx, out: &mut Vec<Finding>) {
    for piece in pieces(&a.text) {
        let arg = Arg {
            text: piece,
            ..a.clone()
        };
        let e = expand::expand(&arg, &inv.cwd, cx.scene);
        // The first secret an argument reaches is the one named.
        for c in &e.candidates {
            let before = out.len();
            judge(c, whole, cx, out);
            if out[before..].iter().any(|f| f.risk == Risk::Blocked) {
                return;
            }
        }
        if e.anywhere && !a.text.starts_with('-') {
            out.push(finding(
                Risk::Medium,
                format!("reads a path only known when it runs ({})", a.text),
            ));
            return;
        }
    }
}

fn judge(c: &Candidate, whole: bool, cx: &Cx, out: &mut Vec<Finding>) {
    match protected::reach(c, whole, cx.scene) {
        Some(Reach::Secret(what)) => out.push(finding(
            Risk::Blocked,
            format!("reads {what} ({})", cx.scene.show(&c.path)),
        )),
        Some(Reach::Holds(what)) => out.push(finding(
            Risk::High,
            format!(
                "reads everything under {}, {what} included",
                cx.scene.show(&c.path)
            ),
        )),
        None => {}
    }
}
