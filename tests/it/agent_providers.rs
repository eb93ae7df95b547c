//! Both providers' streaming wire formats against a real HTTP server on
//! 127.0.0.1: tokens, request shape, a mid-stream error, a dropped stream,
//! 429 and 5xx retries, no retry on 4xx, and cancellation.

use crate::support;

use std::time::{Duration, Instant};

use partner::runtime::provider::{
    AnthropicProvider, ChatMessage, ChatRequest, HttpSettings, OpenAiProvider, PromptKind,
    Provider, ProviderError, RetryPolicy, StreamEvent, collect,
};
use serde_json::Value;
use support::{Answer, streaming_server};
use tokio::sync::watch;

fn settings(base: &str) -> HttpSettings {
    HttpSettings {
        base_url: base.to_string(),
        api_key: Some("test-key".into()),
        timeout: Duration::from_secs(5),
        reply_deadline: Duration::from_secs(60),
        connect_timeout: Duration::from_secs(2),
        retry: RetryPolicy {
            retries: 2,
            backoff: Duration::from_millis(10),
            max_wait: Duration::from_millis(50),
        },
    }
}

fn client() -> reqwest::Client {
    partner::engine::net::model_client(Duration::from_secs(2)).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        agent: "ada".into(),
        model: "test-model".into(),
        kind: PromptKind::Response,
        from: Some("partner".into()),
        system: "You are Ada.".into(),
        messages: vec![
            ChatMessage::user("hi"),
            ChatMessage::assistant("hello"),
            ChatMessage::user("how are you?"),
        ],
        max_tokens: 64,
        sampling: Default::default(),
        tools: Vec::new(),
    }
}

fn openai_chunk(text: &str) -> String {
    format!(
        "data: {}\n\n",
        serde_json::json!({ "choices": [{ "delta": { "content": text } }] })
    )
}

fn anthropic_event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

fn anthropic_text(text: &str) -> String {
    anthropic_event(
        "content_block_delta",
        serde_json::json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": text } }),
    )
}

fn never_cancel() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    std::mem::forget(tx);
    rx
}

#[tokio::test]
async fn openai_streams_tokens_and_sends_the_expected_request() {
    let (base, seen) = streaming_server(|_, _| {
        Answer::sse(vec![
            ": keep-alive\n\n".into(),
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n".into(),
            openai_chunk("Hel"),
            openai_chunk("lo!"),
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".into(),
            "data: [DONE]\n\n".into(),
        ])
    });
    let provider = OpenAiProvider::new("openai", settings(&base), client());
    let mut tokens = Vec::new();
    let text = collect(provider.stream(request(), never_cancel()), |t| {
        tokens.push(t.to_string())
    })
    .await
    .unwrap();
    assert_eq!(text, "Hello!");
    assert_eq!(tokens, vec!["Hel", "lo!"]);
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].path, "/chat/completions");
    assert_eq!(seen[0].header("authorization"), Some("Bearer test-key"));
    let body: Value = serde_json::from_str(&seen[0].body).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "test-model");
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "user"]);
    assert_eq!(body["messages"][0]["content"], "You are Ada.");
}

#[tokio::test]
async fn anthropic_streams_tokens_and_sends_the_expected_request() {
    let (base, seen) = streaming_server(|_, _| {
        Answer::sse(vec![
            anthropic_event(
                "message_start",
                serde_json::json!({ "type": "message_start", "message": { "id": "m1" } }),
            ),
            anthropic_event(
                "content_block_start",
                serde_json::json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
            ),
            anthropic_event("ping", serde_json::json!({ "type": "ping" })),
            anthropic_text("Good "),
            anthropic_text("day."),
            anthropic_event(
                "content_block_stop",
                serde_json::json!({ "type": "content_block_stop", "index": 0 }),
            ),
            anthropic_event(
                "message_delta",
                serde_json::json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" } }),
            ),
            anthropic_event(
                "message_stop",
                serde_json::json!({ "type": "message_stop" }),
            ),
        ])
    });
    let provider = AnthropicProvider::new(settings(&base), client());
    let text = collect(provider.stream(request(), never_cancel()), |_| {})
        .await
        .unwrap();
    assert_eq!(text, "Good day.");
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].header("x-api-key"), Some("test-key"));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    let body: Value = serde_json::from_str(&seen[0].body).unwrap();
    assert_eq!(body["system"], "You are Ada.");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 64);
    assert_eq!(
        body["messages"].as_array().unwrap().len(),
        3,
        "no system message in the list"
    );
}

