//! Model providers from `[providers.NAME]`: which wire format, where the
//! server is, keys, timeouts and retries.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use partner_core::clock::TimeSpan;

use crate::provider::{
    AnthropicProvider, HttpSettings, OpenAiProvider, Provider, RetryPolicy, Sampling, Script,
    ScriptedProvider,
};

/// Time allowed to open a connection to a model server, unless the
/// provider says otherwise: a server that is down fails fast.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Time allowed for a whole reply, retries included, unless the provider
/// says otherwise.
pub const DEFAULT_REPLY_DEADLINE: Duration = Duration::from_secs(600);

/// One `[providers.NAME]` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProviderFile {
    pub kind: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub api_key_env: Option<String>,
    pub timeout: Option<TimeSpan>,
    pub retries: Option<partner_core::bounds::Retries>,
    pub backoff: Option<TimeSpan>,
    pub script: Option<PathBuf>,
    pub connect_timeout: Option<TimeSpan>,
    pub reply_deadline: Option<TimeSpan>,
    pub context: Option<partner_core::bounds::ContextTokens>,
    pub sampling: Option<Sampling>,
}

/// Where and how to reach the server of `[providers.NAME]` (of `kind`).
pub(super) fn http_settings(
    name: &str,
    kind: &str,
    file: &ProviderFile,
) -> Result<HttpSettings, String> {
    let (default_base, default_env): (Option<String>, Option<&str>) = match (name, kind) {
        ("ollama", _) => (Some(ollama_base()), None),
        (_, "anthropic") => (
            Some("https://api.anthropic.com".into()),
            Some("ANTHROPIC_API_KEY"),
        ),
        ("openai", _) => (
            Some("https://api.openai.com/v1".into()),
            Some("OPENAI_API_KEY"),
        ),
        _ => (None, None),
    };
    let base_url = file
        .base_url
        .clone()
        .or(default_base)
        .ok_or_else(|| format!("provider {name} needs a base_url in [providers.{name}]"))?;
    let api_key = file
        .api_key
        .clone()
        .or_else(|| {
            file.api_key_env
                .as_deref()
                .and_then(|v| std::env::var(v).ok())
        })
        .or_else(|| default_env.and_then(|v| std::env::var(v).ok()));
    let mut retry = RetryPolicy::default();
    if let Some(r) = file.retries {
        retry.retries = r.get() as u32;
    }
    if let Some(b) = file.backoff {
        retry.backoff = b.get();
    }
    // A wait of no time at all would fail every call: at least a second.
    let at_least_a_second = |span: Option<TimeSpan>, what: &str, default: Duration| match span {
        Some(s) if s.get() < Duration::from_secs(1) => Err(format!(
            "provider {name} {what}: {}s is too short; at least 1s",
            s.get().as_secs_f64()
        )),
        Some(s) => Ok(s.get()),
        None => Ok(default),
    };
    let timeout = at_least_a_second(file.timeout, "timeout", Duration::from_secs(60))?;
    let connect_timeout = at_least_a_second(
        file.connect_timeout,
        "connect_timeout",
        DEFAULT_CONNECT_TIMEOUT,
    )?;
    let reply_deadline = at_least_a_second(
        file.reply_deadline,
        "reply_deadline",
        DEFAULT_REPLY_DEADLINE,
    )?;
    Ok(HttpSettings {
        base_url,
        api_key,
        timeout,
        reply_deadline,
        connect_timeout,
        retry,
    })
}

/// The `OLLAMA_HOST` setting as a base URL with `/v1`.
fn ollama_base() -> String {
    let host = std::env::var("OLLAMA_HOST").unwrap_or_else(|_| "http://localhost:11434".into());
    let host = if host.contains("://") {
        host
    } else {
        format!("http://{host}")
    };
    format!("{}/v1", host.trim_end_matches('/'))
}

pub(super) fn build_provider(
    name: &str,
    file: Option<&ProviderFile>,
    base: &Path,
    script_text: Option<&str>,
) -> Result<Arc<dyn Provider>, String> {
    let empty = ProviderFile::default();
    let file = file.unwrap_or(&empty);
    let kind = file.kind.as_deref().unwrap_or(match name {
        "anthropic" => "anthropic",
        "scripted" => "scripted",
        _ => "openai",
    });
    if kind == "scripted" {
        let text = match (script_text, &file.script) {
            (Some(t), _) => t.to_string(),
            (None, Some(p)) => {
                let path = base.join(p);
                std::fs::read_to_string(&path)
                    .map_err(|e| format!("script {}: {e}", path.display()))?
            }
            (None, None) => {
                return Err(format!(
                    "provider {name}: a scripted provider needs `script = \"FILE\"`"
                ));
            }
        };
        let script =
            Script::from_toml(&text).map_err(|e| format!("provider {name} script: {e}"))?;
        return Ok(Arc::new(ScriptedProvider::new(script)));
    }
    let settings = http_settings(name, kind, file)?;
    let connect_timeout = settings.connect_timeout;
    let client = partner_engine::net::model_client(connect_timeout)?;
    Ok(match kind {
        "anthropic" => Arc::new(AnthropicProvider::new(settings, client)),
        "openai" => Arc::new(OpenAiProvider::new(name, settings, client)),
        other => {
            return Err(format!(
                "provider {name}: unknown kind '{other}' (openai, anthropic or scripted)"
            ));
        }
    })
}

