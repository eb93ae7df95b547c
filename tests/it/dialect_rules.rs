//! The rules decided for the parser: what each field of an action holds,
//! markers, references, chains, batches, where actions start, cancellation,
//! errors, spans and alias collisions.

use crate::support;

use partner::dialect::{
    ActionOp, ContextEdit, Interval, Marker, RefKind, RefSlot, SearchFilters, Verb,
};
use support::dialect::{canon, first_error, parse};

fn one(src: &str) -> partner::dialect::ParsedAction {
    let turn = parse(src);
    assert!(turn.errors.is_empty(), "{src:?}: {:?}", turn.errors);
    assert_eq!(turn.actions.len(), 1, "{src:?}: {:?}", turn.actions);
    turn.actions.into_iter().next().unwrap()
}

#[test]
fn contract_fields_hold_the_decided_meanings() {
    let a = one("/recall append project_notes \"next\" ?");
    assert_eq!(
        (a.verb.clone(), a.op),
        (Verb::Recall, Some(ActionOp::Append))
    );
    assert_eq!(a.target.as_deref(), Some("project_notes"));
    assert_eq!(a.content.as_deref(), Some("next"));
    assert_eq!(a.marker, Some(Marker::Check));

    let a = one("/post bluesky \"hi\" ?public");
    assert_eq!(
        (a.marker, a.marker_note.as_deref()),
        (Some(Marker::Check), Some("public"))
    );

    let a = one("/deny r4 \"not during the launch\"");
    assert_eq!(
        (a.op, a.target.as_deref(), a.content.as_deref()),
        (
            Some(ActionOp::Once),
            Some("r4"),
            Some("not during the launch")
        )
    );
    let a = one("/approve r4 always");
    assert_eq!(a.op, Some(ActionOp::Always));
    let a = one("/halt \"runaway loop\" !");
    assert_eq!(
        (a.content.as_deref(), a.marker),
        (Some("runaway loop"), Some(Marker::Serious))
    );
    let a = one("/escalate r9 \"above my pay grade\"");
    assert_eq!(
        (a.target.as_deref(), a.content.as_deref()),
        (Some("r9"), Some("above my pay grade"))
    );

    let a = one("/fetch https://example.com");
    assert_eq!(a.op, Some(ActionOp::Markdown));
    let a = one("/data search inbox \"invoice\"");
    assert_eq!(
        (a.op, a.target.as_deref(), a.content.as_deref()),
        (Some(ActionOp::Search), Some("inbox"), Some("invoice"))
    );
    let a = one("/send @agent @entropy \"hi\"");
    assert_eq!(
        (a.domain(), a.target.as_deref()),
        (Some("agent"), Some("entropy"))
    );
    let a = one("/context swap scratch old_project");
    assert_eq!(
        (
            a.op,
            a.target.as_deref(),
            a.args.get::<ContextEdit>().and_then(|e| e.other.as_deref())
        ),
        (Some(ActionOp::Swap), Some("scratch"), Some("old_project"))
    );
    let a = one("/context persona \"curious\" -> \"very curious\"");
    assert_eq!(
        (
            a.args.get::<ContextEdit>().and_then(|e| e.old.as_deref()),
            a.content.as_deref()
        ),
        (Some("curious"), Some("very curious"))
    );
    assert!(a.chain.is_empty(), "the replace arrow is not a chain");
    let a = one("/pulse 1h 30m");
    assert_eq!(
        a.args.get::<Interval>().map(|every| every.duration_secs),
        Some(5400)
    );
    let a = one("/search in archival deadline > 2 weeks role:assistant");
    let filters = a.args.get::<SearchFilters>().expect("search filters");
    let time = filters.time.expect("time filter");
    assert!(time.older_than && time.amount == 2);
    assert_eq!(
        (a.domain(), filters.role.as_deref()),
        (Some("archival"), Some("assistant"))
    );
}

