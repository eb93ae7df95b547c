//! The parse gate in a real terminal: an agent proposes a harmless shell
//! command, the queue shows it with its risk, the partner edits it with
//! `E` and approves what they wrote with Ctrl-S, and the edited command's
//! output is in the trace, and a blocked one cannot be approved with `a`.
//! The partner's own command at the `!` prompt never enters the queue: it
//! runs once its risk is confirmed, and its output keeps its columns.
//! The queue shows the sandbox a command would run in; where there is
//! none, approving asks once more.

use crate::support;

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
        "\"Checking the disk.\\n/shell echo proposed-by-ada\", \"/shell sudo rm -rf -- /\"",
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

    // Ada's next command is blocked: `a` cannot approve it.
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

/// The partner's own command at the `!` prompt: never a request in the
/// queue (the selection stays on the agent's request, which stays
/// undecided), a blocked one refused before anything is asked, anything
/// else run once its risk is confirmed; its output keeps its columns,
/// scrolls, is copied with `y`, and has a trace record of its own.
#[test]
fn the_partners_own_command_runs_after_its_risk_is_confirmed_outside_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path(), "", "", "\"/shell echo waiting-for-you\"");
    let command = format!(
        "cd {} && tmux set-option set-clipboard on && sh -c 'echo $$ > pid; exec env TERM=xterm-256color COLORTERM= {} run --config partner.toml --db c.db --no-bell'; echo $? > exit; exec sh",
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let tmux = Tmux::start("own-command", &command);
    let screen = tmux.wait("ada's request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some() && s.contains("waiting-for-you")
    });
    let ada = first_partner_request(&screen).unwrap();

    // Blocked: refused at once, nothing asked, nothing queued.
    tmux.keys(&["!"]);
    tmux.wait("the shell prompt", Duration::from_secs(5), |s| {
        s.contains(":!")
    });
    tmux.keys(&["sudo rm -rf -- /", "Enter"]);
    let screen = tmux.wait("the refusal", Duration::from_secs(20), |s| {
        s.contains("blocked, not run")
    });
    assert!(!screen.contains("Are you sure?"), "{screen}");
    assert_eq!(
        first_partner_request(&screen).as_deref(),
        Some(ada.as_str())
    );

    // Anything else: its risk is asked about, then it runs as the partner.
    tmux.keys(&["!"]);
    tmux.wait("the shell prompt", Duration::from_secs(5), |s| {
        s.contains(":!")
    });
    tmux.keys(&["-l", "printf 'name   size\\nalpha  10\\nbeta   200\\n'"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("the question", Duration::from_secs(20), |s| {
        s.contains("Are you sure?")
    });
    let flat = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("risk LOW"), "the risk is shown: {screen}");
    assert!(flat.contains("sandbox"), "how it runs is shown: {screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait("the output", Duration::from_secs(20), |s| {
        s.contains("exit 0")
    });
    // Each line of output on a line of its own, its columns kept.
    for line in ["║name   size", "║alpha  10", "║beta   200"] {
        assert!(screen.contains(line), "{line} is not shown: {screen}");
    }
    tmux.keys(&["y"]);
    tmux.wait("copied", Duration::from_secs(5), |s| s.contains("copied"));
    let buffer = Command::new("tmux").args(["show-buffer"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&buffer.stdout),
        "name   size\nalpha  10\nbeta   200\n",
        "y copies the output (OSC 52)"
    );
    tmux.keys(&["Escape"]);
    let screen = tmux.wait("the output closed", Duration::from_secs(5), |s| {
        !s.contains("║beta   200")
    });
    // Nothing was queued and nothing was decided.
    assert_eq!(
        first_partner_request(&screen).as_deref(),
        Some(ada.as_str())
    );
    std::thread::sleep(Duration::from_millis(300));
    let trace = quit_and_read_trace(&tmux, dir.path());
    let mine: Vec<&Value> = trace
        .iter()
        .filter(|r| r["verb"] == "shell" && r["source"] == "partner")
        .collect();
    assert_eq!(
        mine.len(),
        1,
        "one record, the command that ran: {trace:#?}"
    );
    assert_eq!(mine[0]["outcome"], "executed");
    assert_eq!(mine[0]["agent"], "partner");
    assert_eq!(
        mine[0]["data"]["stdout"],
        "name   size\nalpha  10\nbeta   200\n"
    );
    assert!(mine[0]["decision"]["request"].is_null(), "{:#?}", mine[0]);
    assert!(
        !trace
            .iter()
            .any(|r| r["decision"]["request"] == ada.as_str()),
        "ada's request was not decided: {trace:#?}"
    );
}

/// Where the kernel cannot sandbox (here: `PARTNER_NO_SANDBOX`), the queue
/// says so and `a` asks once more; `n` decides nothing, `y` approves.
#[test]
fn an_unsandboxed_command_asks_once_more() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path(), "", "", "\"/shell echo ran-unsandboxed\"");
    let tmux = console_with(dir.path(), "unsandboxed", "PARTNER_NO_SANDBOX=1");
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

/// Where user namespaces cannot be had (here: `PARTNER_NO_NAMESPACES`),
/// the queue names the missing wall and why, `a` asks once more saying
/// so, and the command runs behind the walls that stand.
#[test]
fn a_partly_sandboxed_command_names_the_missing_wall_and_asks_once_more() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path(), "", "", "\"/shell echo ran-partly\"");
    let tmux = console_with(dir.path(), "partly", "PARTNER_NO_NAMESPACES=1");
    let screen = tmux.wait("the shell request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some() && s.contains("PARTLY SANDBOXED")
    });
    assert!(screen.contains("no namespaces"), "{screen}");
    let id = first_partner_request(&screen).unwrap();
    tmux.keys(&["a"]);
    let asked = tmux.wait("the question", Duration::from_secs(10), |s| {
        s.contains("Approve it anyway?")
    });
    assert!(asked.contains("PARTLY SANDBOXED"), "{asked}");
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
    assert_eq!(ran["data"]["stdout"], "ran-partly\n");
    let walls = ran["data"]["sandbox"].as_str().unwrap_or_default();
    assert!(
        walls.starts_with("Landlock") && walls.contains("seccomp") && !walls.contains("namespaces"),
        "{ran:#?}"
    );
}

/// The console on the constellation in `dir`, in a terminal named
/// `name`, with the environment setting `setting` (`NAME=VALUE`).
fn console_with(dir: &std::path::Path, name: &str, setting: &str) -> Tmux {
    let command = format!(
        "cd {} && sh -c 'echo $$ > pid; exec env TERM=xterm-256color COLORTERM= {setting} {} run --config partner.toml --db c.db --no-bell'; echo $? > exit; exec sh",
        dir.display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    Tmux::start(name, &command)
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
