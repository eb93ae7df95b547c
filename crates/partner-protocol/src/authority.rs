//! Who decides a request: a partner (unnamed, or named with their own
//! token) or a supervising agent.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Longest name a partner may have.
pub const MAX_PARTNER_NAME: usize = 32;

/// True when `name` may name a partner: 1 to [`MAX_PARTNER_NAME`]
/// lowercase letters, digits, `-` or `_`, starting with a letter.
pub fn is_partner_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_PARTNER_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// One authority that can decide a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Authority {
    /// A partner, unnamed: any partner may decide what waits on it; a
    /// decision made as it is the local owner's (the console on the
    /// daemon's socket, the command line), who showed no token.
    Partner,
    /// One named partner (`partner:NAME`), who showed their own token.
    Named(String),
    /// A supervising agent (`agent:anchor`).
    Agent(String),
}

impl Authority {
    /// True for a partner, named or not.
    pub fn is_partner(&self) -> bool {
        matches!(self, Authority::Partner | Authority::Named(_))
    }

    /// The partner's name, for a named partner.
    pub fn partner_name(&self) -> Option<&str> {
        match self {
            Authority::Named(name) => Some(name),
            _ => None,
        }
    }
}

impl fmt::Display for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Authority::Partner => f.write_str("partner"),
            Authority::Named(name) => write!(f, "partner:{name}"),
            Authority::Agent(name) => write!(f, "agent:{name}"),
        }
    }
}

impl FromStr for Authority {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("partner") || s.eq_ignore_ascii_case("human") {
            return Ok(Authority::Partner);
        }
        if let Some(name) = s.strip_prefix("partner:") {
            return if is_partner_name(name) {
                Ok(Authority::Named(name.to_string()))
            } else {
                Err(format!(
                    "{name:?} is not a partner's name: 1 to {MAX_PARTNER_NAME} lowercase letters, digits, '-' or '_', starting with a letter"
                ))
            };
        }
        match s.strip_prefix("agent:") {
            Some(name) if !name.is_empty() => Ok(Authority::Agent(name.to_string())),
            _ => Err(format!(
                "'{s}' is not an authority; write \"partner\", \"partner:NAME\" or \"agent:NAME\""
            )),
        }
    }
}

impl TryFrom<String> for Authority {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Authority> for String {
    fn from(a: Authority) -> String {
        a.to_string()
    }
}