#[test]
fn every_marker() {
    for (src, marker, note) in [
        ("/reply ok", None, None),
        ("/reply ok .", Some(Marker::Routine), None),
        ("/reply ok ?", Some(Marker::Check), None),
        ("/reply ok ?ask", Some(Marker::Ask), None),
        ("/reply ok !", Some(Marker::Serious), None),
        ("/reply ok ?public", Some(Marker::Check), Some("public")),
        (
            "/post bluesky \"hi\"?public",
            Some(Marker::Check),
            Some("public"),
        ),
    ] {
        let a = one(src);
        assert_eq!(
            (a.marker, a.marker_note.as_deref()),
            (marker, note),
            "{src}"
        );
    }
}

#[test]
fn markers_inside_content_are_content() {
    let a = one("/post bluesky \"is this ok? yes!\"");
    assert_eq!(
        (a.marker, a.content.as_deref()),
        (None, Some("is this ok? yes!"))
    );
    let a = one("/reply really?");
    assert_eq!((a.marker, a.content.as_deref()), (None, Some("really?")));
    let a = one("/reply wow!");
    assert_eq!((a.marker, a.content.as_deref()), (None, Some("wow!")));
}

#[test]
fn references_stay_unresolved() {
    for (src, kind) in [
        ("/post bluesky @last ?", RefKind::Last),
        ("/post bluesky @last.message", RefKind::LastMessage),
        ("/post bluesky @last.output", RefKind::LastOutput),
        ("/summarize @thread", RefKind::Thread),
        ("/recall insert @parent", RefKind::Parent),
        (
            "/post bluesky @[at://did:plc:x/post/y]",
            RefKind::Uri("at://did:plc:x/post/y".into()),
        ),
        ("/reply that", RefKind::Implicit("that".into())),
        ("/post bluesky this", RefKind::Implicit("this".into())),
        ("/recall insert it", RefKind::Implicit("it".into())),
    ] {
        let a = one(src);
        assert_eq!(a.refs.len(), 1, "{src}");
        assert_eq!(
            (a.refs[0].kind.clone(), a.refs[0].slot),
            (kind, RefSlot::Content),
            "{src}"
        );
        assert_eq!(a.content, None, "{src}");
        let written = &src[a.refs[0].span.start..a.refs[0].span.end];
        assert!(
            written.starts_with('@') || ["that", "this", "it"].contains(&written),
            "{src}: {written}"
        );
    }
    let a = one("/reply that works for me");
    assert!(a.refs.is_empty());
    assert_eq!(a.content.as_deref(), Some("that works for me"));
    let a = one("/reply @parent \"agreed\"");
    assert_eq!(
        (a.refs[0].kind.clone(), a.refs[0].slot),
        (RefKind::Parent, RefSlot::Target)
    );
}

#[test]
fn chains_are_ordered_links() {
    let a = one("/recall meeting notes -> /summarize -> /tell @entropy");
    assert_eq!(a.verb, Verb::Recall);
    assert_eq!(a.op, Some(ActionOp::Read));
    let verbs: Vec<Verb> = a.chain.iter().map(|l| l.verb.clone()).collect();
    assert_eq!(verbs, vec![Verb::Summarize, Verb::Tell]);
    assert_eq!(a.chain[1].target.as_deref(), Some("entropy"));
    assert_eq!(
        a.canonical(),
        "/recall read meeting_notes -> /summarize -> /tell @entropy"
    );
    assert_eq!(
        a.span.end,
        "/recall meeting notes -> /summarize -> /tell @entropy".len()
    );
    // A chain may continue on the next line.
    let a = one("/search deadlines\n-> /tell @anchor");
    assert_eq!(a.chain.len(), 1);
    // An arrow inside quotes is content.
    let a = one("/reply \"a -> /b\"");
    assert!(a.chain.is_empty());
    assert_eq!(a.content.as_deref(), Some("a -> /b"));
}

