//! The partner's own command's output (`!` at the console): its lines as
//! they came — columns kept (no wrapping, tabs to their stops, ←/→ scroll
//! sideways), terminal escapes taken out — its errors after them and
//! marked, how it ended and its trace record in the title; `y` copies it
//! whole, Esc stops it while it runs and closes it after.

use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::popup;
use super::render::{fitted, wrap_words};
use crate::theme::Theme;
use partner_protocol::ActionStatus;
use partner_protocol::report::ActionReport;

/// Where the command stands.
#[derive(Debug, Clone)]
pub enum CommandState {
    /// It runs, under this run number (`StopCommand` with it stops it).
    Running(u64),
    /// It ended: how (`exit 0`, `killed after 60 s (time limit)`, why it
    /// did not run), whether that is a failure, and its trace record.
    Ended {
        /// How, in words.
        status: String,
        /// True unless it ran and exited 0.
        failed: bool,
        /// The trace record's id.
        trace: Option<String>,
    },
}

/// The output of one command of the partner's.
#[derive(Debug, Clone)]
pub struct OutputView {
    /// The command.
    pub command: String,
    /// Where it stands.
    pub state: CommandState,
    /// What it wrote to standard output, escapes taken out.
    pub stdout: String,
    /// What it wrote to standard error, escapes taken out.
    pub stderr: String,
    /// What else to know (why it did not run, output cut, processes it
    /// left killed), wrapped to the view.
    pub notes: Vec<String>,
    /// Lines scrolled down.
    pub scroll: usize,
    /// Columns scrolled right.
    pub shift: usize,
}

/// What a key asks of the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputKey {
    /// Nothing beyond the view itself.
    Stay,
    /// Close the view.
    Close,
    /// Stop the command (it runs).
    Stop,
    /// Copy this text to the clipboard.
    Copy(String),
}

/// Text as the terminal should show it: escape sequences out, tabs to
/// their 8-column stops, other control characters out.
fn printable(text: &str) -> String {
    let stripped = anstream::adapter::strip_str(text).to_string();
    let shown: Vec<String> = stripped
        .split('\n')
        .map(|line| {
            // A carriage return redraws the line: its last part is shown.
            let line = line.rsplit('\r').next().unwrap_or("");
            let mut out = String::with_capacity(line.len());
            let mut width = 0;
            for c in line.chars() {
                match c {
                    '\t' => {
                        let pad = 8 - width % 8;
                        out.extend(std::iter::repeat_n(' ', pad));
                        width += pad;
                    }
                    c if c.is_control() => {}
                    c => {
                        out.push(c);
                        width += UnicodeWidthStr::width(c.encode_utf8(&mut [0; 4]) as &str);
                    }
                }
            }
            out
        })
        .collect();
    shown.join("\n")
}

impl OutputView {
    /// A command that has just started as run `run`.
    pub fn running(command: &str, run: u64) -> Self {
        OutputView {
            command: command.to_string(),
            state: CommandState::Running(run),
            stdout: String::new(),
            stderr: String::new(),
            notes: Vec::new(),
            scroll: 0,
            shift: 0,
        }
    }

    /// The view of a command that ended with `report` (or could not run).
    pub fn ended(command: &str, report: Result<&ActionReport, String>) -> Self {
        let mut view = OutputView::running(command, 0);
        let report = match report {
            Ok(r) => r,
            Err(why) => {
                view.notes.push(why);
                view.state = CommandState::Ended {
                    status: "not run".into(),
                    failed: true,
                    trace: None,
                };
                return view;
            }
        };
        let data = &report.data;
        let text = |key: &str| data[key].as_str().map(printable).unwrap_or_default();
        view.stdout = text("stdout");
        view.stderr = text("stderr");
        let status = match (report.status, data["status"].as_i64()) {
            (ActionStatus::Executed, _) if data["timed_out"] == true => {
                "killed: it ran past the time limit".to_string()
            }
            (ActionStatus::Executed, Some(code)) => format!("exit {code}"),
            (ActionStatus::Executed, None) => "killed by a signal".to_string(),
            (other, _) => {
                view.notes.push(report.text.clone());
                other.as_str().replace('_', " ")
            }
        };
        if data["truncated"] == true {
            view.notes.push("output cut at the configured limit".into());
        }
        if let Some(n) = data["killed_leftovers"].as_u64().filter(|n| *n > 0) {
            view.notes
                .push(format!("{n} process(es) it left running were killed"));
        }
        view.state = CommandState::Ended {
            failed: status != "exit 0",
            status,
            trace: report.trace_id.clone(),
        };
        view
    }

    /// True while the command runs.
    pub fn is_running(&self) -> bool {
        matches!(self.state, CommandState::Running(_))
    }

