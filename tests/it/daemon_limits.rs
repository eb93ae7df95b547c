//! `partner serve` at its edges, with real processes: SIGTERM stops it
//! cleanly and frees the database; a flood of connections is refused past
//! the limit and the daemon recovers.

use crate::support;

use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

use partner::protocol::VERSION;
use partner::protocol::client::Client;
use support::daemon::serve;
use support::partner_in;

use super::daemon::{constellation, raw, wait_for};

#[test]
fn sigterm_stops_the_daemon_cleanly_and_frees_the_database() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let mut daemon = serve(dir.path());
    let pid = daemon.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = daemon.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "it did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert!(!daemon.socket.exists(), "the socket is removed");
    let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap();
    assert!(log.contains("SIGTERM") && log.contains("stopped"), "{log}");
    // The database is free: another runtime may take it.
    let (code, out, _) = partner_in(dir.path(), &["status", "--db", "c.db"], "");
    assert_eq!(code, Some(1), "{out}");
    let again = serve(dir.path());
    drop(again);
}

#[test]
fn a_flood_of_connections_is_refused_past_the_limit_and_the_daemon_recovers() {
    let dir = tempfile::tempdir().unwrap();
    constellation(dir.path());
    let daemon = serve(dir.path());
    // 256 connections that never say hello.
    let mut idle = Vec::new();
    for _ in 0..256 {
        idle.push(UnixStream::connect(&daemon.socket).unwrap());
    }
    // Give the daemon a moment to count them all.
    std::thread::sleep(Duration::from_millis(300));
    let hello =
        format!("{{\"id\":0,\"op\":\"hello\",\"version\":{VERSION},\"client\":\"late\"}}\n");
    let got = raw(&daemon.socket, &[hello.as_bytes()]);
    assert!(
        got[0]["message"]
            .as_str()
            .unwrap()
            .contains("too many connections"),
        "{got:?}"
    );
    drop(idle);
    wait_for("room again", Duration::from_secs(10), || {
        Client::connect(&daemon.socket, "test").is_ok()
    });
}
