//! An OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, llama.cpp,
//! vLLM, Ollama's `/v1`): texts sent in batches, each call with a timeout
//! and retried on 429 and 5xx like chat calls, the answer's size bounded
//! and its vectors checked.

use std::time::Duration;

use serde_json::{Value, json};

use super::{EmbedError, Embedder, checked, in_batches};
use crate::net::{self, error_chain, read_limited};

/// Largest answer read for one batch.
const MAX_ANSWER: usize = 64 << 20;

/// Where and how to call the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSettings {
    /// Base URL, the part before `/embeddings` (`http://127.0.0.1:8080/v1`).
    pub base_url: String,
    /// API key, if the server needs one.
    pub api_key: Option<String>,
    /// The embedding model (`nomic-embed-text`, `text-embedding-3-small`).
    pub model: String,
    /// Time allowed for one call.
    pub timeout: Duration,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// Retries after the first attempt, on 429, 5xx and failed connections.
    pub retries: u32,
    /// First wait between attempts (doubling).
    pub backoff: Duration,
}

/// Embeddings from a server.
pub struct RemoteEmbedder {
    settings: RemoteSettings,
    client: reqwest::Client,
    id: String,
}

impl RemoteEmbedder {
    /// An embedder calling the endpoint `settings` describe.
    pub fn new(settings: RemoteSettings) -> Result<Self, EmbedError> {
        let client = net::model_client(settings.connect_timeout).map_err(EmbedError::Failed)?;
        Ok(RemoteEmbedder {
            id: format!(
                "remote:{}:{}",
                settings.base_url.trim_end_matches('/'),
                settings.model
            ),
            settings,
            client,
        })
    }

    async fn call(
        client: reqwest::Client,
        s: RemoteSettings,
        batch: Vec<String>,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/embeddings", s.base_url.trim_end_matches('/'));
        let body = json!({ "model": s.model, "input": batch }).to_string();
        let mut attempt = 0;
        loop {
            let mut request = client
                .post(&url)
                .timeout(s.timeout)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
            if let Some(key) = &s.api_key {
                request = request.bearer_auth(key);
            }
            let retry = match request.send().await {
                Ok(mut response) => {
                    let status = response.status();
                    let (bytes, cut) =
                        read_limited(&mut response, MAX_ANSWER).await.map_err(|e| {
                            EmbedError::Unavailable(format!("{url}: {}", error_chain(&e)))
                        })?;
                    if status.is_success() {
                        if cut {
                            return Err(EmbedError::Failed(format!(
                                "{url}: the answer is over {MAX_ANSWER} bytes"
                            )));
                        }
                        return parse(&url, &bytes, batch.len());
                    }
                    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
                    let why = format!("{url}: {status}: {text}");
                    if status.as_u16() == 429 || status.is_server_error() {
                        EmbedError::Unavailable(why)
                    } else {
                        return Err(EmbedError::Failed(why));
                    }
                }
                Err(e) => EmbedError::Unavailable(format!("{url}: {}", error_chain(&e))),
            };
            if attempt >= s.retries {
                return Err(retry);
            }
            tokio::time::sleep(net::backoff(s.backoff, attempt, Duration::from_secs(30))).await;
            attempt += 1;
        }
    }
}

/// The vectors of an answer, in the order of the texts (by `index` when
/// the server gives one).
fn parse(url: &str, bytes: &[u8], count: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
    let bad = |why: &str| EmbedError::Failed(format!("{url}: {why}"));
    let json: Value = serde_json::from_slice(bytes).map_err(|e| bad(&format!("not JSON: {e}")))?;
    let data = json["data"]
        .as_array()
        .ok_or_else(|| bad("no `data` list in the answer"))?;
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; count];
    for (i, item) in data.iter().enumerate() {
        let at = item["index"].as_u64().map_or(i, |n| n as usize);
        let numbers = item["embedding"]
            .as_array()
            .ok_or_else(|| bad("an item without an `embedding` list"))?;
        if numbers.len() > super::MAX_DIMS {
            return Err(bad(&format!("a vector of {} dimensions", numbers.len())));
        }
        let vector: Option<Vec<f32>> = numbers
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect();
        let vector =
            vector.ok_or_else(|| bad("an embedding holds something that is not a number"))?;
        match slots.get_mut(at) {
            Some(slot @ None) => *slot = Some(vector),
            _ => {
                return Err(bad(&format!(
                    "an item for text {at}, which is out of range or given twice"
                )));
            }
        }
    }
    let vectors: Option<Vec<Vec<f32>>> = slots.into_iter().collect();
    checked(
        count,
        vectors.ok_or_else(|| bad(&format!("fewer than {count} vectors")))?,
    )
}

impl Embedder for RemoteEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        in_batches(texts, |batch| {
            let work = Self::call(self.client.clone(), self.settings.clone(), batch);
            net::run(work, None).map_err(|e| EmbedError::Unavailable(e.to_string()))?
        })
    }
}
