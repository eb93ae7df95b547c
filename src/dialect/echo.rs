//! Reworded echoes: a line a model wrote that is mostly copied from its
//! own instructions — the verb list rewritten with slashes (`/reply "reply
//! to a message in words"`), a sentence of the intentions section with a
//! verb in front. Such a line is an echo, read as text, never an action:
//! most of its runs of three words are runs of the instructions'.
//!
//! Only the instructions count (never the agent's memory or messages),
//! so an action that quotes what the agent remembers still runs.

use std::collections::HashSet;

/// Fewest words a line needs to be judged (shorter lines say too little
/// to be told from an action).
const MIN_WORDS: usize = 3;

/// The instructions' runs of three words, to judge lines against.
#[derive(Debug, Clone, Default)]
pub struct PromptEcho {
    trigrams: HashSet<[String; 3]>,
}

/// The words of `text`, lowercased, letters and digits only.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn trigrams(words: &[String]) -> impl Iterator<Item = [String; 3]> + '_ {
    words
        .windows(3)
        .map(|w| [w[0].clone(), w[1].clone(), w[2].clone()])
}

impl PromptEcho {
    /// The runs of three words of `instructions`, line by line.
    pub fn new(instructions: &str) -> Self {
        let mut set = HashSet::new();
        for line in instructions.lines() {
            set.extend(trigrams(&words(line)));
        }
        PromptEcho { trigrams: set }
    }

    /// True when `line` (an action line) is mostly copied from the
    /// instructions: at least three quarters of its runs of three words
    /// are theirs.
    pub fn copies(&self, line: &str) -> bool {
        let words = words(line);
        if words.len() < MIN_WORDS {
            return false;
        }
        let all: Vec<[String; 3]> = trigrams(&words).collect();
        let copied = all.iter().filter(|t| self.trigrams.contains(*t)).count();
        copied * 4 >= all.len() * 3
    }
}

#[cfg(test)]
mod tests {
    use super::PromptEcho;

    #[test]
    fn a_reworded_verb_list_is_an_echo_and_a_real_action_is_not() {
        let echo = PromptEcho::new(
            "Verbs you can use:\n  reply: reply to a message in words\n  search: search the web; is not supported by the system.\nSet one with /remind \"when\" \"what\".",
        );
        assert!(echo.copies("/reply \"reply to a message in words\""));
        assert!(echo.copies("/search \"is not supported by the system.\""));
        assert!(echo.copies("/remind \"when\" \"what\"."));
        assert!(!echo.copies("/reply \"the launch moved to Monday\""));
        assert!(!echo.copies("/recall notes"));
        assert!(!echo.copies("/search flights to Lisbon in May"));
    }
}
