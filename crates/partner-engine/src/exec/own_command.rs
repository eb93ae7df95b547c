//! The partner's own shell command (`!` at the console): planned first —
//! a request in words gets its command proposed, every command its risk
//! and the sandbox it would run in — then, once the partner said yes to
//! that plan, run by the `/shell` handler as the partner. It never enters
//! the agents' queue; it is recorded in the trace as the partner's, and a
//! blocked command is refused here too, whoever sends it.

use super::commit::Origin;
use super::context::TurnContext;
use super::executor::{ExecError, Executor};
use super::handlers::shell;
use super::registry::Cancel;
use partner_dialect::{ParsedAction, ShellPlan, Span, Verb};
use partner_gate::CommandPlan;
use partner_policy::{Check, Verdict};
use partner_protocol::report::ActionReport;
use partner_store::trace::TraceSource;

/// The name the partner's own commands are recorded under.
pub const PARTNER: &str = "partner";

impl Executor {
    /// What running `text` would do: the command (proposed, for a request
    /// in words), its risk and how it would run. Nothing runs.
    pub fn plan_command(&self, text: &str) -> CommandPlan {
        let text = text.trim();
        let scene = match shell::scene_for(self) {
            Ok(scene) => scene,
            Err(e) => return CommandPlan::unproposed(text, format!("no working directory: {e}")),
        };
        match shell::proposed(self, text) {
            Ok((command, note)) => partner_gate::plan::plan_of(text, &command, note, &scene),
            Err(proposal) => CommandPlan::unproposed(
                text,
                format!("{}; write the command itself", proposal.note),
            ),
        }
    }

    /// Runs `command` as the partner, after they confirmed its plan: the
    /// `/shell` handler judges it again (a blocked command is refused and
    /// recorded so), runs it bounded and sandboxed as the plan said, and
    /// records it. `cancel` stops it.
    pub fn run_partner_command(
        &self,
        command: &str,
        cancel: Option<&Cancel>,
    ) -> Result<ActionReport, ExecError> {
        let dir = shell::work_dir(self)
            .map_err(|e| ExecError::Refused(format!("no working directory: {e}")))?;
        let mut action = ParsedAction::new(Verb::Shell, "shell", Span::new(0, 0));
        action.content = Some(command.to_string());
        action.args.set(ShellPlan {
            proposal: None,
            workdir: Some(dir.display().to_string()),
            protected: shell::scene_for(self)
                .map(|s| s.protected().to_vec())
                .unwrap_or_default(),
            kept: Vec::new(),
        });
        let canonical = action.canonical();
        action.span = Span::new(0, canonical.len());
        let ctx = TurnContext::new(PARTNER, "", PARTNER);
        let origin = Origin::whole(&canonical, TraceSource::Partner);
        let check = Check {
            verdict: Verdict::Allow,
            path: vec!["the partner's own command, run after its risk was confirmed".into()],
            charge: None,
        };
        self.execute(&ctx, &action, &origin, &check, None, cancel)
    }
}
