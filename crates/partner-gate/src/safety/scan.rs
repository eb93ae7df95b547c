//! Text that code partner cannot read is given (an interpreter's program,
//! an awk script, a pager option, a scheduled line, the arguments of an
//! unknown wrapper), searched for what would be blocked: every quoted
//! piece, every piece between separators and each tail of its words is
//! read as a command line of its own, and every path in it is checked
//! against the secrets table. Bounded in size, pieces and depth.

use super::{Cx, Finding, Risk, finding, findings_in};
use crate::expand::expand_text;
use crate::protected::{self, Reach};
use crate::syntax::Cwd;

/// Deepest scan inside a scan.
const MAX_DEPTH: usize = 2;
/// Longest text read.
const MAX_TEXT: usize = 4096;
/// Most pieces read as command lines, per call.
const MAX_PIECES: usize = 40;
/// Tails of a piece's words tried (`chroot / rm -rf ~` → `rm -rf ~`).
const MAX_TAILS: usize = 6;

/// Words in code that delete what they are given.
const DELETES: &[&str] = &[
    "rmtree",
    "unlink",
    "remove",
    "rmdir",
    "delete",
    "shred",
    "truncate",
    "wipe",
    "rm -",
    "rm(",
    "rm_rf",
    "rm_r",
    "rimraf",
    "rmsync",
    "remove_dir_all",
    "remove-item",
    "deltree",
    "erase",
];

/// Blocked findings about what `texts` could run or read.
pub(super) fn blocked_in(texts: &[String], cx: &Cx) -> Vec<Finding> {
    if cx.depth >= MAX_DEPTH {
        return Vec::new();
    }
    let mut pieces: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for text in texts.iter().take(16) {
        let text = cut(text);
        paths_in(text, cx, &mut out);
        collect(text, &mut pieces);
    }
    for piece in pieces.iter().take(MAX_PIECES) {
        for f in findings_in(piece, cx.scene, cx.depth + 1) {
            if f.risk == Risk::Blocked {
                let shown: String = piece.chars().take(60).collect();
                out.push(finding(
                    Risk::Blocked,
                    format!("it could run `{shown}`: {}", f.reason),
                ));
                break;
            }
        }
    }
    out
}

fn cut(text: &str) -> &str {
    &text[..text.floor_char_boundary(MAX_TEXT)]
}

/// The pieces of `text` worth reading as command lines.
fn collect(text: &str, pieces: &mut Vec<String>) {
    let mut add = |p: &str| {
        let p = p.trim();
        if !p.is_empty() && p.len() < 2048 && !pieces.iter().any(|x| x == p) {
            pieces.push(p.to_string());
        }
    };
    add(text);
    for quote in ['"', '\'', '`'] {
        for inner in text.split(quote).skip(1).step_by(2) {
            add(inner);
        }
    }
    // Separators a program, a config value or `IFS` would split at.
    let spaced: String = text
        .chars()
        .map(|c| if ",:".contains(c) { ' ' } else { c })
        .collect();
    add(&spaced);
    let mut lines = Vec::new();
    for line in text.split(|c: char| ";|&(){}=!\n\"'`".contains(c)) {
        add(line);
        lines.push(line.to_string());
    }
    for line in lines.iter().chain([spaced, text.to_string()].iter()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        for start in 1..words.len().min(MAX_TAILS) {
            add(&words[start..].join(" "));
        }
    }
}

/// Paths in code: a secret is read; a protected path in code that
/// deletes is deleted.
fn paths_in(text: &str, cx: &Cx, out: &mut Vec<Finding>) {
    let lower = text.to_lowercase();
    let deletes = DELETES.iter().any(|d| lower.contains(d));
    let tokens = text
        .split(|c: char| !(c.is_alphanumeric() || "_./~-*?[]{}+@%$".contains(c)))
        .filter(|t| t.starts_with(['/', '~']));
    for token in tokens.take(64) {
        let e = expand_text(token.trim_end_matches(['.', ',']), &Cwd::Start, cx.scene);
        for c in &e.candidates {
            if let Some(Reach::Secret(what)) = protected::reach(c, false, cx.scene) {
                out.push(finding(
                    Risk::Blocked,
                    format!("its code reads {what} ({token})"),
                ));
                return;
            }
            if deletes && let Some(what) = protected::critical(c, cx.scene) {
                out.push(finding(
                    Risk::Blocked,
                    format!("its code deletes {what} ({token})"),
                ));
                return;
            }
        }
    }
}
