//! The built-in demo constellation: three scripted agents that use every
//! verb of the dialect in about a minute, offline. Its files live in
//! `config/demo/` and are compiled in.

use std::path::Path;

use super::config::{ConfigError, ConstellationConfig};

/// The demo's constellation file.
pub const DEMO_CONFIG: &str = include_str!("../../../config/demo/constellation.toml");
/// The demo's policy.
pub const DEMO_POLICY: &str = include_str!("../../../config/demo/policy.toml");
/// The demo's script.
pub const DEMO_SCRIPT: &str = include_str!("../../../config/demo/script.toml");

/// The demo's Pattern Lisp tools (`config/demo/tools/`), by name.
pub const DEMO_TOOLS: &[(&str, &str)] = &[
    (
        "checklist",
        include_str!("../../../config/demo/tools/checklist.plisp"),
    ),
    (
        "tally",
        include_str!("../../../config/demo/tools/tally.plisp"),
    ),
];

/// The partner-facing agent and the message the demo opens with (its
/// `greeting` in the demo's file).
pub const DEMO_OPENING: (&str, &str) = ("sage", "Good morning! Where are we with the launch?");

/// The demo constellation. Its tools are written to a folder named after
/// their contents under the temporary directory (the same files give the
/// same folder, so demos running side by side share it safely).
pub fn demo_config() -> Result<ConstellationConfig, ConfigError> {
    let mut config = ConstellationConfig::from_toml(
        DEMO_CONFIG,
        "built-in demo",
        Path::new("."),
        Some(DEMO_POLICY),
        Some(DEMO_SCRIPT),
    )?;
    match install_tools() {
        Ok(dir) => {
            let shelf = partner_engine::exec::tools::ToolShelf::new(Some(dir.clone()));
            config.tool_warnings =
                partner_engine::exec::tools::add_tool_verbs(&shelf, &mut config.verbs);
            config.exec.tools = Some(dir);
        }
        Err(e) => config
            .tool_warnings
            .push(format!("the demo's tools could not be written: {e}")),
    }
    Ok(config)
}

fn install_tools() -> std::io::Result<std::path::PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    DEMO_TOOLS.hash(&mut hasher);
    let dir = std::env::temp_dir().join(format!("partner-demo-tools-{:016x}", hasher.finish()));
    std::fs::create_dir_all(&dir)?;
    for (name, source) in DEMO_TOOLS {
        let path = dir.join(format!("{name}.plisp"));
        if std::fs::read_to_string(&path).ok().as_deref() == Some(*source) {
            continue;
        }
        // Written beside, then renamed: a reader never sees half a file.
        let partial = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        std::fs::write(&partial, source)?;
        std::fs::rename(&partial, &path)?;
    }
    Ok(dir)
}
