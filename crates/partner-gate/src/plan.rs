//! What the partner is shown before their own command runs (`!` at the
//! console): the command (proposed, for a request in words), its risk and
//! why, and how it would run. A blocked command is never run, whoever
//! asks; anything else runs once the partner has seen this and said yes.

use super::safety::{Assessment, Risk, assess_in};
use super::sandbox;
use super::scene::Scene;

/// A command the partner asked for, judged before it runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandPlan {
    /// What the partner typed.
    pub asked: String,
    /// The command that would run, or why none could be proposed.
    pub command: Result<String, String>,
    /// How a request in words became the command (what the system said).
    pub proposal: Option<String>,
    /// Its risk and why (none without a command).
    pub assessment: Option<Assessment>,
    /// How it would run: `sandbox: …` or `NOT SANDBOXED: …`.
    pub sandbox: String,
}

impl CommandPlan {
    /// The plan for running `command` in `scene`, asked as `asked`.
    pub fn of(asked: &str, command: &str, proposal: Option<String>, scene: &Scene) -> Self {
        CommandPlan {
            asked: asked.to_string(),
            command: Ok(command.to_string()),
            proposal,
            assessment: Some(assess_in(command, scene)),
            sandbox: sandbox::describe(command, scene),
        }
    }

    /// A request for which no command could be proposed: why.
    pub fn unproposed(asked: &str, why: impl Into<String>) -> Self {
        CommandPlan {
            asked: asked.to_string(),
            command: Err(why.into()),
            proposal: None,
            assessment: None,
            sandbox: String::new(),
        }
    }

    /// The command, when it may run once the partner confirms; otherwise
    /// why it will not (blocked, or there is no command).
    pub fn runnable(&self) -> Result<&str, String> {
        let command = self
            .command
            .as_deref()
            .map_err(|why| format!("nothing to run for \"{}\": {why}", self.asked))?;
        match &self.assessment {
            Some(a) if a.risk == Risk::Blocked => Err(format!(
                "blocked, not run: `{command}`: {}",
                a.reasons.join("; ")
            )),
            _ => Ok(command),
        }
    }

    /// The question the partner answers before it runs: the command, its
    /// risk and reasons, and how it would run.
    pub fn question(&self) -> String {
        let command = self.command.as_deref().unwrap_or(&self.asked);
        let mut text = format!("Run `{command}` as you?");
        if let Some(p) = &self.proposal {
            text.push_str(&format!(" ({p})"));
        }
        if let Some(a) = &self.assessment {
            text.push_str(&format!(" risk {}", a.risk.as_str().to_uppercase()));
            if !a.reasons.is_empty() {
                text.push_str(": ");
                text.push_str(&a.reasons.join("; "));
            }
            text.push('.');
        }
        if !self.sandbox.is_empty() {
            text.push(' ');
            text.push_str(&self.sandbox);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_command_is_not_runnable_and_says_why() {
        let plan = CommandPlan::of("rm -rf ~", "rm -rf ~", None, &Scene::current());
        let why = plan.runnable().unwrap_err();
        assert!(why.starts_with("blocked, not run"), "{why}");
    }

    #[test]
    fn the_question_says_what_the_sandbox_will_stop() {
        let home = tempfile::tempdir().unwrap();
        let work = home.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let scene = Scene::new(home.path(), &work);
        let every = sandbox::Walls {
            namespaces: Ok(()),
            landlock: Ok(4),
            seccomp: Ok(()),
        };
        let said = sandbox::describe_with("rm -rf ~/x", &scene, &every);
        assert!(
            said.contains("it keeps the command from changing ~/x"),
            "{said}"
        );
        // Inside the work directory: nothing stopped, nothing said.
        let said = sandbox::describe_with("rm -rf ./x", &scene, &every);
        assert!(!said.contains("keeps the command from"), "{said}");
        // The partner's question carries what the sandbox says.
        let plan = CommandPlan::of("rm -rf ~/x", "rm -rf ~/x", None, &scene);
        assert!(
            plan.question().ends_with(&plan.sandbox),
            "{}",
            plan.question()
        );
    }

    #[test]
    fn the_question_names_the_risk_and_how_it_runs() {
        let plan = CommandPlan::of("ls", "ls", None, &Scene::current());
        assert_eq!(plan.runnable(), Ok("ls"));
        let q = plan.question();
        assert!(q.contains("risk LOW"), "{q}");
        assert!(q.to_lowercase().contains("sandbox"), "{q}");
    }
}
