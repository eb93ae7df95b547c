//! The streaming HTTP call both wire formats share, on the tokio stack:
//! POST a JSON body with the constellation's shared client, retry on 429
//! and 5xx (waiting as `Retry-After` asks, in seconds or as a date, or a
//! jittered backoff), then read the server-sent events with every line and
//! event bounded and every read timed, forwarding what `on_event` makes of
//! them. Cancelling — the agent halted, or the turn no longer listening —
//! drops the call, which closes its connection.

use std::time::{Duration, SystemTime};

use tokio::sync::mpsc;

use super::sse::{MAX_LINE, SseEvent, SseParser};
use super::{Cancel, ProviderError, StreamEvent};
use partner_engine::net::{self, Lines, error_chain, read_limited};

/// Retries on 429 and 5xx.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub retries: u32,
    /// First wait; doubles each retry (with jitter).
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
    /// Time allowed to connect and get the response headers, and then
    /// between two pieces of the reply itself (text, thinking or a tool
    /// call): comments, blank lines, empty deltas and pings do not count,
    /// so a server that only keeps the connection alive is given up.
    pub timeout: Duration,
    /// Time allowed for the whole reply, retries included.
    pub reply_deadline: Duration,
    /// Time allowed to open the connection (the client enforces it).
    pub connect_timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
}

/// What a wire format makes of one event (an event may carry several).
pub(super) enum Parsed {
    /// Text to pass on.
    Token(String),
    /// The model's reasoning, not passed on: this many bytes of it.
    Thinking(usize),
    /// A piece of a tool call: its name when the call starts, then pieces of
    /// its JSON arguments, for the call at `index`.
    ToolDelta {
        /// Which call of the reply.
        index: usize,
        /// The function's name, when this piece carries it.
        name: Option<String>,
        /// More of the arguments.
        arguments: String,
    },
    /// Token counts, as far as this event tells them.
    Usage {
        /// Prompt tokens.
        input: Option<u64>,
        /// Reply tokens.
        output: Option<u64>,
    },
    /// The reply is complete.
    Done,
    /// Nothing to pass on.
    Skip,
    /// The server reported an error mid-stream.
    Error(String),
}

/// Most of an error response's body read (its start is shown).
const ERROR_BODY: usize = 64 * 1024;

/// One call to a model server.
pub(super) struct Call {
    /// The constellation's client.
    pub client: reqwest::Client,
    /// Timeouts and retries.
    pub settings: HttpSettings,
    /// Where to POST.
    pub url: String,
    /// Headers besides the content type.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: String,
    /// What the wire format makes of each event.
    pub on_event: fn(&SseEvent) -> Vec<Parsed>,
}

/// Most bytes a server may send without any of the reply (comments, blank
/// lines, empty deltas, pings, calls past [`MAX_CALLS`]).
pub const MAX_NOISE: usize = 1 << 20;

/// Most tool calls kept from one reply, and most bytes of one's arguments.
const MAX_CALLS: usize = 32;
const MAX_CALL_BYTES: usize = 16 * 1024;

/// What a reply has said so far besides its text.
#[derive(Default)]
struct Gathered {
    /// Tool calls: name and arguments.
    calls: Vec<(String, String)>,
    /// Prompt and reply tokens, as the server counted them.
    input: Option<u64>,
    output: Option<u64>,
}

/// Passes on what the reply gathered besides its text: its tool calls,
/// then what it cost.
async fn finish(gathered: Gathered, tx: &mpsc::Sender<StreamEvent>) -> Result<(), ProviderError> {
    for (name, arguments) in gathered.calls {
        if name.is_empty() {
            continue;
        }
        let call = super::ToolCall { name, arguments };
        tx.send(StreamEvent::Tool(call))
            .await
            .map_err(|_| ProviderError::Cancelled)?;
    }
    if gathered.input.is_some() || gathered.output.is_some() {
        let usage = StreamEvent::Usage {
            input: gathered.input.unwrap_or(0),
            output: gathered.output.unwrap_or(0),
        };
        tx.send(usage).await.map_err(|_| ProviderError::Cancelled)?;
    }
    Ok(())
}

