//! `partner eval` end to end: against the scripted provider (exact scores)
//! and against an OpenAI-compatible server on 127.0.0.1 that answers the
//! dialect mode with text and the tools mode with streamed tool calls.

use crate::support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::{Answer, streaming_server};

fn eval(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .arg("eval")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const TASKS: &str = r#"
[[tasks]]
id = "remember"
say = "Remember that Dana prefers email."
expect = [{ verb = "recall", op = "insert", has = ["Dana"] }]

[[tasks]]
id = "hello"
say = "Good morning!"

[[tasks]]
id = "post"
say = "Post the note on bluesky."
expect = [{ verb = "post", has = ["bluesky"] }]

[[tasks]]
id = "search"
say = "Search for the launch date."
expect = [{ verb = "recall", has = ["launch"] }]

[[tasks]]
id = "echo"
say = "Tell me how you act."
"#;

#[test]
fn scores_are_exact_against_the_scripted_provider() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("partner.toml"),
        "name = \"e\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"s.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\nprofile = \"compact\"\n",
    )
    .unwrap();
    let replies = [
        "Noted.\n/recall insert \"Dana prefers email\"",
        "Good morning to you too.",
        "/post bluesky \"the note\"\n/tell @scout \"posted\"",
        "/aprove r1",
        "I write actions like this:\n/recall project deadlines",
    ];
    let list: Vec<String> = replies
        .iter()
        .chain(replies.iter())
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    std::fs::write(
        d.join("s.toml"),
        format!("[agents.ada]\nreplies = [{}]\n", list.join(", ")),
    )
    .unwrap();
    std::fs::write(d.join("tasks.toml"), TASKS).unwrap();
    let (code, out, err) = eval(d, &["--tasks", "tasks.toml", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["model"], "scripted:x");
    assert_eq!(report["profile"], "compact");
    let modes = report["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2);
    for (mode, name) in modes.iter().zip(["dialect", "tools"]) {
        assert_eq!(mode["mode"], name);
        assert_eq!(mode["tasks"], 5);
        assert_eq!(mode["matched"], 3, "{name}: {mode:#}");
        // Scored apart: the action tasks are the headline.
        assert_eq!(
            (
                mode["action_matched"].as_u64(),
                mode["action_tasks"].as_u64()
            ),
            (Some(1), Some(3)),
            "{name}"
        );
        assert_eq!(
            (mode["words_matched"].as_u64(), mode["words_tasks"].as_u64()),
            (Some(2), Some(2)),
            "{name}"
        );
        assert_eq!(mode["accidental"], 1, "{name}");
        assert_eq!(mode["replies_with_parse_errors"], 1, "{name}");
        assert_eq!(mode["failed_calls"], 0);
        assert!(mode["tokens_in"].as_u64().unwrap() > 5 * 100, "{name}");
        let results = mode["results"].as_array().unwrap();
        let echo = results.iter().find(|r| r["id"] == "echo").unwrap();
        assert_eq!(echo["echoes"], 1, "an echoed example is ignored");
        assert_eq!(echo["matched"], true);
        let remember = results.iter().find(|r| r["id"] == "remember").unwrap();
        assert_eq!(
            remember["actions"],
            serde_json::json!(["/recall insert \"Dana prefers email\""])
        );
    }
    // The readable report.
    let (code, out, _) = eval(d, &["--tasks", "tasks.toml", "--mode", "dialect"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("scripted:x with the compact profile, 5 tasks"),
        "{out}"
    );
    assert!(out.contains("1/3 33%") && out.contains("2/2 100%"), "{out}");
    assert!(
        out.contains("post") && out.contains("/tell @scout"),
        "{out}"
    );
    // A model that never acts scores nothing where it counts.
    let never: Vec<String> = (0..10)
        .map(|_| serde_json::to_string("Sure, I can help with that.").unwrap())
        .collect();
    std::fs::write(
        d.join("s.toml"),
        format!("[agents.ada]\nreplies = [{}]\n", never.join(", ")),
    )
    .unwrap();
    let (_, out, _) = eval(d, &["--tasks", "tasks.toml", "--mode", "dialect"]);
    assert!(out.contains("0/3 0%") && out.contains("2/2 100%"), "{out}");
}

#[test]
fn the_shipped_task_set_loads_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("partner.toml"),
        "name = \"e\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"s.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\n",
    )
    .unwrap();
    std::fs::write(d.join("s.toml"), "[agents.ada]\nunexpected = \"Hello.\"\n").unwrap();
    let (code, out, err) = eval(d, &["--json", "--mode", "dialect"]);
    assert_eq!(code, Some(0), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let mode = &report["modes"][0];
    assert!(mode["tasks"].as_u64().unwrap() >= 30);
    // Words only: exactly the tasks that call for no action match.
    let wordless = mode["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["matched"] == true)
        .count();
    assert!((4..=8).contains(&wordless), "{wordless}");
    let (code, _, err) = eval(d, &["--mode", "sideways"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("dialect, tools or both"));
}

fn sse(value: Value) -> String {
    format!("data: {value}\n\n")
}

#[test]
fn a_real_wire_is_scored_in_both_modes() {
    let (base, seen) = streaming_server(|_, request| {
        if request.path != "/v1/chat/completions" {
            return Answer::status(404, "{}");
        }
        let body: Value = serde_json::from_str(&request.body).unwrap();
        if body.get("tools").is_some() {
            Answer::sse(vec![
                sse(serde_json::json!({"choices": [{"delta": {"tool_calls": [
                    {"index": 0, "id": "c1", "type": "function",
                     "function": {"name": "recall", "arguments": "{\"args\": \"insert "}}
                ]}}]})),
                sse(serde_json::json!({"choices": [{"delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": "\\\"Dana prefers email\\\"\"}"}}
                ]}}]})),
                sse(
                    serde_json::json!({"choices": [], "usage": {"prompt_tokens": 321, "completion_tokens": 9}}),
                ),
                "data: [DONE]\n\n".into(),
            ])
        } else {
            Answer::sse(vec![
                sse(
                    serde_json::json!({"choices": [{"delta": {"content": "Noted.\n/recall insert \"Dana prefers email\""}}]}),
                ),
                "data: [DONE]\n\n".into(),
            ])
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("partner.toml"),
        format!(
            "name = \"e\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"5s\"\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\ncontext = 4096\n"
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("tasks.toml"),
        "[[tasks]]\nid = \"remember\"\nsay = \"Remember that Dana prefers email.\"\nexpect = [{ verb = \"recall\", op = \"insert\", has = [\"Dana\"] }]\n",
    )
    .unwrap();
    let (code, out, err) = eval(d, &["--tasks", "tasks.toml", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    for mode in report["modes"].as_array().unwrap() {
        assert_eq!(mode["matched"], 1, "{mode:#}");
        assert_eq!(mode["accidental"], 0);
    }
    assert_eq!(
        report["modes"][1]["tokens_in"], 321,
        "the server's own count"
    );
    let bodies: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.path == "/v1/chat/completions")
        .map(|s| serde_json::from_str(&s.body).unwrap())
        .collect();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[0].get("tools").is_none());
    let names: Vec<&str> = bodies[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"recall") && names.contains(&"post"));
    assert!(
        !names.contains(&"approve"),
        "a worker is offered no authority verbs"
    );
    let system = bodies[1]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("call the tools"), "{system}");
}

