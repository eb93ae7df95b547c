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
    /// Runs that the instructions write as an action (`/remind "when"
    /// "what"`): the only ones a three-word line is judged by.
    slashed: HashSet<[String; 3]>,
    /// Each line's words: a line that is one of them, word for word (the
    /// verb list's `intentions: list intentions`), is an echo however short.
    lines: HashSet<Vec<String>>,
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
    /// The runs of three words of `instructions`, line by line, but for
    /// the lines in `examples`: an example action line is an echo only
    /// when repeated whole (the parser knows them), as a real action may
    /// well begin like one (`/post bluesky "hello"`).
    pub fn new(instructions: &str, examples: &HashSet<String>) -> Self {
        let mut set = HashSet::new();
        let mut slashed = HashSet::new();
        let mut lines = HashSet::new();
        for line in instructions.lines() {
            if examples.contains(line.trim()) {
                continue;
            }
            let all = words(line);
            set.extend(trigrams(&all));
            if all.len() >= MIN_WORDS {
                lines.insert(all);
            }
            for (at, _) in line.match_indices('/') {
                let after = words(&line[at + 1..]);
                if after.len() >= 3 && line[at + 1..].starts_with(char::is_alphabetic) {
                    slashed.extend(trigrams(&after[..3]));
                }
            }
        }
        PromptEcho {
            trigrams: set,
            slashed,
            lines,
        }
    }

    /// True when `line` (an action line) is mostly copied from the
    /// instructions: at least three quarters of its runs of three words
    /// are theirs (a line of three words: when the instructions write
    /// those three as an action).
    pub fn copies(&self, line: &str) -> bool {
        let words = words(line);
        if words.len() < MIN_WORDS {
            return false;
        }
        if self.lines.contains(&words) {
            return true;
        }
        let all: Vec<[String; 3]> = trigrams(&words).collect();
        // Three words say too little, unless the instructions write them
        // as an action themselves.
        if let [only] = all.as_slice() {
            return self.slashed.contains(only);
        }
        let copied = all.iter().filter(|t| self.trigrams.contains(*t)).count();
        copied * 4 >= all.len() * 3
    }
}

#[cfg(test)]
mod tests {
    use super::PromptEcho;

    #[test]
    fn a_reworded_verb_list_is_an_echo_and_a_real_action_is_not() {
        let example = "/post bluesky \"hello\" ?public".to_string();
        let echo = PromptEcho::new(
            "Verbs you can use:\n  reply: reply to a message in words\n  search: search the web; is not supported by the system.\nSet one with /remind \"when\" \"what\".\n/post bluesky \"hello\" ?public",
            &[example].into_iter().collect(),
        );
        assert!(echo.copies("/reply \"reply to a message in words\""));
        assert!(echo.copies("/search \"is not supported by the system.\""));
        assert!(echo.copies("/remind \"when\" \"what\"."));
        assert!(!echo.copies("/reply \"the launch moved to Monday\""));
        assert!(!echo.copies("/recall notes"));
        // Three words of the verb list, not written as an action there.
        assert!(!echo.copies("/search the web"));
        // A whole line of the verb list, however short.
        assert!(echo.copies("/reply \"reply to a message in words\""));
        assert!(!echo.copies("/search flights to Lisbon in May"));
        // An action that begins like an example is the agent's own.
        assert!(!echo.copies("/post bluesky \"hello\""));
    }
}
