//! Agents on a real OpenAI-compatible wire, as the server counts: the
//! prompt never exceeds its budget in the server's own tokens, and a
//! message from another agent travels once.

use crate::support;

use serde_json::Value;
use support::{Answer, streaming_server};

use super::model_prompts::{calls, chunk, constellation, flat, model, run};

/// The prompt is fitted in the server's own tokens: once a call has
/// reported its usage, no later prompt exceeds the budget as the server
/// counts it, even where partner's estimate (about four bytes a token)
/// runs low — here the server counts a token every three bytes.
#[test]
fn the_prompt_never_exceeds_its_budget_as_the_server_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let counted = |body: &Value| -> u64 {
        let bytes: usize = body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .map(|m| m["content"].as_str().unwrap_or("").len() + 12)
                    .sum()
            })
            .unwrap_or(0);
        (bytes / 3) as u64
    };
    let (base, seen) = streaming_server(move |_, seen| {
        if seen.path != "/v1/chat/completions" {
            return Answer::status(404, "{}");
        }
        let body: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
        let usage = serde_json::json!({
            "choices": [],
            "usage": { "prompt_tokens": counted(&body), "completion_tokens": 50 }
        });
        Answer::sse(vec![
            chunk(&format!("{}noted", "word ".repeat(60))),
            format!("data: {usage}\n\n"),
            "data: [DONE]\n\n".into(),
        ])
    });
    constellation(
        dir.path(),
        &base,
        "context = 1600\nsampling = { max_tokens = 160 }",
        "",
    );
    let mut args = Vec::new();
    for i in 0..8 {
        args.push("--message".to_string());
        args.push(format!(
            "ada=question number {i}, with a few more words to say"
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = run(dir.path(), "5s", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = calls(&seen);
    assert_eq!(calls.len(), 8);
    let budget = 1600 - 160;
    let over: Vec<u64> = calls[1..]
        .iter()
        .map(counted)
        .filter(|n| *n > budget)
        .collect();
    assert!(
        over.is_empty(),
        "prompts over {budget} server tokens: {over:?}"
    );
    // And the history was cut to fit, not the budget ignored.
    assert!(counted(calls.last().unwrap()) > budget / 2);
}

/// A message another agent sent (stored when it was sent) travels once in
/// the receiver's request, and the receiver's next request starts with
/// this one's bytes.
#[test]
fn a_message_from_another_agent_travels_once() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = model(|body| {
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        if system.starts_with("You are ada") {
            "/tell @bo \"the launch moved to Monday\"".into()
        } else {
            "Noted.".into()
        }
    });
    std::fs::write(
        dir.path().join("partner.toml"),
        format!(
            "name = \"wire\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"5s\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\npulse = \"off\"\n\n[[agents]]\nname = \"bo\"\nmodel = \"local:tiny\"\npulse = \"off\"\n"
        ),
    )
    .unwrap();
    let (out, _) = run(
        dir.path(),
        "4s",
        &[
            "--message",
            "ada=tell bo about the launch",
            "--message",
            "bo=and what else?",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let to_bo: Vec<Value> = calls(&seen)
        .into_iter()
        .filter(|c| {
            c["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.starts_with("You are bo"))
        })
        .collect();
    assert!(!to_bo.is_empty());
    for call in &to_bo {
        let text = flat(call);
        assert!(
            text.matches("the launch moved to Monday").count() <= 1,
            "the message travels twice: {text}"
        );
    }
}