/// What one line or event of the stream did.
#[derive(Debug, Default, Clone, Copy)]
struct Step {
    /// It carried some of the reply (text, thinking, a tool call).
    content: bool,
    /// The reply is complete.
    done: bool,
}

impl Step {
    fn and(self, next: Step) -> Step {
        Step {
            content: self.content || next.content,
            done: self.done || next.done,
        }
    }
}

/// Starts the call as a task; its reply comes on the returned channel.
pub(super) fn stream(call: Call, mut cancel: Cancel) -> mpsc::Receiver<StreamEvent> {
    let (tx, rx) = mpsc::channel(256);
    tokio::spawn(async move {
        let deadline = call.settings.reply_deadline;
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(deadline, call.run(&tx)) => outcome.unwrap_or_else(|_| {
                Err(ProviderError::MidStream(format!(
                    "the reply passed its deadline of {}",
                    humantime::format_duration(deadline)
                )))
            }),
            () = net::cancelled(&mut cancel) => Err(ProviderError::Cancelled),
            () = tx.closed() => Err(ProviderError::Cancelled),
        };
        let last = match outcome {
            Ok(()) => StreamEvent::Done,
            Err(e) => StreamEvent::Error(e),
        };
        let _ = tx.send(last).await;
    });
    rx
}

impl Call {
    async fn run(&self, tx: &mpsc::Sender<StreamEvent>) -> Result<(), ProviderError> {
        let mut response = self.send().await?;
        let idle = self.settings.timeout;
        let mut lines = Lines::new(MAX_LINE);
        let mut parser = SseParser::default();
        let mut gathered = Gathered::default();
        let mut last_content = tokio::time::Instant::now();
        let mut noise = 0usize;
        let silent = || {
            ProviderError::MidStream(format!(
                "the server sent nothing of the reply for {}",
                humantime::format_duration(idle)
            ))
        };
        loop {
            let chunk = tokio::time::timeout_at(last_content + idle, response.chunk())
                .await
                .map_err(|_| silent())?
                .map_err(|e| ProviderError::MidStream(error_chain(&e)))?;
            let Some(chunk) = chunk else { break };
            let mut step = Step::default();
            for line in lines
                .feed(&chunk)
                .map_err(|e| ProviderError::MidStream(e.to_string()))?
            {
                step = step.and(self.line(&mut parser, &line, &mut gathered, tx).await?);
                if step.done {
                    return finish(gathered, tx).await;
                }
            }
            if step.content {
                last_content = tokio::time::Instant::now();
                noise = 0;
            } else {
                noise += chunk.len();
                if noise > MAX_NOISE {
                    return Err(ProviderError::MidStream(format!(
                        "the server sent {noise} bytes without any of the reply"
                    )));
                }
                if last_content.elapsed() > idle {
                    return Err(silent());
                }
            }
        }
        if let Some(line) = lines.finish()
            && self.line(&mut parser, &line, &mut gathered, tx).await?.done
        {
            return finish(gathered, tx).await;
        }
        if let Some(event) = parser.finish()
            && self.dispatch(event, &mut gathered, tx).await?.done
        {
            return finish(gathered, tx).await;
        }
        Err(ProviderError::MidStream(
            "the stream ended before the reply was complete".into(),
        ))
    }

    /// Feeds one line to the parser: whether it carried some of the reply,
    /// and whether the reply is complete.
    async fn line(
        &self,
        parser: &mut SseParser,
        line: &str,
        gathered: &mut Gathered,
        tx: &mpsc::Sender<StreamEvent>,
    ) -> Result<Step, ProviderError> {
        let event = parser.line(line).map_err(|_| {
            ProviderError::MidStream("the server sent an event larger than partner reads".into())
        })?;
        match event {
            Some(event) => self.dispatch(event, gathered, tx).await,
            None => Ok(Step::default()),
        }
    }

