//! The constellation config (`partner.toml`): agents, their models, roles,
//! pulse intervals and initial memory; model providers; the policy file;
//! web search and data sources. See `config/partner.toml` for a
//! documented example.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

mod agents;
mod providers;

use providers::{ProviderFile, build_provider};

use super::prompt::{ActionFormat, Profile};
use super::provider::{Provider, Sampling};
use super::settings::ModelSettings;
use partner_dialect::VerbTable;
use partner_engine::exec::{ExecConfig, WebConfig};
use partner_policy::Policy;
use partner_store::trace::BlockSpec;

/// What an agent is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentRole {
    /// Talks with the partner.
    PartnerFacing,
    /// Supervises others: may approve, deny, escalate and halt.
    Supervisor,
    /// Does work for the others.
    Worker,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockFile {
    label: String,
    value: String,
    #[serde(default)]
    description: String,
    kind: Option<String>,
    permission: Option<String>,
    limit: Option<partner_core::bounds::CharLimit>,
    #[serde(default)]
    shared: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentFile {
    name: String,
    model: String,
    role: Option<AgentRole>,
    pulse: Option<String>,
    persona: Option<String>,
    #[serde(default)]
    blocks: Vec<BlockFile>,
    greeting: Option<String>,
    profile: Option<Profile>,
    actions: Option<ActionFormat>,
    context: Option<partner_core::bounds::ContextTokens>,
    sampling: Option<Sampling>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuntimeFile {
    max_passes: Option<partner_core::bounds::MaxPasses>,
    history: Option<partner_core::bounds::HistoryLen>,
    pulse: Option<String>,
    max_tokens: Option<partner_core::bounds::MaxTokens>,
    max_reply_bytes: Option<partner_core::bounds::ReplyBytes>,
    profile: Option<Profile>,
    sampling: Option<Sampling>,
}

/// Console settings from the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsoleConfig {
    /// Theme: dark, light or high-contrast.
    pub theme: Option<String>,
    /// Keymap: default, vim or emacs.
    pub keymap: Option<String>,
    /// Ring the terminal bell when a request arrives for the partner.
    #[serde(default = "yes")]
    pub bell: bool,
}

fn yes() -> bool {
    true
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        ConsoleConfig {
            theme: None,
            keymap: None,
            bell: true,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    name: Option<String>,
    #[serde(default)]
    console: ConsoleConfig,
    partner: Option<String>,
    policy: Option<PathBuf>,
    #[serde(default)]
    runtime: RuntimeFile,
    #[serde(default)]
    providers: BTreeMap<String, ProviderFile>,
    web: Option<String>,
    #[serde(default)]
    data: BTreeMap<String, PathBuf>,
    #[serde(default)]
    shell: ShellFile,
    #[serde(default)]
    tools: ToolsFile,
    #[serde(default)]
    embeddings: providers::EmbeddingsFile,
    #[serde(default)]
    store: StoreFile,
    verbs: Option<toml::Table>,
    /// `[[mcp]]`: MCP servers whose tools agents may call.
    #[serde(default)]
    mcp: Vec<partner_mcp::ServerConfig>,
    agents: Vec<AgentFile>,
}

/// `[store]`: where the constellation is kept, when not in the default
/// database file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    /// A `postgres://` URL, or a database file (relative to the config).
    url: Option<String>,
}

/// `[tools]`: where the constellation's Pattern Lisp tools are.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsFile {
    /// The folder of `.plisp` files (relative to the config file;
    /// `tools/` beside it when that exists).
    dir: Option<PathBuf>,
}

/// `[shell]`: how approved shell commands run.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellFile {
    /// Working directory (relative to the config file).
    dir: Option<PathBuf>,
    /// Time limit (`60s`, `5m`).
    timeout: Option<partner_core::clock::TimeSpan>,
    /// Bytes of output kept.
    max_output: Option<usize>,
    /// The gate's index of applications and packages.
    index: Option<PathBuf>,
}

/// One agent, resolved.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Name.
    pub name: String,
    /// Provider name (before the colon of `model`).
    pub provider: String,
    /// Model name (after the colon).
    pub model: String,
    /// Role.
    pub role: AgentRole,
    /// Pulse interval (zero: no pulse).
    pub pulse: Duration,
    /// Memory blocks to create on first run.
    pub blocks: Vec<BlockSpec>,
    /// A first message from the partner, sent when the constellation
    /// starts and the agent's conversation is still empty.
    pub greeting: Option<String>,
    /// Prompt profile, action format, sampling and context.
    pub settings: ModelSettings,
}

