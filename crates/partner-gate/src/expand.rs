//! An argument as the paths it could name when the command runs: braces
//! expanded, `~` and `~user` made absolute, relative paths joined to the
//! directory the command would be in, a part only known when it runs
//! read as `*`, and globs expanded against the real file system (the
//! pattern itself is kept too, so that a pattern that could match a
//! protected path counts as that path even where nothing matches today).

use super::paths::clean;
use super::scene::Scene;
use super::syntax::{Arg, Cwd};

/// Most words one brace expression may give.
const MAX_BRACES: usize = 64;
/// Most files one glob is expanded to.
const MAX_MATCHES: usize = 256;
/// Most directory entries one glob reads.
const MAX_ENTRIES_READ: usize = 20_000;

/// One path an argument could name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Absolute and cleaned; it may hold glob characters.
    pub path: String,
    /// It holds glob characters (a pattern, not a file).
    pub pattern: bool,
}

/// What an argument could name.
#[derive(Debug, Clone, Default)]
pub struct Expansion {
    /// The paths and patterns, the file system's matches included.
    pub candidates: Vec<Candidate>,
    /// A relative path in a directory only known when it runs, or a word
    /// that starts with a part only known when it runs: it could be
    /// anything.
    pub anywhere: bool,
}

/// True when `s` holds a glob character.
pub fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// The paths `arg` could name, run from `cwd` in `scene`.
pub fn expand(arg: &Arg, cwd: &Cwd, scene: &Scene) -> Expansion {
    let text = if arg.dynamic {
        unknown_as_glob(&arg.text)
    } else {
        arg.text.clone()
    };
    expand_text(&text, cwd, scene)
}

/// The same for a word's text (no part only known when it runs).
pub fn expand_text(text: &str, cwd: &Cwd, scene: &Scene) -> Expansion {
    let mut out = Expansion::default();
    for word in braces(text) {
        if word.starts_with('\u{1}') {
            out.anywhere = true;
            continue;
        }
        let Some(abs) = absolute(&word, cwd, scene) else {
            out.anywhere = true;
            continue;
        };
        // `/proc/PID/root/etc/shadow` is `/etc/shadow`, and
        // `/proc/self/cwd/../x` is `x` beside the working directory: read
        // before `..` is taken out, which would walk up `/proc` instead.
        match through_proc(&abs, cwd, scene) {
            Through::Names(inner) => push(&mut out.candidates, inner.clone(), has_glob(&inner)),
            Through::Anything => out.anywhere = true,
            Through::Not => {}
        }
        let abs = clean(&abs);
        let pattern = has_glob(&abs);
        if pattern {
            for found in on_disk(&abs) {
                push(&mut out.candidates, found, false);
            }
        }
        push(&mut out.candidates, abs, pattern);
    }
    // A link names where it leads: each path also as the file system
    // would resolve it today (`keys/id_rsa`, `keys` linking to `~/.ssh`).
    let resolved: Vec<String> = out
        .candidates
        .iter()
        .filter(|c| !c.pattern)
        .filter_map(|c| resolved(&c.path))
        .collect();
    for path in resolved {
        push(&mut out.candidates, path, false);
    }
    out
}

/// `path` with every link along it resolved, as far as it exists (the
/// rest joined on), when that differs.
fn resolved(path: &str) -> Option<String> {
    let mut existing = std::path::Path::new(path);
    let mut rest = Vec::new();
    let real = loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            break real;
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    };
    let mut real = real;
    for part in rest.iter().rev() {
        real.push(part);
    }
    let real = clean(&real.to_string_lossy());
    (real != path).then_some(real)
}

/// What a path through `/proc/PID/…` names.
enum Through {
    /// This path.
    Names(String),
    /// Something only known when it runs (a descriptor, another process's
    /// directory).
    Anything,
    /// It does not pass through such a link.
    Not,
}

