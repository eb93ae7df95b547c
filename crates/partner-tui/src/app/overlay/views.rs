//! The views a pane module draws that open as overlays: a `:lisp` result
//! ([`LispView`]) and the partner's own command's output ([`OutputView`]).

use crossterm::event::KeyEvent;
use ratatui::Frame;
use ratatui::layout::Rect;

use super::{Layer, Step};
use crate::app::{App, Command};
use crate::backend::BackendOp;
use crate::panes::{CommandState, LispView, OutputKey, OutputView};

impl Layer for LispView {
    fn key(&mut self, key: KeyEvent, _app: &mut App) -> Step {
        if LispView::key(self, key.code) {
            Step::stay()
        } else {
            Step::close()
        }
    }

    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        LispView::render(self, &app.theme, frame, size);
    }
}

impl Layer for OutputView {
    /// Scrolls; Ctrl-C stops a running command, `y` copies, Esc closes.
    fn key(&mut self, key: KeyEvent, app: &mut App) -> Step {
        match OutputView::key(self, key.code) {
            OutputKey::Stay => Step::stay(),
            OutputKey::Close => Step::close(),
            OutputKey::Stop => {
                app.say(format!("stopping `{}`…", self.command));
                match &self.state {
                    CommandState::Running(run) => Step::Stay(vec![Command::Op(BackendOp::Host(
                        partner_protocol::Op::StopCommand { run: *run },
                    ))]),
                    CommandState::Ended { .. } => Step::stay(),
                }
            }
            OutputKey::Copy(text) => {
                let lines = text.lines().count();
                app.say(format!(
                    "copied {lines} line(s) to the clipboard (through the terminal, OSC 52)"
                ));
                Step::Stay(vec![Command::Copy(text)])
            }
        }
    }

    fn render(&self, app: &App, frame: &mut Frame, size: Rect) {
        OutputView::render(self, &app.theme, frame, size);
    }
}