/// `[embeddings]`: which embedder memory search uses.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EmbeddingsFile {
    /// `transformer`, `model2vec`, `provider` or `none`; when absent, the
    /// kind of the model `path` names, else the provider's, else a model
    /// found in partner's data directory (`models/`), else none.
    pub kind: Option<String>,
    /// A model directory (relative to the config file).
    pub path: Option<PathBuf>,
    /// A `[providers.NAME]` whose server has `/v1/embeddings`.
    pub provider: Option<String>,
    /// The embedding model to ask that server for.
    pub model: Option<String>,
}

/// `[embeddings]` resolved: paths against the config file's directory, the
/// provider's URL, key, timeouts and retries as its chat calls have them.
pub(super) fn embeddings_config(
    file: &EmbeddingsFile,
    providers: &std::collections::BTreeMap<String, ProviderFile>,
    base: &Path,
) -> Result<partner_engine::embed::EmbeddingsConfig, String> {
    use partner_engine::embed::{EmbeddingsConfig, RemoteSettings};
    let kind = match (file.kind.as_deref(), &file.path, &file.provider) {
        (Some(kind), _, _) => kind,
        (None, Some(path), _)
            if partner_engine::embed::looks_like_transformer(&base.join(path)) =>
        {
            "transformer"
        }
        (None, Some(_), _) => "model2vec",
        (None, None, Some(_)) => "provider",
        // Nothing named: a model in partner's data directory, if any.
        (None, None, None) => {
            return Ok(partner_engine::embed::models::models_dir()
                .map(|dir| partner_engine::embed::models::default_in(&dir))
                .unwrap_or_default());
        }
    };
    match kind {
        "none" => Ok(EmbeddingsConfig::None),
        "transformer" => {
            let path = file.path.as_ref().ok_or(
                "[embeddings] kind = \"transformer\" needs path = \"DIR\" (a sentence-transformers model directory; `partner models fetch` puts one in partner's data directory, where it is found without one)",
            )?;
            Ok(EmbeddingsConfig::Transformer {
                path: base.join(path),
            })
        }
        "model2vec" => {
            let path = file
                .path
                .as_ref()
                .ok_or("[embeddings] kind = \"model2vec\" needs path = \"DIR\" (a Model2Vec model directory)")?;
            Ok(EmbeddingsConfig::Model2Vec {
                path: base.join(path),
            })
        }
        "provider" => {
            let name = file.provider.as_deref().ok_or(
                "[embeddings] kind = \"provider\" needs provider = \"NAME\" (one of [providers])",
            )?;
            let model = file
                .model
                .clone()
                .ok_or("[embeddings] needs model = \"…\", the embedding model to ask for")?;
            let empty = ProviderFile::default();
            let section = match providers.get(name) {
                Some(f) => f,
                None if matches!(name, "openai" | "ollama") => &empty,
                None => {
                    return Err(format!(
                        "[embeddings] provider = \"{name}\": there is no [providers.{name}]"
                    ));
                }
            };
            let provider_kind = section.kind.as_deref().unwrap_or(match name {
                "anthropic" => "anthropic",
                "scripted" => "scripted",
                _ => "openai",
            });
            if provider_kind != "openai" {
                return Err(format!(
                    "[embeddings] provider = \"{name}\" is a {provider_kind} provider; embeddings need an OpenAI-compatible server (OpenAI, llama.cpp, vLLM, Ollama)"
                ));
            }
            let http = http_settings(name, provider_kind, section)?;
            Ok(EmbeddingsConfig::Remote(RemoteSettings {
                base_url: http.base_url,
                api_key: http.api_key,
                model,
                timeout: http.timeout,
                connect_timeout: http.connect_timeout,
                retries: http.retry.retries,
                backoff: http.retry.backoff,
            }))
        }
        other => Err(format!(
            "[embeddings] kind = \"{other}\": expected transformer, model2vec, provider or none"
        )),
    }
}
