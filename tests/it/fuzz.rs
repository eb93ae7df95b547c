//! The fuzz harness: random and mutated input for everything that reads
//! what agents, model servers and files write — the dialect parser, the
//! legacy bracket forms, `/calc`, time expressions, the trace reader,
//! the providers' server-sent-events reader and the parse gate's layers. Each target must return
//! (never panic, never hang) and keep its documented invariants.
//!
//! CI runs a few hundred cases per target. To fuzz for longer:
//!
//! ```sh
//! PARTNER_FUZZ_CASES=200000 cargo test --release --test it fuzz::
//! ```

use crate::support;

use partner::dialect::{DialectParser, SegmentKind};
use partner::engine::exec::TurnContext;
use partner::engine::exec::when::parse_due;
use partner::engine::net::Lines;
use partner::policy::Policy;
use partner::runtime::provider::SseParser;
use proptest::prelude::*;

/// Cases per target: `PARTNER_FUZZ_CASES`, or `default`.
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PARTNER_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Fragments of the dialect and of what breaks parsers, so random text
/// reaches deep into the grammar.
const FRAGMENTS: &[&str] = &[
    "/recall ",
    "/context ",
    "/search ",
    "/post bluesky ",
    "/tell @ada ",
    "/approve ",
    "/deny ",
    "/do ",
    "/batch {\n",
    "}\n",
    "->",
    " -> /",
    "\"",
    "\"\"\"",
    "```",
    "~~~",
    "\n",
    "> ",
    "[[",
    "]]",
    "[[SEARCH: ",
    "[[REMIND: ",
    " | ",
    "[[PULSE:",
    "[[APPROVE: ",
    "?",
    "?ask",
    "!",
    " . ",
    "r1",
    "#2",
    "[r3]",
    "@last",
    "@thread",
    "@[x]",
    "that",
    "+",
    "-",
    "insert ",
    "patch ",
    "(",
    ")",
    "\u{201C}",
    "\u{201D}",
    "\u{200B}",
    "\u{0301}",
    "**",
    "- ",
    "1. ",
    "`",
    "\t",
    "never mind",
    "/calc ",
    "/shell ",
    "/run ",
    "/shell\n```\n",
    "in 2 hours",
    "/usr/bin",
    "https://example.com",
    " ",
];

fn turn() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..60)
            .prop_map(|parts| parts.concat()),
        "\\PC{0,200}",
        "[ -~\n]{0,300}",
    ]
}

