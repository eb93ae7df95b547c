//! Property: for random sequences of actions and decisions, no action whose
//! decision was `ask` executes before an approval is recorded, and every
//! executed action has exactly one trace record.

use crate::support;

use std::collections::HashMap;
use std::time::Duration;

use partner::engine::exec::{ActionStatus, ExecError};
use partner::policy::{Authority, Decision, Policy, pending};
use partner::store::memory::backend::Memory;
use partner::store::memory::roster::Roster;
use partner::store::memory::{BlockKind, BlockPermission};
use partner::store::trace::TraceOutcome;
use proptest::prelude::*;

const POLICY: &str = r#"
request_timeout = "10m"
[roles]
anchor = "supervisor"
[platforms.bluesky]
agents = ["*"]
[rate_limits]
default = { burst = 1000, per_minute = 1000 }
[[rules]]
verb = "post"
decide = "ask"
authority = ["agent:anchor", "partner"]
"#;

/// Action templates; `{n}` is a token unique to each submission, so its
/// effect can be looked for.
const ACTIONS: &[&str] = &[
    "/post bluesky \"post {n}\"",
    "/post bluesky \"post {n}\" !",
    "/reply \"reply {n}\" ?",
    "/reply \"reply {n}\"",
    "/context guarded + \"guarded {n}\"",
    "/context open + \"open {n}\"",
    "/context open + \"open {n}\" ?ask",
];

#[derive(Debug, Clone)]
enum Step {
    Submit {
        agent: usize,
        action: usize,
    },
    Decide {
        pick: usize,
        decision: usize,
        by_anchor: bool,
    },
    Wait {
        minutes: u64,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..2usize, 0..ACTIONS.len()).prop_map(|(agent, action)| Step::Submit { agent, action }),
        3 => (0..8usize, 0..6usize, any::<bool>()).prop_map(|(pick, decision, by_anchor)| Step::Decide { pick, decision, by_anchor }),
        1 => (1..8u64).prop_map(|minutes| Step::Wait { minutes }),
    ]
}

fn effect_visible(r: &support::Rig, token: &str) -> bool {
    let conn = r.exec.store().sqlite().unwrap().conn();
    let in_outbox = conn
        .outbox()
        .unwrap()
        .iter()
        .any(|o| o.content.ends_with(token));
    let in_blocks = conn
        .blocks(None)
        .unwrap()
        .iter()
        .any(|b| b.value.lines().any(|l| l.ends_with(token)));
    in_outbox || in_blocks
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn asked_actions_wait_for_approval_and_each_execution_is_traced_once(steps in prop::collection::vec(step(), 1..40)) {
        let r = support::rig(Policy::from_toml(POLICY).unwrap());
        for agent in ["ada", "worker"] {
            r.block(agent, "guarded", BlockKind::Working, BlockPermission::Partner, "");
            r.block(agent, "open", BlockKind::Working, BlockPermission::ReadWrite, "");
        }
        // token → request id while it waits, and whether it ran.
        let mut waiting: HashMap<String, String> = HashMap::new();
        let mut executed: Vec<String> = Vec::new();
        let mut refused: Vec<String> = Vec::new();
        let mut n = 0;
        for step in steps {
            match step {
                Step::Submit { agent, action } => {
                    n += 1;
                    let token = format!(" {n}");
                    let text = ACTIONS[action].replace("{n}", &n.to_string());
                    let report = r.one(["ada", "worker"][agent], &text);
                    match report.status {
                        ActionStatus::Pending => {
                            waiting.insert(token, report.request.unwrap().id);
                        }
                        ActionStatus::Executed => executed.push(token),
                        // A standing "deny always" refuses it.
                        ActionStatus::Denied => refused.push(token),
                        other => prop_assert!(false, "{text} ended {other:?}: {}", report.text),
                    }
                }
                Step::Decide { pick, decision, by_anchor } => {
                    let mut open: Vec<(String, String)> = waiting.iter().map(|(t, id)| (t.clone(), id.clone())).collect();
                    open.sort();
                    if open.is_empty() {
                        continue;
                    }
                    let (token, id) = open[pick % open.len()].clone();
                    let decision = match decision {
                        0 => Decision::ApproveOnce,
                        1 => Decision::ApproveAlways,
                        2 => Decision::Deny(Some("no".into())),
                        3 => Decision::DenyAlways(None),
                        4 => Decision::Escalate(None),
                        _ => Decision::Cancel,
                    };
                    let by = if by_anchor { Authority::Agent("anchor".into()) } else { Authority::Partner };
                    match r.exec.decide(&id, decision.clone(), &by, None) {
                        Ok(report) => match report.status {
                            ActionStatus::Executed => {
                                waiting.remove(&token);
                                executed.push(token);
                            }
                            ActionStatus::Pending => {}
                            _ => {
                                waiting.remove(&token);
                                refused.push(token);
                            }
                        },
                        Err(ExecError::NotYours { .. } | ExecError::LastAuthority(_)) => {}
                        Err(e) => prop_assert!(false, "deciding {id}: {e}"),
                    }
                }
                Step::Wait { minutes } => {
                    r.clock.advance(Duration::from_secs(minutes * 60));
                    for report in r.exec.expire_overdue().unwrap() {
                        prop_assert_eq!(report.status, ActionStatus::TimedOut);
                    }
                    let still: Vec<String> = pending::waiting(&r.exec.store().sqlite().unwrap().conn()).unwrap().into_iter().map(|q| q.id).collect();
                    let expired: Vec<String> = waiting.iter().filter(|(_, id)| !still.contains(id)).map(|(t, _)| t.clone()).collect();
                    for token in expired {
                        waiting.remove(&token);
                        refused.push(token);
                    }
                }
            }
            // Nothing that has not been approved has taken effect.
            for token in waiting.keys().chain(&refused) {
                prop_assert!(!effect_visible(&r, token), "token{} took effect without approval", token);
            }
            for token in &executed {
                prop_assert!(effect_visible(&r, token), "token{} ran but left no effect", token);
            }
        }
        // Exactly one executed trace record per executed action.
        let records = r.trace();
        for token in &executed {
            let count = records
                .iter()
                .filter(|t| t.outcome == TraceOutcome::Executed && t.canonical.contains(&format!("{token}\"")))
                .count();
            prop_assert_eq!(count, 1, "token{} has {} executed records", token, count);
        }
        // Every executed record that was asked carries an approval recorded no later than it ran.
        for record in records.iter().filter(|t| t.outcome == TraceOutcome::Executed && t.decision.verdict == "ask") {
            let id = record.decision.request.clone().expect("an asked action runs only through a request");
            let request = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id).unwrap().unwrap();
            prop_assert_eq!(request.status.as_str(), "approved");
            prop_assert!(request.decided_at.unwrap() <= record.time);
        }
    }
}
