//! Completion on the `:` line, driven by an action grammar: the console's
//! own commands (`grammars/console.agr`) with what is running filled in —
//! agent names, the dialect's verbs and aliases, block labels, waiting
//! request ids — completed forward as the grammar engine does.

use crate::prompt::Completer;
use partner_grammar::{Direction, Grammar, LoadOptions, MatchOptions, complete, load_grammar};

/// The console's command grammar.
const CONSOLE: &str = include_str!("../../../grammars/console.agr");

/// The verbs and one-word aliases of a verb table, sorted.
pub fn verb_words(table: &partner_dialect::VerbTable) -> Vec<String> {
    let mut words: Vec<String> = table
        .single_word_phrases()
        .map(|(p, _)| p.to_string())
        .collect();
    words.sort();
    words.dedup();
    words
}

/// What the `:` line can name right now.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Agents running.
    pub agents: Vec<String>,
    /// Dialect verbs and aliases.
    pub verbs: Vec<String>,
    /// Block labels of the agent in view.
    pub blocks: Vec<String>,
    /// Requests waiting.
    pub requests: Vec<String>,
    /// Trace outcomes.
    pub outcomes: Vec<String>,
}

/// A word as a grammar literal: escapes what the `.agr` reader treats as
/// syntax. Words that would stay empty or odd are left out.
fn literal(word: &str) -> Option<String> {
    let w = word.trim();
    if w.is_empty() || w.len() > 64 || w.contains(char::is_whitespace) {
        return None;
    }
    let mut out = String::new();
    for c in w.chars() {
        if matches!(
            c,
            '(' | ')' | '|' | ';' | '<' | '>' | '$' | '\\' | '-' | '/' | '"' | '\'' | '['
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    Some(out)
}

fn rule(name: &str, words: &[String]) -> String {
    let alts: Vec<String> = words.iter().filter_map(|w| literal(w)).collect();
    if alts.is_empty() {
        // Nothing to name: a rule that never matches a real word.
        format!("<{name}> = \\u{{1}};\n")
    } else {
        format!("<{name}> = {};\n", alts.join(" | "))
    }
}

/// Completes the `:` line with the console grammar.
#[derive(Debug, Clone)]
pub struct GrammarCompleter {
    grammar: Option<Grammar>,
}

impl GrammarCompleter {
    /// The console grammar with `names` filled in.
    pub fn new(names: &Names) -> Self {
        let live = format!(
            "{}{}{}{}{}",
            rule("Agent", &names.agents),
            rule("Verb", &names.verbs),
            rule("Block", &names.blocks),
            rule("Request", &names.requests),
            rule("Outcome", &names.outcomes),
        );
        let names = partner_grammar::InMemory(vec![("console-names.agr".into(), live)]);
        let options = LoadOptions {
            enable_value_expressions: false,
            start_value_required: false,
            ..Default::default()
        };
        GrammarCompleter {
            grammar: load_grammar("console.agr", CONSOLE, &options, &names).ok(),
        }
    }

    /// True when the grammar loaded (it always should; a broken name list
    /// falls back to no completion rather than a wrong one).
    pub fn ready(&self) -> bool {
        self.grammar.is_some()
    }
}

impl Completer for GrammarCompleter {
    fn complete(&self, line: &str, cursor: usize) -> (usize, Vec<String>) {
        let Some(grammar) = &self.grammar else {
            return (cursor, Vec::new());
        };
        let before = &line[..cursor.min(line.len())];
        let c = complete(
            grammar,
            before,
            Direction::Forward,
            None,
            &MatchOptions::default(),
        );
        // Where the word being completed starts: after what the grammar
        // matched and any separators typed since.
        let matched: usize = before
            .char_indices()
            .scan(0usize, |units, (i, ch)| {
                let at = *units;
                *units += ch.len_utf16();
                Some((i, at))
            })
            .find(|(_, units)| *units >= c.matched_prefix_length)
            .map_or(before.len(), |(i, _)| i);
        let start = matched + (before[matched..].len() - before[matched..].trim_start().len());
        let typed = before[start..].to_lowercase();
        let mut found: Vec<String> = Vec::new();
        for group in &c.groups {
            for w in &group.completions {
                if w.to_lowercase().starts_with(&typed)
                    && *w != before[start..]
                    && !found.contains(w)
                {
                    found.push(w.clone());
                }
            }
        }
        found.sort();
        (start, found)
    }
}

/// Most directory entries read to complete one path.
const MAX_ENTRIES: usize = 5_000;

/// Completes the path after `open` / `open trace` on the `:` line; other
/// lines go to `rest`.
pub struct PathCompleter<C> {
    /// What completes every other line.
    pub rest: C,
    /// The home directory, for `~/`.
    pub home: Option<std::path::PathBuf>,
}

/// Where the path starts on an `open` line (a byte offset), if it is one.
fn path_start(before: &str) -> Option<usize> {
    let trimmed = before.trim_start().trim_start_matches(':').trim_start();
    let lead = before.len() - trimmed.len();
    ["open trace ", "open "]
        .iter()
        .find(|p| trimmed.starts_with(*p))
        .map(|p| {
            lead + p.len() + (trimmed[p.len()..].len() - trimmed[p.len()..].trim_start().len())
        })
}

impl<C: Completer> PathCompleter<C> {
    /// The entries of the directory `typed` is in that begin as its last
    /// part does; directories end with `/`. Hidden ones only when asked
    /// for with a leading dot.
    fn paths(&self, typed: &str) -> Vec<String> {
        let (dir_part, name) = match typed.rfind('/') {
            Some(at) => (&typed[..=at], &typed[at + 1..]),
            None => ("", typed),
        };
        let dir = match (dir_part.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ if dir_part.is_empty() => std::path::PathBuf::from("."),
            _ => std::path::PathBuf::from(dir_part),
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut found: Vec<String> = entries
            .take(MAX_ENTRIES)
            .filter_map(Result::ok)
            .filter_map(|e| {
                let file = e.file_name().to_str()?.to_string();
                if !file.starts_with(name) || (file.starts_with('.') && !name.starts_with('.')) {
                    return None;
                }
                let slash = if e.path().is_dir() { "/" } else { "" };
                Some(format!("{dir_part}{file}{slash}"))
            })
            .collect();
        found.sort();
        found
    }
}

impl<C: Completer> Completer for PathCompleter<C> {
    fn complete(&self, line: &str, cursor: usize) -> (usize, Vec<String>) {
        let before = &line[..cursor.min(line.len())];
        match path_start(before) {
            Some(start) => (start, self.paths(&before[start..])),
            None => self.rest.complete(line, cursor),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_completes_paths_directories_with_a_slash() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("traces")).unwrap();
        std::fs::write(dir.path().join("traces/demo.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("traces/demo2.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("traces/.hidden"), "").unwrap();
        let paths = PathCompleter {
            rest: completer(),
            home: Some(dir.path().to_path_buf()),
        };
        let root = dir.path().display().to_string();
        let line = format!("open trace {root}/tr");
        assert_eq!(
            paths.complete(&line, line.len()),
            (11, vec![format!("{root}/traces/")])
        );
        let line = "open ~/traces/d";
        assert_eq!(
            paths.complete(line, line.len()),
            (
                5,
                vec![
                    "~/traces/demo.jsonl".to_string(),
                    "~/traces/demo2.jsonl".to_string()
                ]
            )
        );
        let line = ":open trace ~/traces/.h";
        assert_eq!(
            paths.complete(line, line.len()).1,
            vec!["~/traces/.hidden".to_string()]
        );
        // Other lines complete as before.
        assert_eq!(paths.complete("pu", 2), (0, vec!["pulse".to_string()]));
    }

    fn completer() -> GrammarCompleter {
        GrammarCompleter::new(&Names {
            agents: vec!["anchor".into(), "sage".into(), "scout".into()],
            verbs: vec![
                "recall".into(),
                "remind".into(),
                "reply".into(),
                "approve".into(),
            ],
            blocks: vec!["project_notes".into(), "persona".into()],
            requests: vec!["r1".into(), "r12".into()],
            outcomes: vec!["executed".into(), "denied".into()],
        })
    }

    fn words(line: &str) -> (usize, Vec<String>) {
        completer().complete(line, line.len())
    }

    #[test]
    fn commands_agents_verbs_labels_and_requests_complete() {
        assert!(completer().ready());
        assert_eq!(words("pu"), (0, vec!["pulse".to_string()]));
        assert_eq!(
            words("pulse s"),
            (6, vec!["sage".to_string(), "scout".to_string()])
        );
        assert_eq!(words("filter out"), (7, vec!["outcome".to_string()]));
        assert_eq!(words("filter outcome d"), (15, vec!["denied".to_string()]));
        assert_eq!(
            words("/re"),
            (1, vec!["recall".into(), "remind".into(), "reply".into()])
        );
        assert_eq!(words("/recall pro"), (8, vec!["project_notes".to_string()]));
        assert_eq!(words("/approve r1"), (9, vec!["r12".to_string()]));
        assert_eq!(words("zz").1, Vec::<String>::new());
    }
}
