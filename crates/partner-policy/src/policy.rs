//! The policy file: rules that decide allow / ask / deny, roles, platforms,
//! rate limits and the request timeout. `config/policy.toml` is the
//! commented default, built into the binary.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use partner_dialect::{Marker, ParsedAction};
use partner_protocol::request::Authority;
use partner_store::memory::Reach;

/// The shipped default policy (also the file `config/policy.toml`).
pub const DEFAULT_POLICY: &str = include_str!("../../../config/policy.toml");

/// What a rule (or the default) decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleDecision {
    /// Run it.
    Allow,
    /// Ask an authority first.
    Ask,
    /// Refuse it.
    Deny,
}

/// A string or a list of strings in TOML.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One value.
    One(String),
    /// Several values.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The values.
    pub fn values(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(v) => vec![v.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }

    fn matches(&self, value: Option<&str>) -> bool {
        let Some(value) = value else {
            return false;
        };
        self.values().iter().any(|pattern| glob(pattern, value))
    }
}

/// `*` matches anything; `pre*` and `*post` match by prefix and suffix;
/// otherwise equal ignoring ASCII case.
fn glob(pattern: &str, value: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    let (p, v) = (pattern.to_ascii_lowercase(), value.to_ascii_lowercase());
    match (p.strip_suffix('*'), p.strip_prefix('*')) {
        (Some(prefix), _) => v.starts_with(prefix),
        (_, Some(suffix)) => v.ends_with(suffix),
        _ => p == v,
    }
}

/// One rule. Every field given must match; a rule with no fields matches
/// everything.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Verb or verbs.
    pub verb: Option<OneOrMany>,
    /// Sub-operation or operations.
    pub op: Option<OneOrMany>,
    /// Target patterns (label, agent, platform, URL, id).
    pub target: Option<OneOrMany>,
    /// Domain patterns (search domain or send domain).
    pub domain: Option<OneOrMany>,
    /// Markers: `none`, `routine`, `check`, `ask`, `serious`.
    pub marker: Option<OneOrMany>,
    /// Agents the rule applies to.
    pub agent: Option<OneOrMany>,
    /// What it decides.
    pub decide: RuleDecision,
    /// Who is asked, for `ask` (default: the policy's `default_authority`).
    pub authority: Option<OneOrMany>,
    /// `"allow"`: a `.` (routine) marker turns this rule's ask into allow.
    pub routine: Option<RuleDecision>,
    /// Shown to the partner and the agent.
    pub reason: Option<String>,
    /// The partners who may decide what this rule asks (by name; none:
    /// any partner).
    pub partners: Option<OneOrMany>,
    /// How many partners must approve what this rule asks (default 1).
    pub approvals: Option<usize>,
}

/// The most approvals a rule may require.
pub const MAX_APPROVALS: usize = 9;

/// Which partners may decide a request and how many must approve it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Quorum {
    /// The partners who may decide it (none: any partner).
    pub partners: Vec<String>,
    /// How many must approve it (at least one).
    pub approvals: usize,
}

impl Quorum {
    /// The quorum of `rule`: its partners and approvals.
    pub fn of(rule: &Rule) -> Self {
        Quorum {
            partners: rule
                .partners
                .as_ref()
                .map(|p| p.values().iter().map(|s| s.to_string()).collect())
                .unwrap_or_default(),
            approvals: rule.approvals.unwrap_or(1).max(1),
        }
    }

    /// The rule's checks: good names, a count it can reach, no agent
    /// authority beside it.
    fn check(&self, rule: &Rule) -> Result<(), String> {
        for name in &self.partners {
            crate::partners::check_name(name).map_err(|e| e.to_string())?;
        }
        if rule.approvals.is_some_and(|n| n == 0 || n > MAX_APPROVALS) {
            return Err(format!("approvals must be 1 to {MAX_APPROVALS}"));
        }
        if !self.partners.is_empty() && self.approvals > self.partners.len() {
            return Err(format!(
                "approvals = {} but only {} partners may decide",
                self.approvals,
                self.partners.len()
            ));
        }
        let agents = rule
            .authority
            .as_ref()
            .and_then(|a| parse_authorities(a).ok())
            .is_some_and(|a| a.iter().any(|a| !a.is_partner()));
        if agents && (!self.partners.is_empty() || self.approvals > 1) {
            return Err(
                "partners and approvals are for rules decided by partners, not agents".into(),
            );
        }
        Ok(())
    }

    /// What the queue says of it ("alice or bob; 2 approvals"), empty for
    /// any one partner.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.partners.is_empty() {
            parts.push(format!("decided by {}", self.partners.join(" or ")));
        }
        if self.approvals > 1 {
            parts.push(format!("needs {} partners to approve", self.approvals));
        }
        parts.join("; ")
    }
}

fn marker_name(marker: Option<Marker>) -> &'static str {
    match marker {
        None => "none",
        Some(Marker::Routine) => "routine",
        Some(Marker::Check) => "check",
        Some(Marker::Ask) => "ask",
        Some(Marker::Serious) => "serious",
    }
}

