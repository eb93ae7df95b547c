//! Agents on a real OpenAI-compatible wire: `partner run --headless`
//! against a model server on 127.0.0.1 that records every request body, as
//! llama.cpp's server was found to be used. What the prompt holds, in what
//! order, how it fits a small context, the sampling settings sent, an
//! echoing model, and a server that never answers.

use crate::support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Answer, Seen, streaming_server};

pub(crate) fn chunk(text: &str) -> String {
    format!(
        "data: {}\n\n",
        serde_json::json!({ "choices": [{ "delta": { "content": text } }] })
    )
}

/// A model server answering each chat call with `reply(body)`; `/props`
/// is not found (not llama.cpp).
pub(crate) fn model(
    reply: impl Fn(&Value) -> String + Send + 'static,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    streaming_server(move |_, seen| {
        if seen.path != "/v1/chat/completions" {
            return Answer::status(404, "{}");
        }
        let body: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
        Answer::sse(vec![chunk(&reply(&body)), "data: [DONE]\n\n".into()])
    })
}

/// The chat calls the server saw, as JSON.
pub(crate) fn calls(seen: &Arc<Mutex<Vec<Seen>>>) -> Vec<Value> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|s| s.path == "/v1/chat/completions")
        .map(|s| serde_json::from_str(&s.body).unwrap())
        .collect()
}

pub(crate) fn constellation(dir: &Path, base: &str, agent_extra: &str, provider_extra: &str) {
    std::fs::write(
        dir.join("partner.toml"),
        format!(
            "name = \"wire\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"5s\"\n{provider_extra}\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\npulse = \"off\"\n{agent_extra}\n"
        ),
    )
    .unwrap();
}

/// `partner run --headless` for `run_for`, with `args`; its events.
pub(crate) fn run(dir: &Path, run_for: &str, args: &[&str]) -> (Output, Vec<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args([
            "run",
            "--headless",
            "--config",
            "partner.toml",
            "--db",
            "c.db",
            "--for",
            run_for,
        ])
        .args(args)
        .output()
        .unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, events)
}

fn named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

/// Fails unless `after` starts with the whole of `before` (a server's
/// cache reads only what is new), saying where they part.
pub(crate) fn carries_over(before: &str, after: &str, what: &str) {
    assert!(
        after.starts_with(before),
        "{what} re-reads from character {} of {}:\n{after}",
        before
            .chars()
            .zip(after.chars())
            .take_while(|(a, b)| a == b)
            .count(),
        before.chars().count()
    );
}

/// The prompt as one text: system, then each message.
pub(crate) fn flat(call: &Value) -> String {
    call["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n\u{1}\n")
}

