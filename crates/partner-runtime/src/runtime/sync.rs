//! What the runtime learns from the database, off its own task. The
//! database is the one source of truth: decisions made by any process (the
//! console, another console, `partner pending` in a shell) are kept there
//! with what the requester should hear, and requests made anywhere wait
//! there with the authority last told about them. A sync takes what is new;
//! a sweep fires due intentions and times out overdue requests.

use std::collections::{HashMap, HashSet};

use partner_core::clock::Millis;
use partner_engine::exec::{DecidedRequest, Executor};
use partner_policy::{Authority, PendingRequest};
use partner_store::memory::inbox::{Delivery, READ_AT_ONCE};
use partner_store::memory::{IntentionStatus, MemoryResult};

/// The learned phrasings' signature now, and the proposer rebuilt from
/// them (none when even the shipped grammar fails to load).
pub(super) type Relearned = (
    (i64, i64),
    Option<std::sync::Arc<crate::proposals::Proposer>>,
);

/// What a sync found.
#[derive(Debug, Default)]
pub(super) struct Synced {
    /// Decisions to route to the agents that asked, oldest first.
    pub decided: Vec<DecidedRequest>,
    /// Requests whose current authority has not been told (new or escalated).
    pub announce: Vec<PendingRequest>,
    /// Each agent's waiting requests.
    pub waiting: HashMap<String, HashSet<String>>,
    /// What waits in each agent's inbox, oldest first (a page of it).
    pub inbox: Vec<(String, Vec<Delivery>)>,
    /// Agents halted in the database (by `/halt`, or another process).
    pub halted: Vec<(String, String)>,
    /// Pulse intervals stored for agents (an agent's own `/pulse`).
    pub pulses: Vec<(String, i64)>,
    /// The learned phrasings changed: their signature, and the proposer
    /// rebuilt from them.
    pub learned: Option<Relearned>,
    /// What went wrong reading (shown to the partner, never fatal).
    pub errors: Vec<String>,
    /// Team mode: what the other daemons reported, and the newest
    /// notice's number.
    pub notices: Option<(Vec<partner_store::postgres::TeamNotice>, i64)>,
}

/// Takes what is new in the database for `agents` (what waits in their
/// inboxes, their requests and decisions, halts and pulses), and the
/// learned phrasings when they are no longer those `learned_seen`
/// describes. `everyone` is every agent of the constellation: in a team,
/// a request from anyone else (an outside tool's question) is announced
/// by whichever daemon sweeps first, as no daemon runs its asker.
pub(super) fn sync(
    executor: &Executor,
    (agents, everyone): (&[String], &[String]),
    learned_seen: Option<(i64, i64)>,
    ours: Option<&HashSet<String>>,
) -> Synced {
    let mut out = Synced::default();
    match executor.store().phrasings().signature() {
        Ok(now) if Some(now) != learned_seen => {
            out.learned = Some((now, proposer(executor)));
        }
        Ok(_) => {}
        Err(e) => out.errors.push(format!("reading learned phrasings: {e}")),
    }
    match executor.take_decided(agents) {
        Ok(decided) => out.decided = decided,
        Err(e) => out.errors.push(format!("reading decisions: {e}")),
    }
    // In team mode a request is announced by the daemon that runs the
    // agent it waits on, or, waiting on a partner, the agent that asked.
    let announces = |r: &PendingRequest| {
        ours.is_none_or(|ours| match r.waiting_on() {
            Authority::Agent(name) => ours.contains(name),
            _ => ours.contains(&r.agent) || !everyone.contains(&r.agent),
        })
    };
    match executor.take_unannounced(&announces) {
        Ok(announce) => out.announce = announce,
        Err(e) => out.errors.push(format!("reading requests: {e}")),
    }
    match executor.pending() {
        Ok(waiting) => {
            for request in waiting {
                out.waiting
                    .entry(request.agent.clone())
                    .or_default()
                    .insert(request.id);
            }
        }
        Err(e) => out.errors.push(format!("reading the queue: {e}")),
    }
    let read = executor.store().read(|tx| {
        Ok(agents
            .iter()
            .map(|agent| (tx.waiting_for(agent, READ_AT_ONCE), tx.agent_state(agent)))
            .collect::<Vec<_>>())
    });
    let read = match read {
        Ok(read) => read,
        Err(e) => {
            out.errors.push(format!("reading the agents: {e}"));
            return out;
        }
    };
    for (agent, (waiting, state)) in agents.iter().zip(read) {
        match waiting {
            Ok(waiting) => out.inbox.push((agent.clone(), waiting)),
            Err(e) => out.errors.push(format!("reading {agent}'s inbox: {e}")),
        }
        if let Ok(state) = state {
            if state.halted {
                out.halted
                    .push((agent.clone(), state.halt_reason.unwrap_or_default()));
            }
            if let Some(secs) = state.pulse_secs {
                out.pulses.push((agent.clone(), secs));
            }
        }
    }
    out
}

/// What a sweep found.
#[derive(Debug, Default)]
pub(super) struct Swept {
    /// Intentions that fell due: agent, id, what.
    pub due: Vec<(String, i64, String)>,
    /// Requests that timed out or whose run was interrupted (their results
    /// are routed by the next sync).
    pub expired: usize,
    /// What went wrong (shown to the partner, never fatal).
    pub errors: Vec<String>,
}

/// Fires the intentions due at `now` (marking them triggered) and times out
/// overdue requests.
pub(super) fn sweep(executor: &Executor, now: Millis, ours: Option<&HashSet<String>>) -> Swept {
    let mut out = Swept::default();
    let due = executor.store().transaction(|tx| -> MemoryResult<_> {
        let mut fired = Vec::new();
        for (agent, id) in tx.due_intentions(now)? {
            // Another daemon's agent: its daemon fires it.
            if ours.is_some_and(|ours| !ours.contains(&agent)) {
                continue;
            }
            let what = tx
                .intention(&agent, id)?
                .map(|i| i.what)
                .unwrap_or_default();
            tx.set_intention_status(&agent, id, IntentionStatus::Triggered, None, now)?;
            fired.push((agent, id, what));
        }
        Ok(fired)
    });
    match due {
        Ok(due) => out.due = due,
        Err(e) => out.errors.push(format!("reading intentions: {e}")),
    }
    match executor.expire_overdue() {
        Ok(expired) => out.expired = expired.len(),
        Err(e) => out.errors.push(format!("timing out requests: {e}")),
    }
    // A request whose run a partner killed outright was holding is
    // closed as interrupted: its agent hears that nobody knows whether
    // it finished.
    match executor.settle_interrupted() {
        Ok(closed) => out.expired += closed.len(),
        Err(e) => out.errors.push(format!("closing interrupted runs: {e}")),
    }
    // A tool file edited into something that does not load is the
    // partner's to hear about now, not when an agent next calls it.
    out.errors.extend(executor.tools().new_problems());
    out.errors
        .extend(executor.recall().and_then(|recall| recall.new_problem()));
    out
}

/// The proposer: shipped phrasings plus what the partner taught (read from
/// the database); none when even the shipped grammar fails to load.
pub(super) fn proposer(executor: &Executor) -> Option<std::sync::Arc<crate::proposals::Proposer>> {
    let learned: Vec<String> = executor
        .store()
        .phrasings()
        .phrasings()
        .map(|rules| rules.into_iter().map(|r| r.rule).collect())
        .unwrap_or_default();
    crate::proposals::Proposer::new(&learned)
        .ok()
        .map(std::sync::Arc::new)
}
