//! The prompt profiles: each one's whole system prompt (snapshot, with its
//! estimated size), and the promise that a model echoing any of them —
//! the whole text — makes no action and no error.

use std::time::Duration;

use partner::dialect::{BlockRegistry, DialectParser, VerbSpec, VerbTable};
use partner::engine::exec::registry::Registry;
use partner::runtime::prompt::budget::estimate_tokens;
use partner::runtime::prompt::{ActionFormat, Profile, PromptInputs, example_lines, system_prompt};
use partner::store::memory::{Block, BlockKind, BlockPermission};

fn persona() -> Block {
    Block {
        id: 1,
        agent: "ada".into(),
        label: "persona".into(),
        kind: BlockKind::Core,
        description: "who you are".into(),
        value: "A careful research assistant.".into(),
        char_limit: 2000,
        permission: BlockPermission::Partner,
        pinned: false,
        shared: false,
        version: 1,
        created_at: 0,
        updated_at: 0,
    }
}

fn prompt(profile: Profile, format: ActionFormat, authority: bool) -> String {
    let registry = Registry::new(VerbTable::builtin()).unwrap();
    let verbs: Vec<&VerbSpec> = registry.verbs_for(authority);
    system_prompt(&PromptInputs {
        agent: "ada",
        partner: "Sam",
        blocks: &[persona()],
        intentions: &[],
        pulse: Duration::from_secs(600),
        verbs: &verbs,
        profile,
        format,
        now: 0,
    })
}

fn agent_parser() -> DialectParser {
    let mut blocks = BlockRegistry::new();
    blocks.add("persona", true);
    DialectParser::new()
        .with_blocks(blocks)
        .with_echoes(example_lines().map(str::to_string))
}

const PROFILES: [(&str, Profile, ActionFormat, bool); 4] = [
    ("full", Profile::Full, ActionFormat::Dialect, false),
    (
        "full_supervisor",
        Profile::Full,
        ActionFormat::Dialect,
        true,
    ),
    ("compact", Profile::Compact, ActionFormat::Dialect, false),
    ("tools", Profile::Full, ActionFormat::Tools, false),
];

#[test]
fn each_profile_reads_as_it_should() {
    for (name, profile, format, authority) in PROFILES {
        let text = prompt(profile, format, authority);
        let shown = format!("~{} tokens (estimate)\n\n{text}", estimate_tokens(&text));
        insta::assert_snapshot!(format!("profile_{name}"), shown);
    }
    let full = estimate_tokens(&prompt(Profile::Full, ActionFormat::Dialect, false));
    let compact = estimate_tokens(&prompt(Profile::Compact, ActionFormat::Dialect, false));
    assert!(
        compact * 3 < full * 2,
        "compact ({compact}) is well under full ({full})"
    );
}

#[test]
fn an_echoed_prompt_makes_no_action() {
    for (name, profile, format, authority) in PROFILES {
        let text = prompt(profile, format, authority);
        let parsed = agent_parser().parse(&text);
        assert!(
            parsed.actions.is_empty() && parsed.errors.is_empty(),
            "{name}: {:?} {:?}",
            parsed
                .actions
                .iter()
                .map(|a| a.canonical())
                .collect::<Vec<_>>(),
            parsed.errors
        );
        // Indented, quoted or as a list, it is still nothing.
        for wrap in ["  ", "> ", "- "] {
            let wrapped: String = text.lines().map(|l| format!("{wrap}{l}\n")).collect();
            let parsed = agent_parser().parse(&wrapped);
            assert!(
                parsed.live_actions().count() == 0,
                "{name} behind {wrap:?}: {:?}",
                parsed
                    .actions
                    .iter()
                    .map(|a| a.canonical())
                    .collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn only_the_example_lines_would_parse_without_the_echo_guard() {
    let text = prompt(Profile::Full, ActionFormat::Dialect, false);
    let parsed = DialectParser::new().parse(&text);
    let examples: Vec<&str> = example_lines().collect();
    assert!(
        !parsed.actions.is_empty(),
        "the examples teach real actions"
    );
    for action in &parsed.actions {
        let line = &text[action.span.start..action.span.end];
        assert!(
            examples.iter().any(|e| line.trim().starts_with(e.trim())),
            "{line:?} is not an example line"
        );
    }
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    // An example written by the agent inside other text is a real action.
    let parsed = agent_parser().parse("/recall project deadlines for March");
    assert_eq!(parsed.actions.len(), 1);
}

#[test]
fn suggestions_name_only_verbs_the_agent_may_use() {
    let registry = Registry::new(VerbTable::builtin()).unwrap();
    let worker: Vec<String> = registry
        .verbs_for(false)
        .iter()
        .map(|v| v.verb.name().to_string())
        .collect();
    let parser = DialectParser::new().with_usable_verbs(worker);
    for written in ["/repeat r1", "/aprove r1", "/dny r1", "/hault"] {
        let parsed = parser.parse(written);
        let message = parsed.errors[0].message();
        for strict in ["approve", "deny", "halt", "escalate"] {
            assert!(
                !message.contains(&format!("/{strict}")),
                "{written}: {message}"
            );
        }
    }
    // A supervisor is still told.
    let parsed = DialectParser::new().parse("/aprove r1");
    assert!(parsed.errors[0].message().contains("/approve"));
}
