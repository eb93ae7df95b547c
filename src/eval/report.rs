//! An evaluation's results: per task, per mode, and as a table.

use serde::Serialize;

use crate::runtime::prompt::{ActionFormat, Profile};

/// One task's outcome in one mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskResult {
    /// The task.
    pub id: String,
    /// True when the task calls for actions (false: words only are right).
    pub acts: bool,
    /// True when the reply held exactly the actions the task called for.
    pub matched: bool,
    /// The actions found, canonical.
    pub actions: Vec<String>,
    /// Parse errors (and tool calls that could not be read).
    pub parse_errors: usize,
    /// Actions the task did not call for.
    pub accidental: usize,
    /// Lines that echoed the prompt's examples (ignored).
    pub echoes: usize,
    /// Prompt tokens (the server's count, else an estimate).
    pub tokens_in: u64,
    /// Reply tokens.
    pub tokens_out: u64,
    /// Time for the whole reply.
    pub millis: u64,
    /// Why the call failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One mode's results and totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModeReport {
    /// Dialect lines or tool calls.
    pub mode: ActionFormat,
    /// Tasks run.
    pub tasks: usize,
    /// Tasks whose reply matched.
    pub matched: usize,
    /// Tasks that call for actions — the headline: a model that never
    /// acts scores 0 here, whatever it scores on words-only tasks.
    pub action_tasks: usize,
    /// Of those, the ones whose reply did what was asked.
    pub action_matched: usize,
    /// Tasks whose right answer is words only.
    pub words_tasks: usize,
    /// Of those, the ones answered without an action.
    pub words_matched: usize,
    /// Replies with at least one parse error.
    pub replies_with_parse_errors: usize,
    /// Actions nobody asked for, in all replies.
    pub accidental: usize,
    /// Calls that failed.
    pub failed_calls: usize,
    /// Prompt tokens, all replies.
    pub tokens_in: u64,
    /// Reply tokens, all replies.
    pub tokens_out: u64,
    /// Median time per reply.
    pub median_millis: u64,
    /// Time for all replies.
    pub total_millis: u64,
    /// Each task.
    pub results: Vec<TaskResult>,
}

impl ModeReport {
    /// Totals over `results`.
    pub fn new(mode: ActionFormat, results: Vec<TaskResult>) -> Self {
        let mut times: Vec<u64> = results.iter().map(|r| r.millis).collect();
        times.sort_unstable();
        ModeReport {
            mode,
            tasks: results.len(),
            matched: results.iter().filter(|r| r.matched).count(),
            action_tasks: results.iter().filter(|r| r.acts).count(),
            action_matched: results.iter().filter(|r| r.acts && r.matched).count(),
            words_tasks: results.iter().filter(|r| !r.acts).count(),
            words_matched: results.iter().filter(|r| !r.acts && r.matched).count(),
            replies_with_parse_errors: results.iter().filter(|r| r.parse_errors > 0).count(),
            accidental: results.iter().map(|r| r.accidental).sum(),
            failed_calls: results.iter().filter(|r| r.error.is_some()).count(),
            tokens_in: results.iter().map(|r| r.tokens_in).sum(),
            tokens_out: results.iter().map(|r| r.tokens_out).sum(),
            median_millis: times.get(times.len() / 2).copied().unwrap_or(0),
            total_millis: times.iter().sum(),
            results,
        }
    }

    /// The share of action tasks matched, in percent: the headline.
    pub fn match_rate(&self) -> f64 {
        percent(self.action_matched, self.action_tasks)
    }
}

/// A whole evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// `provider:model`.
    pub model: String,
    /// The prompt profile used.
    pub profile: Profile,
    /// One per mode scored.
    pub modes: Vec<ModeReport>,
    /// Why a mode asked for was not scored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn seconds(millis: u64) -> String {
    format!("{:.1}s", millis as f64 / 1000.0)
}

impl Report {
    /// The report as a table, then each task that did not match.
    pub fn to_text(&self) -> String {
        let tasks = self.modes.first().map_or(0, |m| m.tasks);
        let profile = match self.profile {
            Profile::Full => "full",
            Profile::Compact => "compact",
        };
        let mut out = format!(
            "partner eval: {} with the {profile} profile, {tasks} tasks\n\
             (actions: tasks that call for actions, the score; words only: tasks whose right answer is no action)\n\n",
            self.model
        );
        out.push_str(&format!(
            "{:<8} {:>14} {:>14} {:>13} {:>11} {:>7} {:>10} {:>10} {:>8} {:>8}\n",
            "mode",
            "actions",
            "words only",
            "parse errors",
            "accidental",
            "failed",
            "tokens in",
            "tokens out",
            "median",
            "total"
        ));
        for m in &self.modes {
            let mode = match m.mode {
                ActionFormat::Dialect => "dialect",
                ActionFormat::Tools => "tools",
            };
            out.push_str(&format!(
                "{:<8} {:>14} {:>14} {:>13} {:>11} {:>7} {:>10} {:>10} {:>8} {:>8}\n",
                mode,
                format!(
                    "{}/{} {:.0}%",
                    m.action_matched,
                    m.action_tasks,
                    m.match_rate()
                ),
                format!(
                    "{}/{} {:.0}%",
                    m.words_matched,
                    m.words_tasks,
                    percent(m.words_matched, m.words_tasks)
                ),
                m.replies_with_parse_errors,
                m.accidental,
                m.failed_calls,
                m.tokens_in,
                m.tokens_out,
                seconds(m.median_millis),
                seconds(m.total_millis),
            ));
        }
        for why in &self.refused {
            out.push_str(&format!("\n{why}\n"));
        }
        for m in &self.modes {
            let missed: Vec<&TaskResult> = m.results.iter().filter(|r| !r.matched).collect();
            if missed.is_empty() {
                continue;
            }
            out.push_str(&format!("\nnot matched ({:?}):\n", m.mode).to_lowercase());
            for r in missed {
                let got = match &r.error {
                    Some(e) => format!("error: {e}"),
                    None if r.actions.is_empty() => "no action".into(),
                    None => r.actions.join("  "),
                };
                out.push_str(&format!("  {:<22} {}\n", r.id, got));
            }
        }
        out
    }
}
