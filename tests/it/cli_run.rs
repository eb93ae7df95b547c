//! `partner run` as scripts use it: a warning for a policy that names an
//! authority the constellation does not have, and a quiet end when the
//! reader of the event stream goes away (`| head`); `serve --demo` starts
//! fresh; `--db` goes anywhere, and a read of a missing database is
//! refused.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_policy_naming_a_missing_authority_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A policy the user wrote asks agent:anchor; this constellation has none.
    std::fs::write(
        d.join("partner.toml"),
        "name = \"solo\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"s.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("policy.toml"),
        "[[rules]]\nverb = \"post\"\ndecide = \"ask\"\nauthority = [\"agent:anchor\", \"partner\"]\n",
    )
    .unwrap();
    std::fs::write(d.join("s.toml"), "[agents.ada]\n").unwrap();
    let (code, _, stderr) = support::headless(d, "1s", &[]);
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains(
            "warning: the policy names agent:anchor as an authority, but solo has no agent anchor"
        ),
        "{stderr}"
    );
    // With no policy of its own, the built-in one's example authorities
    // are not warned about on every run.
    let config = std::fs::read_to_string(d.join("partner.toml")).unwrap();
    std::fs::write(
        d.join("partner.toml"),
        config.replace("policy = \"policy.toml\"\n", ""),
    )
    .unwrap();
    let (code, _, stderr) = support::headless(d, "1s", &[]);
    assert_eq!(code, Some(0));
    assert!(!stderr.contains("warning"), "{stderr}");
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

fn replies_of(events: &[serde_json::Value], agent: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == "reply_finished" && e["agent"] == agent)
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_headless_run_starts_conversations_with_greetings_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("partner.toml"),
        "name = \"talk\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"s.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"off\"\ngreeting = \"Good morning, ada.\"\n[[agents]]\nname = \"bo\"\nmodel = \"scripted:x\"\npulse = \"off\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("s.toml"),
        "[agents.ada]\nreplies = [{ from = \"partner\", when = \"Good morning\", say = \"Morning!\" }]\nunexpected = \"?\"\n[agents.bo]\nreplies = [{ from = \"partner\", when = \"status\", say = \"All good.\" }]\n",
    )
    .unwrap();
    let (code, events, stderr) = support::headless(d, "2s", &["--message", "bo=status please"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(replies_of(&events, "ada"), ["Morning!"]);
    assert_eq!(replies_of(&events, "bo"), ["All good."]);
    // The greeting opens a conversation once: not again on the next run.
    let (code, events, _) = support::headless(d, "1s", &[]);
    assert_eq!(code, Some(0));
    assert!(replies_of(&events, "ada").is_empty(), "{events:?}");
    // A message for an agent that does not exist is refused up front.
    let (code, _, stderr) = support::headless(d, "1s", &["--message", "nobody=hi"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("talk has no agent nobody"), "{stderr}");
    let (code, _, stderr) = support::headless(d, "1s", &["--message", "ada"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("AGENT=TEXT"), "{stderr}");
}

#[test]
fn a_worker_is_never_pointed_at_a_verb_it_may_not_use() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("partner.toml"),
        "name = \"work\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"s.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"off\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("s.toml"),
        "[agents.ada]\nreplies = [\"/repeat r1\\n/aprove r2\"]\ncontinuations = [\"Sorry.\"]\n",
    )
    .unwrap();
    let (code, events, stderr) = support::headless(d, "2s", &["--message", "ada=go"]);
    assert_eq!(code, Some(0), "{stderr}");
    let failures: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "parse_failed")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(failures.len(), 2, "{events:?}");
    for message in failures {
        for strict in ["/deny", "/approve", "/halt", "/escalate"] {
            assert!(!message.contains(strict), "{message}");
        }
    }
}

#[test]
fn plain_words_are_proposed_and_wait_for_the_partner() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A permissive policy: written as an action, this would simply run.
    std::fs::write(
        d.join("partner.toml"),
        "name = \"words\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"s.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"off\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("policy.toml"),
        "[[rules]]\nverb = \"recall\"\ndecide = \"allow\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("s.toml"),
        "[agents.ada]\nreplies = [\"Remember that the launch is on Friday.\"]\n",
    )
    .unwrap();
    let (code, events, stderr) = support::headless(d, "2s", &["--message", "ada=noted?"]);
    assert_eq!(code, Some(0), "{stderr}");
    let proposed: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "action_proposed")
        .collect();
    assert_eq!(proposed.len(), 1, "{events:?}");
    assert_eq!(
        proposed[0]["action"],
        "/recall insert \"the launch is on Friday\""
    );
    let asked: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "permission_requested")
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["waiting_on"], "partner", "{:?}", asked[0]);
    assert!(
        !events.iter().any(|e| e["event"] == "memory_changed"),
        "nothing ran without the partner"
    );
    // Approved, it runs.
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(d)
        .args(["pending", "--db", "c.db", "approve", "r1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(d)
        .args(["memory", "--db", "c.db", "search", "Friday"])
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        found.contains("archival  ada/#1  the launch is on [Friday]"),
        "{found}"
    );
}

