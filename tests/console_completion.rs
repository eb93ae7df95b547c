//! Completion on the console's `:` line, in a real terminal: a partial
//! command completed with Tab (the console's command grammar, with the
//! agents that are running), candidates listed and cycled, and the
//! completed command run.

mod support;

use std::time::Duration;

use support::tmux::{console, constellation, wait_exit};

#[test]
fn a_partial_command_completes_with_tab_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path(), "", "", "\"Quiet.\"");
    let tmux = console("complete", dir.path(), "");
    // ":pu" Tab → "pulse ", "a" Tab → "pulse ada ", then "off" and Enter.
    tmux.keys(&[":", "p", "u", "Tab"]);
    tmux.wait("the command completed", Duration::from_secs(5), |s| {
        s.contains(":pulse ")
    });
    tmux.keys(&["a", "Tab"]);
    tmux.wait("the agent completed", Duration::from_secs(5), |s| {
        s.contains(":pulse ada ")
    });
    tmux.keys(&["o", "f", "f", "Enter"]);
    tmux.wait("the command ran", Duration::from_secs(5), |s| {
        s.contains("ada: pulse off")
    });
    // Several candidates are listed, and Tab again cycles through them.
    tmux.keys(&[":", "h", "Tab"]);
    tmux.wait("both candidates listed", Duration::from_secs(5), |s| {
        s.contains("halt") && s.contains("help")
    });
    tmux.keys(&["Tab"]);
    tmux.wait(
        "the first candidate in the line",
        Duration::from_secs(5),
        |s| s.contains(":halt"),
    );
    tmux.keys(&["Tab"]);
    tmux.wait(
        "the next candidate in the line",
        Duration::from_secs(5),
        |s| s.contains(":help"),
    );
    tmux.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["q"]);
    assert_eq!(
        wait_exit(dir.path(), Duration::from_secs(5)).as_deref(),
        Some("0")
    );
}
