//! The partner's own command (`!` at the console), run where the
//! constellation runs — with its shell settings and working directory —
//! and stopped by its run number from any client.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

use super::Served;
use super::ops::blocking;
use partner_protocol::Answer;

/// The commands running now, by the run number their client chose.
#[derive(Default)]
pub struct Running(Mutex<HashMap<u64, watch::Sender<bool>>>);

impl Running {
    fn start(&self, run: u64) -> Result<partner_core::cancel::Cancel, String> {
        let mut running = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if running.contains_key(&run) {
            return Err(format!("a command numbered {run} is already running"));
        }
        let (stop, stopped) = watch::channel(false);
        running.insert(run, stop);
        Ok(stopped)
    }

    fn end(&self, run: u64) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&run);
    }

    /// Stops run `run`; false when nothing by that number runs.
    fn stop(&self, run: u64) -> bool {
        match self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&run) {
            Some(stop) => stop.send(true).is_ok(),
            None => false,
        }
    }
}

/// Runs `command` as the partner; the answer's data is its report.
pub async fn run(served: &Served, command: String, run: u64) -> Result<Answer, String> {
    let stopped = served.running.start(run)?;
    let outcome = blocking(served, move |ex| {
        ex.run_partner_command(&command, Some(&stopped))
            .map_err(|e| format!("not run: {e}"))
            .map(|report| Answer {
                message: "ran".into(),
                data: partner_protocol::Returned::Report(Box::new(fitted(report))),
            })
    })
    .await;
    served.running.end(run);
    outcome?
}

/// Stops a running command of the partner's.
pub fn stop(served: &Served, run: u64) -> Result<Answer, String> {
    if served.running.stop(run) {
        Ok(Answer::said("stopping"))
    } else {
        Err("that command is not running".into())
    }
}

/// A report whose output fits one answer: standard output and error cut
/// to share the room, and marked so.
fn fitted(
    mut report: partner_protocol::report::ActionReport,
) -> partner_protocol::report::ActionReport {
    let room = partner_protocol::views::DATA_BUDGET / 3;
    let mut cut = partner_protocol::fit::cut(&mut report.text, room);
    for key in ["stdout", "stderr"] {
        if let Some(serde_json::Value::String(text)) = report.data.get_mut(key) {
            cut += partner_protocol::fit::cut(text, room);
        }
    }
    if cut > 0 {
        report.data["truncated"] = serde_json::Value::Bool(true);
    }
    report
}
