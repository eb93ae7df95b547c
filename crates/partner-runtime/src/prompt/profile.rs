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

/// At most this many tokens (estimated) of MCP tools in a prompt's verb
/// list; `/tools` lists the rest.
pub const MCP_TOOL_TOKENS: usize = 600;
/// An MCP tool's summary in the verb list is cut to this many characters.
const MCP_SUMMARY: usize = 100;

fn is_mcp_tool(v: &VerbSpec) -> bool {
    matches!(v.action, Some(partner_dialect::CustomAction::Mcp { .. }))
}

/// The MCP tools' lines of the verb list: as many as fit
/// [`MCP_TOOL_TOKENS`], each summary cut, then how many more `/tools`
/// lists.
fn mcp_tools(tools: &[&VerbSpec]) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for v in tools {
        let summary: String = v.summary.chars().take(MCP_SUMMARY).collect();
        let cut = if summary.len() < v.summary.len() {
            "…"
        } else {
            ""
        };
        let line = format!("\n  {}: {summary}{cut}", v.verb.name());
        if super::budget::estimate_tokens(&(out.clone() + &line)) > MCP_TOOL_TOKENS {
            break;
        }
        out.push_str(&line);
        shown += 1;
    }
    if shown < tools.len() {
        out.push_str(&format!(
            "\n  …and {} more tools: /tools lists every tool you may use, with its arguments",
            tools.len() - shown
        ));
    }
    out
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
    let (tools, own): (Vec<&VerbSpec>, Vec<&VerbSpec>) = verbs.iter().partition(|v| is_mcp_tool(v));
    for v in own {
        out.push_str(&format!("\n  {}: {}", v.verb.name(), v.summary));
    }
    out.push_str(&mcp_tools(&tools));
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
    let mut names: Vec<String> = verbs
        .iter()
        .filter(|v| v.everyday && !is_mcp_tool(v))
        .map(|v| v.verb.name().to_string())
        .collect();
    // MCP tools by name, within their share; `/tools` names the rest.
    let tools: Vec<&str> = verbs
        .iter()
        .filter(|v| is_mcp_tool(v))
        .map(|v| v.verb.name())
        .collect();
    let mut used = 0;
    let mut shown = 0;
    for name in &tools {
        used += super::budget::estimate_tokens(name) + 1;
        if used > MCP_TOOL_TOKENS / 3 {
            break;
        }
        names.push(name.to_string());
        shown += 1;
    }
    if shown < tools.len() {
        names.push(format!(
            "{} more tools (/tools lists them)",
            tools.len() - shown
        ));
    }
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
    use crate::prompt::budget::estimate_tokens;
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

    fn tool(server: &str, i: usize) -> VerbSpec {
        VerbSpec {
            verb: partner_dialect::Verb::Custom(format!("{server}.tool_{i}")),
            strictness: partner_dialect::Strictness::Strict,
            everyday: true,
            aliases: Vec::new(),
            summary: format!(
                "path=… [depth=…] — {}",
                "does a thing with files ".repeat(8)
            ),
            shape: partner_dialect::Shape(&partner_dialect::args::TEXT),
            action: Some(partner_dialect::CustomAction::Mcp {
                server: server.into(),
                tool: format!("tool_{i}"),
            }),
        }
    }

    #[test]
    fn many_mcp_tools_take_their_share_of_the_prompt_and_tools_lists_the_rest() {
        let table = VerbTable::builtin();
        let tools: Vec<VerbSpec> = (0..128).map(|i| tool("fs", i)).collect();
        let mut verbs: Vec<&VerbSpec> = table.specs().iter().collect();
        let without = estimate_tokens(&instructions(Profile::Full, ActionFormat::Dialect, &verbs));
        verbs.extend(tools.iter());
        let full = instructions(Profile::Full, ActionFormat::Dialect, &verbs);
        let added = estimate_tokens(&full) - without;
        assert!(added <= MCP_TOOL_TOKENS + 30, "{added} tokens of tools");
        let shown = full.matches("\n  fs.tool_").count();
        assert!(shown >= 5, "only {shown} tools shown");
        assert!(
            full.contains(&format!("…and {} more tools: /tools", 128 - shown)),
            "{full}"
        );
        let compact = instructions(Profile::Compact, ActionFormat::Dialect, &verbs);
        assert!(
            compact.contains("more tools (/tools lists them)"),
            "{compact}"
        );
        // A few tools fit whole, and nothing says more.
        let few: Vec<&VerbSpec> = tools.iter().take(3).collect();
        let full = instructions(Profile::Full, ActionFormat::Dialect, &few);
        assert_eq!(full.matches("\n  fs.tool_").count(), 3);
        assert!(!full.contains("more tools"));
    }
}
