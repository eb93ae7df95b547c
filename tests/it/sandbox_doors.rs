//! The reproductions of issue 49 at the local doors, end to end with the
//! real binary: an approved command tries the daemon's own socket (to
//! approve the agent's next request, run a command as the partner and
//! write a block), PostgreSQL's socket, a tmux server's socket, the
//! console's terminal (`TIOCSTI`) and signals to the daemon. Each try is
//! approved by the partner; none may act as the partner.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::places::{place, record_of, shell_records, wait_for_requests, waiting};
use crate::support::{self, daemon};

const EVIL: &str = r#"
import json, os, socket, sys, glob
socks = glob.glob("../*.sock") or ["../c.db.sock"]
sock = socks[0]
said = []
cookie = None
for path in glob.glob(os.path.expanduser("~/.local/share/partner/cookies/*")):
    try:
        cookie = open(path).read().strip()
        said.append("read a cookie")
    except Exception as e:
        said.append("no cookie: %s" % e)
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    f = s.makefile("rw")
    hello = {"id": 0, "op": "hello", "version": int(sys.argv[1]), "client": "evil"}
    if cookie:
        hello["cookie"] = cookie
    for op in [hello,
               {"id": 1, "op": "decide", "request": sys.argv[2], "decision": {"kind": "approve"}},
               {"id": 2, "op": "run_command", "command": "touch outside-ran", "run": 7},
               {"id": 3, "op": "set_block", "block": {"agent": "ada", "label": "planted",
                "kind": "core", "permission": "admin", "char_limit": 100,
                "description": "x", "value": "owned"}}]:
        f.write(json.dumps(op) + "\n"); f.flush()
        said.append(f.readline().strip())
except Exception as e:
    said.append("refused: %s" % e)
print("\n".join(said))
"#;

#[test]
fn an_approved_command_cannot_decide_through_the_daemons_socket() {
    let p = place(
        "Two steps.\n/shell /usr/bin/python3 evil.py VERSION r2\n/shell touch second-ran",
        "",
    );
    let script = p.dir.join("script.toml");
    let text = std::fs::read_to_string(&script)
        .unwrap()
        .replace("VERSION", &partner::protocol::VERSION.to_string());
    std::fs::write(&script, text).unwrap();
    std::fs::write(p.work.join("evil.py"), EVIL).unwrap();
    let d = daemon::serve(&p.dir);
    let requests = wait_for_requests(&p.dir, 2);
    assert!(requests[0].1.contains("evil.py"), "{requests:?}");
    assert_eq!(requests[1].0, "r2", "{requests:?}");
    let (code, out, err) =
        support::partner_in(&p.dir, &["pending", "--db", "c.db", "approve", "r1"], "");
    assert_eq!(code, Some(0), "{out}{err}");
    let ran = record_of(&p.dir, "r1");
    let said = format!("{}{}", ran["data"]["stdout"], ran["data"]["stderr"]);
    assert!(
        said.contains("refused"),
        "the script did not run as planned: {ran:#}"
    );
    assert!(!said.contains("welcome"), "the daemon let it in: {said}");
    assert!(
        !said.contains("read a cookie"),
        "it read the cookie: {said}"
    );
    std::thread::sleep(Duration::from_secs(2));
    let still = waiting(&p.dir);
    assert!(
        still.iter().any(|(id, _)| id == "r2"),
        "r2 was decided by the command: {still:?}"
    );
    assert!(!p.work.join("second-ran").exists());
    assert!(!p.work.join("outside-ran").exists());
    drop(d);
}

#[test]
fn an_approved_command_cannot_reach_postgresql_through_its_socket() {
    let scratch = support::postgres::scratch()
        .expect("this test needs PostgreSQL: set PARTNER_TEST_POSTGRES, as .ci/run does");
    let mut db = postgres::Client::connect(&scratch.url, postgres::NoTls).unwrap();
    db.batch_execute("CREATE TABLE partners (name text)")
        .unwrap();
    let name = scratch
        .url
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap();
    let p = place(
        &format!(
            "/shell psql -h /var/run/postgresql -d {name} -c \"insert into partners values ('mallory')\""
        ),
        "",
    );
    let (code, _, err) = support::headless(&p.dir, "3s", &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) =
        support::partner_in(&p.dir, &["pending", "--db", "c.db", "approve", "r1"], "");
    assert_eq!(code, Some(0), "{out}{err}");
    let rows: i64 = db
        .query_one("SELECT count(*) FROM partners", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        rows, 0,
        "the command wrote through PostgreSQL's socket: {out}"
    );
    // The same command from the partner's own shell does reach it: the
    // socket is there to be reached.
    let direct = Command::new("psql")
        .args(["-h", "/var/run/postgresql", "-d", name, "-Atc", "select 1"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&direct.stdout).trim(), "1");
}

