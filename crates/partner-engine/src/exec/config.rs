//! Settings of the executor: the constellation's agents, fetch limits, the
//! web search endpoint and data sources.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Limits for `/fetch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchConfig {
    /// Whole-request timeout.
    pub timeout: Duration,
    /// Most bytes read from a response.
    pub max_bytes: u64,
    /// Characters per page returned to the agent (`/fetch continue` for more).
    pub page_chars: usize,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            timeout: Duration::from_secs(15),
            max_bytes: 2 * 1024 * 1024,
            page_chars: 6000,
        }
    }
}

/// A web search endpoint for `/web`: `{query}` in the URL is replaced by
/// the query (otherwise `?q=` is appended). The response is JSON with a
/// `results` list of `{title, url, content|snippet}` (SearXNG's format) or
/// plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebConfig {
    /// The endpoint URL.
    pub endpoint: String,
}

/// How `/shell` runs an approved command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellConfig {
    /// The working directory (the directory partner started in when unset).
    pub dir: Option<PathBuf>,
    /// Longest a command may run.
    pub timeout: Duration,
    /// Most bytes of output (and of error output) kept.
    pub max_output: usize,
    /// The index of applications and packages, for requests in words.
    pub index: Option<PathBuf>,
    /// The constellation's own files (its config, policy, verbs, tools,
    /// scripts) a command may read but never change.
    pub kept: Vec<PathBuf>,
}

impl ShellConfig {
    /// Why `dir` may not be where commands run (a home, the root, a
    /// system directory, a secret), if it may not.
    pub fn refusal(dir: &std::path::Path) -> Option<String> {
        let scene = partner_gate::Scene::current().in_dir(dir);
        partner_gate::sandbox::refusal(dir, &scene)
    }
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            dir: None,
            timeout: Duration::from_secs(60),
            max_output: 64 * 1024,
            index: None,
            kept: Vec::new(),
        }
    }
}

/// Everything the executor is configured with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExecConfig {
    /// Agents of the constellation (for `/tell` and `/halt`); agents seen in
    /// the database count too.
    pub agents: Vec<String>,
    /// Fetch limits.
    pub fetch: FetchConfig,
    /// Web search, if configured.
    pub web: Option<WebConfig>,
    /// Data sources by id: a file or a directory.
    pub data_sources: BTreeMap<String, PathBuf>,
    /// How approved shell commands run.
    pub shell: ShellConfig,
    /// The folder of Pattern Lisp tools (`.plisp`), if any.
    pub tools: Option<PathBuf>,
    /// Which embedder memory search uses (`[embeddings]`; none: keywords
    /// only).
    pub embeddings: crate::embed::EmbeddingsConfig,
}
