//! Taking the command out of what a model or an agent wrote: the first
//! two layers of the gate. *Sanitize* strips code fences (and only their
//! language tag), backticks, shell prompts (`$ `, `> `, `user@host:~$ `)
//! and labels (`Command:`, `Run:`); *validate* keeps a line only when it
//! reads as a command, not prose or a question. A reply that explains and
//! then gives the command yields the command, and the rest is kept as the
//! explanation. Outside a fenced block only the first command line is
//! taken (a fenced block of several lines is one script, shown whole to
//! the partner), and a reply whose first line is `NONE` has no command.

use serde::Serialize;

/// Longest text read.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// What extraction found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Extracted {
    /// The command, when there is one.
    pub command: Option<String>,
    /// The words around it.
    pub explanation: String,
    /// Why there is no command, when there is none.
    pub reason: Option<String>,
}

/// Labels a model puts before a command.
const LABELS: &[&str] = &[
    "command:",
    "run:",
    "shell:",
    "bash:",
    "execute:",
    "cmd:",
    "try:",
    "proposed:",
    "proposal:",
];

/// Words that begin prose, not a command.
const PROSE_STARTS: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "it",
    "it's",
    "i",
    "i'm",
    "i'll",
    "you",
    "you're",
    "we",
    "they",
    "he",
    "she",
    "my",
    "your",
    "our",
    "here",
    "here's",
    "there",
    "sure",
    "sorry",
    "unfortunately",
    "to",
    "if",
    "note",
    "first",
    "then",
    "next",
    "finally",
    "use",
    "using",
    "running",
    "please",
    "okay",
    "ok",
    "certainly",
    "of",
    "however",
];

/// Takes the command out of `text`.
pub fn extract(text: &str) -> Extracted {
    let text = if text.len() > MAX_TEXT_BYTES {
        let mut end = MAX_TEXT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        &text[..end]
    } else {
        text
    };
    let text = text.replace("\r\n", "\n");
    if says_none(&text) {
        return Extracted {
            command: None,
            explanation: text.trim().to_string(),
            reason: Some("the reply says there is no command (NONE)".into()),
        };
    }
    let (candidates, prose) = candidates(&text);
    let mut last_reason = None;
    for (i, candidate) in candidates.iter().enumerate() {
        match validate(candidate) {
            Ok(()) => {
                let mut explanation: Vec<&str> = prose.iter().map(String::as_str).collect();
                explanation.extend(
                    candidates
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, c)| c.as_str()),
                );
                return Extracted {
                    command: Some(candidate.clone()),
                    explanation: explanation.join("\n").trim().to_string(),
                    reason: None,
                };
            }
            Err(why) => last_reason = Some(why),
        }
    }
    Extracted {
        command: None,
        explanation: text.trim().to_string(),
        reason: Some(last_reason.unwrap_or_else(|| "there is no command in it".into())),
    }
}

/// Takes the command out of a `/shell` action's content: a content block
/// whose every line is a command is one script (the agent wrote it so, and
/// the partner sees it whole); anything else is read as [`extract`] reads
/// a reply.
pub fn extract_script(text: &str) -> Extracted {
    let lines: Vec<String> = text
        .lines()
        .map(strip_line)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() > 1
        && text.len() <= MAX_TEXT_BYTES
        && !says_none(text)
        && lines
            .iter()
            .all(|l| validate(l).is_ok() && !l.contains('`'))
    {
        return Extracted {
            command: Some(lines.join("\n")),
            explanation: String::new(),
            reason: None,
        };
    }
    extract(text)
}

/// True when a reply's first line is `NONE` (any case, with punctuation,
/// bold or backticks around it): the model found no command.
fn says_none(text: &str) -> bool {
    let first = text.lines().map(strip_line).find(|l| !l.is_empty());
    first.is_some_and(|l| {
        l.trim_matches(|c: char| !c.is_alphanumeric())
            .eq_ignore_ascii_case("none")
    })
}