    /// Everything it wrote, as copied: standard output, then standard
    /// error.
    pub fn text(&self) -> String {
        let mut text = self.stdout.clone();
        if !self.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&self.stderr);
        }
        text
    }

    /// The lines shown, styled: the output as it came, the notes wrapped
    /// to `width`.
    fn lines(&self, theme: &Theme, width: usize) -> Vec<Line<'static>> {
        let mut lines: Vec<Line<'static>> = Vec::new();
        let body = |text: &str| -> Vec<String> {
            let text = text.strip_suffix('\n').unwrap_or(text);
            text.split('\n').map(str::to_string).collect()
        };
        if !self.stdout.is_empty() {
            lines.extend(body(&self.stdout).into_iter().map(Line::raw));
        }
        if !self.stderr.is_empty() {
            lines.push(Line::styled("── standard error ──", theme.style("ui.dim")));
            lines.extend(
                body(&self.stderr)
                    .into_iter()
                    .map(|l| Line::styled(l, theme.style("ui.waiting"))),
            );
        }
        match &self.state {
            CommandState::Running(_) => lines.push(Line::styled(
                "running… (Esc stops it)",
                theme.style("ui.dim"),
            )),
            CommandState::Ended { .. }
                if self.stdout.is_empty() && self.stderr.is_empty() && self.notes.is_empty() =>
            {
                lines.push(Line::styled("(it wrote nothing)", theme.style("ui.dim")));
            }
            CommandState::Ended { .. } => {}
        }
        for note in &self.notes {
            lines.extend(wrap_words(
                vec![(note.clone(), theme.style("ui.error"))],
                width,
            ));
        }
        lines
    }

    /// The title: the command and how it ended.
    fn title(&self) -> String {
        match &self.state {
            CommandState::Running(_) => format!("$ {}", self.command),
            CommandState::Ended {
                status,
                trace: Some(id),
                ..
            } => format!("$ {} — {status} · {id}", self.command),
            CommandState::Ended { status, .. } => format!("$ {} — {status}", self.command),
        }
    }

    /// Handles a key.
    pub fn key(&mut self, code: KeyCode) -> OutputKey {
        let running = self.is_running();
        match code {
            KeyCode::Esc | KeyCode::Char('q') if running => return OutputKey::Stop,
            KeyCode::Esc | KeyCode::Char('q') => return OutputKey::Close,
            KeyCode::Char('y') => return OutputKey::Copy(self.text()),
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll += 10,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Right | KeyCode::Char('l') => self.shift += 8,
            KeyCode::Left | KeyCode::Char('h') => self.shift = self.shift.saturating_sub(8),
            KeyCode::Home | KeyCode::Char('g') => (self.scroll, self.shift) = (0, 0),
            KeyCode::End | KeyCode::Char('G') => self.scroll = usize::MAX / 2,
            _ => {}
        }
        OutputKey::Stay
    }

    /// Draws it over `size`, as large as its output within the screen.
    pub fn render(&self, theme: &Theme, frame: &mut Frame, size: Rect) {
        let title = self.title();
        let lines = self.lines(theme, usize::from(size.width.saturating_sub(8)).max(20));
        let widest = lines.iter().map(Line::width).max().unwrap_or(0);
        // The keys at the bottom need about 52 columns.
        let area = fitted(size, widest.max(52), lines.len(), &title);
        let inner_h = usize::from(area.height.saturating_sub(2));
        let inner_w = usize::from(area.width.saturating_sub(2));
        let scroll = self.scroll.min(lines.len().saturating_sub(inner_h));
        let shift = self.shift.min(widest.saturating_sub(inner_w));
        let more = if lines.len() > inner_h {
            format!(
                " · {}–{} of {}",
                scroll + 1,
                (scroll + inner_h).min(lines.len()),
                lines.len()
            )
        } else {
            String::new()
        };
        let keys = Span::styled(
            format!(
                " y copy · ↑↓←→ scroll · Esc {}{more} ",
                if self.is_running() { "stops" } else { "closes" }
            ),
            theme.style("ui.key_hint"),
        );
        let shown: Vec<Line> = lines.into_iter().skip(scroll).take(inner_h).collect();
        frame.render_widget(Clear, area);
        frame.render_widget(
            Paragraph::new(shown)
                .scroll((0, u16::try_from(shift).unwrap_or(u16::MAX)))
                .block(popup(theme, &title).title_bottom(Line::from(keys))),
            area,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn tabs_reach_their_stops_and_escapes_go() {
        assert_eq!(
            printable("a\tb\n\x1b[31mred\x1b[0m\tx"),
            "a       b\nred     x"
        );
        assert_eq!(printable("50%\r100%\n"), "100%\n");
    }
}
