//! Approved shell commands are sandboxed and contained, end to end.
//!
//! Containment: a backgrounded, a `setsid`, a `nohup` and a double-forked
//! child are gone after the command ends, after its time runs out and
//! after a halt — with a cgroup and with the subreaper alone.
//!
//! Sandbox: with the real binary, under a temporary HOME holding a fake
//! private key, the partner approves a `/shell` that tries to write
//! outside its working directory, to read `~/.ssh/id_rsa` and to reach a
//! listener on 127.0.0.1; the sandbox stops all three (each try is
//! written so that the classification lets it be approved).

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use partner::gate::process::{RunOptions, run};
use partner::gate::sandbox;

/// True when `pid` is a live process (not a zombie).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

fn pids(dir: &Path, files: &[&str]) -> Vec<(String, i32)> {
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
            (f.to_string(), text.trim().parse().unwrap())
        })
        .collect()
}

/// Starts children that try to outlive the command, each writing its pid.
const ESCAPES: &str = "(sleep 97; touch escaped) >/dev/null 2>&1 & echo $! > bg.pid; \
setsid sleep 132 >/dev/null 2>&1 & echo $! > setsid.pid; \
( (sleep 95 >/dev/null 2>&1 & echo $! > double.pid) & ); \
nohup sleep 96 >/dev/null 2>&1 & echo $! > nohup.pid; \
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s double.pid ] && break; sleep 0.05; done";

const PID_FILES: &[&str] = &["bg.pid", "setsid.pid", "double.pid", "nohup.pid"];

fn options(dir: &Path, timeout: Duration, cgroup: bool) -> RunOptions<'_> {
    RunOptions {
        dir,
        timeout,
        cap: 64 * 1024,
        cancel: None,
        sandbox: None,
        walls: None,
        cgroup,
    }
}

#[test]
fn children_are_gone_when_the_command_ends() {
    for cgroup in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            ESCAPES,
            &options(dir.path(), Duration::from_secs(20), cgroup),
        )
        .unwrap();
        assert_eq!(ran.status, Some(0), "{ran:?}");
        assert!(ran.killed_leftovers >= 4, "cgroup {cgroup}: {ran:?}");
        for (file, pid) in pids(dir.path(), PID_FILES) {
            assert!(
                !alive(pid),
                "cgroup {cgroup}: {file} ({pid}) outlived the command"
            );
        }
        if !cgroup {
            assert_eq!(ran.contained, "subreaper");
        }
    }
}

#[test]
fn children_are_gone_when_the_time_runs_out() {
    for cgroup in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let command = format!("{ESCAPES}; sleep 150");
        let started = std::time::Instant::now();
        let ran = run(
            &command,
            &options(dir.path(), Duration::from_secs(2), cgroup),
        )
        .unwrap();
        assert!(ran.timed_out, "{ran:?}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        for (file, pid) in pids(dir.path(), PID_FILES) {
            assert!(
                !alive(pid),
                "cgroup {cgroup}: {file} ({pid}) outlived the timeout"
            );
        }
    }
}

#[test]
fn children_are_gone_after_a_halt() {
    for cgroup in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = tokio::sync::watch::channel(false);
        let halt = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            tx.send(true).unwrap();
        });
        let command = format!("{ESCAPES}; setsid sleep 132 & echo $! > halt.pid; sleep 133");
        let mut opts = options(dir.path(), Duration::from_secs(60), cgroup);
        opts.cancel = Some(&rx);
        let ran = run(&command, &opts).unwrap();
        halt.join().unwrap();
        assert!(ran.cancelled, "{ran:?}");
        let mut files = PID_FILES.to_vec();
        files.push("halt.pid");
        for (file, pid) in pids(dir.path(), &files) {
            assert!(
                !alive(pid),
                "cgroup {cgroup}: {file} ({pid}) outlived the halt"
            );
        }
    }
}