proptest! {
    #![proptest_config(cases(512))]

    /// The parser returns for any text, and its segments cover every byte
    /// once, in order.
    #[test]
    fn parser(text in turn()) {
        let turn = DialectParser::new().parse(&text);
        let mut at = 0;
        for segment in &turn.segments {
            prop_assert_eq!(segment.span.start, at);
            prop_assert!(segment.span.end > segment.span.start);
            prop_assert!(text.is_char_boundary(segment.span.end));
            at = segment.span.end;
        }
        prop_assert_eq!(at, text.len());
        let actions = turn.segments.iter().filter(|s| s.kind == SegmentKind::Action).count();
        prop_assert_eq!(actions, turn.actions.len());
        for action in &turn.actions {
            let _ = action.canonical();
        }
    }

    /// Bracket forms only ever yield the six legacy verbs, and never from
    /// inside quotes.
    #[test]
    fn legacy_forms(name in "[A-Z_]{1,20}", args in "[ -~]{0,40}", quote in any::<bool>()) {
        let body = format!("[[{name}: {args}]]");
        let text = if quote { format!("he said \"{body}\"") } else { body };
        let turn = DialectParser::new().parse(&text);
        for action in &turn.actions {
            if action.legacy {
                prop_assert!(!quote, "{text}");
                prop_assert!(
                    ["search", "remind", "complete", "dismiss", "intentions", "pulse"]
                        .contains(&action.verb.name()),
                    "{text} gave /{}", action.verb
                );
            }
        }
    }

    /// Time expressions never panic, and what they accept is in the future
    /// and at most ten years away.
    #[test]
    fn time_expressions(text in prop_oneof![
        "in -?[0-9]{1,25} (seconds|minutes|hours|days|weeks|years|h|m|d)",
        "in [0-9]{1,25}[smhdwy]",
        "[0-9]{4,6}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z",
        "\\PC{0,30}",
    ], now in 0i64..4_000_000_000_000) {
        if let Ok(due) = parse_due(&text, now)
            && let Some(at) = due.at
        {
            prop_assert!(at > now, "{text}");
            prop_assert!(at - now <= partner::core::clock::MAX_SPAN.as_millis() as i64, "{text}");
        }
        let _ = partner::core::clock::parse_span(&text);
        let _ = partner::dialect::interval(&text);
        let _ = partner::core::clock::format_time(now.wrapping_mul(1_000_003));
    }

    /// The trace reader takes any file: bad lines are warnings, not errors.
    #[test]
    fn trace_reader(lines in proptest::collection::vec(prop_oneof![
        "\\PC{0,80}",
        Just("{\"id\":\"t1\",\"seq\":1}".to_string()),
        Just("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[".to_string()),
        Just("{\"a\":".repeat(200)),
    ], 0..20)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        let read = partner::store::trace::read_trace(&path);
        prop_assert!(read.is_ok());
    }

    /// The SSE reader never holds a line past its bound and never panics,
    /// however the stream is cut into chunks.
    #[test]
    fn sse_reader(
        bytes in proptest::collection::vec(any::<u8>(), 0..4096),
        cuts in proptest::collection::vec(1usize..300, 1..20),
        max in 1usize..512,
    ) {
        let mut lines = Lines::new(max);
        let mut parser = SseParser::default();
        let mut rest = &bytes[..];
        'stream: for cut in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at((*cut).min(rest.len()));
            rest = tail;
            let Ok(complete) = lines.feed(chunk) else { break 'stream };
            for line in complete {
                // Invalid UTF-8 becomes U+FFFD, three bytes for each byte read.
                prop_assert!(line.len() <= 3 * max);
                let _ = parser.line(&line);
            }
        }
        let _ = parser.finish();
    }
}

/// One database for every `/calc` case.
static CALC_RIG: std::sync::LazyLock<support::Rig> =
    std::sync::LazyLock::new(|| support::rig(Policy::permissive()));