#[test]
fn a_model_that_echoes_its_instructions_does_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // The model repeats the system prompt it was given, word for word.
    let (base, seen) = model(|body| {
        body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .to_string()
    });
    for profile in ["full", "compact"] {
        constellation(dir.path(), &base, &format!("profile = \"{profile}\""), "");
        let _ = std::fs::remove_file(dir.path().join("c.db"));
        let (out, events) = run(dir.path(), "2s", &["--message", "ada=hello"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let replies = named(&events, "reply_finished");
        assert_eq!(replies.len(), 1, "{profile}: {events:?}");
        assert!(
            replies[0]["text"].as_str().unwrap().contains("slash"),
            "the reply is the echoed prompt"
        );
        assert!(
            named(&events, "action_parsed").is_empty(),
            "{profile}: an echoed prompt made actions: {:?}",
            named(&events, "action_parsed")
        );
        assert!(
            named(&events, "parse_failed").is_empty(),
            "{profile}: {:?}",
            named(&events, "parse_failed")
        );
    }
    assert_eq!(calls(&seen).len(), 2);
}

#[test]
fn history_travels_once_and_the_prompt_grows_only_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = model(|body| {
        let n = body["messages"].as_array().map_or(0, Vec::len);
        format!("Answer number {n}.")
    });
    constellation(dir.path(), &base, "", "");
    let (out, _) = run(
        dir.path(),
        "3s",
        &[
            "--message",
            "ada=first question",
            "--message",
            "ada=second question",
            "--message",
            "ada=third question",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = calls(&seen);
    assert_eq!(calls.len(), 3, "{calls:?}");
    for call in &calls {
        let system = call["messages"][0]["content"].as_str().unwrap();
        assert!(
            !system.contains("question") && !system.contains("Answer number"),
            "the history is not in the system prompt: {system}"
        );
        assert!(!system.contains("<temporal_context>"));
    }
    // The second call carries the first exchange as chat messages.
    let roles: Vec<&str> = calls[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    // Each request starts with the whole of the one before, the turn's
    // changing context included, then the reply: a server's cache reuses
    // all of it and reads only what is new.
    for pair in calls.windows(2) {
        let before = flat(&pair[0]);
        assert!(before.contains("<temporal_context>"));
        let after = flat(&pair[1]);
        carries_over(&before, &after, "the next request");
        let (old, new) = (
            pair[0]["messages"].as_array().unwrap(),
            pair[1]["messages"].as_array().unwrap(),
        );
        assert_eq!(
            old[..],
            new[..old.len()],
            "the messages array is carried over as it was"
        );
    }
}

#[test]
fn a_small_context_is_respected_by_dropping_the_oldest_history() {
    let dir = tempfile::tempdir().unwrap();
    let long = "word ".repeat(400);
    let (base, seen) = model(move |_| format!("{long}done"));
    constellation(dir.path(), &base, "context = 2048", "");
    let mut args = Vec::new();
    for i in 0..6 {
        args.push("--message".to_string());
        args.push(format!("ada=question {i}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, events) = run(dir.path(), "4s", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = calls(&seen);
    assert_eq!(calls.len(), 6);
    for call in &calls {
        let bytes: usize = call["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().len())
            .sum();
        let reply = call["max_tokens"].as_u64().unwrap() as usize;
        // Four bytes a token at the most generous: the prompt and the
        // reply it leaves room for fit in 2048 tokens.
        assert!(
            bytes / 4 + reply.min(1024) <= 2048,
            "a prompt of {bytes} bytes (+{reply} for the reply) overflows 2048 tokens"
        );
    }
    let last = calls.last().unwrap();
    let text = flat(last);
    assert!(text.contains("question 5"), "the turn's own message stays");
    assert!(
        !text.contains("question 0"),
        "the oldest history went first"
    );
    assert!(
        text.contains("You are ada"),
        "the system prompt (core memory) is never dropped"
    );
    let fitted = named(&events, "prompt_fitted");
    assert!(!fitted.is_empty(), "what was dropped is reported");
    assert!(
        fitted[0]["summary"]
            .as_str()
            .unwrap()
            .contains("oldest messages")
    );
}

#[test]
fn sampling_settings_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = model(|_| "ok".into());
    constellation(
        dir.path(),
        &base,
        "sampling = { temperature = 0.2, stop = [\"</s>\"], max_tokens = 200 }",
        "sampling = { top_p = 0.9, repeat_penalty = 1.1, temperature = 0.9 }",
    );
    let (out, _) = run(dir.path(), "2s", &["--message", "ada=hi"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let call = &calls(&seen)[0];
    assert_eq!(
        call["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(2.0)
    );
    assert_eq!(
        call["top_p"].as_f64().map(|t| (t * 10.0).round()),
        Some(9.0)
    );
    assert_eq!(
        call["repeat_penalty"].as_f64().map(|t| (t * 10.0).round()),
        Some(11.0)
    );
    assert_eq!(call["stop"], serde_json::json!(["</s>"]));
    assert_eq!(call["max_tokens"], 200);
}

#[test]
fn bad_sampling_settings_are_refused_with_their_name() {
    let dir = tempfile::tempdir().unwrap();
    constellation(
        dir.path(),
        "http://127.0.0.1:9",
        "sampling = { temperature = 7.0 }",
        "",
    );
    let (out, _) = run(dir.path(), "1s", &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("temperature = 7 must be between 0 and 2"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_never_answers_is_asked_once_and_named() {
    let dir = tempfile::tempdir().unwrap();
    // Takes every connection and never says a word.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let attempts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&attempts);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
            let n = stream.read(&mut buf).unwrap_or(0);
            if String::from_utf8_lossy(&buf[..n]).contains("chat/completions") {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            held.push(stream);
        }
    });
    std::fs::write(
        dir.path().join("partner.toml"),
        format!(
            "name = \"wire\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"1s\"\nretries = 3\nbackoff = \"10ms\"\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\npulse = \"off\"\ncontext = 4096\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let (out, events) = run(dir.path(), "4s", &["--message", "ada=hello"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The failed call ends the turn, saying so.
    let errors = named(&events, "turn_failed");
    let error = errors
        .iter()
        .find(|e| e["message"].as_str().unwrap().contains("model call failed"))
        .unwrap_or_else(|| panic!("no model error: {events:?}"));
    let message = error["message"].as_str().unwrap();
    for part in ["local", "tiny", base.as_str()] {
        assert!(message.contains(part), "the error names {part}: {message}");
    }
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "a server that took the call and said nothing is not asked again"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
}

#[test]
fn a_long_conversation_keeps_its_prompt_start_for_several_turns() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = model(|_| "Noted.".into());
    constellation(dir.path(), &base, "", "");
    let config = std::fs::read_to_string(dir.path().join("partner.toml")).unwrap();
    std::fs::write(
        dir.path().join("partner.toml"),
        config.replace(
            "name = \"wire\"\n",
            "name = \"wire\"\n[runtime]\nhistory = 12\n",
        ),
    )
    .unwrap();
    let mut args = Vec::new();
    for i in 0..10 {
        args.push("--message".to_string());
        args.push(format!("ada=note {i}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, _) = run(dir.path(), "4s", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = calls(&seen);
    assert_eq!(calls.len(), 10);
    let mut kept = 0;
    for pair in calls.windows(2) {
        if flat(&pair[1]).starts_with(&flat(&pair[0])) {
            kept += 1;
        }
    }
    for call in &calls {
        // The system prompt, at most 12 stored messages, and the new one.
        assert!(call["messages"].as_array().unwrap().len() <= 14);
    }
    // A window sliding by one exchange a turn would keep it 6 times of 9:
    // cut at page starts, the prompt keeps its start 8 times.
    assert!(kept >= 8, "the prompt kept its start in {kept} of 9 turns");
}

/// What the request already carries is not recalled into it again: a
/// message in the history is not repeated in `<recalled_context>`, and no
/// memory is recalled twice.
#[test]
fn recall_leaves_out_what_the_request_already_carries() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = model(|_| "Noted.".into());
    constellation(dir.path(), &base, "", "");
    let (out, _) = run(
        dir.path(),
        "3s",
        &[
            "--message",
            "ada=Remember that Dana prefers email.",
            "--message",
            "ada=How does Dana prefer to be contacted, email?",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = calls(&seen);
    assert_eq!(calls.len(), 2, "{calls:?}");
    let second = flat(&calls[1]);
    assert!(
        second.contains("Remember that Dana prefers email."),
        "{second}"
    );
    let recalled = second
        .split("<recalled_context>")
        .nth(1)
        .map_or("", |r| r.split("</recalled_context>").next().unwrap_or(""));
    assert!(
        !recalled.contains("prefers"),
        "the history's message is recalled again: {recalled}"
    );
}

/// A model that rewrites its instructions as actions (the verb list with
/// slashes, the way small models do) runs none of them: each such line is
/// an echo, read as text and shown to the partner as one. An action of its
/// own in the same reply still runs.
#[test]
fn reworded_echoes_of_the_prompt_never_act() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = model(|body| {
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        let mut reply = String::from("Here is what I can do:\n");
        for line in system.lines() {
            // `  reply: reply to a message in words` → `/reply "reply to a message in words"`
            if let Some((verb, summary)) = line.strip_prefix("  ").and_then(|l| l.split_once(": "))
                && verb.chars().all(|c| c.is_ascii_lowercase())
            {
                reply.push_str(&format!("/{verb} \"{summary}\"\n"));
            }
        }
        reply.push_str("/calc 6 * 7\n");
        reply
    });
    constellation(dir.path(), &base, "", "");
    let (out, events) = run(dir.path(), "3s", &["--message", "ada=what can you do?"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!calls(&seen).is_empty());
    let parsed: Vec<&str> = named(&events, "action_parsed")
        .iter()
        .filter_map(|e| e["canonical"].as_str())
        .collect();
    // Every pass repeats the reply; in each, only the model's own action is one.
    assert!(
        !parsed.is_empty() && parsed.iter().all(|c| *c == "/calc \"6 * 7\""),
        "{parsed:?}"
    );
    let echoes = named(&events, "echo_ignored");
    assert!(echoes.len() >= 10, "each echoed line is shown: {echoes:?}");
    assert!(
        echoes
            .iter()
            .any(|e| e["text"].as_str().is_some_and(|t| t.starts_with("/reply"))),
        "{echoes:?}"
    );
}
