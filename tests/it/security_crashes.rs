//! Input that used to bring partner down: deep `/calc` nesting (a stack
//! overflow aborts the process), times that overflow, durations no clock
//! can hold, quadratic parsing, and replies too large to read. Each must be
//! one failed action, a clear message, or a bounded cost — never an abort,
//! a panic, a hang or unbounded memory.

use crate::support;
use support::output_text as text;
use support::partner_output as partner;

use std::time::{Duration, Instant};

use partner::engine::exec::{ActionStatus, TurnContext};
use partner::policy::Policy;
use support::rig;

fn nested(depth: usize) -> String {
    format!("/calc {}1{}", "(".repeat(depth), ")".repeat(depth))
}

#[test]
fn deep_calc_nesting_is_one_failed_action() {
    let dir = tempfile::tempdir().unwrap();
    for depth in [65, 250, 300, 1000, 100_000] {
        let out = partner(
            dir.path(),
            &["exec", "--db", "c.db", "--agent", "ada", "-"],
            &nested(depth),
        );
        assert_eq!(out.status.code(), Some(1), "{depth}: {}", text(&out));
        assert!(text(&out).contains("→ failed"), "{depth}: {}", text(&out));
    }
    // Other shapes that recurse in the calculator, within the length bound.
    for expr in [
        format!("/calc {}1", "-".repeat(1990)),
        format!("/calc {}2", "sqrt ".repeat(395)),
        format!("/calc {}2", "2^".repeat(990)),
        format!("/calc {}true", "not ".repeat(490)),
        format!("/calc {}1", "[".repeat(500)),
    ] {
        let out = partner(
            dir.path(),
            &["exec", "--db", "c.db", "--agent", "ada", "-"],
            &expr,
        );
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}: {}",
            &expr[..20],
            text(&out)
        );
    }
    // Within the bound it still calculates.
    let out = partner(
        dir.path(),
        &["exec", "--db", "c.db", "--agent", "ada", "-"],
        &nested(60),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn deep_calc_inside_a_batch_fails_only_its_member() {
    let r = rig(Policy::permissive());
    let mut ctx = TurnContext::new("ada", "main", "t");
    let turn = format!("/batch {{\n{}\n/recall insert \"kept\"\n}}", nested(250));
    let report = r.exec.run_turn(&mut ctx, &turn);
    let children = &report.actions[0].children;
    assert_eq!(children[0].status, ActionStatus::Failed, "{children:?}");
    assert_eq!(children[1].status, ActionStatus::Executed, "{children:?}");
}

#[test]
fn replaying_a_trace_with_deep_calc_does_not_abort() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A real trace line, then its calculation made a thousand deep, as a
    // hostile or damaged trace file could hold.
    let out = partner(
        d,
        &["exec", "--db", "c.db", "--agent", "ada", "-"],
        &nested(3),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let export = partner(d, &["trace", "export", "--db", "c.db"], "");
    let line = String::from_utf8(export.stdout).unwrap();
    let mut record: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    let deep = nested(1000);
    record["canonical"] = serde_json::Value::String(format!(
        "/calc {}",
        partner::dialect::quote(&deep["/calc ".len()..])
    ));
    record["text"] = serde_json::Value::String(deep);
    std::fs::write(d.join("t.jsonl"), format!("{record}\n")).unwrap();
    let out = partner(d, &["replay", "--verify", "t.jsonl"], "");
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{:?}: {}",
        out.status,
        text(&out)
    );
}

#[test]
fn times_that_overflow_are_refused_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    for turn in [
        "/remind \"in 999999999999999 hours\" \"x\"",
        "[[REMIND: in 999999999999999 hours | x]]",
        "/remind \"in 9223372036854775807 weeks\" \"x\"",
        "/remind \"in 400000000y\" \"x\"",
        "/remind \"in -5 hours\" \"x\"",
        "/remind \"1970-01-01T00:00:00Z\" \"x\"",
        "/remind \"in 11 years\" \"x\"",
        "/pulse 400000000y",
    ] {
        let out = partner(
            dir.path(),
            &["exec", "--db", "c.db", "--agent", "ada", "-"],
            turn,
        );
        assert_eq!(out.status.code(), Some(1), "{turn}: {}", text(&out));
        let said = text(&out);
        assert!(
            said.contains("failed") || said.contains("error"),
            "{turn}: {said}"
        );
        assert!(!said.contains("panicked"), "{turn}: {said}");
    }
    // A failing reminder costs only itself: the rest of the turn runs.
    let r = rig(Policy::permissive());
    let mut ctx = TurnContext::new("ada", "main", "t");
    let report = r.exec.run_turn(
        &mut ctx,
        "/remind \"in 999999999999999 hours\" \"x\"\n/recall insert \"still stored\"",
    );
    assert_eq!(report.actions[0].status, ActionStatus::Failed);
    assert_eq!(report.actions[1].status, ActionStatus::Executed);
}