/// The path a `/proc/PID/root/…`, `/proc/PID/cwd/…` or `/proc/PID/fd/N…`
/// path names on the file system (`PID` also `self` or `thread-self`).
fn through_proc(abs: &str, cwd: &Cwd, scene: &Scene) -> Through {
    let head = clean_head(abs);
    let Some(rest) = head.strip_prefix("/proc/") else {
        return Through::Not;
    };
    let (pid, after) = rest.split_once('/').unwrap_or((rest, ""));
    let (link, tail) = after.split_once('/').unwrap_or((after, ""));
    let own = matches!(pid, "self" | "thread-self");
    let base = match link {
        "root" => Some("/".to_string()),
        "cwd" if own => base_dir(cwd, scene),
        "cwd" => std::fs::read_link(format!("/proc/{pid}/cwd"))
            .ok()
            .map(|p| p.to_string_lossy().into_owned()),
        "fd" | "map_files" | "exe" => return Through::Anything,
        _ => return Through::Not,
    };
    match base {
        Some(base) => Through::Names(clean(&format!("{base}/{tail}"))),
        None => Through::Anything,
    }
}

/// `//` and `/./` taken out of a path's head, `..` left alone (it must be
/// read after a `/proc` link, not before).
fn clean_head(abs: &str) -> String {
    let mut out = String::new();
    for part in abs.split('/').filter(|p| !p.is_empty() && *p != ".") {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() { "/".into() } else { out }
}

fn push(list: &mut Vec<Candidate>, path: String, pattern: bool) {
    if !list.iter().any(|c| c.path == path) {
        list.push(Candidate { path, pattern });
    }
}

/// `word` made absolute: `~`, `~user`, `~+`, relative to the directory.
fn absolute(word: &str, cwd: &Cwd, scene: &Scene) -> Option<String> {
    if let Some(rest) = word.strip_prefix('~') {
        let (name, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let base = match name {
            "" => scene.home_str().to_string(),
            "+" => base_dir(cwd, scene)?,
            "-" => return None,
            user => scene.user_home(user),
        };
        return Some(format!("{base}{tail}"));
    }
    if word.starts_with('/') {
        return Some(word.to_string());
    }
    let base = base_dir(cwd, scene)?;
    Some(format!("{}/{word}", base.trim_end_matches('/')))
}

/// The directory a command runs in, absolute, when it is known.
pub fn base_dir(cwd: &Cwd, scene: &Scene) -> Option<String> {
    match cwd {
        Cwd::Start => Some(scene.dir_str().to_string()),
        Cwd::Unknown => None,
        Cwd::At(p) => {
            let at = absolute(p, &Cwd::Start, scene)?;
            Some(clean(&at))
        }
    }
}

/// A word's parts only known when it runs (`$X`, `$(…)`, `${…}`) read as
/// `*` within one path component; a word that begins with one is marked
/// with `\u{1}` (it could be any path).
fn unknown_as_glob(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '~' && text[i..].starts_with("~?") {
            chars.next();
            out.push('\u{1}');
            continue;
        }
        if c != '$' && c != '<' {
            out.push(c);
            continue;
        }
        let rest = &text[i..];
        let marker = ["$((…))", "$(…)", "${…}", "<(…)"]
            .into_iter()
            .find(|m| rest.starts_with(m));
        let len = match marker {
            Some(m) => m.len(),
            None if c == '$' => {
                1 + rest[1..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .unwrap_or(rest.len() - 1)
            }
            None => {
                out.push(c);
                continue;
            }
        };
        if len <= 1 {
            out.push(c);
            continue;
        }
        out.push(if i == 0 { '\u{1}' } else { '*' });
        while chars.peek().is_some_and(|(j, _)| *j < i + len) {
            chars.next();
        }
    }
    out
}

/// A glob's matches on disk, absolute: one directory level a component,
/// reading at most [`MAX_ENTRIES_READ`] directory entries in all and
/// keeping at most [`MAX_MATCHES`] paths a level, so that a pattern such as
/// `/*/*/*/*/*/*/x` costs a bounded walk, not the whole file system.
pub(crate) fn on_disk(pattern: &str) -> Vec<String> {
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let mut budget = MAX_ENTRIES_READ;
    let mut frontier = vec![String::new()];
    for comp in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        let matcher = glob::Pattern::new(&comp.replace("**", "*")).ok();
        for base in &frontier {
            let Some(matcher) = matcher.as_ref().filter(|_| has_glob(comp)) else {
                next.push(format!("{base}/{comp}"));
                continue;
            };
            let dir = if base.is_empty() { "/" } else { base.as_str() };
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                let name = entry.file_name().to_string_lossy().into_owned();
                if matcher.matches_with(&name, options) {
                    next.push(format!("{base}/{name}"));
                }
            }
        }
        next.truncate(MAX_MATCHES);
        frontier = next;
        if frontier.is_empty() {
            break;
        }
    }
    frontier
        .into_iter()
        .filter(|p| !p.is_empty() && std::fs::symlink_metadata(p).is_ok())
        .map(|p| clean(&p))
        .collect()
}

