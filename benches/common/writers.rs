//! Agents writing memory at once through the whole pipeline (parse,
//! permission check, execute, trace), each action acknowledged once
//! committed: the load of `load` and `team`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use partner::engine::exec::{Executor, TurnContext};

/// Agents `agents` (`agent0`…) each make `per_agent` memory writes on
/// `exec` at once: every action's latency, and how long all took.
pub fn write(
    exec: &Arc<Executor>,
    agents: std::ops::Range<usize>,
    per_agent: usize,
) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let threads: Vec<_> = agents
        .map(|w| {
            let exec = exec.clone();
            std::thread::spawn(move || {
                let agent = format!("agent{w}");
                let mut latencies = Vec::with_capacity(per_agent);
                for i in 0..per_agent {
                    let mut ctx = TurnContext::new(&agent, "main", &format!("t{w}-{i}"));
                    let text =
                        format!("/recall insert \"note {i} from {agent}: the launch moved\"");
                    let t = Instant::now();
                    let report = exec.run_turn(&mut ctx, &text);
                    latencies.push(t.elapsed());
                    assert_eq!(report.actions.len(), 1);
                    assert_eq!(report.actions[0].status.to_string(), "executed");
                }
                latencies
            })
        })
        .collect();
    let all = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    (all, started.elapsed())
}
