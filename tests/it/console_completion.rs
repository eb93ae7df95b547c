//! Completion on the console's `:` line, in a real terminal: a partial
//! command completed with Tab (the console's command grammar, with the
//! agents that are running), candidates listed and cycled, and the
//! completed command run.

use crate::support;

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

/// `:open trace` completes paths: a directory with its slash, then the
/// files in it; the completed path opens. The console runs in `dir`, so
/// relative paths are the partner's own.
#[test]
fn open_trace_completes_paths_and_opens_the_file() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path(), "", "", "\"Quiet.\"");
    std::fs::create_dir(dir.path().join("saved-traces")).unwrap();
    let record = r#"{"id":"t1","seq":1,"time":1795262400000,"agent":"ada","turn_id":"ada-1","source":"agent","text":"/recall notes","span":[0,13],"canonical":"/recall notes","verb":"recall","op":null,"decision":{"verdict":"allow","steps":[]},"outcome":"executed","result":"nothing found","data":null,"memory":null,"duration_ms":1,"external":false}"#;
    std::fs::write(
        dir.path().join("saved-traces/monday.jsonl"),
        format!("{record}\n"),
    )
    .unwrap();
    let tmux = console("complete-path", dir.path(), "");
    tmux.keys(&[":"]);
    tmux.keys(&["-l", "open trace sav"]);
    tmux.keys(&["Tab"]);
    tmux.wait("the directory completed", Duration::from_secs(5), |s| {
        s.contains(":open trace saved-traces/")
    });
    tmux.keys(&["m", "Tab"]);
    tmux.wait("the file completed", Duration::from_secs(5), |s| {
        s.contains(":open trace saved-traces/monday.jsonl")
    });
    tmux.keys(&["Enter"]);
    tmux.wait("the replay", Duration::from_secs(10), |s| {
        s.contains("Replay") && s.contains("monday.jsonl")
    });
}
