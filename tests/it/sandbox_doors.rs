//! The reproductions of issue 49, end to end with the real binary: an
//! approved command tries every local door an attacker found open — the
//! daemon's own socket (to approve the agent's next request, run a
//! command as the partner and write a block), PostgreSQL's socket, a tmux
//! server's socket, the console's terminal — and the home, build tools'
//! directories, planted links, signals and the environment. Each try is
//! approved by the partner; none may act as the partner.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::sandbox::SECRET;
use crate::support::{self, daemon};

/// A constellation in a directory outside `/tmp` (so that the private
/// `/tmp` is not what hides the doors): agent ada says `pulse` on its
/// first pulse; commands run in `work`.
struct Place {
    _root: tempfile::TempDir,
    dir: PathBuf,
    work: PathBuf,
}

fn place(pulse: &str, extra: &str) -> Place {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = std::fs::canonicalize(root.path()).unwrap();
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        dir.join("partner.toml"),
        format!(
            "name = \"doors\"\npolicy = \"policy.toml\"\n{extra}\n[shell]\ndir = \"work\"\ntimeout = \"30s\"\n\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.join("script.toml"),
        format!("[agents.ada]\npulses = [{}]\n", toml_string(pulse)),
    )
    .unwrap();
    Place {
        _root: root,
        dir,
        work,
    }
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The waiting requests (id, canonical form), oldest first.
fn waiting(dir: &Path) -> Vec<(String, String)> {
    let (_, out, _) = support::partner_in(dir, &["pending", "--db", "c.db", "list", "--json"], "");
    let list: Vec<Value> = serde_json::from_str(out.trim()).unwrap_or_default();
    list.iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap_or_default().to_string(),
                r["canonical"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Waits until `n` requests wait.
fn wait_for_requests(dir: &Path, n: usize) -> Vec<(String, String)> {
    let started = Instant::now();
    loop {
        let now = waiting(dir);
        if now.len() >= n {
            return now;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{n} requests never waited: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The trace records of shell commands, from the database.
fn shell_records(dir: &Path) -> Vec<Value> {
    let (_, out, _) = support::partner_in(dir, &["trace", "show", "--db", "c.db", "--json"], "");
    let all: Vec<Value> = serde_json::from_str(out.trim()).unwrap_or_default();
    all.into_iter().filter(|r| r["verb"] == "shell").collect()
}

/// Waits for the record of request `id`'s command.
fn record_of(dir: &Path, id: &str) -> Value {
    let started = Instant::now();
    loop {
        if let Some(r) = shell_records(dir)
            .into_iter()
            .find(|r| r["decision"]["request"] == id)
        {
            return r;
        }
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "{id} never ran"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

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
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
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

/// A fake home holding fake secrets, with a working directory inside.
fn fake_home(root: &Path) -> PathBuf {
    let home = root.join("home");
    for (file, text) in [
        (".ssh/id_rsa", SECRET),
        (".cargo/credentials.toml", SECRET),
        (".cargo/config.toml", "# config\n"),
        (".bashrc", "# bashrc\n"),
        (".local/share/partner/keep", "x"),
    ] {
        let path = home.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(home.join("work")).unwrap();
    home
}

/// `partner` in `dir` with HOME at `home`.
fn partner_at(dir: &Path, home: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Asks for `/shell command` as ada in `dir` and approves it as the
/// partner: what asking and approving printed.
fn ask_and_approve(dir: &Path, home: &Path, db: &Path, command: &str) -> (String, String) {
    let db = db.to_str().unwrap();
    let shell = format!("/shell {command}");
    let (code, asked) = partner_at(dir, home, &["exec", "--db", db, "--agent", "ada", &shell]);
    assert_eq!(code, 0, "{asked}");
    let id = asked
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| w.starts_with('r') && w[1..].parse::<u32>().is_ok())
        .unwrap_or_else(|| panic!("no request in {asked:?}"))
        .to_string();
    let (_, done) = partner_at(dir, home, &["pending", "--db", db, "approve", &id]);
    (asked, done)
}

#[test]
fn a_home_is_never_a_working_directory() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = fake_home(root.path());
    let db = root.path().join("c.db");
    // A console started in the home: the command is refused, not run.
    std::fs::write(home.join("evil.sh"), "cat .ssh/id_rsa; echo x >> .bashrc\n").unwrap();
    let (asked, done) = ask_and_approve(&home, &home, &db, "bash evil.sh");
    assert!(
        asked.contains("NOT RUNNABLE HERE"),
        "the queue says so: {asked}"
    );
    assert!(!done.contains(SECRET), "{done}");
    assert!(done.contains("your home"), "{done}");
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# bashrc\n"
    );
    // `[shell] dir = "~"`: the constellation is refused when it loads.
    let dir = root.path().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"h\"\n[shell]\ndir = \"~\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("script.toml"), "[agents.ada]\n").unwrap();
    let (code, said) = partner_at(
        &dir,
        &home,
        &[
            "run",
            "--headless",
            "--config",
            "partner.toml",
            "--db",
            "c.db",
            "--for",
            "1s",
        ],
    );
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("[shell] dir") && said.contains("home"),
        "{said}"
    );
}

#[test]
fn build_tools_get_their_caches_and_never_their_credentials_or_config() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = fake_home(root.path());
    let work = home.join("work");
    let db = root.path().join("c.db");
    std::fs::write(
        work.join("build.sh"),
        "cat ~/.cargo/credentials.toml; echo '[build]' >> ~/.cargo/config.toml; echo x > ~/.local/share/partner/planted.db\n",
    )
    .unwrap();
    let (asked, done) = ask_and_approve(&work, &home, &db, "cargo --version; bash build.sh");
    assert!(asked.contains("sandbox"), "{asked}");
    assert!(
        !done.contains(SECRET),
        "cargo's credentials were read: {done}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".cargo/config.toml")).unwrap(),
        "# config\n",
        "{done}"
    );
    let (_, done) = ask_and_approve(&work, &home, &db, "pip --version; bash build.sh");
    assert!(
        !home.join(".local/share/partner/planted.db").exists(),
        "pip's grant wrote the partner's data: {done}"
    );
}

#[test]
fn a_link_planted_in_the_working_directory_never_widens_what_is_read() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = fake_home(root.path());
    let work = home.join("work");
    let db = root.path().join("c.db");
    let (_, done) = ask_and_approve(&work, &home, &db, "ln -s ~/.ssh keys");
    assert!(work.join("keys").is_symlink(), "{done}");
    let (asked, done) = ask_and_approve(&work, &home, &db, "cat keys/id_rsa");
    assert!(
        !done.contains(SECRET),
        "the key was read through the link: {done}"
    );
    assert!(
        asked.contains("BLOCKED") || asked.contains("HIGH"),
        "the queue rates the read by where the link leads: {asked}"
    );
}

#[test]
fn a_command_gets_no_provider_key_token_or_partner_setting() {
    let p = place("/shell env", "");
    let (code, _, err) = support::headless(&p.dir, "3s", &[]);
    assert_eq!(code, Some(0), "{err}");
    // The process that runs the command holds a provider's key, a token
    // and partner's own settings.
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(&p.dir)
        .env("OPENAI_API_KEY", SECRET)
        .env("PARTNER_TOKEN", SECRET)
        .env("GITHUB_TOKEN", SECRET)
        .args(["pending", "--db", "c.db", "approve", "r1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let ran = record_of(&p.dir, "r1");
    let stdout = ran["data"]["stdout"].as_str().unwrap_or_default();
    assert!(stdout.contains("PATH="), "{ran:#}");
    assert!(!stdout.contains(SECRET), "{stdout}");
    for line in stdout.lines() {
        let name = line.split('=').next().unwrap_or_default();
        // TMPDIR is its own; PWD, SHLVL and _ are bash's.
        assert!(
            partner::gate::process::KEPT_ENV.contains(&name)
                || ["TMPDIR", "PWD", "SHLVL", "_"].contains(&name),
            "{name} passed: {stdout}"
        );
    }
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

#[test]
fn without_namespaces_approving_from_the_command_line_asks_once_more() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = fake_home(root.path());
    let work = home.join("work");
    let db = root.path().join("c.db");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_partner"))
            .current_dir(&work)
            .env("HOME", &home)
            .env("PARTNER_NO_NAMESPACES", "1")
            .args(args)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), said)
    };
    let db = db.to_str().unwrap();
    let (code, asked) = run(&["exec", "--db", db, "--agent", "ada", "/shell echo hi"]);
    assert_eq!(code, Some(0), "{asked}");
    assert!(
        asked.contains("PARTLY SANDBOXED (no namespaces (PARTNER_NO_NAMESPACES is set))"),
        "{asked}"
    );
    let (code, refused) = run(&["pending", "--db", db, "approve", "r1"]);
    assert_eq!(code, Some(2), "{refused}");
    assert!(
        refused.contains("--unsandboxed") && refused.contains("PARTLY SANDBOXED"),
        "{refused}"
    );
    let (code, done) = run(&["pending", "--db", db, "approve", "r1", "--unsandboxed"]);
    assert_eq!(code, Some(0), "{done}");
    assert!(done.contains("hi"), "{done}");
}

/// The partner's database named by a relative path (`--db ./agents.db`)
/// is protected in the queue's rating as it is by its full path.
#[test]
fn a_relative_database_path_keeps_its_protection() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = fake_home(root.path());
    let work = home.join("work");
    let (code, asked) = partner_at(
        &work,
        &home,
        &[
            "exec",
            "--db",
            "./agents.db",
            "--agent",
            "ada",
            "/shell cat agents.db",
        ],
    );
    assert_eq!(code, 0, "{asked}");
    assert!(
        asked.contains("BLOCKED") && asked.contains("partner's"),
        "the queue rates reading the database by its real path: {asked}"
    );
}