/// The places a command may be, in order (fenced blocks first, then
/// inline code, then lines), and the prose around them.
fn candidates(text: &str) -> (Vec<String>, Vec<String>) {
    let mut fenced = Vec::new();
    let mut outside = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(fence) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) {
            // The rest of the fence line is a language tag, not a command.
            let mut body = Vec::new();
            for inner in lines.by_ref() {
                if inner.trim_start().starts_with(fence) {
                    break;
                }
                body.push(inner);
            }
            let block = clean_block(&body);
            if !block.is_empty() {
                fenced.push(block);
            }
        } else {
            outside.push(line.to_string());
        }
    }
    let mut inline = Vec::new();
    let mut plain = Vec::new();
    let mut prose = Vec::new();
    for line in &outside {
        let stripped = strip_line(line);
        if stripped.is_empty() {
            continue;
        }
        let quoted = backticked(&stripped);
        if validate(&stripped).is_ok()
            && quoted.iter().all(|q| *q != stripped)
            && !stripped.contains('`')
        {
            plain.push(stripped);
        } else if let Some(q) = quoted.into_iter().find(|q| validate(q).is_ok()) {
            inline.push(q);
            prose.push(line.trim().to_string());
        } else if stripped.starts_with('`') && stripped.ends_with('`') {
            plain.push(stripped.trim_matches('`').trim().to_string());
        } else {
            plain.push(stripped);
        }
    }
    // Outside a fence, only the first command line is the command: a
    // second line that reads as one (`Lists all files`) is explanation.
    let mut all = fenced;
    all.extend(inline);
    // Lines that are not commands are prose.
    for line in plain {
        if validate(&line).is_ok() {
            all.push(line);
        } else {
            prose.push(line);
        }
    }
    (all, prose)
}

/// A fenced block's lines without prompts, labels and comment lines,
/// joined.
fn clean_block(body: &[&str]) -> String {
    body.iter()
        .map(|l| strip_line(l))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line without a shell prompt or a label in front.
fn strip_line(line: &str) -> String {
    let mut s = line.trim().to_string();
    loop {
        let before = s.clone();
        let lower = s.to_ascii_lowercase();
        if let Some(label) = LABELS.iter().find(|l| lower.starts_with(*l)) {
            s = s[label.len()..].trim().to_string();
        }
        for prompt in ["$ ", "> ", "% ", "❯ "] {
            if let Some(rest) = s.strip_prefix(prompt) {
                s = rest.trim().to_string();
            }
        }
        // user@host:~/dir$ command
        if let Some(at) = s.find("$ ")
            && s[..at].contains('@')
            && s[..at].contains(':')
            && !s[..at].contains(' ')
        {
            s = s[at + 2..].trim().to_string();
        }
        // A whole line in backticks, or bold around it.
        for wrap in ["**", "`"] {
            if s.len() > 2 * wrap.len()
                && s.starts_with(wrap)
                && s.ends_with(wrap)
                && !s[wrap.len()..s.len() - wrap.len()].contains(wrap)
            {
                s = s[wrap.len()..s.len() - wrap.len()].trim().to_string();
            }
        }
        if s == before {
            return s;
        }
    }
}

/// The spans in single backticks.
fn backticked(line: &str) -> Vec<String> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The second layer: `Ok` when `line` reads as a command.
pub fn validate(line: &str) -> Result<(), String> {
    let line = line.trim();
    if line.is_empty() {
        return Err("it is empty".into());
    }
    let first_line = line.lines().next().unwrap_or("");
    let words: Vec<&str> = first_line.split_whitespace().collect();
    let first = words.first().copied().unwrap_or("");
    let operators = ["|", "&&", "||", ";", ">", "<", "$(", "`", "="];
    let has_operator = operators.iter().any(|o| line.contains(o));
    if line.ends_with('?') && !has_operator {
        return Err("it is a question, not a command".into());
    }
    let lower_first = first.to_lowercase();
    let bare_first = lower_first.trim_end_matches([',', ':', '.', '!']);
    if PROSE_STARTS.contains(&bare_first) && (words.len() > 1 || first.ends_with([',', '.', ':'])) {
        return Err(format!("it reads as prose (it begins with \"{first}\")"));
    }
    if first.ends_with(',') || (first.ends_with(':') && !first.contains('/')) {
        return Err("it reads as prose".into());
    }
    if words.len() > 15 && !has_operator {
        return Err("it reads as prose (many words and no shell operators)".into());
    }
    let sentence = first.chars().next().is_some_and(char::is_uppercase)
        && first.chars().skip(1).all(|c| c.is_lowercase())
        && words.len() >= 3
        && (first_line.ends_with('.') || first_line.ends_with('!'));
    if sentence {
        return Err("it reads as a sentence".into());
    }
    let plausible = first
        .chars()
        .all(|c| c.is_alphanumeric() || "_-./~+:=$@%{}[]()!'\"\\*".contains(c))
        && first
            .chars()
            .any(|c| c.is_alphanumeric() || ".:[(!{".contains(c));
    if !plausible {
        return Err(format!("\"{first}\" does not look like a command"));
    }
    Ok(())
}
