//! What `partner serve` logs: with `RUST_LOG=partner=debug`, one span per
//! turn and per action, naming the agent, the verb and the action's id; an
//! unreadable `RUST_LOG` said so, not silently ignored.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support;
use support::daemon::serve_with;

/// One scripted agent whose first pulse calculates and inserts a note.
fn constellation(dir: &Path) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"logged\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("script.toml"),
        "[agents.ada]\npulses = [\"/calc 6 * 7\\n/recall insert \\\"\\u001b[31mred\\\"\"]\n",
    )
    .unwrap();
}

/// The daemon's log once it holds `needle`, or what it held after 20 s.
fn log_with(dir: &Path, needle: &str) -> String {
    let started = Instant::now();
    loop {
        let log = std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default();
        if log.contains(needle) || started.elapsed() > Duration::from_secs(20) {
            return log;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn debug_logging_tells_each_turn_and_action() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let _daemon = serve_with(
        dir.path(),
        &[],
        &[("RUST_LOG", PathBuf::from("partner=debug"))],
    );
    let log = log_with(dir.path(), "turn ends");
    let turn = log
        .lines()
        .find(|l| l.contains("turn{agent=ada turn=1 started_by=\"pulse\"}"))
        .unwrap_or_else(|| panic!("no turn span in:\n{log}"));
    assert!(turn.contains("turn starts"), "{turn}");
    let calc = log
        .lines()
        .find(|l| l.contains("action{agent=ada verb=\"calc\" id=\"ada-"))
        .unwrap_or_else(|| panic!("no action span for /calc in:\n{log}"));
    assert!(calc.contains("status=executed"), "{calc}");
    assert!(calc.contains("/calc"), "{calc}");
    // An agent's escape sequence reaches the log escaped, never raw.
    assert!(!log.contains('\u{1b}'), "a raw escape in the log:\n{log:?}");
}

#[test]
fn an_unreadable_rust_log_is_said_so_and_info_kept() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let _daemon = serve_with(
        dir.path(),
        &[],
        &[("RUST_LOG", PathBuf::from("partner=loud"))],
    );
    let log = log_with(dir.path(), "serving");
    assert!(
        log.contains("RUST_LOG could not be read"),
        "no warning in:\n{log}"
    );
    assert!(log.contains("INFO serving"), "{log}");
    assert!(!log.contains("DEBUG"), "{log}");
}
