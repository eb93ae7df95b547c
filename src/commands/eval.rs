//! `partner eval`: scores how well an agent's model writes actions, over a
//! task set, in dialect and tool-call modes (see [`crate::eval`]).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::eval::{EvalTarget, TaskSet};
use crate::runtime::ConstellationConfig;
use crate::runtime::prompt::ActionFormat;

/// Options of `partner eval`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EvalOptions {
    /// The constellation config whose agent and provider are evaluated
    /// (default: ./partner.toml).
    #[arg(long, value_name = "FILE", conflicts_with = "demo")]
    pub config: Option<PathBuf>,
    /// Evaluate a scripted model made for the task set (right on some
    /// tasks, wrong on others): offline, to see what the report measures.
    #[arg(long)]
    pub demo: bool,
    /// The agent whose model, sampling and profile are used (default: the
    /// first one).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The task set (default: the one shipped with partner, eval/tasks.toml).
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
    /// Which action formats to try: dialect, tools or both.
    #[arg(long, default_value = "both", value_name = "MODE")]
    pub mode: String,
    /// The prompt profile, instead of the agent's: full or compact.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Longest wait for one reply (`2m`).
    #[arg(long, default_value = "2m", value_name = "DURATION")]
    pub timeout: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The constellation evaluated: `--demo`, `--config`, or `./partner.toml`
/// (with a hint when there is none).
fn constellation(options: &EvalOptions) -> Result<ConstellationConfig> {
    if options.demo {
        // A scripted model made for the task set: right on some tasks,
        // wrong on others, so every column of the report shows something.
        return ConstellationConfig::from_toml(
            include_str!("../../eval/demo.toml"),
            "partner eval --demo",
            std::path::Path::new("."),
            None,
            Some(include_str!("../../eval/demo_script.toml")),
        )
        .map_err(|e| Error::Usage(e.to_string()));
    }
    let path = options
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("partner.toml"));
    if options.config.is_none() && !path.exists() {
        return Err(Error::Usage(
            "no partner.toml here: pass --config FILE for the constellation whose model to evaluate, or --demo to try the built-in demo".into(),
        ));
    }
    ConstellationConfig::load(&path).map_err(|e| Error::Usage(e.to_string()))
}

/// What `partner eval` runs: the agent (its provider, model and settings
/// with the options' profile and timeout), the task set and the modes.
fn eval_plan(options: &EvalOptions) -> Result<(EvalTarget, TaskSet, Vec<ActionFormat>)> {
    let config = constellation(options)?;
    let agent = match &options.agent {
        Some(name) => config
            .agent(name)
            .ok_or_else(|| Error::Usage(format!("{} has no agent {name}", config.name)))?,
        None => config
            .agents
            .first()
            .ok_or_else(|| Error::Usage("the constellation has no agents".into()))?,
    };
    let provider = config
        .providers
        .get(&agent.provider)
        .cloned()
        .ok_or_else(|| Error::Usage(format!("no provider {}", agent.provider)))?;
    let set = match &options.tasks {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|source| Error::Read {
                path: file.clone(),
                source,
            })?;
            TaskSet::from_toml(&text)
                .map_err(|e| Error::Usage(format!("{}: {e}", file.display())))?
        }
        None => TaskSet::builtin().map_err(Error::Usage)?,
    };
    let modes = match options.mode.as_str() {
        "dialect" => vec![ActionFormat::Dialect],
        "tools" => vec![ActionFormat::Tools],
        "both" => vec![ActionFormat::Dialect, ActionFormat::Tools],
        other => {
            return Err(Error::Usage(format!(
                "--mode {other}: write dialect, tools or both"
            )));
        }
    };
    let mut settings = agent.settings.clone();
    if let Some(p) = &options.profile {
        settings.profile = p
            .parse()
            .map_err(|e: String| Error::Usage(format!("--profile: {e}")))?;
    }
    let timeout = crate::core::clock::parse_span(&options.timeout)
        .map_err(|e| Error::Usage(format!("--timeout: {e}")))?
        .max(Duration::from_millis(1));
    let target = EvalTarget {
        agent: agent.name.clone(),
        provider,
        model: agent.model.clone(),
        settings,
        max_tokens: config.max_tokens,
        timeout,
        partner: config.partner.clone(),
        blocks: EvalTarget::blocks_of(&agent.blocks),
        pulse: agent.pulse,
    };
    Ok((target, set, modes))
}

/// Runs `partner eval`: a progress line per task on `err`, the report on
/// `out`; exit 1 when every model call failed.
pub fn run_eval(options: &EvalOptions, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let (target, set, modes) = eval_plan(options)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    let progress = |mode: ActionFormat, i: usize, n: usize, r: &crate::eval::TaskResult| {
        let outcome = match &r.error {
            Some(e) => format!("the call failed: {}", e.lines().next().unwrap_or("")),
            None if r.matched => "matched".into(),
            None => format!("did not match ({} actions)", r.actions.len()),
        };
        let _ = writeln!(
            err,
            "{} {i}/{n} {}: {outcome} ({:.1}s)",
            match mode {
                ActionFormat::Dialect => "dialect",
                ActionFormat::Tools => "tools",
            },
            r.id,
            r.millis as f64 / 1000.0
        );
    };
    let report = runtime
        .block_on(crate::eval::run(&target, &set, &modes, progress))
        .map_err(Error::Runtime)?;
    let text = if options.json {
        serde_json::to_string_pretty(&report).map_err(|e| Error::Write(e.into()))? + "\n"
    } else {
        report.to_text()
    };
    out.write_all(text.as_bytes()).map_err(Error::Write)?;
    // A report of nothing but failed calls says nothing of the model.
    let calls: usize = report.modes.iter().map(|m| m.tasks).sum();
    let failed: usize = report.modes.iter().map(|m| m.failed_calls).sum();
    if calls > 0 && failed == calls {
        writeln!(
            err,
            "partner: every one of the {calls} model calls failed; the report above says nothing of the model"
        )
        .map_err(Error::Write)?;
        return Ok(1);
    }
    // Nothing was scored: every mode asked for was refused.
    if report.modes.is_empty() && !report.refused.is_empty() {
        for why in &report.refused {
            writeln!(err, "partner: {why}").map_err(Error::Write)?;
        }
        return Ok(1);
    }
    Ok(0)
}
