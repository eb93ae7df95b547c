//! Messages reach agents the same way on every path — headless and
//! served, on SQLite and on PostgreSQL: an agent's `greeting` opens its
//! conversation once, a message starts a turn, and each request starts
//! with the whole of the one before (a caching server reads only what is
//! new). The model is a real HTTP server on 127.0.0.1 that records every
//! request body.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::model_prompts::{calls, carries_over, flat, model};
use crate::support::Seen;
use crate::support::paths::{self, RunPath, Way, until};

/// The first line of the newest user message of a chat call.
fn asked(call: &Value) -> String {
    call["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .and_then(|c| c.lines().next())
        .unwrap_or("")
        .to_string()
}

/// A model that answers each message by naming it.
fn noting_model() -> (String, Arc<Mutex<Vec<Seen>>>) {
    model(|body| format!("Noted: {}", asked(body)))
}

/// One agent with a greeting, on the model at `base`.
fn greeted(path: &RunPath, base: &str) {
    std::fs::write(
        path.path().join("partner.toml"),
        format!(
            "name = \"greeted\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"5s\"\nretries = 0\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\npulse = \"off\"\ngreeting = \"Good morning, ada.\"\n"
        ),
    )
    .unwrap();
}

/// The first lines of the messages the model was asked about, in order.
fn asked_in(seen: &Arc<Mutex<Vec<Seen>>>) -> Vec<String> {
    calls(seen).iter().map(asked).collect()
}

#[test]
fn a_greeting_and_messages_start_turns_the_same_way_on_every_path() {
    for path in paths::every() {
        let name = path.name();
        let (base, seen) = noting_model();
        greeted(&path, &base);
        match path.way {
            Way::Headless => {
                path.headless("4s", &[("ada", "first question")]);
            }
            Way::Served => {
                let served = path.serve("h1");
                assert!(
                    until(Duration::from_secs(20), || calls(&seen).len() == 1),
                    "{name}: the greeting started no turn: {:?}\n{}",
                    asked_in(&seen),
                    served.log()
                );
                served.settle(Duration::from_secs(10));
                served.message("ada", "first question");
                assert!(
                    until(Duration::from_secs(20), || calls(&seen).len() == 2),
                    "{name}: the message started no turn: {:?}\n{}",
                    asked_in(&seen),
                    served.log()
                );
                served.settle(Duration::from_secs(10));
                served.stop();
            }
        }
        assert_eq!(
            asked_in(&seen),
            ["Good morning, ada.", "first question"],
            "{name}"
        );
        // The second request starts with the whole of the first, its
        // context included, then the reply.
        let all = calls(&seen);
        let (before, after) = (flat(&all[0]), flat(&all[1]));
        assert!(before.contains("<temporal_context>"), "{name}: {before}");
        carries_over(&before, &after, &format!("{name}: the second request"));
        // Started again, the conversation is no longer empty: no greeting.
        match path.way {
            Way::Headless => {
                path.headless("2s", &[]);
            }
            Way::Served => {
                let served = path.serve("h1");
                std::thread::sleep(Duration::from_secs(3));
                served.stop();
            }
        }
        assert_eq!(calls(&seen).len(), 2, "{name}: {:?}", asked_in(&seen));
    }
}

/// A model that takes its time (so a daemon can be killed mid-turn):
/// asked about `task N`, it files `done N`; shown the result, it says so.
fn slow_filing_model() -> (String, Arc<Mutex<Vec<Seen>>>) {
    use crate::model_prompts::chunk;
    use crate::support::{Answer, streaming_server};
    streaming_server(|_, seen| {
        if seen.path != "/v1/chat/completions" {
            return Answer::status(404, "{}");
        }
        let body: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
        let asked = asked(&body);
        let reply = match asked.strip_prefix("task ") {
            // Filed, then looked up: the search's result is seen in a
            // second pass, while the turn is still running.
            Some(n) => format!("/recall insert \"done {n}\"\n/recall search \"done {n}\""),
            None => "Noted.".to_string(),
        };
        let mut answer = Answer::sse(vec![chunk(""), chunk(&reply), "data: [DONE]\n\n".into()]);
        answer.pause = Duration::from_millis(300);
        answer
    })
}

/// One agent on the slow model, everything allowed.
fn filing(path: &RunPath, base: &str) {
    std::fs::write(
        path.path().join("partner.toml"),
        format!(
            "name = \"filing\"\npolicy = \"policy.toml\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"10s\"\nretries = 0\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\npulse = \"off\"\n"
        ),
    )
    .unwrap();
    std::fs::write(path.path().join("policy.toml"), "default = \"allow\"\n").unwrap();
}

/// How many chat calls asked about exactly `what` (first line).
fn asked_about(seen: &Arc<Mutex<Vec<Seen>>>, what: &str) -> usize {
    asked_in(seen).iter().filter(|a| *a == what).count()
}

/// How many chat calls carried the result of filing `done N` (the
/// action ran: its turn is in its second pass).
fn results_of(seen: &Arc<Mutex<Vec<Seen>>>, n: usize) -> usize {
    calls(seen)
        .iter()
        .filter(|c| {
            let last = c["messages"].as_array().and_then(|m| m.last());
            last.and_then(|m| m["content"].as_str()).is_some_and(|t| {
                t.starts_with("[Action Results]") && t.contains(&format!("done {n}"))
            })
        })
        .count()
}

/// The store's word, read with its own driver: (inbox rows waiting,
/// outcomes of those settled, archival entries per text, executed trace
/// records per action id).
struct Kept {
    waiting: i64,
    outcomes: Vec<String>,
    filed: std::collections::BTreeMap<String, i64>,
    executed: std::collections::BTreeMap<String, i64>,
}

fn kept(path: &RunPath) -> Kept {
    let queries = [
        "SELECT count(*) FROM inbox WHERE answered_at IS NULL",
        "SELECT coalesce(outcome, '') FROM inbox WHERE answered_at IS NOT NULL ORDER BY id",
        "SELECT content, count(*) FROM archival GROUP BY content",
        "SELECT action_id, count(*) FROM trace WHERE outcome = 'executed' AND action_id IS NOT NULL GROUP BY action_id",
    ];
    match path.url() {
        Some(url) => {
            let mut pg = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
            let pairs = |pg: &mut ::postgres::Client, sql: &str| {
                pg.query(sql, &[])
                    .unwrap()
                    .iter()
                    .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1)))
                    .collect()
            };
            Kept {
                waiting: pg.query_one(queries[0], &[]).unwrap().get(0),
                outcomes: pg
                    .query(queries[1], &[])
                    .unwrap()
                    .iter()
                    .map(|r| r.get(0))
                    .collect(),
                filed: pairs(&mut pg, queries[2]),
                executed: pairs(&mut pg, queries[3]),
            }
        }
        None => {
            let db = rusqlite::Connection::open(path.path().join("c.db")).unwrap();
            let pairs = |sql: &str| {
                let mut stmt = db.prepare(sql).unwrap();
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            };
            let mut stmt = db.prepare(queries[1]).unwrap();
            let outcomes = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            Kept {
                waiting: db.query_row(queries[0], [], |r| r.get(0)).unwrap(),
                outcomes,
                filed: pairs(queries[2]),
                executed: pairs(queries[3]),
            }
        }
    }
}

