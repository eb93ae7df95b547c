//! What `[[mcp]]` in `partner.toml` says of a server: its name, how to
//! reach it (a command to start, or a URL), where its token comes from,
//! which agents may use its tools, and how long a call may take.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// Longest server name (it prefixes every tool's verb).
pub const MAX_SERVER_NAME: usize = 24;

/// How long a call may take when the server's entry says nothing.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest call timeout an entry may set.
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// One `[[mcp]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The name its tools' verbs begin with (`fs` for `/fs.read_file`).
    pub name: String,
    /// The program to start (a stdio server).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it (nothing else of partner's environment is
    /// passed but `PATH`, `HOME`, `LANG` and `TMPDIR`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The directory it starts in (relative to the config's folder).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// A streamable-HTTP server's address.
    #[serde(default)]
    pub url: Option<String>,
    /// The environment variable holding the HTTP server's bearer token.
    #[serde(default)]
    pub token_env: Option<String>,
    /// The file holding it (read when the server is reached).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// The agents that may use its tools (none listed: every agent).
    #[serde(default)]
    pub agents: Vec<String>,
    /// Longest a call may take, in seconds (30 unless given).
    #[serde(default, rename = "timeout")]
    pub timeout_secs: Option<u64>,
    /// Where a stdio server may write (its declared roots; relative to
    /// the config's folder): nowhere else, in the shell's sandbox.
    #[serde(default)]
    pub writes: Vec<PathBuf>,
    /// Whether a stdio server may reach the network (off unless given).
    #[serde(default)]
    pub network: bool,
    /// Run a stdio server in the sandbox (on unless `false`; off, it runs
    /// as partner does, and `partner mcp list` says so).
    #[serde(default = "yes")]
    pub sandbox: bool,
}

fn yes() -> bool {
    true
}

/// True for a server name: lowercase letters, digits and `_`, starting
/// with a letter, at most [`MAX_SERVER_NAME`] long.
pub fn valid_server_name(name: &str) -> bool {
    name.len() <= MAX_SERVER_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Why a constellation's `[[mcp]]` entries cannot be used, if they cannot:
/// one that cannot, or two of one name.
pub fn check_all(servers: &[ServerConfig]) -> Result<(), String> {
    let mut names = std::collections::HashSet::new();
    for server in servers {
        server.check()?;
        if !names.insert(server.name.as_str()) {
            return Err(format!("mcp server {} is named twice", server.name));
        }
    }
    Ok(())
}

impl ServerConfig {
    /// Why the entry cannot be used, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        if !valid_server_name(&self.name) {
            return Err(format!(
                "mcp server name {:?}: 1 to {MAX_SERVER_NAME} lowercase letters, digits or '_', starting with a letter",
                self.name
            ));
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "mcp server {}: give a command or a url, not both",
                    self.name
                ));
            }
            (None, None) => {
                return Err(format!(
                    "mcp server {}: give a command to start or a url to reach",
                    self.name
                ));
            }
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(format!(
                    "mcp server {}: url {url:?} is not http:// or https://",
                    self.name
                ));
            }
            _ => {}
        }
        if (self.token_env.is_some() || self.token_file.is_some()) && self.url.is_none() {
            return Err(format!(
                "mcp server {}: a token is for a server reached by url",
                self.name
            ));
        }
        if self.call_timeout() > MAX_CALL_TIMEOUT {
            return Err(format!(
                "mcp server {}: timeout over {}s",
                self.name,
                MAX_CALL_TIMEOUT.as_secs()
            ));
        }
        Ok(())
    }

    /// How long a call may take.
    pub fn call_timeout(&self) -> Duration {
        self.timeout_secs
            .map_or(DEFAULT_CALL_TIMEOUT, Duration::from_secs)
    }

    /// Whether `agent` may use the server's tools.
    pub fn serves(&self, agent: &str) -> bool {
        self.agents.is_empty() || self.agents.iter().any(|a| a == agent)
    }

    /// The bearer token for an HTTP server: from the file or the
    /// environment variable the entry names (never from a prompt).
    pub fn token(&self) -> Result<Option<String>, String> {
        if let Some(path) = &self.token_file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                format!(
                    "mcp server {}: token file {}: {e}",
                    self.name,
                    path.display()
                )
            })?;
            return Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty()));
        }
        if let Some(var) = &self.token_env {
            return std::env::var(var)
                .map(Some)
                .map_err(|_| format!("mcp server {}: ${var} is not set", self.name));
        }
        Ok(None)
    }
}