#[test]
fn a_failing_link_fails_the_chain() {
    let turn = parse("/recall project_notes -> /aprove r1");
    assert!(turn.actions.is_empty());
    assert!(
        turn.errors[0].message().starts_with("link 2 of the chain"),
        "{}",
        turn.errors[0].message()
    );
}

/// A chain is bounded: one of more links than `MAX_CHAIN_LINKS` is one
/// error covering the whole chain (no link of it runs, and none leaks out
/// as an action of its own), and the line after it parses as usual.
#[test]
fn a_chain_longer_than_the_bound_is_one_error() {
    use partner::dialect::MAX_CHAIN_LINKS;
    let link = |n: usize| {
        let mut text = "/recall x".to_string();
        for _ in 1..n {
            text.push_str(" -> /recall x");
        }
        text
    };
    let at_bound = one(&link(MAX_CHAIN_LINKS));
    assert_eq!(at_bound.chain.len(), MAX_CHAIN_LINKS - 1);

    let long = link(MAX_CHAIN_LINKS + 1);
    let turn = parse(&format!("{long}\n/calc 1 + 1"));
    assert_eq!(turn.errors.len(), 1, "{:?}", turn.errors);
    let message = turn.errors[0].message();
    assert!(
        message.contains(&format!("more than {MAX_CHAIN_LINKS} links")),
        "{message}"
    );
    assert_eq!(turn.errors[0].span.start, 0);
    assert_eq!(turn.errors[0].span.end, long.len());
    assert_eq!(turn.actions.len(), 1, "{:?}", turn.actions);
    assert_eq!(turn.actions[0].verb, Verb::Calc);

    // Spread over lines, the same.
    let turn = parse(&link(MAX_CHAIN_LINKS * 3).replace(" -> ", "\n-> "));
    assert!(turn.actions.is_empty(), "{:?}", turn.actions);
    assert_eq!(turn.errors.len(), 1);
}

#[test]
fn a_reply_with_more_actions_than_the_bound_runs_none_of_them() {
    use partner::dialect::{MAX_ACTIONS, SegmentKind};
    let many = |n: usize| {
        (0..n)
            .map(|i| format!("/calc {i} + 1\n"))
            .collect::<String>()
    };
    let at_bound = parse(&many(MAX_ACTIONS));
    assert_eq!(at_bound.actions.len(), MAX_ACTIONS);
    assert!(at_bound.errors.is_empty(), "{:?}", at_bound.errors);

    // One more, with an error of its own and prose around: one error
    // over every action, none of them left to run.
    let text = format!("Here goes.\n/calc (\n{}Done.", many(MAX_ACTIONS + 1));
    let turn = parse(&text);
    assert!(
        turn.actions.is_empty(),
        "{} actions left",
        turn.actions.len()
    );
    assert_eq!(turn.errors.len(), 1, "{:?}", turn.errors);
    let message = turn.errors[0].message();
    assert!(
        message.contains(&format!("more than {MAX_ACTIONS} actions")),
        "{message}"
    );
    assert_eq!(turn.errors[0].span.start, text.find("/calc (").unwrap());
    assert_eq!(turn.errors[0].span.end, text.find("\nDone.").unwrap());
    // Every byte is still prose or the invalid actions, in order.
    let mut at = 0;
    for segment in &turn.segments {
        assert_eq!(segment.span.start, at, "{:?}", turn.segments);
        assert_ne!(segment.kind, SegmentKind::Action);
        if segment.kind == SegmentKind::Invalid {
            assert_eq!(segment.index, Some(0));
        }
        at = segment.span.end;
    }
    assert_eq!(at, text.len());
}

