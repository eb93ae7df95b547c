//! The console in a real terminal: tmux runs `partner --demo`, the test
//! waits for a request on the partner, approves it with `a`, denies the
//! next with `d`, edits a memory block and saves it, quits with `q`, then
//! checks with `partner trace` and `partner memory` that exactly those
//! effects happened and that the terminal was restored.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::tmux::{Tmux, first_partner_request};

use serde_json::Value;

fn partner(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
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

#[test]
fn approve_deny_edit_and_quit_in_a_real_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let exit_file = dir.path().join("exit");
    let command = format!(
        "TERM=xterm-256color {} --demo --no-bell --db {}; echo $? > {}",
        env!("CARGO_BIN_EXE_partner"),
        db.display(),
        exit_file.display()
    );
    let tmux = Tmux::start("e2e", &command);
    tmux.wait("the console", Duration::from_secs(20), |s| {
        s.contains("Turns") && s.contains("Pending")
    });

    // Approve the first request that waits on the partner.
    let screen = tmux.wait("a request for the partner", Duration::from_secs(60), |s| {
        first_partner_request(s).is_some()
    });
    let approved = first_partner_request(&screen).unwrap();
    tmux.keys(&["a"]);
    tmux.wait("the approval", Duration::from_secs(20), |s| {
        s.contains(&format!("approve once: {approved}"))
    });

    // Deny the next one.
    let screen = tmux.wait(
        "another request for the partner",
        Duration::from_secs(60),
        |s| first_partner_request(s).is_some_and(|id| id != approved),
    );
    let denied = first_partner_request(&screen).unwrap();
    tmux.keys(&["d"]);
    tmux.wait("the denial", Duration::from_secs(20), |s| {
        s.contains(&format!("deny: {denied}"))
    });

    // Edit sage's persona: focus memory, choose sage, edit, save.
    tmux.keys(&["Tab", "Tab"]);
    tmux.wait("the memory pane", Duration::from_secs(10), |s| {
        s.contains("┏ Memory")
    });
    for _ in 0..4 {
        if tmux.screen().contains("Memory · sage") {
            break;
        }
        tmux.keys(&["F"]);
        std::thread::sleep(Duration::from_millis(400));
    }
    tmux.wait("sage's memory", Duration::from_secs(10), |s| {
        s.contains("Memory · sage") && s.contains("persona")
    });
    tmux.keys(&["Home", "i"]);
    tmux.wait("the editor", Duration::from_secs(10), |s| {
        s.contains("editing sage/")
    });
    let edited_label = {
        let s = tmux.screen();
        let start = s.find("editing sage/").unwrap() + "editing sage/".len();
        s[start..].split_whitespace().next().unwrap().to_string()
    };
    tmux.keys(&["End", " (edited in the console)", "C-s"]);
    tmux.wait("the save", Duration::from_secs(10), |s| {
        s.contains("saved:")
    });

    tmux.keys(&["q"]);
    let started = Instant::now();
    // The shell creates the file, then writes the status into it.
    while std::fs::read_to_string(&exit_file).map_or(true, |s| s.trim().is_empty()) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "partner did not exit; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        std::fs::read_to_string(&exit_file).unwrap().trim(),
        "0",
        "partner exited with an error"
    );
    let after = tmux.screen();
    assert!(
        !after.contains("Pending") && !after.contains("┏"),
        "the terminal was not restored:\n{after}"
    );

    // Exactly those effects.
    let trace: Vec<Value> = serde_json::from_str(&partner(&[
        "trace",
        "show",
        "--db",
        db.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    let by_partner: Vec<&Value> = trace
        .iter()
        // Decisions of requests (a partner's own edit names its author
        // too, but decides no request).
        .filter(|r| {
            r["decision"]["decided_by"] == "partner" && r["decision"]["request"].is_string()
        })
        .collect();
    assert_eq!(
        by_partner.len(),
        2,
        "two decisions by the partner: {by_partner:?}"
    );
    let approval = by_partner
        .iter()
        .find(|r| r["decision"]["request"] == approved.as_str())
        .expect("the approval is traced");
    assert_eq!(
        (
            approval["decision"]["decision"].as_str(),
            approval["outcome"].as_str()
        ),
        (Some("approve_once"), Some("executed"))
    );
    let denial = by_partner
        .iter()
        .find(|r| r["decision"]["request"] == denied.as_str())
        .expect("the denial is traced");
    assert_eq!(
        (
            denial["decision"]["decision"].as_str(),
            denial["outcome"].as_str()
        ),
        (Some("deny"), Some("denied"))
    );
    // The constellation's initial blocks are created as partner writes too;
    // the console's edit is the one partner write that changed a block.
    let partner_edits: Vec<&Value> = trace
        .iter()
        .filter(|r| {
            r["source"] == "partner"
                && r["canonical"]
                    .as_str()
                    .is_some_and(|c| c.starts_with(":memory set"))
        })
        .filter(|r| !r["memory"]["version_before"].is_null())
        .collect();
    assert_eq!(
        partner_edits.len(),
        1,
        "one block edit from the console: {partner_edits:?}"
    );
    assert_eq!(partner_edits[0]["memory"]["label"], edited_label.as_str());
    let shown = partner(&[
        "memory",
        "--db",
        db.to_str().unwrap(),
        "show",
        "sage",
        &edited_label,
    ]);
    assert!(shown.contains("(edited in the console)"), "{shown}");
    let history = partner(&[
        "memory",
        "--db",
        db.to_str().unwrap(),
        "history",
        "sage",
        &edited_label,
    ]);
    assert!(history.contains("by partner"), "{history}");
    assert!(Path::new(&db).exists());
}
