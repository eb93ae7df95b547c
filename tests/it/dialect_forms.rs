//! Table-driven tests: every form in the dialect seed's tables and examples,
//! and every alias and how verbs are matched. Each row is an agent line and
//! the canonical form it must parse to (the canonical form spells out verb,
//! op, target, content, marker and filters). The rules decided for the
//! parser are in `dialect_rules.rs`.

use crate::support;

use support::dialect::{canon, check_table, first_error};

#[test]
fn recall_forms_from_the_seed_table() {
    check_table(&[
        ("/recall project_notes", "/recall read project_notes"),
        ("/recall \"fuzzy query\"", "/recall \"fuzzy query\""),
        ("/recall + \"content\"", "/recall insert \"content\""),
        (
            "/recall project_notes + \"content\"",
            "/recall append project_notes \"content\"",
        ),
        ("/recall -project_notes", "/recall delete project_notes"),
        ("/recall - project_notes", "/recall delete project_notes"),
        (
            "/recall patch project_notes ```diff\n-old line\n+new line\n```",
            "/recall patch project_notes \"-old line\\n+new line\"",
        ),
        (
            "/recall user mentioned project deadlines",
            "/recall \"user mentioned project deadlines\"",
        ),
        ("/recall project notes", "/recall read project_notes"),
        ("/recall Project-Notes", "/recall read project_notes"),
        ("/recall notes", "/recall \"notes\""),
    ]);
}

#[test]
fn recall_subcommands() {
    check_table(&[
        (
            "/recall insert \"launch moved to May\"",
            "/recall insert \"launch moved to May\"",
        ),
        ("/recall add \"x\"", "/recall insert \"x\""),
        ("/recall save \"x\"", "/recall insert \"x\""),
        (
            "/recall insert launch_log \"moved to May\"",
            "/recall insert launch_log \"moved to May\"",
        ),
        (
            "/recall append project_notes \"next: ship\"",
            "/recall append project_notes \"next: ship\"",
        ),
        ("/recall read project_notes", "/recall read project_notes"),
        ("/recall get project_notes", "/recall read project_notes"),
        ("/recall check project_notes", "/recall read project_notes"),
        ("/recall show meeting notes", "/recall read meeting_notes"),
        ("/recall read unknown thing", "/recall \"unknown thing\""),
        (
            "/recall delete project_notes",
            "/recall delete project_notes",
        ),
        ("/recall remove old_project", "/recall delete old_project"),
        ("/recall delete brand_new", "/recall delete brand_new"),
        (
            "/recall patch project_notes \"@@ -1 +1 @@\"",
            "/recall patch project_notes \"@@ -1 +1 @@\"",
        ),
        (
            "/recall edit project_notes \"-a\\n+b\"",
            "/recall patch project_notes \"-a\\n+b\"",
        ),
        ("/recall search deadlines", "/recall \"deadlines\""),
    ]);
}

#[test]
fn recall_aliases() {
    check_table(&[
        (
            "/remember \"user likes tea\"",
            "/recall insert \"user likes tea\"",
        ),
        (
            "/remember the user likes tea",
            "/recall insert \"the user likes tea\"",
        ),
        ("/store \"a fact\"", "/recall insert \"a fact\""),
        ("/save \"a fact\"", "/recall insert \"a fact\""),
        (
            "/archive \"the old plan\"",
            "/recall insert \"the old plan\"",
        ),
        ("/forget project_notes", "/recall delete project_notes"),
        ("/get project_notes", "/recall read project_notes"),
        (
            "/remember project_notes + \"more\"",
            "/recall append project_notes \"more\"",
        ),
        ("/save project_notes", "/recall read project_notes"),
    ]);
}

