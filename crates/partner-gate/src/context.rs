//! What the system says about a request's target, cheapest first: an
//! executable on `PATH`, an installed package (`dpkg-query`, `rpm`), an
//! available one (`apt-cache`, `dnf`), a systemd unit's state
//! (`systemctl show`). Every probe goes through [`Probe`] (tests use
//! fakes), has a timeout, and fails open: a probe that cannot answer adds
//! nothing. The result is written for the partner and the model in one
//! format (`- gimp: executable at /usr/bin/gimp`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::process::probe;

/// Longest a probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// A package's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "version")]
pub enum PackageState {
    /// Installed, with its version.
    Installed(String),
    /// Not installed, and the package manager has it.
    Available(String),
    /// The package manager does not know it.
    Unknown,
}

/// A systemd unit's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitState {
    /// `active`, `inactive`, `failed`…
    pub active: String,
    /// `enabled`, `disabled`, `static`…
    pub enabled: String,
}

/// A program found by description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Similar {
    /// Its name (a package or a desktop application).
    pub name: String,
    /// The command that starts it, when known.
    pub command: Option<String>,
    /// What it is.
    pub description: String,
    /// It matches every word asked for (not only some), or it is the
    /// nearest by meaning: a program that may be proposed.
    pub whole: bool,
    /// It was found by meaning, not by its words.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_meaning: bool,
}

/// Where the gate learns about the system.
pub trait Probe: Send + Sync {
    /// The executable `name` on `PATH`.
    fn executable(&self, name: &str) -> Option<PathBuf>;
    /// The package `name`'s state, `None` when no package manager answers.
    fn package(&self, name: &str) -> Option<PackageState>;
    /// The unit `name`'s state, `None` when it is not a loaded unit.
    fn unit(&self, name: &str) -> Option<UnitState>;
    /// Programs whose description matches `words`, best first.
    fn similar(&self, words: &str) -> Vec<Similar>;
}

/// What the probes said about one target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Context {
    /// The target asked about.
    pub target: String,
    /// The executable, when on `PATH`.
    pub executable: Option<PathBuf>,
    /// The package's state, when a package manager answered.
    pub package: Option<PackageState>,
    /// The unit's state, when it is one.
    pub unit: Option<UnitState>,
    /// Programs matching it by description, when nothing matched by name.
    pub similar: Vec<Similar>,
}

/// Asks the probes about `target`, cheapest first.
pub fn gather(probe: &dyn Probe, target: &str) -> Context {
    let name = target.trim();
    let mut ctx = Context {
        target: name.to_string(),
        ..Context::default()
    };
    // A name with spaces is a description: only the index can answer.
    if !name.contains(char::is_whitespace) && !name.is_empty() && is_name(name) {
        ctx.executable = probe.executable(name);
        ctx.package = probe.package(name);
        ctx.unit = probe.unit(name);
    }
    let known = ctx.executable.is_some()
        || matches!(
            ctx.package,
            Some(PackageState::Installed(_) | PackageState::Available(_))
        )
        || ctx.unit.is_some();
    if !known && !name.is_empty() {
        ctx.similar = probe.similar(name).into_iter().take(5).collect();
    }
    ctx
}

/// True for a word that can be a program, package or unit name (nothing a
/// probe's command line could read as an option or a path).
fn is_name(s: &str) -> bool {
    !s.starts_with('-')
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-+._@".contains(c))
}

impl Context {
    /// The lines given to the partner and the model.
    pub fn lines(&self) -> Vec<String> {
        let t = &self.target;
        let mut out = Vec::new();
        if let Some(path) = &self.executable {
            out.push(format!("- {t}: executable at {}", path.display()));
        }
        match &self.package {
            Some(PackageState::Installed(v)) => out.push(format!("- {t}: package installed ({v})")),
            Some(PackageState::Available(v)) => {
                out.push(format!("- {t}: package available but NOT installed ({v})"))
            }
            Some(PackageState::Unknown) if self.executable.is_none() => {
                out.push(format!("- {t}: no such package"))
            }
            _ => {}
        }
        if let Some(unit) = &self.unit {
            out.push(format!(
                "- {t} service: {}, {} at boot",
                unit.active, unit.enabled
            ));
        }
        if !self.similar.is_empty() {
            out.push(format!(
                "- {t}: NOT FOUND directly, but similar programs found:"
            ));
            for s in &self.similar {
                let how = if s.by_meaning { " (by meaning)" } else { "" };
                out.push(format!("  • {}: {}{how}", s.name, s.description));
            }
        } else if out.is_empty() && !t.is_empty() {
            out.push(format!("- {t}: nothing found on this system"));
        }
        out
    }

    /// The context as the model reads it.
    pub fn for_model(&self) -> String {
        format!("System Context:\n{}", self.lines().join("\n"))
    }
}

/// The probes of this machine.
#[derive(Debug, Clone, Default)]
pub struct SystemProbe {
    /// Where the index of packages and applications is, for descriptions
    /// (partner's data directory when unset); built on first use.
    pub index: Option<PathBuf>,
    /// The constellation's embedder, for finding programs by meaning when
    /// their words do not match.
    pub embedder: Option<std::sync::Arc<dyn partner_core::embedder::Embedder>>,
}

impl Probe for SystemProbe {
    fn executable(&self, name: &str) -> Option<PathBuf> {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    }

    fn package(&self, name: &str) -> Option<PackageState> {
        if let Some(ran) = probe(
            "dpkg-query",
            &["-W", "-f=${Status}\t${Version}", name],
            PROBE_TIMEOUT,
        ) {
            if ran.status == Some(0) && ran.stdout.contains("install ok installed") {
                let version = ran
                    .stdout
                    .split('\t')
                    .nth(1)
                    .unwrap_or("")
                    .trim()
                    .to_string();
                return Some(PackageState::Installed(version));
            }
            if let Some(policy) = probe("apt-cache", &["policy", name], PROBE_TIMEOUT)
                && let Some(candidate) = policy
                    .stdout
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("Candidate:"))
                && candidate.trim() != "(none)"
            {
                return Some(PackageState::Available(candidate.trim().to_string()));
            }
            return Some(PackageState::Unknown);
        }
        let ran = probe("rpm", &["-q", "--qf", "%{VERSION}", name], PROBE_TIMEOUT)?;
        if ran.status == Some(0) {
            return Some(PackageState::Installed(ran.stdout.trim().to_string()));
        }
        let info = probe("dnf", &["-q", "info", "--available", name], PROBE_TIMEOUT)?;
        Some(if info.status == Some(0) {
            let v = info
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix("Version"))
                .unwrap_or("")
                .trim_start_matches([' ', ':']);
            PackageState::Available(v.to_string())
        } else {
            PackageState::Unknown
        })
    }

    fn unit(&self, name: &str) -> Option<UnitState> {
        let ran = probe(
            "systemctl",
            &[
                "show",
                name,
                "--property=LoadState,ActiveState,UnitFileState",
            ],
            PROBE_TIMEOUT,
        )?;
        let get = |key: &str| {
            ran.stdout
                .lines()
                .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                .unwrap_or("")
                .to_string()
        };
        (get("LoadState") == "loaded").then(|| UnitState {
            active: get("ActiveState"),
            enabled: get("UnitFileState"),
        })
    }

    fn similar(&self, words: &str) -> Vec<Similar> {
        let Some(path) = self.index.clone().or_else(super::index::default_path) else {
            return Vec::new();
        };
        super::index::open_built(&path)
            .and_then(|i| i.search(words, 5, self.embedder.as_deref()).ok())
            .unwrap_or_default()
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
