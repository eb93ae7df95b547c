//! Failures travel: a failed model call, a halted agent and a lost lease
//! are logged by the daemon at `warn` with the agent, the provider and the
//! cause, and in a team reach every daemon's consoles (through the store
//! and `NOTIFY`), not only those of the daemon running the agent.

use std::process::Command;
use std::time::{Duration, Instant};

use partner::protocol::client::Client;
use partner::protocol::{Op, Sequenced, ServerMsg, TeamNoticeKind};
use partner::runtime::Event;

use crate::support::paths::{self, RunPath, Served, Way, until};

/// One agent whose model server is down.
fn failing(path: &RunPath, port: u16) {
    std::fs::write(
        path.path().join("partner.toml"),
        format!(
            "name = \"failing\"\n[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nretries = 0\ntimeout = \"3s\"\n[[agents]]\nname = \"ada\"\nmodel = \"local:m\"\npulse = \"off\"\n"
        ),
    )
    .unwrap();
}

/// The log's lines at warn that name `agent` and hold every one of
/// `words`.
fn warned(served: &Served, agent: &str, words: &[&str]) -> bool {
    served.log().lines().any(|l| {
        l.contains("WARN")
            && l.contains(&format!("agent={agent}"))
            && words.iter().all(|w| l.contains(w))
    })
}

/// A subscription to `served`'s events.
fn subscribed(served: &Served) -> Client {
    let mut client = served.client().unwrap();
    client.set_timeout(Duration::from_secs(60)).unwrap();
    client.subscribe().unwrap();
    client
}

/// Waits (up to `within`) for a team notice of `kind` about ada from
/// `host`; its message.
fn notice(client: &mut Client, host: &str, kind: TeamNoticeKind, within: Duration) -> String {
    let started = Instant::now();
    while started.elapsed() < within {
        if let Ok(ServerMsg::Event(Sequenced {
            event:
                Event::TeamNotice {
                    host: from,
                    agent,
                    kind: got,
                    message,
                },
            ..
        })) = client.read()
            && from == host
            && agent == "ada"
            && got == kind
        {
            return message;
        }
    }
    panic!("no {kind:?} notice from {host} within {within:?}");
}

fn signal(served: &Served, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &served.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_failed_call_a_halt_and_a_lost_lease_are_logged_and_reach_every_console_of_the_team() {
    for path in paths::every().into_iter().filter(|p| p.way == Way::Served) {
        let name = path.name();
        let port = crate::support::closed_port();
        failing(&path, port);
        let first = path.serve("h1");
        if path.url().is_some() {
            assert!(
                until(Duration::from_secs(20), || path.holder("ada").as_deref()
                    == Some("h1")),
                "{name}: h1 never ran ada"
            );
        }
        // The other daemon of the team (on SQLite, the same one): its
        // consoles hear what happens to ada on h1.
        let second = path.url().map(|_| path.serve("h2"));
        let listening = second.as_ref().unwrap_or(&first);
        let mut console = subscribed(listening);
        listening.message("ada", "hello");
        let address = format!("127.0.0.1:{port}");
        assert!(
            until(Duration::from_secs(20), || warned(
                &first,
                "ada",
                &["a turn failed", &address]
            )),
            "{name}: the failed call is not in the log at warn:\n{}",
            first.log()
        );
        if second.is_none() {
            continue;
        }
        let said = notice(
            &mut console,
            "h1",
            TeamNoticeKind::TurnFailed,
            Duration::from_secs(20),
        );
        assert!(said.contains(&address), "{name}: {said}");
        // Halted through h1, heard on h2.
        let mut on_first = first.client().unwrap();
        on_first
            .request(Op::Halt {
                agent: "ada".into(),
                reason: "enough for today".into(),
            })
            .unwrap();
        let said = notice(
            &mut console,
            "h1",
            TeamNoticeKind::Halted,
            Duration::from_secs(20),
        );
        assert!(said.contains("enough for today"), "{name}: {said}");
        assert!(warned(&first, "ada", &["halted", "enough for today"]));
        // h1 stalls past its lease; h2 takes ada over; h1 wakes, finds it
        // lost, and says so to the team.
        signal(&first, "STOP");
        let taken = until(Duration::from_secs(20), || {
            path.holder("ada").as_deref() == Some("h2")
        });
        signal(&first, "CONT");
        assert!(taken, "{name}: h2 never took ada over");
        let said = notice(
            &mut console,
            "h1",
            TeamNoticeKind::LeaseLost,
            Duration::from_secs(20),
        );
        // Why: the new holder, or (a stall seen from inside) that the
        // lease could not be renewed in time.
        assert!(
            said.contains("h2 holds it now") || said.contains("could not be renewed in time"),
            "{name}: {said}"
        );
        assert!(
            until(Duration::from_secs(10), || warned(
                &first,
                "ada",
                &["lease lost"]
            )),
            "{}",
            first.log()
        );
    }
}
