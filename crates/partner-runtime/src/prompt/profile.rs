//! How an agent is taught the dialect: the `full` profile for large models
//! (every usable verb with its summary, the markers, chains, examples) and
//! the `compact` one for small models (verbs by name, the markers in one
//! line, a short demonstration dialogue). In `tools` mode the verbs travel
//! as function tools instead and the instructions only say how to use them.
//!
//! Everything here is inert when a model echoes it: verbs are listed without
//! their slash, and the example action lines — the only lines that would
//! parse — are handed to the agent's parser as echoes ([`example_lines`]),
//! so a reply repeating them word for word does nothing.

use serde::{Deserialize, Serialize};

use partner_dialect::VerbSpec;

/// How much of the dialect the system prompt spells out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Every usable verb with what it does, the markers, chains and
    /// examples: for large models.
    #[default]
    Full,
    /// The usable verbs by name, the markers in one line and a short
    /// demonstration dialogue: for small models and small contexts.
    Compact,
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(Profile::Full),
            "compact" => Ok(Profile::Compact),
            other => Err(format!("profile '{other}' must be full or compact")),
        }
    }
}

/// How an agent writes its actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionFormat {
    /// Slash-command lines in the reply (the default).
    #[default]
    Dialect,
    /// Native function calls, one tool per verb, turned into the same
    /// actions (for models trained on tool calls).
    Tools,
}

impl std::str::FromStr for ActionFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "dialect" => Ok(ActionFormat::Dialect),
            "tools" => Ok(ActionFormat::Tools),
            other => Err(format!("actions '{other}' must be dialect or tools")),
        }
    }
}

/// One example action: the verbs it needs and the line.
struct Example {
    verbs: &'static [&'static str],
    line: &'static str,
}

/// The full profile's examples.
const FULL_EXAMPLES: &[Example] = &[
    Example {
        verbs: &["recall"],
        line: "/recall project deadlines",
    },
    Example {
        verbs: &["reply"],
        line: "/reply sounds good .",
    },
    Example {
        verbs: &["post"],
        line: "/post bluesky \"hello\" ?public",
    },
    Example {
        verbs: &["recall", "summarize", "tell"],
        line: "/recall meeting notes -> /summarize -> /tell @entropy",
    },
];

/// One step of the compact profile's demonstration: what was said, the
/// answer in words, and the action line.
struct Demo {
    verbs: &'static [&'static str],
    said: &'static str,
    answer: &'static str,
    line: &'static str,
}

/// The compact profile's demonstration dialogue.
const DEMO: &[Demo] = &[
    Demo {
        verbs: &["recall"],
        said: "Remember that Mira's birthday is in May.",
        answer: "Noted.",
        line: "/recall insert \"Mira's birthday is in May\"",
    },
    Demo {
        verbs: &["recall", "tell"],
        said: "What did the team decide about the logo? Let entropy know.",
        answer: "I'll look it up and pass it on.",
        line: "/recall \"logo decision\" -> /tell @entropy",
    },
    Demo {
        verbs: &["post"],
        said: "Announce the garden party publicly.",
        answer: "Posting it.",
        line: "/post bluesky \"Garden party on Saturday!\" ?public",
    },
];

/// Every example action line of every profile: a reply that repeats one
/// alone on its line is echoing its instructions.
pub fn example_lines() -> impl Iterator<Item = &'static str> {
    FULL_EXAMPLES
        .iter()
        .map(|e| e.line)
        .chain(DEMO.iter().map(|d| d.line))
}

fn usable(verbs: &[&VerbSpec], needed: &[&str]) -> bool {
    needed
        .iter()
        .all(|n| verbs.iter().any(|v| v.verb.name() == *n))
}

/// The dialect instructions for `profile`, naming only `verbs` (the verbs
/// the agent may use).
pub fn instructions(profile: Profile, format: ActionFormat, verbs: &[&VerbSpec]) -> String {
    match (format, profile) {
        (ActionFormat::Tools, _) => tools_instructions(),
        (ActionFormat::Dialect, Profile::Full) => full(verbs),
        (ActionFormat::Dialect, Profile::Compact) => compact(verbs),
    }
}

fn full(verbs: &[&VerbSpec]) -> String {
    let mut out = String::from(
        "<ai_commands>\nYou act by writing actions. An action is a line of its own that starts with a slash and a verb, then its arguments; everything else you write is ordinary text for the people you work with.\n\nVerbs you can use (write each as slash + verb):",
    );
    for v in verbs {
        out.push_str(&format!("\n  {}: {}", v.verb.name(), v.summary));
    }
    out.push_str(
        "\n\nChain actions with -> between them: each one sees the result of the one before.\nAn action may end with a marker: a full stop for routine, ? to ask for a check, ?ask to ask the partner first, ! when it is serious.\nYou see each action's result before you carry on.",
    );
    let examples: Vec<&str> = FULL_EXAMPLES
        .iter()
        .filter(|e| usable(verbs, e.verbs))
        .map(|e| e.line)
        .collect();
    if !examples.is_empty() {
        out.push_str("\n\nExamples of action lines:");
        for line in examples {
            out.push('\n');
            out.push_str(line);
        }
    }
    out.push_str("\n</ai_commands>");
    out
}

/// The compact profile names the everyday verbs the agent may use (the
/// verb table says which: `VerbSpec::everyday`), the constellation's own
/// verbs among them.
fn compact(verbs: &[&VerbSpec]) -> String {
    let names: Vec<&str> = verbs
        .iter()
        .filter(|v| v.everyday)
        .map(|v| v.verb.name())
        .collect();
    let mut out = format!(
        "<actions>\nTo act, write a line that starts with a slash and a verb. Other text is just talk.\nVerbs: {}.\nEnd a line with ? to have it checked, ?ask to ask the partner, ! if serious.",
        names.join(", ")
    );
    let steps: Vec<&Demo> = DEMO.iter().filter(|d| usable(verbs, d.verbs)).collect();
    if !steps.is_empty() {
        out.push_str("\n\nFor example:");
        for d in steps {
            out.push_str(&format!(
                "\npartner: {}\nyou: {}\n{}",
                d.said, d.answer, d.line
            ));
        }
    }
    out.push_str("\n</actions>");
    out
}

fn tools_instructions() -> String {
    "<actions>\nTo act, call the tools you are given: each is one action, with its arguments written as they would follow the verb (for recall: insert \"text\", a label to read, or \"a query\"). Everything you write as text is for the people you work with. You see each action's result before you carry on.\n</actions>".into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use partner_dialect::VerbTable;

    #[test]
    fn instructions_name_only_the_usable_verbs() {
        let table = VerbTable::builtin();
        let verbs: Vec<&VerbSpec> = table
            .specs()
            .iter()
            .filter(|s| matches!(s.verb.name(), "recall" | "reply"))
            .collect();
        let full = instructions(Profile::Full, ActionFormat::Dialect, &verbs);
        assert!(full.contains("  recall: long-term memory") && full.contains("  reply: "));
        assert!(!full.contains("approve") && !full.contains("/post"));
        let compact = instructions(Profile::Compact, ActionFormat::Dialect, &verbs);
        assert!(compact.contains("Verbs: recall, reply."), "{compact}");
        assert!(compact.contains("Mira") && !compact.contains("garden"));
        let all: Vec<&VerbSpec> = table.specs().iter().collect();
        let compact = instructions(Profile::Compact, ActionFormat::Dialect, &all);
        assert!(
            !compact.contains("batch") && compact.contains("approve"),
            "{compact}"
        );
    }
}
