//! One `[[agents]]` entry of a constellation file read into an
//! [`AgentConfig`]: its name checked, its model's provider, its pulse,
//! its role (a supervisor gets the role in the policy), its blocks, and
//! its sampling and context over its provider's and the runtime's.

use std::time::Duration;

use super::{AgentConfig, AgentFile, AgentRole, ConfigFile, duration};
use crate::provider::Sampling;
use crate::settings::ModelSettings;
use partner_policy::Policy;
use partner_store::memory::{BlockKind, BlockPermission, DEFAULT_CHAR_LIMIT};
use partner_store::trace::BlockSpec;

/// An agent's name is letters, digits, `_` and `-`, starting with a letter.
pub(super) fn check_name(name: &str) -> Result<(), String> {
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "agent name '{name}' must be letters, digits, _ or -"
        ))
    }
}

/// The agent `a` describes (its name already checked); a supervisor's
/// role is added to `policy`.
pub(super) fn agent_config(
    a: &AgentFile,
    parsed: &ConfigFile,
    default_pulse: Duration,
    policy: &mut Policy,
) -> Result<AgentConfig, String> {
    let (provider, model) = a.model.split_once(':').ok_or_else(|| {
        format!(
            "agent {}: model '{}' must be provider:model",
            a.name, a.model
        )
    })?;
    let pulse = match &a.pulse {
        Some(p) if p == "off" => Duration::ZERO,
        Some(p) => duration(p, &format!("agent {} pulse", a.name))?,
        None => default_pulse,
    };
    let role = a.role.unwrap_or(AgentRole::Worker);
    if role == AgentRole::Supervisor {
        policy
            .roles
            .entry(a.name.clone())
            .or_insert_with(|| "supervisor".into());
    }
    let none = Sampling::default();
    let from_provider = parsed
        .providers
        .get(provider)
        .and_then(|p| p.sampling.as_ref())
        .unwrap_or(&none);
    let sampling = a
        .sampling
        .as_ref()
        .unwrap_or(&none)
        .over(from_provider)
        .over(parsed.runtime.sampling.as_ref().unwrap_or(&none));
    sampling
        .check()
        .map_err(|e| format!("agent {} sampling: {e}", a.name))?;
    let context = a
        .context
        .or_else(|| parsed.providers.get(provider).and_then(|p| p.context))
        .map(|c| c.to_usize());
    Ok(AgentConfig {
        name: a.name.clone(),
        provider: provider.to_string(),
        model: model.to_string(),
        role,
        pulse,
        blocks: block_specs(a)?,
        greeting: a.greeting.clone().filter(|g| !g.trim().is_empty()),
        settings: ModelSettings {
            profile: a.profile.or(parsed.runtime.profile).unwrap_or_default(),
            actions: a.actions.unwrap_or_default(),
            sampling,
            context,
        },
    })
}

/// The agent's blocks: its persona (when it has one), then its
/// `[[agents.blocks]]`.
fn block_specs(a: &AgentFile) -> Result<Vec<BlockSpec>, String> {
    let mut blocks = Vec::new();
    if let Some(persona) = &a.persona {
        blocks.push(BlockSpec {
            agent: a.name.clone(),
            label: "persona".into(),
            kind: BlockKind::Core,
            permission: BlockPermission::Partner,
            char_limit: DEFAULT_CHAR_LIMIT,
            description: "who you are".into(),
            value: persona.trim().to_string(),
            shared: false,
        });
    }
    for b in &a.blocks {
        blocks.push(BlockSpec {
            agent: a.name.clone(),
            label: b.label.clone(),
            kind: b
                .kind
                .as_deref()
                .map(kind)
                .transpose()?
                .unwrap_or(BlockKind::Working),
            permission: b
                .permission
                .as_deref()
                .map(permission)
                .transpose()?
                .unwrap_or(BlockPermission::ReadWrite),
            char_limit: b.limit.map_or(DEFAULT_CHAR_LIMIT, |l| l.to_usize()),
            description: b.description.clone(),
            shared: b.shared,
            value: b.value.trim().to_string(),
        });
    }
    Ok(blocks)
}

fn kind(text: &str) -> Result<BlockKind, String> {
    text.parse()
        .map_err(|_| format!("block kind '{text}' must be core, working or archival"))
}

fn permission(text: &str) -> Result<BlockPermission, String> {
    text.parse()
        .map_err(|_| format!("block permission '{text}' must be read_only, partner, human, append, read_write or admin"))
}
