//! `/shell` (`/run`, `/exec`, `/sh`, `/bash`): a shell command, or a
//! request in words, through the parse gate. A request in words becomes
//! the command proposed for it before anybody is asked (or, when the
//! system does not say enough, the agent is given the context and asked to
//! propose one). Every command asks the partner, whatever the policy says;
//! a blocked one cannot be approved. An approved command passes the three
//! layers again (the partner may have edited it) and runs bounded, in the
//! sandbox the queue showed, with nothing it starts outliving it; its exit
//! status and output go back to the agent.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::Effect;
use crate::exec::executor::Executor;
use crate::exec::registry::{ActionError, Cx, Outcome, Stage, VerbHandler};
use partner_dialect::{ParsedAction, ShellPlan};
use partner_gate::context::SystemProbe;
use partner_gate::extract::extract_script;
use partner_gate::process::{RunOptions, run};
use partner_gate::propose::{Proposal, model_prompt, propose};
use partner_gate::sandbox::{self, Plan};
use partner_gate::{Assessment, Scene, assess_in};
use partner_policy::VerbTraits;

pub(super) struct Shell;

/// The command an action holds, through sanitize and validate.
fn command(action: &ParsedAction) -> Result<String, String> {
    let text = action.content.as_deref().unwrap_or("");
    let found = extract_script(text);
    found.command.ok_or_else(|| {
        format!(
            "there is no command to run: {}",
            found.reason.unwrap_or_default()
        )
    })
}

/// Where the command is judged and would run: the partner's home, the
/// working directory the handler recorded, the partner's own files.
fn scene_of(action: &ParsedAction) -> Scene {
    let scene = Scene::current();
    let Some(plan) = action.args.get::<ShellPlan>() else {
        return scene;
    };
    let scene = match &plan.workdir {
        Some(dir) => scene.in_dir(Path::new(dir)),
        None => scene,
    };
    scene
        .protecting(plan.protected.iter().map(PathBuf::from))
        .keeping(plan.kept.iter().map(PathBuf::from))
}

/// The partner's database and its companions, protected from the command.
fn own_files(exec: &Executor) -> Vec<PathBuf> {
    // A store on PostgreSQL has no file here to protect.
    let Some(store) = exec.store().sqlite() else {
        return Vec::new();
    };
    let db = store.path().to_path_buf();
    let with = |suffix: &str| PathBuf::from(format!("{}{suffix}", db.display()));
    vec![with("-wal"), with("-shm"), with(".sock"), db]
}

/// The request as the partner sees it: the command's risk and why, and
/// the sandbox it would run in.
fn describe(action: &ParsedAction) -> String {
    let scene = scene_of(action);
    let (risk, reasons, sandbox) = match command(action) {
        Ok(c) => {
            let Assessment { risk, reasons } = assess_in(&c, &scene);
            (
                risk.as_str().to_uppercase(),
                reasons,
                sandbox::describe(&c, &scene),
            )
        }
        Err(why) => ("HIGH".into(), vec![why], String::new()),
    };
    let mut text = format!("shell command, risk {risk}");
    if !reasons.is_empty() {
        text.push_str(": ");
        text.push_str(&reasons.join("; "));
    }
    if risk == "BLOCKED" {
        text.push_str(" (it cannot be approved)");
    } else if !sandbox.is_empty() {
        text.push_str("; ");
        text.push_str(&sandbox);
    }
    if let Some(p) = action
        .args
        .get::<ShellPlan>()
        .and_then(|p| p.proposal.as_ref())
    {
        text.push_str(" | ");
        text.push_str(p);
    }
    text
}

impl VerbHandler for Shell {
    fn stage(&self, _action: &ParsedAction) -> Stage {
        Stage::External
    }

    fn traits(&self, action: &ParsedAction) -> VerbTraits {
        VerbTraits {
            partner_only: Some(describe(action)),
            ..VerbTraits::default()
        }
    }

    fn prepare(&self, exec: &Executor, action: &mut ParsedAction) -> Result<(), String> {
        let text = action.content.clone().unwrap_or_default();
        let (command, note) = proposed(exec, &text).map_err(|proposal| {
            format!(
                "nothing was run and nothing was asked: {}.\n{}",
                proposal.note,
                model_prompt(&text, proposal.context.as_ref())
            )
        })?;
        action.content = Some(command);
        let dir = work_dir(exec).map_err(|e| format!("no working directory: {e}"))?;
        let scene = scene_for(exec).ok();
        action.args.set(ShellPlan {
            proposal: note,
            workdir: Some(dir.display().to_string()),
            protected: scene
                .as_ref()
                .map(|s| s.protected().to_vec())
                .unwrap_or_default(),
            kept: scene.map(|s| s.kept().to_vec()).unwrap_or_default(),
        });
        Ok(())
    }