/// A temporary HOME with a fake key, a working directory, a place
/// outside it, and the constellation's database beside them.
struct World {
    _root: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
    db: PathBuf,
}

fn world() -> World {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let work = home.join("work");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "FAKE-PRIVATE-KEY-7731\n").unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let db = root.path().join("constellation.db");
    World {
        home,
        work,
        outside,
        db,
        _root: root,
    }
}

/// Asks for `command` as agent ada and approves it as the partner: what
/// `pending approve` printed.
fn ask_and_approve(w: &World, command: &str) -> String {
    let (asked, done) = crate::support::places::ask_and_approve(&w.work, &w.home, &w.db, command);
    assert!(
        asked.contains("sandbox: writes"),
        "the queue shows the sandbox: {asked}"
    );
    done
}

#[test]
fn the_sandbox_stops_writes_outside_secret_reads_and_the_network() {
    if let Some(why) = sandbox::walls().missing() {
        panic!("this machine cannot raise every wall ({why}): the test needs them all");
    }
    let w = world();
    // 1. A write outside the working directory.
    let target = w.outside.join("escaped");
    let line = format!("touch {}; echo wrote $?", target.display());
    let done = ask_and_approve(&w, &line);
    assert!(!target.exists(), "the write outside got through: {done}");
    assert!(
        done.contains("ermission denied") || done.contains("wrote 1"),
        "{done}"
    );
    // Inside it, writing works.
    let done = ask_and_approve(&w, "touch inside && echo made");
    assert!(w.work.join("inside").exists(), "{done}");

    // 2. The private key, named so that only the shell knows it.
    let done = ask_and_approve(&w, "cat \"$(printf %s/.ss%s/id_rsa \"$HOME\" h)\"");
    assert!(
        !done.contains("FAKE-PRIVATE-KEY-7731"),
        "the key was read: {done}"
    );
    assert!(
        done.contains("ermission denied") || done.contains("No such file"),
        "{done}"
    );

    // 3. The network: a listener on 127.0.0.1 that counts connections.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = reached.clone();
    let watcher = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Ok((mut s, _)) = listener.accept() {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 64];
                let _ = s.read(&mut buf);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let done = ask_and_approve(
        &w,
        &format!("echo sent > /dev/tcp/127.0.0.1/{port}; echo status $?"),
    );
    assert!(!done.contains("status 0"), "{done}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the network was reached: {done}"
    );
    drop(watcher);
}

/// Whatever descriptors are free when a sandboxed command starts, it
/// starts: the pipes the supervisor needs at 3 and 4 never overwrite the
/// sandbox's own (they did whenever the ruleset landed on 3 or 4).
#[test]
fn a_sandboxed_command_starts_whatever_descriptors_are_free() {
    if let Some(why) = sandbox::walls().missing() {
        panic!("this machine must raise every wall for this test: {why}");
    }
    let dir = tempfile::tempdir().unwrap();
    let scene = partner::gate::Scene::current().in_dir(dir.path());
    let plan = sandbox::Plan::for_command("echo ok", &scene);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Descriptors opened and closed all the while, so that every low
    // number is sometimes free.
    let churn = {
        let stop = Arc::clone(&stop);
        let file = dir.path().join("churn");
        std::fs::write(&file, "x").unwrap();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let held: Vec<std::fs::File> = (0..6)
                    .filter_map(|_| std::fs::File::open(&file).ok())
                    .collect();
                drop(held);
            }
        })
    };
    let failures = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..15 {
                    let opts = RunOptions {
                        sandbox: Some((&plan, &scene)),
                        ..options(dir.path(), Duration::from_secs(20), false)
                    };
                    match run("echo ok", &opts) {
                        Ok(ran) if ran.stdout == "ok\n" && ran.status == Some(0) => {}
                        other => {
                            eprintln!("{other:?}");
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    stop.store(true, Ordering::Relaxed);
    churn.join().unwrap();
    assert_eq!(failures.into_inner(), 0, "some runs did not start");
}