#[test]
fn context_forms_from_the_seed_table() {
    check_table(&[
        (
            "/context human + \"prefers mornings\"",
            "/context append human \"prefers mornings\"",
        ),
        (
            "/context persona \"curious\" -> \"very curious\"",
            "/context replace persona \"curious\" -> \"very curious\"",
        ),
        ("/context archive scratch", "/context archive scratch"),
        ("/context load old_project", "/context load old_project"),
        (
            "/context swap scratch old_project",
            "/context swap scratch old_project",
        ),
        ("/context append human \"x\"", "/context append human \"x\""),
        (
            "/context replace persona \"a\" \"b\"",
            "/context replace persona \"a\" -> \"b\"",
        ),
        (
            "/context scratch \"call Bob\"",
            "/context append scratch \"call Bob\"",
        ),
        (
            "/note scratch \"call Bob\"",
            "/context append scratch \"call Bob\"",
        ),
        (
            "/update persona \"a\" -> \"b\"",
            "/context replace persona \"a\" -> \"b\"",
        ),
        (
            "/remember scratch + \"buy milk\"",
            "/context append scratch \"buy milk\"",
        ),
        (
            "/remember human \"likes tea\"",
            "/context append human \"likes tea\"",
        ),
    ]);
}

#[test]
fn search_forms_from_the_seed_table() {
    check_table(&[
        ("/search query terms", "/search \"query terms\""),
        ("/search in archival query", "/search in archival \"query\""),
        (
            "/search in conversations query",
            "/search in conversations \"query\"",
        ),
        (
            "/search in constellation query",
            "/search in constellation \"query\"",
        ),
        ("/search in all query", "/search in all \"query\""),
        ("/search everywhere query", "/search in all \"query\""),
        ("/search query > 2 weeks", "/search \"query\" > 2 weeks"),
        ("/search query < 3 days", "/search \"query\" < 3 days"),
        ("/search query >2w", "/search \"query\" > 2 weeks"),
        (
            "/search query role:assistant",
            "/search \"query\" role:assistant",
        ),
        (
            "/search in conversations project deadline > 1 month role:user",
            "/search in conversations \"project deadline\" > 1 month role:user",
        ),
        ("/find deadlines", "/search \"deadlines\""),
        ("/query deadlines", "/search \"deadlines\""),
        ("/look deadlines", "/search \"deadlines\""),
        ("/lookup deadlines", "/search \"deadlines\""),
    ]);
}

#[test]
fn communication_forms_from_the_seed() {
    check_table(&[
        (
            "/send @agent @entropy \"can you help break this down?\"",
            "/send @agent @entropy \"can you help break this down?\"",
        ),
        (
            "/send @bluesky @at://did:plc:xxx/post/yyy \"replying here\"",
            "/send @bluesky @at://did:plc:xxx/post/yyy \"replying here\"",
        ),
        (
            "/send @discord @general \"hey everyone\"",
            "/send @discord @general \"hey everyone\"",
        ),
        (
            "/send @user \"here's what I found\"",
            "/send @user \"here's what I found\"",
        ),
        ("/reply sounds good .", "/reply \"sounds good\" ."),
        ("/reply sounds good to me", "/reply \"sounds good to me\""),
        ("/respond on it", "/reply \"on it\""),
        (
            "/post bluesky \"thoughts on this\" ?public",
            "/post bluesky \"thoughts on this\" ?public",
        ),
        (
            "/publish discord \"release notes\"",
            "/post discord \"release notes\"",
        ),
        (
            "/dm @user \"private info\" ?",
            "/dm @user \"private info\" ?",
        ),
        ("/pm @alice \"hi\"", "/dm @alice \"hi\""),
        (
            "/tell @anchor \"should I do this?\" ?ask",
            "/tell @anchor \"should I do this?\" ?ask",
        ),
    ]);
}

#[test]
fn external_and_utility_forms_from_the_seed() {
    check_table(&[
        ("/fetch https://example.com", "/fetch https://example.com"),
        (
            "/fetch https://example.com html",
            "/fetch https://example.com html",
        ),
        ("/fetch continue", "/fetch continue"),
        (
            "/get https://example.com/page",
            "/fetch https://example.com/page",
        ),
        ("/web rust async patterns", "/web \"rust async patterns\""),
        (
            "/web site:docs.rs tokio runtime",
            "/web \"site:docs.rs tokio runtime\"",
        ),
        ("/search web rust async", "/web \"rust async\""),
        ("/google tokio select", "/web \"tokio select\""),
        ("/look up tokio select", "/web \"tokio select\""),
        ("/look_up tokio select", "/web \"tokio select\""),
        ("/calc 5 feet to meters", "/calc \"5 feet to meters\""),
        (
            "/calc radius = 5; pi * radius^2",
            "/calc \"radius = 5; pi * radius^2\"",
        ),
        ("/calc 20% of 350", "/calc \"20% of 350\""),
        ("/calculate 2 + 2", "/calc \"2 + 2\""),
        ("/compute 3 * 7", "/calc \"3 * 7\""),
        ("/math 10 / 4", "/calc \"10 / 4\""),
        ("/data list", "/data list"),
        ("/data read inbox", "/data read inbox"),
        (
            "/data search inbox \"invoice\"",
            "/data search inbox \"invoice\"",
        ),
        ("/data monitor inbox", "/data monitor inbox"),
        ("/data pause inbox", "/data pause inbox"),
    ]);
}

