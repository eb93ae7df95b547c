//! What a runtime does once as it starts: the agents' first blocks
//! created, and each agent's slot as the store left it.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::{RunState, Slot};
use crate::config::{AgentRole, ConstellationConfig};
use crate::events::Event;
use crate::turn::{AgentInfo, TurnEnv};
use partner_engine::exec::Executor;
use partner_store::memory::inbox::NewDelivery;

/// Runs the runtime's startup reads and writes where blocking is allowed:
/// on a multi-threaded tokio runtime, off its async work (a PostgreSQL
/// store's driver blocks on a runtime of its own, which may not start
/// inside another's).
pub(super) fn startup<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// Creates the blocks the agents start with that the database does not
/// hold yet; a failure is said as an error event.
pub(super) fn create_blocks(config: &ConstellationConfig, executor: &Executor, env: &TurnEnv) {
    for agent in &config.agents {
        for block in &agent.blocks {
            let exists = executor
                .store()
                .read(|tx| tx.block(&block.agent, &block.label))
                .ok()
                .flatten()
                .is_some();
            if !exists
                && let Err(e) =
                    executor.partner_set_block(block.clone(), &partner_policy::Authority::Partner)
            {
                env.emit(Event::Error {
                    agent: Some(agent.name.clone()),
                    message: format!("could not create block {}: {e}", block.label),
                });
            }
        }
    }
}

/// Each agent's slot as the database left it: its pulse, whether it is
/// halted, and the requests it still waits on. (What waits in its inbox
/// is read by the first sync.)
pub(super) fn slots(config: &ConstellationConfig, executor: &Executor) -> BTreeMap<String, Slot> {
    let mut slots = BTreeMap::new();
    for agent in &config.agents {
        let Some(provider) = config.providers.get(&agent.provider) else {
            continue;
        };
        let stored = executor.store().read(|tx| tx.agent_state(&agent.name)).ok();
        let pulse = stored
            .as_ref()
            .and_then(|s| s.pulse_secs)
            .map_or(agent.pulse, |secs| Duration::from_secs(secs.max(0) as u64));
        let halted = stored.as_ref().is_some_and(|s| s.halted);
        slots.insert(
            agent.name.clone(),
            Slot {
                info: Arc::new(AgentInfo {
                    name: agent.name.clone(),
                    provider: Arc::clone(provider),
                    model: agent.model.clone(),
                    authority: agent.role == AgentRole::Supervisor
                        || config.policy.has_role(&agent.name),
                    settings: agent.settings.clone(),
                    tokens: Default::default(),
                    fence: Default::default(),
                }),
                state: if halted {
                    RunState::Halted
                } else {
                    RunState::Idle
                },
                mailbox: VecDeque::new(),
                idle_since: Instant::now(),
                pulse,
                waiting: HashSet::new(),
                cancel: None,
                turns: 0,
                queued: HashSet::new(),
                answering: None,
                host: None,
            },
        );
    }
    // Requests still waiting from an earlier run keep their agents waiting.
    if let Ok(waiting) = executor.pending() {
        for request in waiting {
            if let Some(slot) = slots.get_mut(&request.agent) {
                slot.waiting.insert(request.id.clone());
                if slot.state == RunState::Idle {
                    slot.state = RunState::Waiting;
                }
            }
        }
    }
    slots
}

/// Sends each agent never spoken to its greeting; a failure is said as
/// an error event.
pub(super) fn greet_all(config: &ConstellationConfig, executor: &Executor, env: &TurnEnv) {
    for agent in &config.agents {
        let Some(greeting) = &agent.greeting else {
            continue;
        };
        if let Err(e) = greet(executor, &agent.name, greeting) {
            env.emit(Event::Error {
                agent: Some(agent.name.clone()),
                message: format!("could not send {}'s greeting: {e}", agent.name),
            });
        }
    }
}

/// Puts `greeting` in `agent`'s inbox when it was never spoken to; in a
/// team, whichever daemon runs the agent answers it. True when sent.
fn greet(
    executor: &Executor,
    agent: &str,
    greeting: &str,
) -> partner_store::memory::MemoryResult<bool> {
    let now = executor.now();
    let greeting = NewDelivery {
        agent,
        thread: "main",
        from: "user",
        content: greeting,
        lineage: &[],
    };
    executor.store().transaction(|tx| tx.greet(&greeting, now))
}
