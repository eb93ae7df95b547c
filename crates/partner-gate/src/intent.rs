//! What a request in words asks for: a verb table (run, install, remove,
//! service start/stop/config, update, check), phrasal verbs read whole
//! ("get rid of" is remove, "start up" is a service start), typos of the
//! verbs forgiven ("intall"), fillers dropped ("please run my firefox"),
//! and common names mapped to their packages (`chrome` →
//! `google-chrome-stable`).

use serde::Serialize;

/// What kind of thing a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntentKind {
    /// Start a program.
    Run,
    /// Install a package.
    Install,
    /// Remove a package.
    Remove,
    /// Start, restart or reload a service.
    ServiceStart,
    /// Stop a service.
    ServiceStop,
    /// Enable or disable a service at boot.
    ServiceConfig,
    /// Update packages.
    Update,
    /// Look at something's state.
    Check,
}

impl IntentKind {
    /// Its name, as `partner gate intent` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            IntentKind::Run => "run",
            IntentKind::Install => "install",
            IntentKind::Remove => "remove",
            IntentKind::ServiceStart => "service_start",
            IntentKind::ServiceStop => "service_stop",
            IntentKind::ServiceConfig => "service_config",
            IntentKind::Update => "update",
            IntentKind::Check => "check",
        }
    }
}

/// A request's intent and target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Intent {
    /// What it asks for, when that is clear.
    pub intent: Option<IntentKind>,
    /// What it is about (a package name after aliases), when named.
    pub target: Option<String>,
    /// The verb as written (`restart`, `disable`), for the proposal.
    #[serde(skip)]
    pub verb: String,
}

use IntentKind::*;

/// Verbs, longest phrases first.
const VERBS: &[(&str, IntentKind)] = &[
    ("get rid of", Remove),
    ("start up", ServiceStart),
    ("fire up", ServiceStart),
    ("spin up", ServiceStart),
    ("bring up", ServiceStart),
    ("boot up", ServiceStart),
    ("shut down", ServiceStop),
    ("bring down", ServiceStop),
    ("set up", Install),
    ("is there", Check),
    ("run", Run),
    ("launch", Run),
    ("open", Run),
    ("execute", Run),
    ("install", Install),
    ("add", Install),
    ("get", Install),
    ("download", Install),
    ("setup", Install),
    ("remove", Remove),
    ("uninstall", Remove),
    ("delete", Remove),
    ("purge", Remove),
    ("erase", Remove),
    ("start", ServiceStart),
    ("restart", ServiceStart),
    ("reload", ServiceStart),
    ("stop", ServiceStop),
    ("kill", ServiceStop),
    ("terminate", ServiceStop),
    ("halt", ServiceStop),
    ("enable", ServiceConfig),
    ("disable", ServiceConfig),
    ("update", Update),
    ("upgrade", Update),
    ("check", Check),
    ("verify", Check),
    ("status", Check),
    ("show", Check),
    ("is", Check),
];

/// Words that carry no meaning in a request.
const FILLERS: &[&str] = &[
    "please",
    "pls",
    "can",
    "could",
    "would",
    "will",
    "you",
    "kindly",
    "for",
    "me",
    "my",
    "the",
    "a",
    "an",
    "i",
    "want",
    "to",
    "i'd",
    "like",
    "let's",
    "lets",
    "just",
    "go",
    "ahead",
    "and",
    "now",
    "quickly",
    "some",
    "this",
    "that",
    "program",
    "app",
    "application",
    "package",
    "service",
    "of",
    "on",
    "computer",
    "machine",
];

/// Targets that mean everything (`update my system`).
const EVERYTHING: &[&str] = &["system", "everything", "all", "packages", "os"];

/// Common names and the packages they mean.
pub const PACKAGE_ALIASES: &[(&str, &str)] = &[
    ("google chrome", "google-chrome-stable"),
    ("chrome", "google-chrome-stable"),
    ("vs code", "code"),
    ("vscode", "code"),
    ("visual studio code", "code"),
    ("python", "python3"),
    ("node", "nodejs"),
    ("node.js", "nodejs"),
    ("postgres", "postgresql"),
    ("libre office", "libreoffice"),
    ("photoshop", "gimp"),
];

/// Longest request read.
const MAX_WORDS: usize = 64;

/// Reads `text`.
pub fn analyze(text: &str) -> Intent {
    let lower = text.to_lowercase();
    let words: Vec<String> = lower
        .split_whitespace()
        .take(MAX_WORDS)
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && !"-+._'".contains(c))
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect();
    // Fillers before the verb go; the first verb (or a typo of one) decides.
    let mut at = 0;
    let mut found: Option<(IntentKind, String, usize)> = None;
    while at < words.len() {
        if let Some((verb, kind, len)) = verb_at(&words, at) {
            found = Some((kind, verb, at + len));
            break;
        }
        if !FILLERS.contains(&words[at].as_str()) {
            break;
        }
        at += 1;
    }
    let Some((kind, verb, rest)) = found else {
        return Intent {
            intent: None,
            target: target_of(&words[at.min(words.len())..]),
            verb: String::new(),
        };
    };
    let mut rest: Vec<String> = words[rest..].to_vec();
    // "is nginx running", "is gimp installed".
    if kind == Check {
        rest.retain(|w| {
            !matches!(
                w.as_str(),
                "running" | "installed" | "active" | "up" | "there" | "available"
            )
        });
    }
    // "start up nginx" written "start nginx up".
    if rest.last().is_some_and(|w| w == "up") {
        rest.pop();
    }
    let target = target_of(&rest);
    let target = if kind == Update && target.as_deref().is_some_and(|t| EVERYTHING.contains(&t)) {
        None
    } else {
        target
    };
    Intent {
        intent: Some(kind),
        target,
        verb,
    }
}

/// The verb (as in the table) that begins at word `at`, its kind and how
/// many words it took.
fn verb_at(words: &[String], at: usize) -> Option<(String, IntentKind, usize)> {
    for (phrase, kind) in VERBS {
        let parts: Vec<&str> = phrase.split(' ').collect();
        if words.len() >= at + parts.len()
            && words[at..at + parts.len()]
                .iter()
                .zip(&parts)
                .all(|(w, p)| w == p)
        {
            return Some((phrase.to_string(), *kind, parts.len()));
        }
    }
    // A typo of a long verb: "intall", "uninstal", "restrat".
    let word = &words[at];
    if word.len() >= 5 {
        let best = VERBS
            .iter()
            .filter(|(p, _)| !p.contains(' ') && p.len() >= 5)
            .map(|(p, k)| (strsim::damerau_levenshtein(word, p), *p, *k))
            .min_by_key(|(d, _, _)| *d)?;
        if best.0 <= 2 && best.0 * 4 <= word.len() {
            return Some((best.1.to_string(), best.2, 1));
        }
    }
    None
}

/// The target named by `words` (fillers dropped, aliases applied).
fn target_of(words: &[String]) -> Option<String> {
    let kept: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| !FILLERS.contains(w))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let joined = kept.join(" ");
    for (alias, package) in PACKAGE_ALIASES {
        if joined == *alias {
            return Some(package.to_string());
        }
    }
    Some(joined)
}