#[tokio::test]
async fn mid_stream_errors_end_the_reply_with_an_error() {
    let (base, _) = streaming_server(|_, _| {
        Answer::sse(vec![
            openai_chunk("partial "),
            "data: {\"error\":{\"message\":\"model overloaded\"}}\n\n".into(),
        ])
    });
    let mut rx =
        OpenAiProvider::new("openai", settings(&base), client()).stream(request(), never_cancel());
    assert_eq!(rx.recv().await, Some(StreamEvent::Token("partial ".into())));
    assert_eq!(
        rx.recv().await,
        Some(StreamEvent::Error(ProviderError::MidStream(
            "model overloaded".into()
        )))
    );

    let (base, _) = streaming_server(|_, _| {
        Answer::sse(vec![
            anthropic_text("half"),
            anthropic_event(
                "error",
                serde_json::json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
            ),
        ])
    });
    let result = collect(
        AnthropicProvider::new(settings(&base), client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await;
    assert_eq!(result, Err(ProviderError::MidStream("Overloaded".into())));

    let (base, _) = streaming_server(|_, _| Answer::sse(vec![openai_chunk("cut off")]));
    let result = collect(
        OpenAiProvider::new("openai", settings(&base), client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await;
    assert!(
        matches!(result, Err(ProviderError::MidStream(ref m)) if m.contains("ended before")),
        "{result:?}"
    );
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let (base, seen) = streaming_server(|n, _| match n {
        0 => {
            let mut a = Answer::status(429, "{\"error\":\"slow down\"}");
            a.headers.push(("retry-after", "0".into()));
            a
        }
        1 => Answer::status(503, "{\"error\":\"busy\"}"),
        _ => Answer::sse(vec![openai_chunk("third time"), "data: [DONE]\n\n".into()]),
    });
    let text = collect(
        OpenAiProvider::new("openai", settings(&base), client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(text, "third time");
    assert_eq!(seen.lock().unwrap().len(), 3);

    let (base, seen) = streaming_server(|_, _| Answer::status(429, "{\"error\":\"quota\"}"));
    let result = collect(
        OpenAiProvider::new("openai", settings(&base), client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await;
    assert!(
        matches!(result, Err(ProviderError::Status { status: 429, .. })),
        "{result:?}"
    );
    assert_eq!(seen.lock().unwrap().len(), 3, "one try and two retries");

    let (base, seen) = streaming_server(|_, _| Answer::status(400, "{\"error\":\"bad model\"}"));
    let result = collect(
        AnthropicProvider::new(settings(&base), client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await;
    assert!(
        matches!(result, Err(ProviderError::Status { status: 400, ref body }) if body.contains("bad model")),
        "{result:?}"
    );
    assert_eq!(seen.lock().unwrap().len(), 1, "4xx is not retried");

    let unreachable = collect(
        OpenAiProvider::new("openai", settings("http://127.0.0.1:9"), client())
            .stream(request(), never_cancel()),
        |_| {},
    )
    .await;
    assert!(
        matches!(unreachable, Err(ProviderError::Connection(_))),
        "{unreachable:?}"
    );
}

#[tokio::test]
async fn cancelling_stops_the_stream() {
    let (base, _) = streaming_server(|_, _| {
        let mut a = Answer::sse((0..50).map(|i| openai_chunk(&format!("w{i} "))).collect());
        a.pause = Duration::from_millis(100);
        a
    });
    let (cancel, rx) = watch::channel(false);
    let mut stream = OpenAiProvider::new("openai", settings(&base), client()).stream(request(), rx);
    assert!(matches!(stream.recv().await, Some(StreamEvent::Token(_))));
    let started = Instant::now();
    cancel.send(true).unwrap();
    let mut last = None;
    while let Some(event) = stream.recv().await {
        last = Some(event);
    }
    assert_eq!(last, Some(StreamEvent::Error(ProviderError::Cancelled)));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "stopped promptly"
    );
}

#[tokio::test]
async fn retry_after_as_a_date_is_honoured() {
    // An HTTP date two seconds ahead: whole seconds, so the wait is at least
    // one second, far more than the 10 ms backoff.
    let (base, seen) = streaming_server(|n, _| match n {
        0 => {
            let at = std::time::SystemTime::now() + Duration::from_secs(2);
            let mut a = Answer::status(503, "{\"error\":\"busy\"}");
            a.headers.push(("retry-after", httpdate::fmt_http_date(at)));
            a
        }
        _ => Answer::sse(vec![openai_chunk("later"), "data: [DONE]\n\n".into()]),
    });
    let mut patient = settings(&base);
    patient.retry.max_wait = Duration::from_secs(10);
    let started = Instant::now();
    let text = collect(
        OpenAiProvider::new("openai", patient, client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(text, "later");
    assert_eq!(seen.lock().unwrap().len(), 2);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(950) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

#[tokio::test]
async fn a_server_that_stalls_mid_body_is_given_up() {
    // Headers and one token at once, then nothing for ten seconds.
    let (base, _) = streaming_server(|_, _| {
        let mut a = Answer::sse(vec![openai_chunk("first "), openai_chunk("never")]);
        a.pause = Duration::from_secs(10);
        a.chunks.insert(0, String::new());
        a
    });
    let mut quick = settings(&base);
    quick.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let result = collect(
        OpenAiProvider::new("openai", quick, client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await;
    assert!(
        matches!(result, Err(ProviderError::MidStream(ref m)) if m.contains("sent nothing")),
        "{result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_line_without_end_is_refused_at_its_bound() {
    // Two megabytes with no newline: the reader stops at one.
    let (base, _) = streaming_server(|_, _| {
        Answer::sse(vec![format!("data: {}", "x".repeat(2 * 1024 * 1024))])
    });
    let result = collect(
        OpenAiProvider::new("openai", settings(&base), client()).stream(request(), never_cancel()),
        |_| {},
    )
    .await;
    assert!(
        matches!(result, Err(ProviderError::MidStream(ref m)) if m.contains("line longer")),
        "{result:?}"
    );
}

#[tokio::test]
async fn one_client_serves_every_provider_of_a_constellation() {
    let (base, seen) =
        streaming_server(|_, _| Answer::sse(vec![openai_chunk("ok"), "data: [DONE]\n\n".into()]));
    let shared = client();
    for _ in 0..3 {
        let text = collect(
            OpenAiProvider::new("openai", settings(&base), shared.clone())
                .stream(request(), never_cancel()),
            |_| {},
        )
        .await
        .unwrap();
        assert_eq!(text, "ok");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter().all(|s| s
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("partner/"))),
        "{seen:?}"
    );
}

/// How a hostile model server talks after its headers, forever (until
/// partner hangs up).
#[derive(Debug, Clone, Copy)]
enum Hostile {
    /// One token, then an SSE comment every two seconds.
    KeepAlive,
    /// SSE comments as fast as it can write.
    Comments,
    /// Blank lines as fast as it can write.
    BlankLines,
    /// Deltas with empty content, as fast as it can write.
    EmptyDeltas,
    /// Tool-call deltas, each for a call with a higher index.
    GrowingToolIndex,
    /// Anthropic's `ping` event every half second.
    Pings,
    /// A real token every half second, never done.
    Drip,
}

/// A server on 127.0.0.1 that answers every call as `mode` does; the
/// number of bytes it managed to write is kept.
fn hostile_server(mode: Hostile) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).map_or(true, |n| n == 0) || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let _ = reader.read_exact(&mut vec![0u8; length]);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
                );
                let burst = |unit: &str| unit.repeat(64 * 1024 / unit.len().max(1));
                for n in 0u64.. {
                    let (piece, pause) = match mode {
                        Hostile::KeepAlive if n == 0 => (openai_chunk("one "), 0),
                        Hostile::KeepAlive => (": still here\n\n".to_string(), 2_000),
                        Hostile::Comments => (burst(": x\n"), 0),
                        Hostile::BlankLines => (burst("\n"), 0),
                        Hostile::EmptyDeltas => (burst(&openai_chunk("")), 0),
                        Hostile::GrowingToolIndex => {
                            let delta = |i: u64| {
                                format!(
                                    "data: {}\n\n",
                                    serde_json::json!({"choices": [{"delta": {"tool_calls": [{"index": i, "function": {"arguments": "{"}}]}}]})
                                )
                            };
                            ((0..200).map(|i| delta(n * 200 + i + 40)).collect(), 0)
                        }
                        Hostile::Pings => (
                            anthropic_event("ping", serde_json::json!({"type": "ping"})),
                            500,
                        ),
                        Hostile::Drip => (openai_chunk("more "), 500),
                    };
                    std::thread::sleep(Duration::from_millis(pause));
                    if stream.write_all(piece.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    base
}

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

// A current-thread runtime: the client's every step runs on this thread,
// so its CPU time is this thread's.
#[tokio::test(flavor = "current_thread")]
async fn a_hostile_server_cannot_keep_a_reply_alive_and_each_mode_ends_with_a_clear_error() {
    let cases = [
        (Hostile::KeepAlive, "nothing of the reply", 7),
        (Hostile::Comments, "without any of the reply", 3),
        (Hostile::BlankLines, "without any of the reply", 3),
        (Hostile::EmptyDeltas, "without any of the reply", 3),
        (Hostile::GrowingToolIndex, "without any of the reply", 3),
        (Hostile::Pings, "nothing of the reply", 7),
        (Hostile::Drip, "deadline", 10),
    ];
    for (mode, says, within) in cases {
        let base = hostile_server(mode);
        let mut s = settings(&base);
        s.timeout = Duration::from_secs(5);
        s.reply_deadline = Duration::from_secs(8);
        let started = Instant::now();
        let cpu = thread_cpu();
        let stream = match mode {
            Hostile::Pings => AnthropicProvider::new(s, client()).stream(request(), never_cancel()),
            _ => OpenAiProvider::new("openai", s, client()).stream(request(), never_cancel()),
        };
        let result = collect(stream, |_| {}).await;
        let took = started.elapsed();
        let used = thread_cpu() - cpu;
        eprintln!("{mode:?}: ended in {took:?}, {used:?} of CPU: {result:?}");
        assert!(
            matches!(&result, Err(e) if e.to_string().contains(says)),
            "{mode:?}: {result:?}"
        );
        assert!(took < Duration::from_secs(within), "{mode:?} took {took:?}");
        assert!(
            used < Duration::from_millis(1_500),
            "{mode:?} used {used:?} of CPU in {took:?}"
        );
    }
}