impl Rule {
    /// True when the rule applies to `agent` doing `action`.
    pub fn matches(&self, agent: &str, action: &ParsedAction) -> bool {
        let checks: [(&Option<OneOrMany>, Option<&str>); 6] = [
            (&self.verb, Some(action.verb.name())),
            (&self.op, action.op.map(|o| o.as_str())),
            (&self.target, action.target.as_deref()),
            (&self.domain, action.domain()),
            (&self.marker, Some(marker_name(action.marker))),
            (&self.agent, Some(agent)),
        ];
        checks
            .iter()
            .all(|(pattern, value)| pattern.as_ref().is_none_or(|p| p.matches(*value)))
    }
}

/// A token bucket's settings.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Most actions at once.
    #[serde(deserialize_with = "partner_core::bounds::burst")]
    pub burst: u32,
    /// Refill rate.
    #[serde(deserialize_with = "partner_core::bounds::per_minute")]
    pub per_minute: f64,
}

/// A platform agents may post to.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// Agents allowed to use it (`*` for all).
    #[serde(default)]
    pub agents: Vec<String>,
}

/// What one agent's constellation-wide search may read of other agents'
/// memory: a default and per-agent exceptions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Visibility {
    /// For agents not named below (default: shared blocks only).
    #[serde(default = "shared_reach")]
    pub default: Reach,
    /// Per agent.
    #[serde(default)]
    pub agents: BTreeMap<String, Reach>,
}

fn shared_reach() -> Reach {
    Reach::Shared
}

impl Visibility {
    /// How far `agent` may read into the others' memory.
    pub fn reach_of(&self, agent: &str) -> Reach {
        self.agents.get(agent).copied().unwrap_or(self.default)
    }
}

/// Where `/fetch` and `/web` may connect.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// Hosts that may be reached even though they resolve to a loopback,
    /// private, link-local or metadata address (`localhost`,
    /// `127.0.0.1:8080`, `*.internal`). Everything else must be public.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
}

impl Network {
    /// True when the policy lets agents reach `host` (with `port`) even at
    /// a non-public address.
    pub fn allows(&self, host: &str, port: Option<u16>) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_hosts.iter().any(|pattern| {
            let (pattern_host, pattern_port) = split_host_port(pattern);
            glob(pattern_host, host) && pattern_port.is_none_or(|p| Some(p) == port)
        })
    }
}

/// `host:port` → (`host`, port); `[::1]:80` and bare IPv6 handled.
fn split_host_port(text: &str) -> (&str, Option<u16>) {
    if let Some(rest) = text.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        return (host, after.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => (host, port.parse().ok()),
        _ => (text, None),
    }
}

/// Size limits on what agents store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Most bytes one archival entry may hold.
    #[serde(
        default = "default_archival_bytes",
        deserialize_with = "partner_core::bounds::archival_bytes"
    )]
    pub archival_bytes: usize,
}

fn default_archival_bytes() -> usize {
    64 * 1024
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            archival_bytes: default_archival_bytes(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    default: Option<RuleDecision>,
    default_authority: Option<OneOrMany>,
    request_timeout: Option<String>,
    #[serde(default)]
    visibility: Option<Visibility>,
    #[serde(default)]
    network: Network,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    roles: BTreeMap<String, String>,
    #[serde(default)]
    platforms: BTreeMap<String, Platform>,
    #[serde(default)]
    rate_limits: BTreeMap<String, RateLimit>,
    #[serde(default)]
    rules: Vec<Rule>,
}

/// A loaded policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Decision when no rule matches.
    pub default: RuleDecision,
    /// Who is asked when nobody is named.
    pub default_authority: Vec<Authority>,
    /// How long a request may wait.
    pub request_timeout: Option<Duration>,
    /// Agents with authority roles (name → role).
    pub roles: BTreeMap<String, String>,
    /// Configured platforms.
    pub platforms: BTreeMap<String, Platform>,
    /// Rate limits by verb (`default` for the rest).
    pub rate_limits: BTreeMap<String, RateLimit>,
    /// Rules, in order.
    pub rules: Vec<Rule>,
    /// What constellation searches may read of other agents' memory.
    pub visibility: Visibility,
    /// Where fetches may connect.
    pub network: Network,
    /// Size limits.
    pub limits: Limits,
}

/// A policy file that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct PolicyError {
    /// One-based line.
    pub line: usize,
    /// One-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a list of authorities.
pub fn parse_authorities(value: &OneOrMany) -> Result<Vec<Authority>, String> {
    value.values().iter().map(|s| s.parse()).collect()
}

impl Default for Policy {
    fn default() -> Self {
        Policy::from_toml(DEFAULT_POLICY).expect("the built-in policy parses")
    }
}

