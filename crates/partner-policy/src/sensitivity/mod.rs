//! The sensitivity heuristic: content that looks like a secret or personal
//! data, in the clear or hidden (URL-, base64- or hex-encoded, reversed,
//! split into groups; see [`views`]). A finding turns `allow` into `ask`
//! and says what it found and how it was hidden.

mod numbers;
mod views;

use std::sync::LazyLock;

use regex::Regex;

/// Kinds that are personal data rather than secrets: looked for only in
/// readings that do not make them up (not reversed, not joined).
const PERSONAL: [&str; 2] = ["an email address", "a phone number"];

static PATTERNS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        ("an API key", r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_-]{20,}"),
        ("an API key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("an API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("an API key", r"\b(?:glpat|npm)[-_][A-Za-z0-9_-]{20,}"),
        ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", r"\b(?i:gh[pousr])_[A-Za-z0-9]{30,}\b"),
        ("a Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
        ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        (
            "a password or secret",
            r#"(?i)(?:^|[^a-z])(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|secret[_-]?access[_-]?key|private[_-]?key)\s*(?:[:=]|%3d)\s*["']?[^\s"'&]{6,}"#,
        ),
        ("an email address", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),
        ("a phone number", r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\d{3,4}[\s.-]\d{3,4}(?:[\s.-]\d{2,4})?"),
    ]
    .into_iter()
    .map(|(what, pattern)| (what, Regex::new(pattern).expect("sensitivity patterns compile")))
    .collect()
});

/// True when the match at `start..end` of `text` is a number of its own:
/// not part of a longer run of digits, letters, hyphens or dots.
fn stands_alone(text: &str, start: usize, end: usize) -> bool {
    let joined = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '/');
    !text[..start].chars().next_back().is_some_and(joined)
        && !text[end..].chars().next().is_some_and(joined)
}

/// Patterns for readings whose separators were taken out, where a token's
/// own separator went with them (`ghp_…` read as `ghp…`).
static COMPACT: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [("a GitHub token", r"(?i:gh[pousr])_?[A-Za-z0-9]{36}")]
        .into_iter()
        .map(|(what, pattern)| (what, Regex::new(pattern).expect("compact patterns compile")))
        .collect()
});

/// The kinds of sensitive thing one reading of a text holds.
fn kinds_in(text: &str, personal: bool) -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = PATTERNS
        .iter()
        .filter(|(what, _)| personal || !PERSONAL.contains(what))
        .filter(|(what, re)| {
            re.find_iter(text).any(|m| {
                // Phone numbers need at least nine digits, and must not be
                // a piece of a longer identifier.
                *what != "a phone number"
                    || (m.as_str().chars().filter(char::is_ascii_digit).count() >= 9
                        && stands_alone(text, m.start(), m.end()))
            })
        })
        .map(|(what, _)| *what)
        .collect();
    if numbers::has_card(text) {
        kinds.push("a card number");
    }
    if numbers::has_ssn(text) {
        kinds.push("a US social security number");
    }
    kinds
}

/// What sensitive things `text` seems to hold, each once: the kind, and
/// how it was hidden when it was (`an AWS access key (base64-encoded)`).
pub fn findings(text: &str) -> Vec<String> {
    let mut seen: Vec<&'static str> = Vec::new();
    // One kind may have several patterns: each kind is named once.
    let mut out = Vec::new();
    for view in views::views(text) {
        let mut kinds = kinds_in(&view.text, view.personal);
        if view.compact {
            kinds.extend(
                COMPACT
                    .iter()
                    .filter(|(_, re)| re.is_match(&view.text))
                    .map(|(what, _)| *what),
            );
        }
        for kind in kinds {
            if seen.contains(&kind) {
                continue;
            }
            seen.push(kind);
            out.push(match &view.how {
                Some(how) => format!("{kind} ({how})"),
                None => kind.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::findings;

    #[test]
    fn finds_secrets_and_personal_data() {
        assert_eq!(
            findings("key: sk-proj-abcdefghijklmnopqrstuvwxyz123456"),
            vec!["an API key"]
        );
        assert_eq!(findings("AKIAIOSFODNN7EXAMPLE"), vec!["an AWS access key"]);
        assert_eq!(
            findings("-----BEGIN OPENSSH PRIVATE KEY-----"),
            vec!["a private key"]
        );
        assert_eq!(
            findings("password = hunter2hunter2"),
            vec!["a password or secret"]
        );
        assert_eq!(
            findings("write to dana@example.com"),
            vec!["an email address"]
        );
        assert_eq!(
            findings("call +1 415 555 0199 today"),
            vec!["a phone number"]
        );
        assert!(findings("We ship 3 features on May 14, 2026 at 10:30.").is_empty());
        assert!(findings("version 1.2.3 and 1/2 of 350").is_empty());
    }

    #[test]
    fn hidden_secrets_are_found_and_say_how_they_were_hidden() {
        for (text, said) in [
            (
                "k=QUtJQUlPU0ZPRE5ON0VYQU1QTEU%3D",
                "an AWS access key (base64-encoded)",
            ),
            ("k=ELPMAXE7NNDOFSOIAIKA", "an AWS access key (reversed)"),
            (
                "k=AKIA-IOSF-ODNN-7EXA-MPLE",
                "an AWS access key (split into groups)",
            ),
            (
                "card=4111%201111%201111%201111",
                "a card number (URL-encoded)",
            ),
            (
                "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG",
                "a password or secret",
            ),
            ("key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "an API key"),
            ("t=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "an API key"),
        ] {
            assert!(
                findings(text).contains(&said.to_string()),
                "{text}: {:?}",
                findings(text)
            );
        }
    }
}
