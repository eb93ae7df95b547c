//! What the partner is shown before their own command runs (`!` at the
//! console): the command (proposed, for a request in words), its risk and
//! why, and how it would run. A blocked command is never run, whoever
//! asks; anything else runs once the partner has seen this and said yes.

use super::safety::assess_in;
use super::sandbox;
use super::scene::Scene;

pub use partner_core::judged::CommandPlan;

/// The plan for running `command` in `scene`, asked as `asked`: its risk
/// judged and its sandbox described here, where the gate's knowledge is.
pub fn plan_of(asked: &str, command: &str, proposal: Option<String>, scene: &Scene) -> CommandPlan {
    CommandPlan {
        asked: asked.to_string(),
        command: Ok(command.to_string()),
        proposal,
        assessment: Some(assess_in(command, scene)),
        sandbox: sandbox::describe(command, scene),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_command_is_not_runnable_and_says_why() {
        let plan = plan_of("rm -rf ~", "rm -rf ~", None, &Scene::current());
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
        let plan = plan_of("rm -rf ~/x", "rm -rf ~/x", None, &scene);
        assert!(
            plan.question().ends_with(&plan.sandbox),
            "{}",
            plan.question()
        );
    }

    #[test]
    fn the_question_names_the_risk_and_how_it_runs() {
        let plan = plan_of("ls", "ls", None, &Scene::current());
        assert_eq!(plan.runnable(), Ok("ls"));
        let q = plan.question();
        assert!(q.contains("risk LOW"), "{q}");
        assert!(q.to_lowercase().contains("sandbox"), "{q}");
    }
}
