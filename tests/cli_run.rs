//! `partner run` as scripts use it: a warning for a policy that names an
//! authority the constellation does not have, and a quiet end when the
//! reader of the event stream goes away (`| head`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_policy_naming_a_missing_authority_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The built-in policy asks agent:anchor; this constellation has none.
    std::fs::write(
        d.join("partner.toml"),
        "name = \"solo\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"s.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n",
    )
    .unwrap();
    std::fs::write(d.join("s.toml"), "[agents.ada]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(d)
        .args([
            "run",
            "--headless",
            "--config",
            "partner.toml",
            "--db",
            "c.db",
            "--for",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "warning: the policy names agent:anchor as an authority, but solo has no agent anchor"
        ),
        "{stderr}"
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_run_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(["run", "--headless", "--demo", "--for", "60s", "--db"])
        .arg(dir.path().join("demo.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Like `| head -1`: read one line, then close the pipe.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with('{'), "{first}");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "partner kept running after its reader left"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stderr.trim().is_empty(),
        "no error when the reader leaves: {stderr}"
    );
}
