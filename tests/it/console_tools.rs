//! A Pattern Lisp tool run from the console's command line, in a real
//! terminal: `:/tool checklist milk` runs as the agent shown, the tool's
//! write lands in that agent's block, and the run and the write are in the
//! trace; `:lisp EXPR` shows a value against the agent's state as a tree,
//! and `:lisp tool …` is a dry run that writes nothing.

use crate::support;

use std::time::Duration;

use serde_json::Value;
use support::tmux::{console, wait_exit};

const CHECKLIST: &str = r#";; Ticks an item of the todo block.
(lambda (state)
  (let ((item (subject-get state args: "")))
    (pattern-set-elements state
      (map (lambda (b)
             (if (string=? (subject-get b label: "") "todo")
                 (subject-set b value: (string-append (subject-get b value: "") " [ticked " item "]"))
                 b))
           (pattern-elements state)))))
"#;

#[test]
fn a_tool_runs_from_the_command_line_and_writes_through_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tools")).unwrap();
    std::fs::write(dir.path().join("tools/checklist.plisp"), CHECKLIST).unwrap();
    std::fs::write(
        dir.path().join("partner.toml"),
        "name = \"tools\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\nblocks = [{ label = \"todo\", value = \"milk\" }]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[agents.ada]\npulses = []\n",
    )
    .unwrap();
    let tmux = console("tools", dir.path(), "");
    tmux.keys(&[":", "/tool checklist milk", "Enter"]);
    let screen = tmux.wait("the tool's result", Duration::from_secs(20), |s| {
        s.contains("tool checklist ran")
    });
    assert!(screen.contains("as ada"), "{screen}");

    // :lisp evaluates against ada's state and shows the value as a tree.
    tmux.keys(&[
        ":",
        "lisp (map (lambda (b) (subject-get b value:)) (pattern-elements state))",
        "Enter",
    ]);
    let screen = tmux.wait("the Lisp view", Duration::from_secs(20), |s| {
        s.contains("Lisp —") && s.contains("list of 1")
    });
    assert!(screen.contains("\"milk [ticked milk]\""), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait("the view closed", Duration::from_secs(5), |s| {
        !s.contains("Lisp —")
    });
    // A dry run of a tool says what it would write, and writes nothing.
    tmux.keys(&[":", "lisp tool checklist eggs", "Enter"]);
    let screen = tmux.wait("the dry run", Duration::from_secs(20), |s| {
        s.contains("would patch todo")
    });
    assert!(screen.contains("[ticked eggs]"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait("the view closed", Duration::from_secs(5), |s| {
        !s.contains("Lisp —")
    });
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["q"]);
    assert_eq!(
        wait_exit(dir.path(), Duration::from_secs(10)).as_deref(),
        Some("0")
    );

    let db = dir.path().join("c.db");
    let db = db.to_str().unwrap();
    let run = |args: &[&str]| -> Value {
        let (code, out, err) = support::partner_in(dir.path(), args, "");
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let trace = run(&["trace", "show", "--db", db, "--json"]);
    let records = trace.as_array().unwrap();
    let tool = records
        .iter()
        .find(|r| r["verb"] == "tool")
        .expect("the run is traced");
    assert_eq!(tool["agent"], "ada");
    assert_eq!(tool["outcome"], "executed");
    assert!(
        tool["data"]["tool"]["output"]
            .as_str()
            .unwrap()
            .contains("[ticked milk]")
    );
    let write = records
        .iter()
        .find(|r| {
            r["canonical"]
                .as_str()
                .is_some_and(|c| c.starts_with("/recall patch todo"))
        })
        .unwrap_or_else(|| panic!("the write is traced as ada's own action: {records:#?}"));
    assert_eq!(write["outcome"], "executed", "{write:#}");
    let block = run(&["memory", "--db", db, "--json", "show", "ada", "todo"]);
    assert_eq!(
        block["value"], "milk [ticked milk]",
        "the dry run wrote nothing: {block:#}"
    );
}
