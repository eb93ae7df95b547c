//! Failures that travel: a turn that failed, an agent halted, a lease
//! lost are logged at `warn` (with the agent, the provider and the cause)
//! whatever the mode, and in a team told to the other daemons through
//! the store and `NOTIFY`; what the others tell is shown on this daemon's
//! consoles as [`Event::TeamNotice`], so a console attached anywhere
//! learns of a failure wherever the agent runs.

use std::sync::Arc;

use super::{Done, Runtime, Work, contained};
use crate::events::Event;
use partner_engine::exec::Executor;
use partner_protocol::TeamNoticeKind;
use partner_store::postgres::TeamNotice;

/// Most notices read from the store at once.
const READ_AT_ONCE: i64 = 100;

/// What went wrong with one of this daemon's agents.
pub(super) struct Failure {
    /// What kind of failure.
    pub kind: TeamNoticeKind,
    /// The cause, in words.
    pub cause: String,
    /// The agent's provider and model, when a model was involved.
    pub provider: Option<String>,
}

impl Runtime {
    /// A failure of `agent`'s here: logged at warn and, in a team, told
    /// to the other daemons (best effort: a store that cannot be reached
    /// is logged too).
    pub(super) fn report(&mut self, agent: &str, failure: Failure) {
        let Failure {
            kind,
            cause,
            provider,
        } = failure;
        match &provider {
            Some(provider) => {
                tracing::warn!(%agent, %provider, %cause, "{}", what(kind));
            }
            None => tracing::warn!(%agent, %cause, "{}", what(kind)),
        }
        let Some(leasing) = &self.leasing else {
            return;
        };
        let (store, host) = (Arc::clone(&leasing.store), leasing.host.clone());
        let at = self.env.clock.now_ms();
        let agent = agent.to_string();
        let message = match provider {
            Some(provider) => format!("{} ({provider}): {cause}", what(kind)),
            None => format!("{}: {cause}", what(kind)),
        };
        self.work.spawn_blocking(move || {
            contained(Work::Tell, || {
                if let Err(e) = store.tell_team(&host, &agent, kind.as_str(), &message, at) {
                    tracing::warn!(%agent, error = %e, "could not tell the team");
                }
                Done::Told
            })
        });
    }

    /// What the other daemons told, read by a sync: shown here.
    pub(super) fn heard(&mut self, notices: Vec<TeamNotice>, newest: i64) {
        self.notices_seen = self.notices_seen.max(newest);
        for notice in notices {
            let Some(kind) = TeamNoticeKind::parse(&notice.kind) else {
                continue;
            };
            self.emit(Event::TeamNotice {
                host: notice.host,
                agent: notice.agent,
                kind,
                message: notice.message,
            });
        }
    }
}

/// The failure in a few words, as logged and told.
fn what(kind: TeamNoticeKind) -> &'static str {
    match kind {
        TeamNoticeKind::TurnFailed => "a turn failed",
        TeamNoticeKind::Halted => "halted",
        TeamNoticeKind::LeaseLost => "lease lost: it stops here",
    }
}

/// In a sync (team mode): what daemons other than `host` told after
/// notice `after`, and the newest number read.
pub(super) fn read(
    executor: &Executor,
    host: &str,
    after: i64,
) -> Result<(Vec<TeamNotice>, i64), String> {
    let Some(store) = executor.store().postgres() else {
        return Ok((Vec::new(), after));
    };
    store
        .team_notices(after, host, READ_AT_ONCE)
        .map_err(|e| format!("reading what the other daemons reported: {e}"))
}

/// Where a daemon starting in a team begins reading notices: after the
/// newest (what was told before it started is not shown again).
pub(super) fn start(executor: &Executor) -> i64 {
    executor
        .store()
        .postgres()
        .and_then(|store| store.newest_team_notice().ok())
        .unwrap_or(0)
}