/// A loaded constellation.
#[derive(Debug, Clone)]
pub struct ConstellationConfig {
    /// Its name.
    pub name: String,
    /// The partner's name, as agents address them.
    pub partner: String,
    /// Agents, in file order.
    pub agents: Vec<AgentConfig>,
    /// The permission policy (roles of supervisors added).
    pub policy: Policy,
    /// True when the config names no policy and the built-in one applies
    /// (its authorities are examples, not the user's intent).
    pub builtin_policy: bool,
    /// Providers by name.
    pub providers: HashMap<String, Arc<dyn Provider>>,
    /// Executor settings (agents, web, data sources).
    pub exec: ExecConfig,
    /// Most model passes per turn.
    pub max_passes: u32,
    /// Messages of history sent with each call.
    pub history: usize,
    /// Most tokens per reply.
    pub max_tokens: u32,
    /// Longest reply read from a model, in bytes: a longer one is cut off and
    /// none of its actions run.
    pub max_reply_bytes: usize,
    /// Console settings.
    pub console: ConsoleConfig,
    /// The verbs agents may write: the built-in ones with the aliases and
    /// verbs `[verbs.NAME]` sections add, and a verb for each tool.
    pub verbs: VerbTable,
    /// Tools that did not load, or got no verb of their own, in words.
    pub tool_warnings: Vec<String>,
    /// `[store] url`: a `postgres://` URL or a database file (made
    /// relative to the config's folder); none: the default file.
    pub store: Option<String>,
    /// `[[mcp]]`: the MCP servers whose tools become verbs (`server.tool`)
    /// when the constellation runs.
    pub mcp: Vec<partner_mcp::ServerConfig>,
    /// The config's folder, which relative paths in it are read from.
    pub base: PathBuf,
}

/// A config file that could not be loaded, with where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ConfigError {
    /// The file (or `built-in demo`).
    pub file: String,
    /// What is wrong, with line and column where known.
    pub message: String,
}

/// A `[store] url` as written: a server's URL unchanged, a file relative
/// to the config's folder.
fn store_in(url: &str, base: &std::path::Path) -> String {
    let lower = url.trim().to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        url.trim().to_string()
    } else {
        base.join(url).display().to_string()
    }
}

/// Longest model reply read by default (128 KiB: far beyond any real
/// turn, far below what would stall the runtime).
pub const DEFAULT_MAX_REPLY_BYTES: usize = 128 * 1024;

/// Default pulse interval.
pub const DEFAULT_PULSE: Duration = Duration::from_secs(600);

/// An error message cut to a sentence's worth: it may quote a value from
/// the file, which may be long.
fn brief(message: String) -> String {
    const MOST: usize = 400;
    if message.len() <= MOST {
        return message;
    }
    let mut end = MOST;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end])
}

/// Every agent of the file, each named once (at least one).
fn agents_of(
    parsed: &ConfigFile,
    default_pulse: Duration,
    policy: &mut Policy,
) -> Result<Vec<AgentConfig>, String> {
    let mut agents: Vec<AgentConfig> = Vec::new();
    for a in &parsed.agents {
        agents::check_name(&a.name)?;
        if agents.iter().any(|x| x.name == a.name) {
            return Err(format!("agent '{}' is defined twice", a.name));
        }
        agents.push(agents::agent_config(a, parsed, default_pulse, policy)?);
    }
    if agents.is_empty() {
        return Err("the constellation has no agents".into());
    }
    Ok(agents)
}

/// The model providers the agents use, each built once.
fn providers_for(
    agents: &[AgentConfig],
    parsed: &ConfigFile,
    base: &Path,
    script_text: Option<&str>,
) -> Result<HashMap<String, Arc<dyn Provider>>, String> {
    let mut providers: HashMap<String, Arc<dyn Provider>> = HashMap::new();
    let mut needed: Vec<&str> = agents.iter().map(|a| a.provider.as_str()).collect();
    needed.sort();
    needed.dedup();
    for name in needed {
        let file = parsed.providers.get(name);
        let provider = build_provider(name, file, base, script_text)?;
        providers.insert(name.to_string(), provider);
    }
    Ok(providers)
}

/// The file as TOML, its error at a line and column.
fn parse_file(text: &str) -> Result<ConfigFile, String> {
    toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        let (line, column) = partner_dialect::Span::new(at, at).line_col(text);
        format!(
            "line {line}, column {column}: {}",
            e.message().trim().replace('\n', " ")
        )
    })
}

