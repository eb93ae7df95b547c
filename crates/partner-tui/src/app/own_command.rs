//! The partner's own command (`!` at the console), outside the agents'
//! queue: judged first (`PlanCommand`), then a question naming its
//! risk and how it would run (a blocked command is refused without one),
//! then run as the partner (`RunCommand`) with its output in a view of
//! its own, which `:output` opens again.

use super::overlay::{Confirmed, Overlay};
use super::{App, Command};
use crate::backend::BackendOp;
use crate::panes::OutputView;
use partner_protocol::wire::CommandPlan;

impl App {
    /// `!TEXT`: asks what running it would do.
    pub(super) fn plan_command(&mut self, text: String) -> Vec<Command> {
        self.say(format!("judging `{text}`…"));
        vec![Command::Op(BackendOp::Host(
            partner_protocol::Op::PlanCommand { text },
        ))]
    }

    /// What running it would do: a question, or why it will not run.
    pub(super) fn on_command_plan(&mut self, plan: CommandPlan) {
        match plan.runnable() {
            Ok(command) => {
                self.notice = None;
                self.overlay =
                    Overlay::confirm(plan.question(), Confirmed::RunCommand(command.to_string()));
            }
            Err(why) => self.warn(why),
        }
    }

    /// A yes to the question: runs it, its output in view.
    pub(super) fn run_confirmed(&mut self, command: String) -> Vec<Command> {
        // A number no other console's run shares, to stop it by.
        let run = std::hash::BuildHasher::hash_one(
            &std::collections::hash_map::RandomState::new(),
            std::time::SystemTime::now(),
        );
        self.overlay = Overlay::Output(OutputView::running(&command, run));
        vec![Command::Op(BackendOp::Host(
            partner_protocol::Op::RunCommand { command, run },
        ))]
    }

    /// It ended: shown where its running view is, else kept for `:output`.
    pub(super) fn on_command_ran(&mut self, view: OutputView) {
        let showing = matches!(&self.overlay, Overlay::Output(v) if v.command == view.command && v.is_running());
        if !showing {
            let how = match &view.state {
                crate::panes::CommandState::Ended { status, .. } => status.clone(),
                crate::panes::CommandState::Running(_) => String::new(),
            };
            self.say(format!(
                "`{}` ended: {how} — :output shows it",
                view.command
            ));
        }
        if showing || matches!(self.overlay, Overlay::None) {
            self.overlay = Overlay::Output(view.clone());
        }
        self.last_output = Some(view);
    }

    /// `:output`: the last command's output again.
    pub(super) fn show_output(&mut self) {
        match &self.last_output {
            Some(view) => self.overlay = Overlay::Output(view.clone()),
            None => self.warn("no command of yours has run yet: !COMMAND runs one"),
        }
    }
}
