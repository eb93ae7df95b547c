//! Who decides a request: the partner, a supervising agent, or a chain of
//! them tried in order.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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
            return crate::partners::check_name(name)
                .map(|()| Authority::Named(name.to_string()))
                .map_err(|e| e.to_string());
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