/// Bash's brace expansion (`a{b,c}d`, `{1..3}`, `{a..c}`), bounded; text
/// that is not a brace expression is kept as it is.
pub fn braces(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut rest = text;
    while !rest.is_empty() {
        match brace_at(rest) {
            Some((before, members, after)) => {
                let mut next = Vec::new();
                for prefix in &out {
                    for m in &members {
                        if next.len() < MAX_BRACES {
                            next.push(format!("{prefix}{before}{m}"));
                        }
                    }
                }
                out = next;
                rest = after;
            }
            None => {
                for o in &mut out {
                    o.push_str(rest);
                }
                rest = "";
            }
        }
    }
    out
}

/// The first brace expression in `s`: the text before it, its members
/// (each itself expanded) and the text after it.
fn brace_at(s: &str) -> Option<(&str, Vec<String>, &str)> {
    let open = s.find('{')?;
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, c) in s[open..].char_indices() {
        let at = open + i;
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(at);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(at),
            _ => {}
        }
    }
    let close = close?;
    let inner = &s[open + 1..close];
    let members: Vec<String> = if commas.is_empty() {
        sequence(inner)?
    } else {
        let mut parts = Vec::new();
        let mut from = open + 1;
        for c in commas.iter().copied().chain(std::iter::once(close)) {
            parts.extend(braces(&s[from..c]));
            from = c + 1;
        }
        parts
    };
    Some((&s[..open], members, &s[close + 1..]))
}

/// `1..3`, `a..c`: its members.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let (a, b) = inner.split_once("..")?;
    let b = b.split("..").next()?;
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let (lo, hi) = (x.min(y), x.max(y));
        return Some((lo..=hi).take(MAX_BRACES).map(|n| n.to_string()).collect());
    }
    let (mut x, mut y) = (a.chars(), b.chars());
    match (x.next(), x.next(), y.next(), y.next()) {
        (Some(p), None, Some(q), None) => {
            let (lo, hi) = (p.min(q), p.max(q));
            Some((lo..=hi).take(MAX_BRACES).map(String::from).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_like_bash() {
        assert_eq!(braces("/{home,etc}"), ["/home", "/etc"]);
        assert_eq!(braces("/{,}"), ["/", "/"]);
        assert_eq!(braces("~/{.,}*"), ["~/.*", "~/*"]);
        assert_eq!(braces("a{1..3}"), ["a1", "a2", "a3"]);
        assert_eq!(braces("x{a,{b,c}}y"), ["xay", "xby", "xcy"]);
        assert_eq!(braces("plain"), ["plain"]);
        assert_eq!(braces("{lone"), ["{lone"]);
        assert!(braces(&"{a,b}".repeat(20)).len() <= MAX_BRACES);
    }

    #[test]
    fn unknown_parts_read_as_globs() {
        assert_eq!(unknown_as_glob("/$X"), "/*");
        assert_eq!(unknown_as_glob("~/$(…)/x"), "~/*/x");
        assert_eq!(unknown_as_glob("$X/y"), "\u{1}/y");
        assert_eq!(unknown_as_glob("a$"), "a$");
    }
}
