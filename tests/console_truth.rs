//! The console says what is so, in a real terminal: a model call that
//! failed is a failed turn with its cause one key away, at 80×24.

mod support;

use std::time::Duration;

use support::tmux::Tmux;

#[test]
fn a_failed_model_call_is_a_failed_turn_with_its_cause_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: the model server is down.
    let port = support::closed_port();
    std::fs::write(
        dir.path().join("partner.toml"),
        format!(
            "name = \"truth\"\n[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nretries = 0\n\n[[agents]]\nname = \"ada\"\nmodel = \"local:m\"\npulse = \"off\"\n"
        ),
    )
    .unwrap();
    let command = format!(
        "cd {} && env TERM=xterm-256color {} run --config partner.toml --db c.db --no-bell; exec sh",
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let tmux = Tmux::sized("failed-turn", &command, 80, 24);
    tmux.wait("the console", Duration::from_secs(20), |s| {
        s.contains("Turns")
    });
    tmux.keys(&[":", "msg ada hello there", "Enter"]);
    let screen = tmux.wait("the failed turn", Duration::from_secs(20), |s| {
        s.contains("failed")
    });
    assert!(
        !screen
            .lines()
            .any(|l| l.contains("ada") && l.contains("response …")),
        "the turn still looks in progress:\n{screen}"
    );
    // The notification, opened whole, gives the cause and what to do.
    tmux.keys(&["N"]);
    tmux.wait("the notifications", Duration::from_secs(5), |s| {
        s.contains("Notifications")
    });
    tmux.keys(&["Enter"]);
    let whole = tmux.wait("the cause", Duration::from_secs(5), |s| {
        s.contains("What to do")
    });
    let flat = whole.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("refused") || flat.contains("Connection"),
        "the cause is not shown:\n{whole}"
    );
    assert!(flat.contains(&format!("127.0.0.1:{port}")), "{whole}");
}