#[test]
fn authority_forms_from_the_seed() {
    check_table(&[
        ("/approve r1", "/approve r1"),
        ("/approve r1 always", "/approve r1 always"),
        ("/approve [abc]", "/approve [abc]"),
        ("/allow r1", "/approve r1"),
        ("/permit r1", "/approve r1"),
        ("/ok r1", "/approve r1"),
        ("/yes r1", "/approve r1"),
        ("/deny r1", "/deny r1"),
        ("/deny r1 \"too risky\"", "/deny r1 \"too risky\""),
        ("/deny r1 too risky", "/deny r1 \"too risky\""),
        ("/deny r1 always", "/deny r1 always"),
        ("/reject r1", "/deny r1"),
        ("/block r1", "/deny r1"),
        ("/no r1", "/deny r1"),
        ("/escalate r1", "/escalate r1"),
        (
            "/escalate r1 \"this needs human review\"",
            "/escalate r1 \"this needs human review\"",
        ),
        (
            "/escalate \"content seems political, above my pay grade\"",
            "/escalate \"content seems political, above my pay grade\"",
        ),
        ("/cancel", "/cancel"),
        ("/cancel r2", "/cancel r2"),
        ("/abort r2", "/cancel r2"),
        ("/nevermind", "/cancel"),
        ("/stop", "/cancel"),
        (
            "/halt \"reason for emergency stop\" !",
            "/halt \"reason for emergency stop\" !",
        ),
        (
            "/uncertain \"this looks like sarcasm but I can't tell\"",
            "/uncertain \"this looks like sarcasm but I can't tell\"",
        ),
        ("/unsure \"sarcasm?\"", "/uncertain \"sarcasm?\""),
        ("/summarize", "/summarize"),
        ("/summarise @thread", "/summarize @thread"),
        ("/tldr", "/summarize"),
    ]);
}

#[test]
fn intention_verbs_and_legacy_commands() {
    check_table(&[
        (
            "/remind \"tomorrow morning\" \"check the build\"",
            "/remind \"tomorrow morning\" \"check the build\"",
        ),
        (
            "/remind in 20 minutes | stretch",
            "/remind \"in 20 minutes\" \"stretch\"",
        ),
        (
            "/remind me tonight \"call mom\"",
            "/remind \"tonight\" \"call mom\"",
        ),
        ("/complete 3 \"called them\"", "/complete 3 \"called them\""),
        ("/done 3", "/complete 3"),
        ("/dismiss 4", "/dismiss 4"),
        ("/intentions", "/intentions"),
        ("/reminders", "/intentions"),
        ("/pulse 30m", "/pulse 30m"),
        ("/pulse 1h 30m", "/pulse 1h 30m"),
        ("/pulse 45 minutes", "/pulse 45m"),
        (
            "[[SEARCH: hiking preferences]]",
            "/search \"hiking preferences\"",
        ),
        (
            "[[REMIND: in 20 minutes | check on the build]]",
            "/remind \"in 20 minutes\" \"check on the build\"",
        ),
        ("[[COMPLETE: 7 | shipped it]]", "/complete 7 \"shipped it\""),
        ("[[DISMISS: 7]]", "/dismiss 7"),
        ("[[LIST_INTENTIONS]]", "/intentions"),
        ("[[PULSE:10m]]", "/pulse 10m"),
        ("[[PULSE: 6h]]", "/pulse 6h"),
    ]);
}