/// The verb table (the built-in verbs, `[verbs]`, a verb per tool), the
/// tools' folder, and what was wrong with the tools.
fn verbs_and_tools(
    parsed: &ConfigFile,
    base: &Path,
) -> Result<(VerbTable, Option<PathBuf>, Vec<String>), String> {
    let mut verbs = VerbTable::builtin();
    if let Some(table) = &parsed.verbs {
        let mut file = toml::Table::new();
        file.insert("verbs".into(), toml::Value::Table(table.clone()));
        let text = toml::to_string(&file).map_err(|e| format!("verbs: {e}"))?;
        verbs
            .extend_from_toml(&text)
            .map_err(|e| format!("verbs: {e}"))?;
        partner_engine::exec::registry::Registry::new(verbs.clone())
            .map_err(|e| format!("verbs: {e}"))?;
    }
    let tools_dir = match &parsed.tools.dir {
        Some(d) => Some(base.join(d)),
        None => Some(base.join("tools")).filter(|d| d.is_dir()),
    };
    let tool_warnings = partner_engine::exec::tools::add_tool_verbs(
        &partner_engine::exec::tools::ToolShelf::new(tools_dir.clone()),
        &mut verbs,
    );
    Ok((verbs, tools_dir, tool_warnings))
}

/// The policy: `policy_text` when given, else the file `policy` names,
/// else the built-in one.
fn policy_of(
    parsed: &ConfigFile,
    base: &Path,
    policy_text: Option<&str>,
) -> Result<Policy, String> {
    Ok(match (policy_text, &parsed.policy) {
        (Some(t), _) => Policy::from_toml(t).map_err(|e| format!("policy: {e}"))?,
        (None, Some(p)) => {
            let path = base.join(p);
            let t = std::fs::read_to_string(&path)
                .map_err(|e| format!("policy {}: {e}", path.display()))?;
            Policy::from_toml(&t).map_err(|e| format!("policy {}: {e}", path.display()))?
        }
        (None, None) => Policy::default(),
    })
}

fn duration(text: &str, what: &str) -> Result<Duration, String> {
    partner_dialect::interval(text).map_err(|e| {
        if e.contains("too long") {
            format!("{what}: '{text}': {e}")
        } else {
            format!("{what}: '{text}' is not a duration like 30s, 10m or 1h")
        }
    })
}

impl ConstellationConfig {
    /// Loads `path`; relative paths inside it are relative to its folder.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.display().to_string(),
            message: e.to_string(),
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Self::from_toml(&text, &path.display().to_string(), base, None, None)
    }

    /// Parses a config. `policy_text` and `script_text` override the files
    /// the config names (the built-in demo uses them).
    pub fn from_toml(
        text: &str,
        file: &str,
        base: &Path,
        policy_text: Option<&str>,
        script_text: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let err = |message: String| ConfigError {
            file: file.to_string(),
            message: brief(message),
        };
        let parsed = parse_file(text).map_err(err)?;
        partner_mcp::config::check_all(&parsed.mcp).map_err(err)?;
        let (verbs, tools_dir, tool_warnings) = verbs_and_tools(&parsed, base).map_err(err)?;
        let mut policy = policy_of(&parsed, base, policy_text).map_err(err)?;
        let builtin_policy = policy_text.is_none() && parsed.policy.is_none();
        // `off` means the same here as on an agent: no pulses.
        let default_pulse = match &parsed.runtime.pulse {
            Some(p) if p == "off" => Duration::ZERO,
            Some(p) => duration(p, "runtime.pulse").map_err(err)?,
            None => DEFAULT_PULSE,
        };
        let agents = agents_of(&parsed, default_pulse, &mut policy).map_err(err)?;
        let providers = providers_for(&agents, &parsed, base, script_text).map_err(err)?;
        let mut shell = shell_config(&parsed.shell, base).map_err(err)?;
        shell.kept = kept_files(file, &parsed, base, tools_dir.as_deref());
        let exec = ExecConfig {
            agents: agents.iter().map(|a| a.name.clone()).collect(),
            web: parsed.web.clone().map(|endpoint| WebConfig { endpoint }),
            data_sources: parsed
                .data
                .iter()
                .map(|(k, v)| (k.clone(), base.join(v)))
                .collect(),
            shell,
            tools: tools_dir,
            embeddings: providers::embeddings_config(&parsed.embeddings, &parsed.providers, base)
                .map_err(err)?,
            ..ExecConfig::default()
        };
        Ok(ConstellationConfig {
            name: parsed
                .name
                .clone()
                .unwrap_or_else(|| "constellation".into()),
            partner: parsed
                .partner
                .clone()
                .unwrap_or_else(|| "the partner".into()),
            agents,
            policy,
            builtin_policy,
            providers,
            exec,
            max_passes: parsed.runtime.max_passes.map_or(4, |n| n.get() as u32),
            history: parsed.runtime.history.map_or(30, |n| n.to_usize()),
            max_tokens: parsed.runtime.max_tokens.map_or(1024, |n| n.get() as u32),
            max_reply_bytes: parsed
                .runtime
                .max_reply_bytes
                .map_or(DEFAULT_MAX_REPLY_BYTES, |n| n.to_usize()),
            console: parsed.console.clone(),
            verbs,
            tool_warnings,
            store: parsed.store.url.as_ref().map(|url| store_in(url, base)),
            mcp: parsed.mcp.clone(),
            base: base.to_path_buf(),
        })
    }

    /// A constellation with no agents (the console's replay mode).
    pub fn empty(name: &str) -> Self {
        ConstellationConfig {
            name: name.to_string(),
            partner: "the partner".into(),
            agents: Vec::new(),
            policy: Policy::permissive(),
            builtin_policy: false,
            providers: HashMap::new(),
            exec: ExecConfig::default(),
            max_passes: 1,
            history: 0,
            max_tokens: 0,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            console: ConsoleConfig::default(),
            verbs: VerbTable::builtin(),
            tool_warnings: Vec::new(),
            store: None,
            mcp: Vec::new(),
            base: PathBuf::from("."),
        }
    }

    /// What is odd about the constellation, in words: the authorities a
    /// policy the user wrote names that are not among the agents (requests
    /// that would wait on them wait for the partner instead; the built-in
    /// policy's are examples, not warned about), and tools that did not
    /// load.
    pub fn warnings(&self) -> Vec<String> {
        let named = if self.builtin_policy {
            Vec::new()
        } else {
            self.policy.named_agents()
        };
        let mut out: Vec<String> = named
            .into_iter()
            .filter(|name| self.agent(name).is_none())
            .map(|name| {
                format!(
                    "the policy names agent:{name} as an authority, but {} has no agent {name}: requests it would decide wait for you",
                    self.name
                )
            })
            .collect();
        out.extend(self.tool_warnings.iter().cloned());
        out
    }

    /// An agent by name.
    pub fn agent(&self, name: &str) -> Option<&AgentConfig> {
        self.agents.iter().find(|a| a.name == name)
    }
}