#[test]
fn an_approved_command_cannot_run_code_through_a_tmux_socket() {
    let root = crate::support::sandbox::outside_tmp();
    let sock = root.path().join("tmux.sock");
    let pwned = root.path().join("pwned");
    let p = place(
        &format!(
            "/shell tmux -S {} run-shell 'touch {}'",
            sock.display(),
            pwned.display()
        ),
        "",
    );
    let started = Command::new("tmux")
        .args([
            "-S",
            sock.to_str().unwrap(),
            "new-session",
            "-d",
            "sleep 120",
        ])
        .status()
        .unwrap();
    assert!(started.success());
    let (code, _, err) = support::headless(&p.dir, "3s", &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) =
        support::partner_in(&p.dir, &["pending", "--db", "c.db", "approve", "r1"], "");
    let _ = Command::new("tmux")
        .args(["-S", sock.to_str().unwrap(), "kill-server"])
        .status();
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        !pwned.exists(),
        "the tmux server ran the command's code outside the sandbox: {out}"
    );
}

const INJECT: &str = r#"
import fcntl, termios, sys
try:
    tty = open("/dev/tty", "w")
    for ch in "Jaa":
        fcntl.ioctl(tty, termios.TIOCSTI, ch.encode())
    print("typed")
except Exception as e:
    print("refused: %s" % e)
"#;

#[test]
fn an_approved_command_cannot_type_into_the_console() {
    let p = place(
        "Two steps.\n/shell /usr/bin/python3 inject.py\n/shell touch second-ran",
        "",
    );
    std::fs::write(p.work.join("inject.py"), INJECT).unwrap();
    let tmux = support::tmux::console("inject", &p.dir, "");
    let screen = tmux.wait("two requests", Duration::from_secs(30), |s| {
        s.contains("r1") && s.contains("r2")
    });
    assert!(screen.contains("inject.py"), "{screen}");
    // The partner presses `a` once, on r1.
    tmux.keys(&["a"]);
    tmux.wait("r1 decided", Duration::from_secs(30), |s| {
        s.contains("Pending (1)")
    });
    std::thread::sleep(Duration::from_secs(3));
    let screen = tmux.screen();
    tmux.keys(&["q"]);
    let _ = support::tmux::wait_exit(&p.dir, Duration::from_secs(10));
    assert!(
        !p.work.join("second-ran").exists(),
        "the command typed into the console and approved r2: {screen}"
    );
    let ran = shell_records(&p.dir);
    let first = ran
        .iter()
        .find(|r| r["decision"]["request"] == "r1")
        .unwrap_or_else(|| panic!("r1 did not run: {ran:#?}"));
    assert!(
        first["data"]["stdout"]
            .as_str()
            .is_some_and(|s| s.contains("refused")),
        "{first:#}"
    );
}

#[test]
fn signals_stay_inside_and_what_a_command_leaves_dies_with_partner() {
    let p = place(
        "/shell kill -STOP $(cat daemon.pid) && echo stopped-it; setsid sh -c 'sleep 4; touch late' >/dev/null 2>&1 & sleep 25",
        "",
    );
    let mut d = daemon::serve(&p.dir);
    wait_for_requests(&p.dir, 1);
    let pid = d.child.id();
    std::fs::write(p.work.join("daemon.pid"), pid.to_string()).unwrap();
    let mut approve = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(&p.dir)
        .args(["pending", "--db", "c.db", "approve", "r1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The command runs: the daemon is not stopped and answers.
    std::thread::sleep(Duration::from_secs(3));
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let state = stat.rsplit_once(')').unwrap().1.trim().chars().next();
    if state == Some('T') {
        // SAFETY: kill(2) on our own child, to let it go on.
        unsafe { libc::kill(pid as i32, libc::SIGCONT) };
        panic!("the command stopped the daemon");
    }
    assert!(d.client().is_ok(), "the daemon does not answer");
    // partner is killed outright while the command runs: what the
    // command started goes with it.
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    let _ = approve.kill();
    let _ = approve.wait();
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        !p.work.join("late").exists(),
        "a process the command started outlived partner"
    );
}
