//! The sensitivity heuristic: content that looks like a secret or personal
//! data. A finding turns `allow` into `ask` and says why.

use std::sync::LazyLock;

use regex::Regex;

static PATTERNS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        ("an API key", r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)?[A-Za-z0-9_-]{20,}"),
        ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
        ("a Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
        ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        (
            "a password or secret",
            r#"(?i)\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b\s*[:=]\s*["']?[^\s"']{6,}"#,
        ),
        ("an email address", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),
        ("a phone number", r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\d{3,4}[\s.-]\d{3,4}(?:[\s.-]\d{2,4})?"),
    ]
    .into_iter()
    .map(|(what, pattern)| (what, Regex::new(pattern).expect("sensitivity patterns compile")))
    .collect()
});

/// What sensitive things `text` seems to contain ("an API key", "an email
/// address"…), each once, in a fixed order.
pub fn findings(text: &str) -> Vec<&'static str> {
    PATTERNS
        .iter()
        .filter(|(what, re)| {
            re.find_iter(text).any(|m| {
                // Phone numbers need at least nine digits to count.
                *what != "a phone number"
                    || m.as_str().chars().filter(char::is_ascii_digit).count() >= 9
            })
        })
        .map(|(what, _)| *what)
        .collect()
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
}