    fn command<'a>(&self, action: &'a ParsedAction) -> Option<&'a str> {
        action.content.as_deref()
    }

    fn approvable(&self, action: &ParsedAction) -> Result<(), String> {
        let command = command(action)?;
        let scene = scene_of(action);
        let a = assess_in(&command, &scene);
        if a.blocked() {
            return Err(format!(
                "this command is blocked and cannot be approved: {}",
                a.reasons.join("; ")
            ));
        }
        if let Some(why) = sandbox::refusal(scene.dir(), &scene) {
            return Err(format!("this command cannot run here: {why}"));
        }
        Ok(())
    }

    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome {
        // The three layers again: the partner may have edited it.
        let command = command(action).map_err(ActionError::Agent)?;
        let config = &cx.exec.config().shell;
        let (dir, scene) = where_queued(cx.exec, action)?;
        let safety = assess_in(&command, &scene);
        if safety.blocked() {
            return Err(ActionError::Agent(format!(
                "blocked, not run: {}",
                safety.reasons.join("; ")
            )));
        }
        let plan = Plan::for_command(&command, &scene);
        if let Some(why) = &plan.refused {
            return Err(ActionError::Agent(format!(
                "`{command}` was not run: {why}"
            )));
        }
        let walls = sandbox::walls();
        let options = RunOptions {
            dir: &dir,
            timeout: config.timeout,
            cap: config.max_output,
            cancel: cx.cancel,
            sandbox: (!walls.absent()).then_some((&plan, &scene)),
            walls: Some(&walls),
            cgroup: true,
        };
        let ran =
            run(&command, &options).map_err(|e| ActionError::Agent(format!("`{command}` {e}")))?;
        if ran.cancelled {
            let why = if cx.ctx.agent == crate::exec::PARTNER {
                "you stopped it"
            } else {
                "the agent was halted"
            };
            return Err(ActionError::Agent(format!(
                "`{command}` was stopped before it finished: {why}"
            )));
        }
        let text = result_text(&command, &ran, config);
        Ok(Effect::text(text)
            .with_data(json!({
                "command": command,
                "dir": dir.display().to_string(),
                "status": ran.status,
                "timed_out": ran.timed_out,
                "stdout": ran.stdout,
                "stderr": ran.stderr,
                "truncated": ran.truncated,
                "risk": safety.risk.as_str(),
                "reasons": safety.reasons,
                "sandbox": ran.sandbox,
                "contained": ran.contained,
                "killed_leftovers": ran.killed_leftovers,
            }))
            .continued())
    }
}

/// Where an approved command runs, as the queue said: the directory the
/// request recorded (else the configured one), with the partner's and the
/// constellation's files as the queue judged them — whichever process
/// decides.
fn where_queued(exec: &Executor, action: &ParsedAction) -> Result<(PathBuf, Scene), ActionError> {
    let plan = action.args.get::<ShellPlan>();
    let dir = match plan.and_then(|p| p.workdir.as_ref()) {
        Some(dir) => PathBuf::from(dir),
        None => work_dir(exec).map_err(|e| ActionError::System(e.to_string()))?,
    };
    let scene = exec
        .shell_scene(Some(&dir))
        .map_err(|e| ActionError::System(e.to_string()))?
        .protecting(
            plan.iter()
                .flat_map(|p| p.protected.iter().map(PathBuf::from)),
        )
        .keeping(plan.iter().flat_map(|p| p.kept.iter().map(PathBuf::from)));
    Ok((dir, scene))
}

/// What the agent hears of a command that ran: the command, how it
/// ended, its output and error output, and what was cut or killed.
fn result_text(
    command: &str,
    ran: &partner_gate::process::Ran,
    config: &crate::exec::ShellConfig,
) -> String {
    let status = match (ran.status, ran.timed_out) {
        (_, true) => format!("killed after {} s (time limit)", config.timeout.as_secs()),
        (Some(code), _) => format!("exit {code}"),
        (None, _) => "killed by a signal".into(),
    };
    let mut text = format!("$ {command}\n{status}");
    if !ran.stdout.is_empty() {
        text.push_str("\n[stdout]\n");
        text.push_str(ran.stdout.trim_end());
    }
    if !ran.stderr.is_empty() {
        text.push_str("\n[stderr]\n");
        text.push_str(ran.stderr.trim_end());
    }
    if ran.truncated {
        text.push_str(&format!("\n(output cut at {} bytes)", config.max_output));
    }
    if ran.killed_leftovers > 0 {
        text.push_str(&format!(
            "\n({} process(es) it left running were killed)",
            ran.killed_leftovers
        ));
    }
    text
}

/// The command for a request: the text itself when it is one, else the
/// command the system proposes for it, with how it was proposed; or the
/// proposal that found none (the model is to propose).
pub(crate) fn proposed(
    exec: &Executor,
    text: &str,
) -> Result<(String, Option<String>), Box<Proposal>> {
    let probe = SystemProbe {
        index: exec.config().shell.index.clone(),
        embedder: exec.recall().and_then(|r| r.embedder().ok()),
    };
    let proposal = propose(text, &probe);
    let Some(command) = proposal.command.clone() else {
        return Err(Box::new(proposal));
    };
    let mut note = None;
    if proposal.context.is_some() || proposal.intent.intent.is_some() {
        let mut said = format!("proposed for \"{}\": {}", text.trim(), proposal.note);
        for line in proposal.context.iter().flat_map(|c| c.lines()) {
            said.push_str("; ");
            said.push_str(line.trim_start_matches("- "));
        }
        note = Some(said);
    }
    Ok((command, note))
}

/// Where a command would run, as the gate judges it: the working
/// directory, the partner's home, partner's own files protected.
pub(crate) fn scene_for(exec: &Executor) -> std::io::Result<Scene> {
    exec.shell_scene(None)
}

impl Executor {
    /// Where a command of this constellation is judged and runs: `dir`
    /// (a request's recorded directory) or the configured one, with the
    /// partner's own files protected.
    pub fn shell_scene(&self, dir: Option<&Path>) -> std::io::Result<Scene> {
        let dir = match dir {
            Some(d) => d.to_path_buf(),
            None => work_dir(self)?,
        };
        Ok(Scene::current()
            .in_dir(&dir)
            .protecting(own_files(self))
            .keeping(self.config().shell.kept.iter().cloned()))
    }
}

/// The directory commands run in, absolute: the configured one, else
/// partner's own.
pub(crate) fn work_dir(exec: &Executor) -> std::io::Result<PathBuf> {
    let dir = match &exec.config().shell.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir()?,
    };
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}
