//! The built-in demo constellation: three scripted agents that use every
//! verb of the dialect in about a minute, offline. Its files live in
//! `config/demo/` and are compiled in.

use std::path::Path;

use super::config::{ConfigError, ConstellationConfig};

/// The demo's constellation file.
pub const DEMO_CONFIG: &str = include_str!("../../config/demo/constellation.toml");
/// The demo's policy.
pub const DEMO_POLICY: &str = include_str!("../../config/demo/policy.toml");
/// The demo's script.
pub const DEMO_SCRIPT: &str = include_str!("../../config/demo/script.toml");

/// The partner-facing agent and the message the demo opens with.
pub const DEMO_OPENING: (&str, &str) = ("sage", "Good morning! Where are we with the launch?");

/// The demo constellation.
pub fn demo_config() -> Result<ConstellationConfig, ConfigError> {
    ConstellationConfig::from_toml(
        DEMO_CONFIG,
        "built-in demo",
        Path::new("."),
        Some(DEMO_POLICY),
        Some(DEMO_SCRIPT),
    )
}