/// The constellation's own files, which an approved command may read but
/// never change: the config file, its policy, the providers' scripts and
/// the tools folder.
fn kept_files(
    file: &str,
    parsed: &ConfigFile,
    base: &Path,
    tools: Option<&Path>,
) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    out.push(std::path::PathBuf::from(file));
    out.extend(parsed.policy.iter().map(|p| base.join(p)));
    out.extend(
        parsed
            .providers
            .values()
            .filter_map(|p| p.script.as_ref())
            .map(|s| base.join(s)),
    );
    out.extend(tools.map(Path::to_path_buf));
    out.retain(|p| p.exists());
    out
}

/// `[shell]` resolved: paths against the config file's directory (`~`
/// the home), never a home, the root, a system directory or a secret;
/// the time limit at most an hour, the output at most 16 MiB.
fn shell_config(
    file: &ShellFile,
    base: &Path,
) -> Result<partner_engine::exec::ShellConfig, String> {
    let dir = file.dir.as_ref().map(|d| match d.strip_prefix("~") {
        Ok(rest) => std::env::var_os("HOME")
            .map(|h| std::path::PathBuf::from(h).join(rest))
            .unwrap_or_else(|| d.clone()),
        Err(_) => base.join(d),
    });
    if let Some(why) = dir
        .as_deref()
        .and_then(partner_engine::exec::ShellConfig::refusal)
    {
        return Err(format!("[shell] dir: commands may not run there: {why}"));
    }
    let mut shell = partner_engine::exec::ShellConfig {
        dir,
        index: file.index.as_ref().map(|d| base.join(d)),
        ..partner_engine::exec::ShellConfig::default()
    };
    if let Some(t) = &file.timeout {
        let span = t.get();
        if span.is_zero() || span > std::time::Duration::from_secs(3600) {
            return Err(format!(
                "[shell] timeout: {} is not between 1s and 1h",
                humantime::format_duration(span)
            ));
        }
        shell.timeout = span;
    }
    if let Some(n) = file.max_output {
        if n == 0 || n > 16 * 1024 * 1024 {
            return Err(format!(
                "[shell] max_output: {n} is not between 1 and 16777216 bytes"
            ));
        }
        shell.max_output = n;
    }
    Ok(shell)
}
