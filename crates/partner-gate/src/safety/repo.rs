//! What a git repository's own configuration and hooks would run. A
//! read-only git command is only as harmless as the repository it reads:
//! `.git/config` can name a program for git to run (`core.fsmonitor`
//! runs on `git status`, `core.pager` on `git log`, an alias on anything),
//! and hooks run on commits, checkouts and merges. An agent can write
//! either in its working directory, so the repository is read before a
//! git command is called harmless, and a repository named with `-C`,
//! `--git-dir` or `--work-tree` is one partner has not read.

use std::path::{Path, PathBuf};

/// Most bytes of a config file read.
const MAX_CONFIG: u64 = 256 * 1024;
/// Most directories walked up to find a repository.
const MAX_UP: usize = 64;

/// Keys (section and name, lower case) whose value git or a tool it calls
/// runs. `*` is any subsection.
const RUNS: &[&str] = &[
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.hookspath",
    "core.gitproxy",
    "core.askpass",
    "diff.external",
    "diff.*.command",
    "diff.*.textconv",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "credential.helper",
    "credential.*.helper",
    "gpg.program",
    "gpg.*.program",
    "sequence.editor",
    "interactive.difffilter",
    "uploadpack.packobjectshook",
    "include.path",
    "includeif.*.path",
    "sendemail.smtpserver",
    "web.browser",
];

/// Sections every key of which names a program (`alias.*`, `pager.*`).
const RUNS_SECTIONS: &[&str] = &["alias", "pager", "difftool", "mergetool", "browser"];

/// Subcommands that run hooks.
const HOOKED: &[&str] = &[
    "commit",
    "merge",
    "checkout",
    "switch",
    "rebase",
    "am",
    "push",
    "pull",
    "clone",
    "gc",
    "cherry-pick",
    "revert",
    "worktree",
];

/// The git directory of the repository holding `dir`: a `.git`
/// directory, or the one a `.git` file names.
fn git_dir(dir: &Path) -> Option<PathBuf> {
    let mut at = Some(dir);
    for _ in 0..MAX_UP {
        let here = at?;
        let dot = here.join(".git");
        if dot.is_dir() {
            return Some(dot);
        }
        if dot.is_file() {
            let text = std::fs::read_to_string(&dot).ok()?;
            let named = text.trim().strip_prefix("gitdir:")?.trim();
            return Some(here.join(named));
        }
        at = here.parent();
    }
    None
}

/// The keys of `config` that name a program, as `section.key`.
fn running_keys(config: &str) -> Vec<String> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(head) = line.strip_prefix('[') {
            let head = head.trim_end_matches(']');
            // `[diff "x"]` is `diff.*`; `[diff.x]` the same.
            let mut parts = head.splitn(2, [' ', '.']);
            let name = parts.next().unwrap_or("").to_ascii_lowercase();
            section = match parts.next() {
                Some(_) => format!("{name}.*"),
                None => name,
            };
            continue;
        }
        let key = line
            .split(['=', ' ', '\t'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let value = line
            .split_once('=')
            .map(|(_, v)| v.trim())
            .unwrap_or("true");
        let full = format!("{section}.{key}");
        let top = section.split('.').next().unwrap_or("");
        let names_program = RUNS.contains(&full.as_str()) || RUNS_SECTIONS.contains(&top);
        let off = value.is_empty() || matches!(value, "false" | "\"\"" | "cat");
        if names_program && !off {
            found.push(full);
        }
    }
    found
}

/// Executable hooks in a git directory (not the shipped `.sample`s).
fn hooks(git: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::read_dir(git.join("hooks"))
        .into_iter()
        .flatten()
        .flatten()
        .take(256)
        .filter(|e| {
            !e.file_name().to_string_lossy().ends_with(".sample")
                && e.metadata()
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Why a git command run in `dir` (its subcommand `sub`) runs a program
/// the repository names, if it does.
pub(super) fn runs_in(dir: &Path, sub: Option<&str>) -> Option<String> {
    let git = git_dir(dir)?;
    let mut text = String::new();
    if let Ok(file) = std::fs::File::open(git.join("config")) {
        use std::io::Read;
        let _ = file.take(MAX_CONFIG).read_to_string(&mut text);
    }
    let keys = running_keys(&text);
    if !keys.is_empty() {
        return Some(format!(
            "the repository's config names a program git runs ({})",
            keys.join(", ")
        ));
    }
    let hooks = hooks(&git);
    match sub {
        Some(s) if HOOKED.contains(&s) && !hooks.is_empty() => Some(format!(
            "git {s} runs the repository's hooks ({})",
            hooks.join(", ")
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_name_programs_are_found() {
        let config = "[core]\n\tfsmonitor = ./hlp.sh\n\tpager = cat\n[diff \"x\"]\n\ttextconv = evil\n[alias]\n\tst = !sh -c id\n[user]\n\tname = Ada\n[core]\n\teditor =\n";
        assert_eq!(
            running_keys(config),
            ["core.fsmonitor", "diff.*.textconv", "alias.st"]
        );
    }

    #[test]
    fn a_plain_repository_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n",
        )
        .unwrap();
        std::fs::write(dir.path().join(".git/hooks/pre-commit.sample"), "x").unwrap();
        assert_eq!(runs_in(dir.path(), Some("status")), None);
        assert_eq!(runs_in(dir.path(), Some("commit")), None);
    }
}