impl Policy {
    /// Every agent the policy names as an authority (`agent:NAME` in
    /// `default_authority` or a rule's `authority`), sorted.
    pub fn named_agents(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .default_authority
            .iter()
            .cloned()
            .chain(self.rules.iter().flat_map(|r| {
                r.authority
                    .as_ref()
                    .and_then(|a| parse_authorities(a).ok())
                    .unwrap_or_default()
            }))
            .filter_map(|a| match a {
                Authority::Agent(name) => Some(name),
                _ => None,
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// A policy that allows everything not covered by the implicit checks.
    pub fn permissive() -> Self {
        Policy {
            default: RuleDecision::Allow,
            default_authority: vec![Authority::Partner],
            request_timeout: None,
            roles: BTreeMap::new(),
            platforms: BTreeMap::new(),
            rate_limits: BTreeMap::new(),
            rules: Vec::new(),
            visibility: Visibility {
                default: Reach::Shared,
                agents: BTreeMap::new(),
            },
            network: Network::default(),
            limits: Limits::default(),
        }
    }

    /// Parses a policy file.
    pub fn from_toml(text: &str) -> Result<Self, PolicyError> {
        let at = |offset: usize, message: String| {
            let (line, column) = partner_dialect::Span::new(offset, offset).line_col(text);
            PolicyError {
                line,
                column,
                message,
            }
        };
        let file: PolicyFile = toml::from_str(text).map_err(|e| {
            at(
                e.span().map_or(0, |s| s.start),
                e.message().trim().replace('\n', " "),
            )
        })?;
        let locate = |needle: &str| text.find(needle).unwrap_or(0);
        let default_authority = match &file.default_authority {
            Some(v) => parse_authorities(v).map_err(|m| at(locate("default_authority"), m))?,
            None => vec![Authority::Partner],
        };
        for rule in &file.rules {
            if let Some(authority) = &rule.authority {
                parse_authorities(authority).map_err(|m| at(locate("authority"), m))?;
            }
            Quorum::of(rule).check(rule).map_err(|m| {
                let field = if m.starts_with("approvals") {
                    "approvals"
                } else {
                    "partners"
                };
                at(locate(field), m)
            })?;
        }
        let request_timeout = file
            .request_timeout
            .as_deref()
            .map(|t| {
                partner_core::clock::parse_span(t).map_err(|e| {
                    at(
                        locate("request_timeout"),
                        format!("request_timeout '{t}': {e}"),
                    )
                })
            })
            .transpose()?;
        Ok(Policy {
            default: file.default.unwrap_or(RuleDecision::Allow),
            default_authority,
            request_timeout,
            roles: file.roles,
            platforms: file.platforms,
            rate_limits: file.rate_limits,
            rules: file.rules,
            visibility: file.visibility.unwrap_or(Visibility {
                default: Reach::Shared,
                agents: BTreeMap::new(),
            }),
            network: file.network,
            limits: file.limits,
        })
    }

    /// The first rule matching, with its index.
    pub fn rule_for(&self, agent: &str, action: &ParsedAction) -> Option<(usize, &Rule)> {
        self.rules
            .iter()
            .enumerate()
            .find(|(_, r)| r.matches(agent, action))
    }

    /// Which partners may decide `agent`'s `action` and how many must
    /// approve it: the first matching rule's say (any one partner when it
    /// says nothing).
    pub fn quorum_for(&self, agent: &str, action: &ParsedAction) -> Quorum {
        self.rule_for(agent, action)
            .map(|(_, rule)| Quorum::of(rule))
            .unwrap_or(Quorum {
                partners: Vec::new(),
                approvals: 1,
            })
    }

    /// The authorities a rule names, or the default ones.
    pub fn authorities_of(&self, rule: Option<&Rule>) -> Vec<Authority> {
        rule.and_then(|r| r.authority.as_ref())
            .and_then(|a| parse_authorities(a).ok())
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| self.default_authority.clone())
    }

    /// True when the agent has an authority role.
    pub fn has_role(&self, agent: &str) -> bool {
        self.roles.contains_key(agent)
    }

    /// The rate limit for a verb: its own, else — for an MCP tool's verb
    /// (`fs.write_file`) — its server's (`"fs.*"`), else `default`.
    pub fn rate_limit(&self, verb: &str) -> Option<RateLimit> {
        let server = verb
            .split_once('.')
            .and_then(|(server, _)| self.rate_limits.get(&format!("{server}.*")));
        self.rate_limits
            .get(verb)
            .or(server)
            .or_else(|| self.rate_limits.get("default"))
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_parses() {
        let policy = Policy::default();
        assert!(policy.has_role("anchor"));
        assert!(policy.platforms.contains_key("bluesky"));
        assert_eq!(policy.request_timeout, Some(Duration::from_secs(86_400)));
    }

    #[test]
    fn errors_name_the_line() {
        let err = Policy::from_toml("default = \"maybe\"\n").unwrap_err();
        assert_eq!(err.line, 1);
        let err = Policy::from_toml(
            "default = \"ask\"\n[[rules]]\ndecide = \"ask\"\nauthority = \"boss\"\n",
        )
        .unwrap_err();
        assert!(err.message.contains("'boss' is not an authority"), "{err}");
        assert_eq!(err.line, 4);
    }

    #[test]
    fn globs() {
        assert!(glob("*", "x"));
        assert!(glob("blue*", "Bluesky"));
        assert!(glob("*.example.com", "docs.example.com"));
        assert!(!glob("bluesky", "discord"));
    }
}
