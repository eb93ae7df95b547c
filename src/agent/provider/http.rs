//! The streaming HTTP call both wire formats share: POST a JSON body,
//! retry with backoff on 429 and 5xx (honouring `Retry-After`), then read
//! the server-sent events line by line on a blocking thread, forwarding
//! what `on_event` makes of them, and stopping when cancelled.

use std::io::{BufReader, Read};
use std::time::Duration;

use tokio::sync::mpsc;

use super::sse::{MAX_LINE, SseEvent, SseParser, read_line};
use super::{Cancel, ProviderError, StreamEvent};

/// Retries on 429 and 5xx.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// First wait; doubles each retry.
    pub backoff: Duration,
    /// Longest wait, whatever `Retry-After` says.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 3,
            backoff: super::DEFAULT_BACKOFF,
            max_wait: Duration::from_secs(30),
        }
    }
}

/// Connection settings of an HTTP provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// Base URL (`https://api.openai.com/v1`).
    pub base_url: String,
    /// API key, if the server needs one.
    pub api_key: Option<String>,
    /// Time allowed to connect and to get the response headers.
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
}

/// What a wire format makes of one event.
pub(super) enum Parsed {
    /// Text to pass on.
    Token(String),
    /// The reply is complete.
    Done,
    /// Nothing to pass on.
    Skip,
    /// The server reported an error mid-stream.
    Error(String),
}

fn cancelled(cancel: &Cancel) -> bool {
    *cancel.borrow()
}

/// Sleeps `wait` in small steps, stopping early when cancelled.
fn pause(wait: Duration, cancel: &Cancel) {
    let step = Duration::from_millis(20);
    let mut left = wait;
    while !left.is_zero() && !cancelled(cancel) {
        let now = left.min(step);
        std::thread::sleep(now);
        left -= now;
    }
}

/// Starts the call on a blocking thread.
pub(super) fn stream(
    settings: HttpSettings,
    url: String,
    headers: Vec<(String, String)>,
    body: String,
    cancel: Cancel,
    on_event: fn(&SseEvent) -> Parsed,
) -> mpsc::Receiver<StreamEvent> {
    let (tx, rx) = mpsc::channel(256);
    tokio::task::spawn_blocking(move || {
        let result = call(&settings, &url, &headers, &body, &cancel, on_event, &tx);
        let last = match result {
            Ok(()) => StreamEvent::Done,
            Err(e) => StreamEvent::Error(e),
        };
        let _ = tx.blocking_send(last);
    });
    rx
}

fn call(
    settings: &HttpSettings,
    url: &str,
    headers: &[(String, String)],
    body: &str,
    cancel: &Cancel,
    on_event: fn(&SseEvent) -> Parsed,
    tx: &mpsc::Sender<StreamEvent>,
) -> Result<(), ProviderError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(settings.timeout))
        .timeout_recv_response(Some(settings.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut attempt = 0;
    let response = loop {
        if cancelled(cancel) {
            return Err(ProviderError::Cancelled);
        }
        let mut request = agent.post(url).header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let wait = settings.retry.backoff * 2u32.saturating_pow(attempt);
        match request.send(body) {
            Err(e) if attempt < settings.retry.retries => {
                let _ = e;
                pause(wait.min(settings.retry.max_wait), cancel);
            }
            Err(e) => return Err(ProviderError::Connection(e.to_string())),
            Ok(mut response) => {
                let status = response.status().as_u16();
                if (status == 429 || status >= 500) && attempt < settings.retry.retries {
                    let asked = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    pause(asked.unwrap_or(wait).min(settings.retry.max_wait), cancel);
                    attempt += 1;
                    continue;
                }
                if !(200..300).contains(&status) {
                    let mut bytes = Vec::new();
                    let _ = response
                        .body_mut()
                        .as_reader()
                        .take(64 * 1024)
                        .read_to_end(&mut bytes);
                    let text = String::from_utf8_lossy(&bytes);
                    let body: String = text.chars().take(300).collect();
                    return Err(ProviderError::Status { status, body });
                }
                break response;
            }
        }
        attempt += 1;
    };
    let mut reader = BufReader::new(response.into_body().into_reader());
    let mut parser = SseParser::default();
    let dispatch = |event: SseEvent| -> Result<bool, ProviderError> {
        match on_event(&event) {
            Parsed::Token(text) => {
                if tx.blocking_send(StreamEvent::Token(text)).is_err() {
                    return Err(ProviderError::Cancelled);
                }
                Ok(false)
            }
            Parsed::Done => Ok(true),
            Parsed::Skip => Ok(false),
            Parsed::Error(message) => Err(ProviderError::MidStream(message)),
        }
    };
    while let Some(line) =
        read_line(&mut reader, MAX_LINE).map_err(|e| ProviderError::MidStream(e.to_string()))?
    {
        if cancelled(cancel) {
            return Err(ProviderError::Cancelled);
        }
        let event = parser.line(&line).map_err(|_| {
            ProviderError::MidStream("the server sent an event larger than partner reads".into())
        })?;
        if let Some(event) = event
            && dispatch(event)?
        {
            return Ok(());
        }
    }
    if let Some(event) = parser.finish()
        && dispatch(event)?
    {
        return Ok(());
    }
    Err(ProviderError::MidStream(
        "the stream ended before the reply was complete".into(),
    ))
}
