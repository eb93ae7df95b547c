//! The console in a real terminal (tmux), where its decisions went wrong:
//! a request timing out under the cursor, a paste read as keys, signals
//! that left the terminal broken. Each ends by reading the trace with
//! `partner trace show`: exactly what the partner meant was decided.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::tmux::{Tmux, console, wait_exit};

/// A constellation in `dir`: `ada` pulses every second and asks to post
/// `pulses`; `bo` is idle. Requests time out after `timeout`.
fn write_constellation(dir: &Path, timeout: &str, pulses: &str) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"safety\"\npolicy = \"policy.toml\"\n\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n\n[[agents]]\nname = \"bo\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("policy.toml"),
        format!(
            "request_timeout = \"{timeout}\"\n[platforms.bluesky]\nagents = [\"*\"]\n[rate_limits]\ndefault = {{ burst = 1000, per_minute = 1000 }}\n[[rules]]\nverb = \"post\"\ndecide = \"ask\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("script.toml"),
        format!("[agents.ada]\npulses = [{pulses}]\n"),
    )
    .unwrap();
}

fn partner(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The partner's decisions in the trace: (request, decision).
fn decided_by_partner(dir: &Path) -> Vec<(String, String)> {
    let trace: Vec<Value> =
        serde_json::from_str(&partner(dir, &["trace", "show", "--db", "c.db", "--json"])).unwrap();
    trace
        .iter()
        .filter(|r| r["decision"]["decided_by"] == "partner")
        .map(|r| {
            (
                r["decision"]["request"].as_str().unwrap_or("").to_string(),
                r["decision"]["decision"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Request ids shown in the queue, in order.
fn queue_ids(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter_map(|line| {
            let inner = line.split('│').nth(1)?;
            let id = inner.trim_start_matches('▸').split_whitespace().next()?;
            (id.starts_with('r') && id.len() > 1 && id[1..].chars().all(|c| c.is_ascii_digit()))
                .then(|| id.to_string())
        })
        .collect()
}

fn quit(tmux: &Tmux, dir: &Path) {
    tmux.keys(&["q"]);
    if wait_exit(dir, Duration::from_secs(3)).is_none() {
        // A draft or a question: answer yes.
        tmux.keys(&["y"]);
    }
    assert_eq!(
        wait_exit(dir, Duration::from_secs(10)).as_deref(),
        Some("0"),
        "the console exits cleanly; the screen was:\n{}",
        tmux.screen()
    );
}

#[test]
fn a_request_timing_out_never_moves_a_decision_to_another() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_constellation(
        d,
        "12s",
        "\"/post bluesky \\\"two\\\"\\n/post bluesky \\\"three\\\"\"",
    );
    // r1 first, from a shell, for bo: it times out first.
    partner(
        d,
        &[
            "exec",
            "--db",
            "c.db",
            "--policy",
            "policy.toml",
            "--agents",
            "ada,bo",
            "--agent",
            "bo",
            "/post bluesky \"one\"",
        ],
    );
    std::thread::sleep(Duration::from_secs(4));
    let tmux = console("selection", d, "");
    let screen = tmux.wait("three requests", Duration::from_secs(20), |s| {
        queue_ids(s).len() == 3
    });
    assert_eq!(queue_ids(&screen), ["r1", "r2", "r3"]);
    // Select r2.
    tmux.keys(&["J"]);
    tmux.wait("r2 selected", Duration::from_secs(5), |s| s.contains("▸r2"));
    // r1 times out under the partner's eyes.
    tmux.wait("r1 to time out", Duration::from_secs(20), |s| {
        !queue_ids(s).contains(&"r1".to_string())
    });
    tmux.keys(&["a"]);
    // The decision waits out its undo window, then goes.
    let started = Instant::now();
    while decided_by_partner(d).is_empty() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let decided = decided_by_partner(d);
    assert_eq!(
        decided,
        [("r2".to_string(), "approve_once".to_string())],
        "a approved the selected request, not the one that moved under the cursor; screen:\n{}",
        tmux.screen()
    );
    quit(&tmux, d);
}

#[test]
fn a_paste_decides_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_constellation(d, "1h", "\"/post bluesky \\\"hello\\\"\"");
    let tmux = console("paste", d, "");
    tmux.wait("a request", Duration::from_secs(20), |s| {
        !queue_ids(s).is_empty()
    });
    // What a partner pastes meaning to write a message: its a, d and e
    // would approve, deny and escalate if read as keys.
    assert!(
        Command::new("tmux")
            .args(["set-buffer", "please read this and tell me, dear ada"])
            .status()
            .unwrap()
            .success()
    );
    tmux.paste();
    tmux.wait("the paste refused", Duration::from_secs(5), |s| {
        s.contains("pasted text ignored")
    });
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        decided_by_partner(d).is_empty(),
        "the paste decided something: {:?}",
        decided_by_partner(d)
    );
    let screen = tmux.screen();
    assert!(screen.contains("▸r1"), "r1 still waits:\n{screen}");
    quit(&tmux, d);
}

fn restored(screen: &str) -> bool {
    !screen.contains("┏") && !screen.contains("Pending")
}

#[test]
fn signals_and_ctrl_c_give_the_terminal_back() {
    for how in ["TERM", "HUP", "C-c"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write_constellation(d, "1h", "\"All quiet.\"");
        let tmux = console(&format!("signal-{how}"), d, "");
        if how == "C-c" {
            tmux.keys(&["C-c"]);
        } else {
            let pid = std::fs::read_to_string(d.join("pid")).unwrap();
            assert!(
                Command::new("kill")
                    .args([&format!("-{how}"), pid.trim()])
                    .status()
                    .unwrap()
                    .success()
            );
        }
        let code = wait_exit(d, Duration::from_secs(10));
        assert!(
            code.is_some(),
            "{how}: partner did not exit:\n{}",
            tmux.screen()
        );
        let screen = tmux.wait("the terminal back", Duration::from_secs(5), restored);
        assert!(
            restored(&screen),
            "{how}: the terminal was not restored:\n{screen}"
        );
        // Raw mode is off: typed text echoes as in any shell.
        tmux.keys(&["echo typed-after", "Enter"]);
        tmux.wait("the shell", Duration::from_secs(5), |s| {
            s.contains("typed-after")
        });
    }
}