proptest! {
    #![proptest_config(cases(48))]

    /// `/calc` returns a result or a failure for any expression.
    #[test]
    fn calc(expr in prop_oneof![
        "[0-9+*/^() .a-z%-]{0,80}",
        proptest::collection::vec(proptest::sample::select(&[
            "(", ")", "[", "]", "-", "+", "2", "^", "sqrt ", "not ", "to ", "meters", "; ", "x = ", "x",
            "1e999999", "0x", "!", "%", "of ",
        ][..]), 0..120).prop_map(|p| p.concat()),
    ]) {
        let r = &*CALC_RIG;
        // A fresh agent each case, so no case inherits another's variables.
        static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let agent = format!("a{}", CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let mut ctx = TurnContext::new(&agent, "main", "t");
        let report = r.exec.run_turn(&mut ctx, &format!("/calc {}", partner::dialect::quote(&expr)));
        for action in report.actions {
            prop_assert!(action.status != partner::engine::exec::ActionStatus::Pending);
        }
    }
}

/// Pieces of shell and of replies around it, for the parse gate.
const SHELL: &[&str] = &[
    "rm",
    " -rf",
    " /",
    " ~",
    "$HOME",
    " *",
    "sudo ",
    "bash -c ",
    "sh",
    "'",
    "\"",
    "`",
    "$(",
    ")",
    "(",
    "{",
    "}",
    " | ",
    " && ",
    "; ",
    " > ",
    " < ",
    "<(",
    "/dev/sda",
    "dd if=x of=",
    "find / ",
    "-exec ",
    "\\;",
    " -delete",
    "xargs ",
    "echo ",
    "base64 -d",
    "curl x",
    ":(){ :|:& };:",
    "cd /",
    "X=/",
    "eval ",
    "\n",
    "```bash\n",
    "```\n",
    "Command: ",
    "$ ",
    "To do that, run ",
    "?",
    "please ",
    "install ",
    "get rid of ",
    "gimp",
    "\u{200B}",
    "\u{301}",
    "é",
];

proptest! {
    #![proptest_config(cases(256))]

    /// The gate's layers return for any text: the classifier says why
    /// whenever it is above low, extraction never invents text (every line
    /// of the command it takes stands in the input), and intent analysis
    /// and proposals return too.
    #[test]
    fn gate(text in prop_oneof![
        proptest::collection::vec(proptest::sample::select(SHELL), 0..40).prop_map(|p| p.concat()),
        "\\PC{0,120}",
    ]) {
        let a = partner::gate::assess(&text);
        prop_assert!(a.risk == partner::gate::Risk::Low || !a.reasons.is_empty());
        let e = partner::gate::extract(&text);
        if let Some(command) = &e.command {
            for line in command.lines() {
                prop_assert!(text.contains(line), "{line:?} is not in {text:?}");
            }
        } else {
            prop_assert!(e.reason.is_some());
        }
        let _ = partner::gate::analyze(&text);
        let probe = NoSystem;
        let p = partner::gate::propose::propose(&text, &probe);
        prop_assert_eq!(p.command.is_some(), p.safety.is_some());
    }
}

/// A machine where nothing is installed and no probe answers.
struct NoSystem;

impl partner::gate::context::Probe for NoSystem {
    fn executable(&self, _: &str) -> Option<std::path::PathBuf> {
        None
    }
    fn package(&self, _: &str) -> Option<partner::gate::context::PackageState> {
        None
    }
    fn unit(&self, _: &str) -> Option<partner::gate::context::UnitState> {
        None
    }
    fn similar(&self, _: &str) -> Vec<partner::gate::context::Similar> {
        Vec::new()
    }
}

/// Pieces of Pattern Lisp and of Gram, for the Lisp reader, evaluator and
/// codec.
const LISP: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "#{",
    "'",
    "\"",
    "\\",
    ";",
    "\n",
    " ",
    "#t",
    "#f",
    "1",
    "-2",
    "2.5",
    "1e9",
    "x",
    "name:",
    "lambda",
    "(lambda (x) ",
    "(define ",
    "(let ((a 1)) ",
    "(letrec ((f (lambda (n) ",
    "(if ",
    "(cond (",
    "else",
    "(and ",
    "(or ",
    "(begin ",
    "(quote ",
    "(+ ",
    "(/ ",
    "(car ",
    "(cdr ",
    "(cons ",
    "(list ",
    "(map ",
    "(filter ",
    "(fold ",
    "(string-append ",
    "(substring ",
    "(get ",
    "(assoc ",
    "(hash-set ",
    "(pattern ",
    "(pattern-with ",
    "(pattern-find ",
    "(subject-set ",
    "(value->pattern ",
    "(pattern->value ",
    "(f ",
    "(f (- n 1))",
    "9223372036854775807",
    "\u{e9}",
    "[:List | ",
    "(:Number {value: 1})",
    "]",
    "[:Closure {params: [\"x\"]} | ",
    "(:Primitive {name: \"+\"})",
];

proptest! {
    #![proptest_config(cases(300))]

    /// Any text, as a program, a serialized value or a tool, gives a value
    /// or an error of a named kind: never a panic, a hang or an overflow.
    #[test]
    fn lisp(text in prop_oneof![
        proptest::collection::vec(proptest::sample::select(LISP), 0..60).prop_map(|p| p.concat()),
        "\\PC{0,120}",
    ]) {
        let mut lisp = partner::lisp::Lisp::new();
        lisp.budget = 20_000;
        if let Ok(v) = lisp.eval_str(&text) {
            let _ = v.to_string();
            if let Ok(gram) = lisp.to_gram(&v) {
                prop_assert!(partner::lisp::codec::from_gram(&gram).is_ok(), "{gram}");
            }
        }
        let _ = partner::lisp::codec::from_gram(&text);
        let _ = partner::lisp::tool::validate("t", &text);
        let _ = partner::lisp::tool::state_from_gram(&text);
    }
}