#[test]
fn batch_holds_one_action_per_line() {
    let src = "/batch {\n  /recall project_notes\n  /search conversations about project\n  /fetch https://project-docs.example.com\n}";
    let a = one(src);
    assert_eq!(a.verb, Verb::Batch);
    let inner: Vec<String> = a.batch.iter().map(|x| x.canonical()).collect();
    assert_eq!(
        inner,
        vec![
            "/recall read project_notes",
            "/search \"conversations about project\"",
            "/fetch https://project-docs.example.com",
        ]
    );
    assert_eq!(a.span.end, src.len());
    assert_eq!(
        a.canonical(),
        "/batch {\n/recall read project_notes\n/search \"conversations about project\"\n/fetch https://project-docs.example.com\n}"
    );
    let a = one("/batch {\n/reply hi\n} ?");
    assert_eq!(a.marker, Some(Marker::Check));
    let message = first_error("/batch {\n/recall project_notes\n");
    assert!(message.contains("never closed"), "{message}");
    assert!(first_error("/batch /recall x").contains("{"));
}

#[test]
fn content_forms() {
    let a = one("/post bluesky \"\"\"\nmulti-line\ncontent\n\"\"\"");
    assert_eq!(a.content.as_deref(), Some("multi-line\ncontent"));
    let a = one("/post bluesky ```\ncode block style\n```");
    assert_eq!(a.content.as_deref(), Some("code block style"));
    let a = one("/post bluesky\n> block quote\n> also works\nand then prose");
    assert_eq!(a.content.as_deref(), Some("block quote\nalso works"));
    let a = one("/post bluesky ?public\n> quoted post");
    assert_eq!(
        (a.content.as_deref(), a.marker_note.as_deref()),
        (Some("quoted post"), Some("public"))
    );
    let a = one(r#"/post bluesky "say \"hi\"\nthen \\ leave""#);
    assert_eq!(a.content.as_deref(), Some("say \"hi\"\nthen \\ leave"));
    let a = one("/post bluesky \u{201C}smart quotes\u{201D}");
    assert_eq!(a.content.as_deref(), Some("smart quotes"));
    let a = one("/post bluesky ```\nhi\n``` ?public");
    assert_eq!(
        (a.content.as_deref(), a.marker_note.as_deref()),
        (Some("hi"), Some("public"))
    );
    let a = one("/post bluesky \"\"\"\nhi\n\"\"\" ?public");
    assert_eq!(a.marker_note.as_deref(), Some("public"));
    let message = first_error("/post bluesky \"\"\"\nnever closed");
    assert!(message.contains("never closed"), "{message}");
}

#[test]
fn where_actions_start() {
    for src in [
        "- /search deadlines",
        "* /search deadlines",
        "+ /search deadlines",
        "1. /search deadlines",
        "2) /search deadlines",
        "**/search deadlines**",
        "*/search deadlines*",
        "__/search deadlines__",
        "   /search deadlines",
        "I'll check. /do /search deadlines",
        "/do /search deadlines",
    ] {
        assert_eq!(canon(src), vec!["/search \"deadlines\""], "{src}");
    }
    for src in [
        "I could /recall the notes but I won't.",
        "See https://example.com/recall/notes for details.",
        "/usr/local/bin/x is the binary.",
        "/tmp is where scratch files go",
        "/notes.txt holds them",
        "About 1/2 of the notes are stale.",
        "> /search deadlines",
        "```\n/recall project_notes\n```",
        "~~~\n/recall project_notes\n~~~",
        "Try `/recall project_notes` in a turn.",
        "Use `/do /recall x` like this.",
        "See [[Project Alpha]] for context.",
    ] {
        let turn = parse(src);
        assert!(
            turn.actions.is_empty() && turn.errors.is_empty(),
            "{src:?} gave {:?} {:?}",
            turn.actions,
            turn.errors
        );
    }
}

#[test]
fn the_wrapper_is_not_content() {
    let a = one("**/reply sounds good**");
    assert_eq!(a.content.as_deref(), Some("sounds good"));
    assert_eq!(a.span, partner::dialect::Span::new(2, 20));
}

#[test]
fn legacy_commands_count_only_in_prose() {
    let turn = parse("Let me look. [[SEARCH: hiking]] Then [[PULSE:10m]].");
    let got: Vec<String> = turn.actions.iter().map(|a| a.canonical()).collect();
    assert_eq!(got, vec!["/search \"hiking\"", "/pulse 10m"]);
    assert!(turn.actions.iter().all(|a| a.legacy));
    assert!(parse("```\n[[SEARCH: x]]\n```").actions.is_empty());
    let a = one("/reply \"I used [[SEARCH: x]] before\"");
    assert_eq!(a.verb, Verb::Reply);
    assert!(
        parse("[[NOPE: x]]").errors[0]
            .message()
            .contains("[[NOPE]]")
    );
}

#[test]
fn cancellation_phrases_cancel_the_nearest_action() {
    for phrase in [
        "Actually, never mind.",
        "nevermind",
        "Scratch that.",
        "Wait, don't.",
        "On second thought, no.",
        "Ignore that.",
        "Disregard.",
        "wait, don\u{2019}t",
    ] {
        let turn = parse(&format!(
            "/recall project_notes\n/post bluesky \"hi\"\n{phrase}"
        ));
        assert_eq!(turn.actions.len(), 2, "{phrase}");
        assert!(!turn.actions[0].cancelled, "{phrase}");
        assert!(turn.actions[1].cancelled, "{phrase}");
    }
    // Prose in between does not matter.
    let turn = parse("/post bluesky \"hi\"\nHmm, let me think about the tone.\nScratch that.");
    assert!(turn.actions[0].cancelled);
    // Before any action: nothing to cancel.
    let turn = parse("Never mind the noise.\n/post bluesky \"hi\"");
    assert!(!turn.actions[0].cancelled);
    // A chain and a batch are cancelled whole.
    let turn = parse("/recall project_notes -> /tell @anchor\nscratch that");
    assert!(turn.actions[0].cancelled && turn.actions[0].chain[0].cancelled);
    let turn = parse("/batch {\n/reply a\n/reply b\n}\nnever mind");
    assert!(turn.actions[0].cancelled && turn.actions[0].batch.iter().all(|a| a.cancelled));
    // Same-line text is part of the action, not a cancellation.
    let a = one("/reply never mind the weather");
    assert!(!a.cancelled);
}

#[test]
fn errors_for_missing_arguments_and_ambiguous_blocks() {
    assert!(first_error("/post").contains("/post needs a platform and a message"));
    assert!(first_error("/tell").contains("/tell needs an @agent"));
    assert!(first_error("/recall").contains("/recall needs a block label"));
    assert!(first_error("/fetch project notes").contains("not a web address"));
    assert!(first_error("/pulse soonish").contains("not an interval"));
    assert!(first_error("/send @entropy \"hi\"").contains("/tell @entropy"));
    let message = first_error("/recall delete notes");
    assert!(
        message.contains("multiple") || message.contains("several"),
        "{message}"
    );
    assert!(
        message.contains("meeting_notes") && message.contains("project_notes"),
        "{message}"
    );
    let message = first_error("/recall -notes");
    assert!(
        message.contains("meeting_notes or project_notes"),
        "{message}"
    );
    assert!(first_error("/do nothing").contains("/do must be followed by an action"));
}

#[test]
fn spans_point_at_the_parts() {
    use partner::dialect::PartKind;
    let src = "Sure.\n- /post bluesky \"hello\" ?public -> /tell @anchor \"posted\"\nDone.";
    let a = one(src);
    let text = |kind: PartKind| -> Vec<&str> {
        a.parts
            .iter()
            .filter(|p| p.kind == kind)
            .map(|p| &src[p.span.start..p.span.end])
            .collect()
    };
    assert_eq!(text(PartKind::Verb), vec!["/post"]);
    assert_eq!(text(PartKind::Argument), vec!["bluesky"]);
    assert_eq!(text(PartKind::Content), vec!["\"hello\""]);
    assert_eq!(text(PartKind::Marker), vec!["?public"]);
    assert_eq!(text(PartKind::ChainArrow), vec!["->"]);
    assert_eq!(
        &src[a.span.start..a.span.end],
        "/post bluesky \"hello\" ?public -> /tell @anchor \"posted\""
    );
    let link = &a.chain[0];
    assert_eq!(
        &src[link.span.start..link.span.end],
        "/tell @anchor \"posted\""
    );
}

#[test]
fn alias_collisions_resolve_by_argument() {
    assert_eq!(one("/remember scratch + \"x\"").verb, Verb::Context);
    assert_eq!(one("/remember project_notes + \"x\"").verb, Verb::Recall);
    assert_eq!(one("/remember \"a fact\"").op, Some(ActionOp::Insert));
    assert_eq!(one("/forget old_project").op, Some(ActionOp::Delete));
    assert_eq!(one("/get https://example.com").verb, Verb::Fetch);
    assert_eq!(one("/get example.org/docs").verb, Verb::Fetch);
    let a = one("/get project_notes");
    assert_eq!((a.verb.clone(), a.op), (Verb::Recall, Some(ActionOp::Read)));
}

/// Valid arguments for each verb, to try every alias of the table with.
fn sample_args(verb: &Verb) -> &'static str {
    match verb {
        Verb::Recall => "\"deadlines\"",
        Verb::Context => "scratch + \"x\"",
        Verb::Search => "deadlines",
        Verb::Send => "@user \"hi\"",
        Verb::Reply
        | Verb::Uncertain
        | Verb::Summarize
        | Verb::Halt
        | Verb::Web
        | Verb::Calc
        | Verb::Ask => "\"x\"",
        Verb::Post => "bluesky \"hi\"",
        Verb::Dm | Verb::Tell => "@alice \"hi\"",
        Verb::Fetch => "https://example.com",
        Verb::Data => "list",
        Verb::Approve | Verb::Deny | Verb::Escalate | Verb::Cancel => "r1",
        Verb::Remind => "\"tonight\" \"call\"",
        Verb::Complete | Verb::Dismiss => "3",
        Verb::Intentions | Verb::Batch | Verb::Custom(_) => "",
        Verb::Pulse => "10m",
        Verb::Shell => "df -h",
        Verb::Tool => "checklist milk",
    }
}

