//! Plain words to dialect actions: a grammar of common phrasings
//! (`grammars/dialect.agr`, plus the phrasings the partner taught) turns a
//! reply that holds no slash action — or the partner's own words at the
//! `:` line — into the action it most likely means. What an agent says
//! this way is only ever *proposed*: it waits for the partner.

use std::sync::Arc;

use partner_grammar::{Grammar, LoadOptions, MatchOptions, Value, load_grammar, match_grammar};

/// The phrasings partner ships with.
pub const DIALECT_GRAMMAR: &str = include_str!("../../../grammars/dialect.agr");

/// Longest text read for a proposal (a reply is usually much shorter; a
/// long one is not a single request).
const MAX_WORDS: usize = 400;

/// Reads plain words as dialect actions.
#[derive(Debug, Clone)]
pub struct Proposer {
    grammar: Grammar,
}

/// The words a proposal was read from, as shown (first line, bounded).
pub fn words_shown(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    let mut out: String = line.chars().take(120).collect();
    if line.chars().count() > 120 {
        out.push('…');
    }
    out
}

/// The proposer a constellation uses now: replaced when the partner
/// teaches or forgets a phrasing (in any process), read by each turn.
#[derive(Debug, Default)]
pub struct CurrentProposer(std::sync::RwLock<Option<Arc<Proposer>>>);

impl CurrentProposer {
    /// Starts with `proposer`.
    pub fn new(proposer: Option<Arc<Proposer>>) -> Self {
        CurrentProposer(std::sync::RwLock::new(proposer))
    }

    /// The proposer to use for a reply.
    pub fn get(&self) -> Option<Arc<Proposer>> {
        self.0.read().map_or(None, |p| p.clone())
    }

    /// Uses `proposer` from now on.
    pub fn set(&self, proposer: Option<Arc<Proposer>>) {
        if let Ok(mut p) = self.0.write() {
            *p = proposer;
        }
    }
}

/// A learned phrasing as a grammar alternative: the words, literally,
/// standing for the action.
pub fn learned_rule(words: &str, action: &str) -> String {
    let mut phrase = String::new();
    for w in words.split_whitespace() {
        if !phrase.is_empty() {
            phrase.push(' ');
        }
        for c in w.chars() {
            if !c.is_alphanumeric() {
                phrase.push('\\');
            }
            phrase.push(c);
        }
    }
    let action = action.replace('\\', "\\\\").replace('"', "\\\"");
    format!("{phrase} -> \"{action}\"")
}

/// The grammar rule that teaches `words` as `action`, once it is sure
/// they can be: one dialect action, words of a sensible size, and a rule
/// that reads the words back as the action. The trimmed words and action
/// and the rule; or why not, in words.
pub fn learnable(words: &str, action: &str) -> Result<(String, String, String), String> {
    let (words, action) = (words.trim(), action.trim());
    let parsed = crate::DialectParser::new().parse(action);
    if parsed.actions.len() != 1 || !parsed.errors.is_empty() || !action.starts_with('/') {
        return Err(format!("'{action}' is not one dialect action"));
    }
    if words.is_empty() || words.len() > 500 {
        return Err("the words are empty or longer than 500 bytes".into());
    }
    let rule = learned_rule(words, action);
    let proposer = Proposer::new(std::slice::from_ref(&rule))?;
    if proposer.propose(words).as_deref() != Some(action) {
        return Err(format!(
            "'{words}' could not be learned as {action} (the words must read back as the action)"
        ));
    }
    Ok((words.to_string(), action.to_string(), rule))
}

impl Proposer {
    /// The shipped phrasings with `learned` alternatives (from
    /// [`learned_rule`]) added; a learned rule that does not load is left
    /// out, so one bad rule never disables the rest.
    pub fn new(learned: &[String]) -> Result<Self, String> {
        let options = LoadOptions {
            enable_value_expressions: true,
            start_value_required: true,
            ..Default::default()
        };
        let build = |rules: &[&String]| {
            let learned = if rules.is_empty() {
                "<Learned> = \\u{1} -> \"\";".to_string()
            } else {
                format!(
                    "<Learned> = {};",
                    rules
                        .iter()
                        .map(|r| r.as_str())
                        .collect::<Vec<_>>()
                        .join("\n  | ")
                )
            };
            load_grammar(
                "dialect.agr",
                DIALECT_GRAMMAR,
                &options,
                &partner_grammar::InMemory(vec![("learned.agr".into(), learned)]),
            )
        };
        let good: Vec<&String> = learned.iter().filter(|r| build(&[*r]).is_ok()).collect();
        let grammar = build(&good).map_err(|e| e.to_string())?;
        Ok(Proposer { grammar })
    }

    /// The dialect action `text` most likely means: of every parse, the one
    /// that left least to wildcards. `None` when nothing matches.
    pub fn propose(&self, text: &str) -> Option<String> {
        let text = text.trim();
        if text.is_empty() || text.contains('\n') || text.split_whitespace().count() > MAX_WORDS {
            return None;
        }
        let text = text.trim_end_matches(['.', '!']);
        match_grammar(&self.grammar, text, &MatchOptions::default())
            .into_iter()
            .filter_map(|r| match r.value {
                Value::String(action) if action.starts_with('/') => {
                    Some((r.wildcard_char_count, action))
                }
                _ => None,
            })
            .min_by_key(|(chars, _)| *chars)
            .map(|(_, action)| action.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_phrasings_become_actions() {
        let p = Proposer::new(&[]).unwrap();
        assert_eq!(
            p.propose("Remember that the launch is on Friday."),
            Some("/recall insert \"the launch is on Friday\"".into())
        );
        assert_eq!(
            p.propose("search my notes for the launch date"),
            Some("/recall \"the launch date\"".into())
        );
        assert_eq!(
            p.propose("tell anchor that the build is green"),
            Some("/tell @anchor \"the build is green\"".into())
        );
        assert_eq!(
            p.propose("remind me tomorrow to check the build"),
            Some("/remind \"tomorrow\" \"check the build\"".into())
        );
        assert_eq!(p.propose("Good morning, how are you?"), None);
        assert_eq!(
            p.propose("remember that she said \"ship it\""),
            Some("/recall insert \"she said 'ship it\"".into()),
            "quotes in the words never end the action's text"
        );
    }

    #[test]
    fn learned_phrasings_are_read_too_and_bad_ones_skipped() {
        let rule = learned_rule("jot this: buy milk", "/recall insert \"buy milk\"");
        let p = Proposer::new(&[rule, "<<not a rule".into()]).unwrap();
        assert_eq!(
            p.propose("jot this: buy milk"),
            Some("/recall insert \"buy milk\"".into())
        );
    }
}