#[test]
fn eval_shows_progress_says_how_to_start_and_fails_when_every_call_failed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // No partner.toml: a hint, not a bare file error.
    let (code, _, err) = support::partner_in(d, &["eval"], "");
    assert_eq!(code, Some(2));
    assert!(err.contains("--config") && err.contains("--demo"), "{err}");
    // The demo, offline: a line per task as it goes.
    let (code, out, err) = support::partner_in(d, &["eval", "--demo", "--mode", "dialect"], "");
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("dialect 1/"), "{err}");
    assert!(!out.is_empty());
    // A model server that is down: every call fails, and the exit says so.
    let port = support::closed_port();
    std::fs::write(
        d.join("partner.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nretries = 0\n[[agents]]\nname = \"ada\"\nmodel = \"local:m\"\n"
        ),
    )
    .unwrap();
    let (code, _, err) = support::partner_in(d, &["eval", "--mode", "dialect"], "");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("the call failed"), "{err}");
    assert!(err.contains("every one of the"), "{err}");
}

/// The eval sends the runtime's own prompt: for the same message, the
/// request body's system prompt and message are the runtime's, byte for
/// byte (the time in the message's context aside).
#[test]
fn the_eval_prompt_is_the_runtimes() {
    let (base, seen) = streaming_server(|_, request| {
        if request.path != "/v1/chat/completions" {
            return Answer::status(404, "{}");
        }
        Answer::sse(vec![
            sse(serde_json::json!({"choices": [{"delta": {"content": "Noted."}}]})),
            "data: [DONE]\n\n".into(),
        ])
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("partner.toml"),
        format!(
            "name = \"e\"\npartner = \"Sam\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"5s\"\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\npulse = \"30m\"\npersona = \"You keep the studio's notes.\"\nblocks = [{{ label = \"projects\", value = \"launch on Friday\" }}]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("tasks.toml"),
        "[[tasks]]\nid = \"remember\"\nsay = \"Remember that Dana prefers email.\"\n",
    )
    .unwrap();
    let (code, _, err) = support::headless(
        d,
        "2s",
        &["--message", "ada=Remember that Dana prefers email."],
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = eval(d, &["--tasks", "tasks.toml", "--mode", "dialect"]);
    assert_eq!(code, Some(0), "{err}");
    let bodies: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.path == "/v1/chat/completions")
        .map(|s| serde_json::from_str(&s.body).unwrap())
        .collect();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    // The time differs between the two runs; everything else may not.
    let untimed = |body: &Value| -> Vec<String> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let text = m["content"].as_str().unwrap_or("");
                match (
                    text.find("<temporal_context>"),
                    text.find("</temporal_context>"),
                ) {
                    (Some(a), Some(b)) => format!("{}{}", &text[..a], &text[b..]),
                    _ => text.to_string(),
                }
            })
            .collect()
    };
    let (runtime, evaluated) = (untimed(&bodies[0]), untimed(&bodies[1]));
    assert!(
        runtime[0].contains("You keep the studio's notes."),
        "{runtime:?}"
    );
    assert!(runtime[0].contains("Sam"), "{runtime:?}");
    assert_eq!(runtime, evaluated);
}