#[test]
fn every_alias_in_the_table_resolves_to_its_verb() {
    let mut tried = 0;
    for spec in partner::dialect::BUILTIN_VERBS {
        for (alias, _) in spec.aliases {
            if spec.verb == Verb::Batch {
                continue;
            }
            // Shared aliases are decided by the argument; try the argument
            // that selects this verb.
            let args = match (*alias, &spec.verb) {
                ("remember", Verb::Recall) => "\"a fact\"",
                ("get", Verb::Recall) => "project_notes",
                ("patch", Verb::Recall) => "project_notes \"-a\\n+b\"",
                _ => sample_args(&spec.verb),
            };
            let src = format!("/{alias} {args}");
            let a = one(&src);
            assert_eq!(a.verb, spec.verb, "{src}");
            // Written with underscores it is the same phrase.
            let a = one(&format!("/{} {args}", alias.replace(' ', "_")));
            assert_eq!(a.verb, spec.verb, "{src} with underscores");
            tried += 1;
        }
    }
    assert!(tried >= 44, "only {tried} aliases tried");
}

#[test]
fn patch_is_a_recall_alias_and_batches_do_not_chain() {
    assert_eq!(
        canon("/patch project_notes \"-a\\n+b\""),
        vec!["/recall patch project_notes \"-a\\n+b\""]
    );
    assert!(
        first_error("/recall project_notes -> /batch {\n/reply x\n}")
            .contains("cannot be part of a chain")
    );
    // An arrow followed by a path is not a chain.
    let a = one("/reply see -> /usr/bin");
    assert!(a.chain.is_empty());
    assert_eq!(a.content.as_deref(), Some("see -> /usr/bin"));
}
