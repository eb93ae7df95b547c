//! Paths cleaned the way the shell's file system would see them: `//`,
//! `/./`, `..` and a trailing `/` or `/.` taken out lexically. What a
//! path names (a secret, the system, a home) is
//! [`super::protected`]'s table; what an argument could name is
//! [`super::expand`]'s.

/// `//` → `/`, `/./` → `/`, `a/..` → `` (never above the root), no
/// trailing `/` or `/.`.
pub fn clean(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != ".." && *p != "~") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            p => parts.push(p),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, true) => "/".into(),
        (true, false) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cleaned() {
        assert_eq!(clean("//usr/./bin/../"), "/usr");
        assert_eq!(clean("/.."), "/");
        assert_eq!(clean("/home/ada/.."), "/home");
        assert_eq!(clean("a/../.."), "..");
        assert_eq!(clean("/etc/."), "/etc");
    }
}