/// Kills the daemon running ada mid-turn, again and again — as the model
/// is asked, and after its action ran — and brings it back at once or
/// lets the other daemon of the team take over: every message is
/// answered, and no action runs twice.
#[test]
fn killed_mid_turn_again_and_again_every_message_is_answered_and_no_action_runs_twice() {
    for path in paths::every().into_iter().filter(|p| p.way == Way::Served) {
        let name = path.name();
        let (base, seen) = slow_filing_model();
        filing(&path, &base);
        let team = path.url().is_some();
        let rounds = if team { 20 } else { 6 };
        let hosts: &[&str] = if team { &["h1", "h2"] } else { &["h1"] };
        let mut daemons: std::collections::BTreeMap<&str, paths::Served> =
            hosts.iter().map(|h| (*h, path.serve(h))).collect();
        let mut takeovers = 0;
        for round in 0..rounds {
            let task = format!("task {round}");
            // Sent through whichever daemon comes first (in a team, not
            // always the one running ada).
            daemons.values().next().unwrap().message("ada", &task);
            let after_action = round % 2 == 1;
            let mid_turn = until(Duration::from_secs(30), || {
                if after_action {
                    results_of(&seen, round) > 0
                } else {
                    asked_about(&seen, &task) > 0
                }
            });
            assert!(
                mid_turn,
                "{name}, round {round}: no turn for {task}: {:?}\n{}",
                calls(&seen).iter().map(flat).collect::<Vec<_>>().last(),
                daemons.values().map(paths::Served::log).collect::<String>()
            );
            let holder = path.holder("ada").unwrap_or_else(|| "h1".to_string());
            let holder = *hosts.iter().find(|h| **h == holder).unwrap();
            drop(daemons.remove(holder));
            if team && round % 4 >= 2 {
                // The other daemon takes ada over once the lease lapses;
                // meanwhile no daemon runs ada, and a message waits.
                let other = *hosts.iter().find(|h| **h != holder).unwrap();
                daemons[other].message("ada", &format!("meanwhile {round}"));
                assert!(
                    until(Duration::from_secs(15), || path.holder("ada").as_deref()
                        == Some(other)),
                    "{name}, round {round}: {other} never took ada over"
                );
                takeovers += 1;
            }
            daemons.insert(holder, path.serve(holder));
        }
        let settled = until(Duration::from_secs(90), || kept(&path).waiting == 0);
        let k = kept(&path);
        assert!(
            settled,
            "{name}: {} messages never answered: {:?}",
            k.waiting,
            asked_in(&seen)
        );
        assert_eq!(
            k.outcomes.len(),
            rounds + takeovers,
            "{name}: {:?}",
            k.outcomes
        );
        for round in (0..rounds).filter(|r| team && r % 4 >= 2) {
            let meanwhile = format!("meanwhile {round}");
            assert!(
                asked_about(&seen, &meanwhile) >= 1,
                "{name}: {meanwhile} was never answered"
            );
        }
        assert!(
            k.outcomes.iter().all(|o| o == "answered"),
            "{name}: {:?}",
            k.outcomes
        );
        for n in 0..rounds {
            assert_eq!(
                k.filed.get(&format!("done {n}")),
                Some(&1),
                "{name}: filed {:?}",
                k.filed
            );
        }
        assert!(
            k.executed.values().all(|count| *count == 1),
            "{name}: an action ran twice: {:?}",
            k.executed
        );
        eprintln!(
            "{name}: {rounds} kills mid-turn ({takeovers} taken over by another daemon), {} model calls",
            calls(&seen).len()
        );
    }
}