    /// Passes on what an event means: whether it carried some of the
    /// reply, and whether the reply is complete.
    async fn dispatch(
        &self,
        event: SseEvent,
        gathered: &mut Gathered,
        tx: &mpsc::Sender<StreamEvent>,
    ) -> Result<Step, ProviderError> {
        let mut step = Step::default();
        for parsed in (self.on_event)(&event) {
            match parsed {
                Parsed::Token(text) => {
                    if text.is_empty() {
                        continue;
                    }
                    step.content = true;
                    tx.send(StreamEvent::Token(text))
                        .await
                        .map_err(|_| ProviderError::Cancelled)?;
                }
                Parsed::Thinking(bytes) => step.content |= bytes > 0,
                Parsed::ToolDelta {
                    index,
                    name,
                    arguments,
                } => {
                    if index >= MAX_CALLS {
                        continue;
                    }
                    step.content |=
                        name.as_ref().is_some_and(|n| !n.is_empty()) || !arguments.is_empty();
                    if gathered.calls.len() <= index {
                        gathered.calls.resize(index + 1, Default::default());
                    }
                    let call = &mut gathered.calls[index];
                    if let Some(name) = name {
                        call.0 = name.chars().take(64).collect();
                    }
                    if call.1.len() + arguments.len() > MAX_CALL_BYTES {
                        return Err(ProviderError::MidStream(
                            "a tool call's arguments grew past 16 KiB".into(),
                        ));
                    }
                    call.1.push_str(&arguments);
                }
                Parsed::Usage { input, output } => {
                    gathered.input = input.or(gathered.input);
                    gathered.output = output.or(gathered.output);
                }
                Parsed::Done => {
                    step.done = true;
                    return Ok(step);
                }
                Parsed::Skip => {}
                Parsed::Error(message) => return Err(ProviderError::MidStream(message)),
            }
        }
        Ok(step)
    }

    /// POSTs the body until the server takes it, retrying on 429, 5xx and
    /// failures to connect.
    async fn send(&self) -> Result<reqwest::Response, ProviderError> {
        let retry = self.settings.retry;
        let timeout = self.settings.timeout;
        let mut attempt = 0;
        loop {
            let mut request = self
                .client
                .post(&self.url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(self.body.clone());
            for (name, value) in &self.headers {
                request = request.header(name, value);
            }
            let wait = net::backoff(retry.backoff, attempt, retry.max_wait);
            let last = attempt >= retry.retries;
            match tokio::time::timeout(timeout, request.send()).await {
                // The server took the call and said nothing: asking again
                // would only wait as long again.
                Err(_) => {
                    return Err(ProviderError::Connection(format!(
                        "{} accepted the call but sent no answer within {}",
                        self.url,
                        humantime::format_duration(timeout)
                    )));
                }
                Ok(Err(e)) if last => {
                    return Err(ProviderError::Connection(format!(
                        "{}: {}",
                        self.url,
                        error_chain(&e)
                    )));
                }
                Ok(Err(_)) => tokio::time::sleep(wait).await,
                Ok(Ok(mut response)) => {
                    let status = response.status().as_u16();
                    if (status == 429 || status >= 500) && !last {
                        let asked = response
                            .headers()
                            .get(reqwest::header::RETRY_AFTER)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| net::retry_after(v, SystemTime::now()));
                        tokio::time::sleep(asked.unwrap_or(wait).min(retry.max_wait)).await;
                    } else if !(200..300).contains(&status) {
                        let body =
                            tokio::time::timeout(timeout, read_limited(&mut response, ERROR_BODY))
                                .await
                                .ok()
                                .and_then(Result::ok)
                                .map(|(bytes, _)| String::from_utf8_lossy(&bytes).into_owned())
                                .unwrap_or_default();
                        let body = body.chars().take(300).collect();
                        return Err(ProviderError::Status { status, body });
                    } else {
                        return Ok(response);
                    }
                }
            }
            attempt += 1;
        }
    }
}