#[test]
fn serve_demo_starts_fresh_like_run_demo() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let partner = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", &data)
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .args(args)
            .output()
            .unwrap()
    };
    // A demo ran, and ended as the demo does: with its agents halted.
    let out = partner(&[
        "run",
        "--headless",
        "--demo",
        "--for",
        "2s",
        "--approve-all",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = partner::runtime::demo_config().unwrap().name;
    let db = data.join("partner").join(format!("{name}.db"));
    assert!(db.exists(), "{}", db.display());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE agents SET halted = 1, halt_reason = 'the demo ended'",
        [],
    )
    .unwrap();
    drop(conn);
    // serve --demo starts fresh: no agent halted.
    let mut daemon = std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", &data)
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .args(["serve", "--demo"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let socket = partner::protocol::socket_for(&db);
    let started = std::time::Instant::now();
    let client = loop {
        let cookie = crate::support::daemon::cookie_of(&data.join("partner"), &socket);
        if let Ok(c) =
            partner::protocol::client::Client::connect_with(&socket, "test", None, cookie)
        {
            break c;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no daemon"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut client = client;
    let partner::protocol::Returned::Status(status) =
        client.request(partner::protocol::Op::Status).unwrap().1
    else {
        panic!("a status without its data");
    };
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(
        status
            .agents
            .iter()
            .all(|a| a.state != partner::runtime::RunState::Halted),
        "{status:?}"
    );
}

#[test]
fn db_goes_anywhere_and_a_read_of_a_missing_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, _, err) = support::partner_in(
        d,
        &["exec", "--db", "c.db", "--agent", "ada", "-"],
        "/recall insert \"hello\"",
    );
    assert_eq!(code, Some(0), "{err}");
    for args in [
        vec!["--db", "c.db", "pending", "list"],
        vec!["pending", "--db", "c.db", "list"],
        vec!["pending", "list", "--db", "c.db"],
        vec!["--db", "c.db", "trace", "show"],
        vec!["trace", "show", "--db", "c.db"],
        vec!["memory", "search", "hello", "--db", "c.db"],
        vec!["--db", "c.db", "memory", "list"],
    ] {
        let (code, out, err) = support::partner_in(d, &args, "");
        assert_eq!(code, Some(0), "{args:?}: {out}{err}");
    }
    for args in [
        vec!["pending", "list", "--db", "typo.db"],
        vec!["memory", "list", "--db", "typo.db"],
        vec!["trace", "show", "--db", "typo.db"],
        vec!["replay", "--verify", "--db", "typo.db"],
    ] {
        let (code, out, err) = support::partner_in(d, &args, "");
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains("no database at typo.db"), "{args:?}: {err}");
        assert!(!d.join("typo.db").exists(), "{args:?} created the database");
    }
}

#[test]
fn a_reader_that_stops_early_ends_a_command_quietly_and_msg_takes_the_rest_of_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A trace far longer than a pipe holds.
    let turn: String = (0..1500)
        .map(|i| format!("/recall insert \"note {i} {}\"\n", "x".repeat(40)))
        .collect();
    let (code, _, err) = support::partner_in(
        d,
        &[
            "exec",
            "--db",
            "c.db",
            "--agent",
            "ada",
            "--approve-all",
            "-",
        ],
        &turn,
    );
    assert!(matches!(code, Some(0 | 1)), "{err}");
    let out = Command::new("sh")
        .current_dir(d)
        .arg("-c")
        .arg(format!(
            "{} trace show --db c.db | head -1",
            env!("CARGO_BIN_EXE_partner")
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "the closed pipe was reported: {err}");
    let status = Command::new("bash")
        .current_dir(d)
        .arg("-c")
        .arg(format!(
            "{} trace show --db c.db | head -1 > /dev/null; exit ${{PIPESTATUS[0]}}",
            env!("CARGO_BIN_EXE_partner")
        ))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    // `partner msg AGENT WORDS…` takes the rest of the line: with no
    // daemon it is refused for that reason, not for the words.
    let (code, _, err) =
        support::partner_in(d, &["msg", "--db", "c.db", "ada", "hello", "there"], "");
    assert_eq!(code, Some(2));
    assert!(err.contains("no daemon runs"), "{err}");
}

#[test]
fn filters_and_names_the_console_refuses_are_refused_on_the_command_line_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    support::made_database(d);
    for (args, says) in [
        (
            vec!["trace", "show", "--db", "c.db", "--agent", "nosuch"],
            "no agent 'nosuch'",
        ),
        (
            vec!["trace", "show", "--db", "c.db", "--outcome", "bogus"],
            "no outcome 'bogus'",
        ),
        (
            vec!["trace", "show", "--db", "c.db", "--verb", "fly"],
            "no verb 'fly'",
        ),
        (
            vec![
                "run",
                "--headless",
                "--demo",
                "--for",
                "1s",
                "--db",
                "t.db",
                "--theme",
                "nope",
            ],
            "no theme 'nope'",
        ),
        (
            vec![
                "run",
                "--headless",
                "--demo",
                "--for",
                "1s",
                "--db",
                "t.db",
                "--keymap",
                "nope",
            ],
            "nope",
        ),
    ] {
        let (code, out, err) = support::partner_in(d, &args, "");
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // A filter that exists and matches is taken.
    let (code, out, _) =
        support::partner_in(d, &["trace", "show", "--db", "c.db", "--agent", "ada"], "");
    assert_eq!(code, Some(0));
    assert!(out.contains("/recall insert"), "{out}");
}