/// Where the server's chat template drops the tools (its `/apply-template`
/// shows none of them), tools mode is not scored, and the report says why;
/// dialect mode still is.
#[test]
fn tools_mode_is_not_scored_when_the_template_drops_the_tools() {
    let (base, seen) = streaming_server(|_, request| match request.path.as_str() {
        "/apply-template" => Answer::status(
            200,
            r#"{"prompt": "<|im_start|>system\nYou are ada.<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n"}"#,
        ),
        "/v1/chat/completions" => Answer::sse(vec![
            sse(serde_json::json!({"choices": [{"delta": {"content": "Noted."}}]})),
            "data: [DONE]\n\n".into(),
        ]),
        _ => Answer::status(404, "{}"),
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("partner.toml"),
        format!(
            "name = \"e\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"5s\"\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\n"
        ),
    )
    .unwrap();
    std::fs::write(d.join("tasks.toml"), TASKS).unwrap();
    let (code, out, err) = eval(d, &["--tasks", "tasks.toml", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let modes: Vec<&str> = report["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["dialect"], "{report:#}");
    assert!(
        report["refused"][0]
            .as_str()
            .is_some_and(|r| r.contains("drops the") && r.contains("/apply-template")),
        "{report:#}"
    );
    // No chat call went out with tools.
    assert!(
        !seen
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.path == "/v1/chat/completions" && s.body.contains("\"tools\"")),
    );
    let (code, _, err) = eval(d, &["--tasks", "tasks.toml", "--mode", "tools"]);
    assert_eq!(code, Some(1), "nothing was scored");
    assert!(err.contains("tools mode was not scored"), "{err}");
}

/// `partner eval --demo` shows what each column counts: its scripted
/// model is right on some tasks and not others, in both modes, quickly.
#[test]
fn the_demo_eval_shows_every_column_counting_something() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let (code, out, err) = support::partner_in(dir.path(), &["eval", "--demo", "--json"], "");
    assert_eq!(code, Some(0), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let report: Value = serde_json::from_str(&out).unwrap();
    let modes = report["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2, "both modes");
    for m in modes {
        let n = |k: &str| m[k].as_u64().unwrap();
        assert_eq!((n("action_matched"), n("action_tasks")), (10, 27), "{m}");
        assert_eq!((n("words_matched"), n("words_tasks")), (5, 6), "{m}");
        assert_eq!(n("replies_with_parse_errors"), 1, "{m}");
        assert_eq!(n("accidental"), 2, "{m}");
        assert_eq!(n("failed_calls"), 0, "{m}");
        assert!(n("action_matched") < n("action_tasks"));
    }
}