#[test]
fn morphology_and_fuzzy_matching() {
    check_table(&[
        ("/searching deadlines", "/search \"deadlines\""),
        ("/searched deadlines", "/search \"deadlines\""),
        ("/recalled project_notes", "/recall read project_notes"),
        ("/told @anchor \"done\"", "/tell @anchor \"done\""),
        ("/fetches https://example.com", "/fetch https://example.com"),
        ("/RECALL project_notes", "/recall read project_notes"),
        ("/Search deadlines", "/search \"deadlines\""),
        ("/APPROVE r1", "/approve r1"),
        ("/serch deadlines", "/search \"deadlines\""),
        ("/seach deadlines", "/search \"deadlines\""),
        ("/recal project_notes", "/recall read project_notes"),
        ("/rcall project_notes", "/recall read project_notes"),
        ("/fecth https://example.com", "/fetch https://example.com"),
        ("/summarze", "/summarize"),
    ]);
}

#[test]
fn strict_verbs_never_match_fuzzily() {
    for (input, verb) in [
        ("/aprove r1", "approve"),
        ("/approved r1", "approve"),
        ("/dney r1", "deny"),
        ("/hlat \"x\" !", "halt"),
        ("/escalte r1", "escalate"),
    ] {
        let message = first_error(input);
        assert!(
            message.contains(&format!("/{verb}")) && message.contains("spelled exactly"),
            "{input}: {message}"
        );
    }
}

#[test]
fn loose_and_normal_thresholds_differ() {
    // Distance 2 is fine for loose verbs (recall) but not for normal ones (fetch).
    assert_eq!(
        canon("/rcal project_notes"),
        vec!["/recall read project_notes"]
    );
    let message = first_error("/faxch https://example.com");
    assert!(
        message.contains("I don't know the action /faxch"),
        "{message}"
    );
    assert!(message.contains("/fetch"), "suggests fetch: {message}");
    // Short words are never fuzzy-matched.
    assert!(first_error("/tel @anchor \"x\"").contains("/tell"));
}

#[test]
fn unknown_and_ambiguous_verbs_are_explained() {
    let message = first_error("/frobnicate the widget");
    assert!(
        message.starts_with("I don't know the action /frobnicate"),
        "{message}"
    );
    // `dote` is one edit from `note` (context) and from `done` (complete).
    let message = first_error("/dote 3");
    assert!(
        message.contains("I couldn't tell which action /dote meant"),
        "{message}"
    );
    assert!(
        message.contains("/complete") && message.contains("/context"),
        "{message}"
    );
}

// A dotted verb (an MCP tool's) is read as a verb only when the table
// knows it.
use partner::dialect::{CustomAction, DialectParser, Shape, Strictness, Verb, VerbSpec, VerbTable};

fn with_tool() -> VerbTable {
    let mut table = VerbTable::builtin();
    table
        .add(VerbSpec {
            verb: Verb::Custom("fs.read_file".into()),
            strictness: Strictness::Strict,
            everyday: true,
            aliases: Vec::new(),
            summary: "read a file".into(),
            shape: Shape(&partner::dialect::args::TEXT),
            action: Some(CustomAction::Mcp {
                server: "fs".into(),
                tool: "read_file".into(),
            }),
        })
        .expect("an MCP verb is added");
    table
}

#[test]
fn a_dotted_verb_the_table_knows_is_an_action_and_a_path_is_not() {
    let parser = DialectParser::new().with_table(with_tool());
    let turn = parser.parse("/fs.read_file path=\"notes.md\"\n-> /recall insert \"x\"");
    assert_eq!(turn.actions.len(), 1, "{:?}", turn.errors);
    let action = &turn.actions[0];
    assert_eq!(action.verb.name(), "fs.read_file");
    assert_eq!(action.content.as_deref(), Some("path=\"notes.md\""));
    assert_eq!(action.chain.len(), 1);
    for prose in [
        "/notes.txt is where it is",
        "/fs.write_file x",
        "see /fs.read_file",
    ] {
        let turn = parser.parse(prose);
        assert!(
            turn.actions.is_empty() && turn.errors.is_empty(),
            "{prose}: {:?} {:?}",
            turn.actions,
            turn.errors
        );
    }
    // Without the tool, the same line is a path.
    let plain = DialectParser::new().parse("/fs.read_file path=x");
    assert!(plain.actions.is_empty() && plain.errors.is_empty());
}