#[test]
fn durations_from_configs_and_the_command_line_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The database the commands below read.
    support::made_database(d);
    std::fs::write(d.join("p.toml"), "request_timeout = \"400000000y\"\n").unwrap();
    let out = partner(
        d,
        &[
            "exec",
            "--db",
            "c.db",
            "--policy",
            "p.toml",
            "--agent",
            "a",
            "/recall x",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("too long"), "{}", text(&out));
    assert_eq!(text(&out).lines().count(), 1, "{}", text(&out));

    let out = partner(
        d,
        &[
            "pending",
            "--db",
            "c.db",
            "approve",
            "r1",
            "--for",
            "400000000y",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("too long"), "{}", text(&out));

    let out = partner(
        d,
        &[
            "run",
            "--headless",
            "--demo",
            "--db",
            "d.db",
            "--for",
            "400000000y",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("too long"), "{}", text(&out));

    let config = "[[agents]]\nname = \"a\"\nmodel = \"scripted:x\"\npulse = \"400000000y\"\n[providers.scripted]\nkind = \"scripted\"\n";
    let Err(err) = partner::runtime::ConstellationConfig::from_toml(config, "t", d, None, Some(""))
    else {
        panic!("a pulse of 400000000y was accepted");
    };
    assert!(err.to_string().contains("too long"), "{err}");

    // Times far outside what can be written still format.
    for ms in [i64::MIN, -1, 0, i64::MAX] {
        assert!(!partner::core::clock::format_time(ms).is_empty());
    }
}

/// The median of three timings of `f`.
fn median(mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[1]
}

/// Input shapes that once made parsing quadratic, and others like them.
pub const WORST_SHAPES: &[(&str, &str)] = &[
    ("unclosed fence", "/recall ```\n"),
    ("unclosed tildes", "/recall ~~~\n"),
    ("unclosed triple quote", "/recall \"\"\"\n"),
    ("triple quotes on one line", "/reply \"\"\" "),
    ("fences on one line", "/reply ``` "),
    ("legacy openers", "[[A:"),
    ("legacy search openers", "[[SEARCH:"),
    ("legacy commands on one line", "[[PULSE:10m]] "),
    ("unclosed quotes on one line", "/reply \"a "),
    ("curly quotes on one line", "/reply \u{201C}a "),
    ("chain links", "/recall x -> "),
    ("failing chain links", "/aaaa -> "),
    ("nested batches", "/batch {\n"),
    ("do prefixes", "x /do /recall y "),
    ("block quotes", "/reply\n> q\n> q\n"),
    ("long verb", "a"),
];

#[test]
fn parsing_is_linear_in_its_input() {
    let parser = partner::dialect::DialectParser::new();
    for (name, unit) in WORST_SHAPES {
        let make = |size: usize| {
            let prefix = if *name == "long verb" { "/" } else { "" };
            format!("{prefix}{}", unit.repeat(size / unit.len() + 1))
        };
        let (small, large) = (make(20_000), make(200_000));
        let t_small = median(|| {
            std::hint::black_box(parser.parse(&small));
        });
        let t_large = median(|| {
            std::hint::black_box(parser.parse(&large));
        });
        // Ten times the input may cost at most about ten times the time; a
        // quadratic shape costs a hundred times. Very small timings are
        // noise, so a floor of a millisecond is used.
        let floor = Duration::from_millis(1);
        let ratio = t_large.max(floor).as_secs_f64() / t_small.max(floor).as_secs_f64();
        assert!(
            ratio < 30.0,
            "{name}: 20 KB took {t_small:?}, 200 KB took {t_large:?} (x{ratio:.1})"
        );
    }
}

/// Issue 28: `/search` time grew with the square of its words (64,000
/// words took 34 s on an empty database). A search reads a bounded number
/// of telling words and says it left the rest out; time grows at most
/// linearly.
#[test]
fn a_search_of_many_words_is_bounded_and_says_so() {
    let r = rig(Policy::permissive());
    let words = |n: usize| -> String {
        (0..n)
            .map(|i| format!("word{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let timed = |n: usize| {
        let mut ctx = TurnContext::new("ada", "t1", "main");
        let started = Instant::now();
        let report = r
            .exec
            .run_turn(&mut ctx, &format!("/search \"{}\"", words(n)));
        (started.elapsed(), report)
    };
    let (small, _) = timed(2_000);
    let (large, report) = timed(32_000);
    let action = &report.actions[0];
    assert_eq!(action.status, ActionStatus::Executed, "{action:?}");
    let head: String = action.text.chars().take(300).collect();
    assert!(action.text.contains("left out"), "{head}");
    assert!(action.text.len() < 1_000, "the query is echoed cut: {head}");
    assert!(
        large < small * 16 + Duration::from_millis(500) && large < Duration::from_secs(3),
        "2,000 words {small:?}, 32,000 words {large:?}"
    );
}