/// A model that fails a call asking it to (`fail please`, HTTP 500) and
/// otherwise answers; pulses are answered with words.
fn failing_on_request() -> (String, Arc<Mutex<Vec<Seen>>>) {
    use crate::model_prompts::chunk;
    use crate::support::{Answer, streaming_server};
    streaming_server(|_, seen| {
        if seen.path != "/v1/chat/completions" {
            return Answer::status(404, "{}");
        }
        let body: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
        // (A pulse right after the failed message may come merged with it.)
        if asked(&body) == "fail please" && !last_user(&body).contains(PULSE) {
            return Answer::status(500, "{\"error\":\"the model is out to lunch\"}");
        }
        Answer::sse(vec![chunk("Nothing to do."), "data: [DONE]\n\n".into()])
    })
}

/// How a pulse's prompt starts.
const PULSE: &str = "[AUTOMATED SYSTEM PULSE";

/// The newest user message of a chat call, whole.
fn last_user(call: &Value) -> String {
    call["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// How many chat calls were pulses.
fn pulses(seen: &Arc<Mutex<Vec<Seen>>>) -> usize {
    calls(seen)
        .iter()
        .filter(|c| last_user(c).contains(PULSE))
        .count()
}

/// Pulses fire, a failed call is a failed turn (said, and logged at warn
/// by a daemon), and a halt stops the pulses until a resume — alike
/// headless and served, on SQLite and on PostgreSQL.
#[test]
fn pulses_failed_calls_and_halts_behave_alike_on_every_path() {
    for path in paths::every() {
        let name = path.name();
        let (base, seen) = failing_on_request();
        std::fs::write(
            path.path().join("partner.toml"),
            format!(
                "name = \"pulsing\"\n[providers.local]\nbase_url = \"{base}/v1\"\ntimeout = \"5s\"\nretries = 0\n[[agents]]\nname = \"ada\"\nmodel = \"local:tiny\"\npulse = \"1s\"\n"
            ),
        )
        .unwrap();
        match path.way {
            Way::Headless => {
                let events = path.headless("5s", &[("ada", "fail please")]);
                let failed = events
                    .iter()
                    .filter(|e| e["event"] == "turn_failed" && e["agent"] == "ada")
                    .count();
                assert_eq!(failed, 1, "{name}: {events:?}");
                let fired = events
                    .iter()
                    .filter(|e| e["event"] == "pulse_fired")
                    .count();
                assert!(fired >= 2, "{name}: {fired} pulses");
                assert!(pulses(&seen) >= 2, "{name}: {:?}", asked_in(&seen));
            }
            Way::Served => {
                let served = path.serve("h1");
                served.message("ada", "fail please");
                assert!(
                    until(Duration::from_secs(20), || served
                        .log()
                        .lines()
                        .any(|l| l.contains("WARN") && l.contains("a turn failed"))),
                    "{name}: {}",
                    served.log()
                );
                assert!(
                    until(Duration::from_secs(20), || pulses(&seen) >= 2),
                    "{name}: {:?}",
                    asked_in(&seen)
                );
                let mut client = served.client().unwrap();
                client
                    .request(partner::protocol::Op::Halt {
                        agent: "ada".into(),
                        reason: "quiet now".into(),
                    })
                    .unwrap();
                std::thread::sleep(Duration::from_millis(500));
                let halted_at = pulses(&seen);
                std::thread::sleep(Duration::from_millis(2500));
                assert_eq!(pulses(&seen), halted_at, "{name}: pulses while halted");
                client
                    .request(partner::protocol::Op::Resume {
                        agent: "ada".into(),
                    })
                    .unwrap();
                assert!(
                    until(Duration::from_secs(10), || pulses(&seen) > halted_at),
                    "{name}: no pulse after the resume"
                );
                served.stop();
            }
        }
    }
}
