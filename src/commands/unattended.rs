//! `partner run` with no console: what the agents do printed (a line an
//! event, or JSON lines when headless), requests decided by
//! `--approve-all` or `--deny-all`, until `--for` ends, Ctrl-C, or every
//! agent is halted with nothing waiting.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;

use super::run::RunOptions;
use super::team::Opened;
use crate::core::clock::TokioClock;
use crate::error::{Error, Result};
use crate::policy::{Authority, Decision};
use crate::runtime::{ConstellationConfig, Event, RunState};

/// A readable line for an event (`None` for tokens and state changes).
pub fn describe(event: &Event) -> Option<String> {
    Some(match event {
        Event::ReplyFinished { agent, text, .. } => format!("{agent}: {}", text.trim()),
        Event::ActionExecuted {
            agent,
            canonical,
            status,
            result,
            ..
        } => {
            format!(
                "  {agent} {canonical} → {status}: {}",
                result.lines().next().unwrap_or("")
            )
        }
        Event::PermissionRequested {
            agent,
            id,
            canonical,
            waiting_on,
            ..
        } => {
            format!("  {agent} asks ({id}, waits on {waiting_on}): {canonical}")
        }
        Event::PermissionDecided {
            id, decision, by, ..
        } => format!("  {id}: {} by {by}", decision.as_str()),
        Event::PulseFired { agent, reason } => format!("· pulse for {agent} ({reason})"),
        Event::AgentHalted { agent, reason } => format!("■ {agent} halted: {reason}"),
        Event::TurnFailed { message, .. } => format!("! {message}"),
        Event::Error { agent, message } => format!(
            "! {}{message}",
            agent.as_ref().map(|a| format!("{a}: ")).unwrap_or_default()
        ),
        _ => return None,
    })
}

/// A run with no console: events printed (as JSON lines when headless),
/// decisions made by `--approve-all` or `--deny-all`, until `--for` ends,
/// Ctrl-C, or every agent is halted with nothing waiting.
pub(super) struct Unattended<'a> {
    pub(super) options: &'a RunOptions,
    pub(super) duration: Option<Duration>,
    pub(super) out: &'a mut dyn Write,
    pub(super) err: &'a mut dyn Write,
}

impl Unattended<'_> {
    pub(super) async fn run(mut self, config: &ConstellationConfig, opened: Opened) -> Result<()> {
        let Opened {
            executor,
            opening,
            leasing,
            ..
        } = opened;
        let (handle, task) =
            crate::runtime::start_leased(config, executor, Arc::new(TokioClock::now()), leasing);
        let mut events = handle.subscribe();
        for (agent, text) in &opening {
            handle.send_message(agent, text);
        }
        let deadline = self.duration.map(|d| tokio::time::Instant::now() + d);
        // Where every agent stands: a snapshot, then the events that change it.
        let mut states: std::collections::HashMap<String, RunState> = handle
            .status()
            .await
            .into_iter()
            .map(|s| (s.name, s.state))
            .collect();
        let mut check = tokio::time::interval(Duration::from_millis(500));
        loop {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = sleep => break,
                _ = tokio::signal::ctrl_c() => break,
                _ = check.tick() => {
                    if all_halted(&states) && nothing_waits(&handle).await {
                        writeln!(self.err, "partner: every agent is halted; stopping").map_err(Error::Write)?;
                        break;
                    }
                }
                event = events.recv() => match event {
                    Ok(event) => {
                        match &event {
                            Event::AgentState { agent, state, .. } => {
                                states.insert(agent.clone(), *state);
                            }
                            Event::AgentHalted { agent, .. } => {
                                states.insert(agent.clone(), RunState::Halted);
                            }
                            _ => {}
                        }
                        if !self.show(&event)? {
                            break;
                        }
                        self.decide(&handle, &event);
                    }
                    Err(RecvError::Lagged(n)) => {
                        writeln!(self.err, "partner: {n} events were dropped (output too slow)").map_err(Error::Write)?;
                    }
                    Err(RecvError::Closed) => break,
                },
            }
        }
        handle.shutdown();
        let _ = task.await;
        Ok(())
    }

    /// Prints `event` (a JSON line when headless); false when the reader
    /// left (`| head`), so the run stops quietly.
    fn show(&mut self, event: &Event) -> Result<bool> {
        let line = if self.options.headless {
            Some(serde_json::to_string(event).map_err(|e| Error::Write(e.into()))?)
        } else {
            describe(event)
        };
        let written = match line {
            Some(line) => writeln!(self.out, "{line}").and_then(|()| self.out.flush()),
            None => Ok(()),
        };
        match written {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
            Err(e) => Err(Error::Write(e)),
        }
    }

    /// Decides a request that waits for the partner, as `--approve-all`
    /// or `--deny-all` says.
    fn decide(&self, handle: &crate::runtime::RuntimeHandle, event: &Event) {
        let decision = if self.options.approve_all {
            Decision::ApproveOnce
        } else if self.options.deny_all {
            Decision::Deny(Some("denied by the partner (--deny-all)".into()))
        } else {
            return;
        };
        if let Event::PermissionRequested { id, waiting_on, .. } = event
            && waiting_on.is_partner()
        {
            let handle = handle.clone();
            let id = id.clone();
            tokio::spawn(async move {
                let _ = handle.decide(&id, decision, Authority::Partner).await;
            });
        }
    }
}

/// True when there are agents and every one is halted.
fn all_halted(states: &std::collections::HashMap<String, RunState>) -> bool {
    !states.is_empty() && states.values().all(|s| *s == RunState::Halted)
}

/// True when no request waits (read on the blocking pool).
async fn nothing_waits(handle: &crate::runtime::RuntimeHandle) -> bool {
    let executor = Arc::clone(handle.executor());
    tokio::task::spawn_blocking(move || executor.pending().is_ok_and(|p| p.is_empty()))
        .await
        .unwrap_or(false)
}
