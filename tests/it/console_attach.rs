//! Consoles attached to a daemon, in real terminals: `partner serve` runs a
//! constellation whose agent asks the partner; two consoles attach; a
//! request approved with `a` in one leaves the other's queue and the agent
//! goes on; one console quits and the agents keep running (`partner
//! status`); a new console attaches and shows the turns so far.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::daemon::serve;
use support::tmux::{Tmux, first_partner_request};

fn attach(name: &str, dir: &Path) -> Tmux {
    let command = format!(
        "cd {} && env TERM=xterm-256color COLORTERM= {} attach --db c.db --no-bell; echo $? > exit-{name}; exec sh",
        dir.display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let tmux = Tmux::start(name, &command);
    tmux.wait("the attached console", Duration::from_secs(20), |s| {
        s.contains("Turns") && s.contains("attached")
    });
    tmux
}

#[test]
fn two_consoles_attach_decide_detach_and_the_agents_keep_running() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("partner.toml"),
        "name = \"served\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[agents.ada]\npulses = [\"Noting the launch.\\n/recall insert \\\"we ship friday\\\" ?ask\", \"Still here after the decision.\"]\ncontinuations = [\"Stored, thanks.\"]\n",
    )
    .unwrap();
    let mut daemon = serve(dir.path());

    let one = attach("attach-one", dir.path());
    let two = attach("attach-two", dir.path());
    let screen = one.wait("the request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some()
    });
    let id = first_partner_request(&screen).unwrap();
    two.wait(
        "the request in the other console",
        Duration::from_secs(10),
        |s| first_partner_request(s).as_deref() == Some(id.as_str()),
    );

    // Approved in one: gone from the other's queue, and the agent goes on.
    let decided = Instant::now();
    one.keys(&["a"]);
    two.wait("the queue emptied", Duration::from_secs(10), |s| {
        first_partner_request(s).is_none() && s.contains("Nothing waits")
    });
    let seen_in = decided.elapsed();
    one.wait("the agent going on", Duration::from_secs(20), |s| {
        s.contains("Stored, thanks.")
    });
    assert!(
        seen_in < Duration::from_secs(5),
        "the other console saw the decision after {seen_in:?}"
    );

    // One console quits: the agents keep running.
    one.keys(&["q"]);
    let exit = dir.path().join("exit-attach-one");
    let started = Instant::now();
    // The shell creates the file, then writes the status into it.
    while std::fs::read_to_string(&exit).map_or(true, |s| s.trim().is_empty()) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the console did not quit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&exit).unwrap().trim(), "0");
    let status = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir.path())
        .args(["status", "--db", "c.db", "--json"])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(status["pending"], 0, "{status}");

    // A new console — `partner` itself, which attaches when a daemon runs
    // the database — shows the turns so far.
    let command = format!(
        "cd {} && env TERM=xterm-256color COLORTERM= {} --config partner.toml --db c.db --no-bell; exec sh",
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let three = Tmux::start("attach-three", &command);
    three.wait("the attached console", Duration::from_secs(20), |s| {
        s.contains("Turns") && s.contains("served") && s.contains(" attached ")
    });
    three.wait("the turns so far", Duration::from_secs(10), |s| {
        s.contains("Noting the launch.") && s.contains("Stored, thanks.")
    });
    two.keys(&["q"]);

    // The daemon goes away: the console says so and keeps its screen; it
    // attaches again when a daemon is back.
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    let gone = three.wait("the daemon gone", Duration::from_secs(10), |s| {
        s.contains("daemon gone since") && s.contains("Stored, thanks.")
    });
    // The status line says so for as long as it lasts, and shows no agent
    // state it cannot know; a decision is refused at once, saying why.
    let status = gone
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    assert!(status.contains("daemon gone since"), "{gone}");
    assert!(status.contains("? ada"), "{gone}");
    assert!(!status.contains(" attached "), "{gone}");
    let daemon = serve(dir.path());
    three.wait("attached again", Duration::from_secs(20), |s| {
        s.contains("attached again to the daemon")
    });
    three.keys(&["q"]);
    drop(daemon);
}

/// Issue 50: an attached console, left alone for a while over a served
/// constellation that has nothing wrong with it, shows no error: no
/// notification badge, no "the host sent no …" (the daemon's answer to a
/// read with nothing in it — search by meaning not configured — read as
/// a missing answer).
#[test]
fn an_attached_console_left_alone_shows_no_error_it_did_not_expect() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("partner.toml"),
        "name = \"quiet\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[agents.ada]\npulses = [\"Noting it.\\n/recall insert \\\"hello\\\"\"]\n",
    )
    .unwrap();
    let _daemon = serve(dir.path());
    let console = attach("attach-quiet", dir.path());
    std::thread::sleep(Duration::from_secs(8));
    let screen = console.screen();
    let status = screen.lines().last().unwrap_or_default().to_string();
    assert!(!screen.contains("sent no"), "{screen}");
    assert!(
        !status.contains("! "),
        "an error badge on a console with nothing wrong: {status}"
    );
}
