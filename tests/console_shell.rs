//! The parse gate in a real terminal: an agent proposes a harmless shell
//! command, the queue shows it with its risk, the partner edits it with
//! `E` and approves what they wrote with Ctrl-S, and the edited command's
//! output is in the trace; a command typed at the `!` prompt waits in the
//! queue like an agent's, and a blocked one cannot be approved with `a`.
//! The queue shows the sandbox a command would run in; where there is
//! none, approving asks once more.

mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::tmux::{Tmux, console, constellation, first_partner_request, wait_exit};

#[test]
fn a_proposed_command_is_edited_approved_and_its_output_traced() {
    let dir = tempfile::tempdir().unwrap();
    constellation(
        dir.path(),
        "",
        "",
        "\"Checking the disk.\\n/shell echo proposed-by-ada\"",
    );
    let tmux = console("shell", dir.path(), "");
    let screen = tmux.wait("the shell request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some() && s.contains("risk") && s.contains("LOW")
    });
    assert!(screen.contains("echo proposed-by-ada"), "{screen}");
    assert!(
        screen.contains("sandbox") && screen.contains("network: off"),
        "the queue shows the sandbox: {screen}"
    );
    let id = first_partner_request(&screen).unwrap();
    // Edit it, then approve what was written.
    tmux.keys(&["E"]);
    tmux.wait("the action editor", Duration::from_secs(10), |s| {
        s.contains(&format!("editing the action of {id}"))
    });
    tmux.keys(&["End", " and-edited-by-the-partner", "C-s"]);
    tmux.wait("the edited command ran", Duration::from_secs(20), |s| {
        !s.contains(&format!("editing the action of {id}"))
            && first_partner_request(s).as_deref() != Some(id.as_str())
    });

    // The partner's own command at the `!` prompt waits in the queue.
    tmux.keys(&["!"]);
    tmux.wait("the shell prompt", Duration::from_secs(5), |s| {
        s.contains(":!")
    });
    tmux.keys(&["sudo rm -rf -- /", "Enter"]);
    let screen = tmux.wait("the blocked request", Duration::from_secs(20), |s| {
        s.contains("BLOCKED") && first_partner_request(s).is_some()
    });
    let blocked = first_partner_request(&screen).unwrap();
    tmux.keys(&["a"]);
    tmux.wait("the refusal", Duration::from_secs(10), |s| {
        s.contains("cannot be approved")
    });
    tmux.keys(&["d"]);
    tmux.wait("the denial", Duration::from_secs(10), |s| {
        s.contains(&format!("deny: {blocked}"))
    });
    std::thread::sleep(Duration::from_millis(300));
    let trace = quit_and_read_trace(&tmux, dir.path());
    let shells: Vec<&Value> = trace.iter().filter(|r| r["verb"] == "shell").collect();
    let ran: Vec<&&Value> = shells
        .iter()
        .filter(|r| r["outcome"] == "executed")
        .collect();
    assert_eq!(ran.len(), 1, "exactly one command ran: {shells:#?}");
    assert_eq!(
        ran[0]["data"]["stdout"], "proposed-by-ada and-edited-by-the-partner\n",
        "{:#?}",
        ran[0]
    );
    assert_eq!(ran[0]["decision"]["request"], id.as_str());
    assert!(
        ran[0]["data"]["sandbox"]
            .as_str()
            .is_some_and(|s| s.contains("writes: ./")),
        "{:#?}",
        ran[0]
    );
    let denied = shells
        .iter()
        .find(|r| r["decision"]["request"] == blocked.as_str())
        .expect("the blocked request's denial is traced");
    assert_eq!(denied["outcome"], "denied");
}

/// Where the kernel cannot sandbox (here: `PARTNER_NO_SANDBOX`), the queue
/// says so and `a` asks once more; `n` decides nothing, `y` approves.
#[test]
fn an_unsandboxed_command_asks_once_more() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path(), "", "", "\"/shell echo ran-unsandboxed\"");
    let command = format!(
        "cd {} && sh -c 'echo $$ > pid; exec env TERM=xterm-256color COLORTERM= PARTNER_NO_SANDBOX=1 {} run --config partner.toml --db c.db --no-bell'; echo $? > exit; exec sh",
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let tmux = Tmux::start("unsandboxed", &command);
    let screen = tmux.wait("the shell request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some() && s.contains("NOT SANDBOXED")
    });
    let id = first_partner_request(&screen).unwrap();
    tmux.keys(&["a"]);
    tmux.wait("the question", Duration::from_secs(10), |s| {
        s.contains("Approve it anyway?")
    });
    tmux.keys(&["n"]);
    let screen = tmux.wait("nothing decided", Duration::from_secs(10), |s| {
        !s.contains("Approve it anyway?")
    });
    assert_eq!(first_partner_request(&screen).as_deref(), Some(id.as_str()));
    tmux.keys(&["a"]);
    tmux.wait("the question again", Duration::from_secs(10), |s| {
        s.contains("Approve it anyway?")
    });
    tmux.keys(&["y"]);
    tmux.wait("the command ran", Duration::from_secs(20), |s| {
        first_partner_request(s).as_deref() != Some(id.as_str())
    });
    std::thread::sleep(Duration::from_secs(4));
    let trace = quit_and_read_trace(&tmux, dir.path());
    let ran = trace
        .iter()
        .find(|r| r["verb"] == "shell" && r["outcome"] == "executed")
        .expect("the command ran once approved twice");
    assert_eq!(ran["data"]["stdout"], "ran-unsandboxed\n");
    assert!(ran["data"]["sandbox"].is_null(), "{ran:#?}");
}

/// Quits the console (exit 0) and reads the constellation's trace.
fn quit_and_read_trace(tmux: &Tmux, dir: &std::path::Path) -> Vec<Value> {
    tmux.keys(&["q"]);
    assert_eq!(
        wait_exit(dir, Duration::from_secs(10)).as_deref(),
        Some("0")
    );
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["trace", "show", "--db"])
        .arg(dir.join("c.db"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
