//! The four ways a constellation runs — `partner run --headless` and
//! `partner serve`, each on a SQLite file and on PostgreSQL — behind one
//! interface, so a runtime test is written once and run on every path.
//! The PostgreSQL paths need `PARTNER_TEST_POSTGRES` (see `postgres`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use partner::protocol::client::Client;
use partner::protocol::{Op, RunState};

use super::postgres::{self, Scratch};

/// Where the constellation is kept.
pub enum Kept {
    /// `c.db` in the test's directory.
    File,
    /// A scratch PostgreSQL database.
    Postgres(Scratch),
}

/// How the constellation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// `partner run --headless --for …`, messages given up front.
    Headless,
    /// `partner serve`, messages sent through its socket.
    Served,
}

/// One path: a way to run, a store, and a directory of its own.
pub struct RunPath {
    /// How it runs.
    pub way: Way,
    /// Where it is kept.
    pub kept: Kept,
    /// Its directory (the constellation's files, logs, sockets).
    pub dir: tempfile::TempDir,
}

/// Every path this machine can run: the SQLite ones always, the
/// PostgreSQL ones when a test server is configured.
pub fn every() -> Vec<RunPath> {
    let mut out = Vec::new();
    for way in [Way::Headless, Way::Served] {
        out.push(RunPath::with(way, Kept::File));
        if let Some(db) = postgres::scratch() {
            out.push(RunPath::with(way, Kept::Postgres(db)));
        }
    }
    out
}

impl RunPath {
    /// A path that runs `way` on `kept`, in a directory of its own.
    pub fn with(way: Way, kept: Kept) -> Self {
        RunPath {
            way,
            kept,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Its directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A name for messages: `served on PostgreSQL`.
    pub fn name(&self) -> String {
        let way = match self.way {
            Way::Headless => "headless",
            Way::Served => "served",
        };
        let kept = match self.kept {
            Kept::File => "SQLite",
            Kept::Postgres(_) => "PostgreSQL",
        };
        format!("{way} on {kept}")
    }

    /// The PostgreSQL URL, on those paths.
    pub fn url(&self) -> Option<&str> {
        match &self.kept {
            Kept::Postgres(db) => Some(&db.url),
            Kept::File => None,
        }
    }

    /// The arguments naming the store (`--db c.db`, or none: the
    /// environment names PostgreSQL).
    fn store_args(&self) -> Vec<&str> {
        match &self.kept {
            Kept::File => vec!["--db", "c.db"],
            Kept::Postgres(_) => Vec::new(),
        }
    }

    /// `partner` in the path's directory, its store in the environment.
    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
        command.current_dir(self.path());
        match self.url() {
            Some(url) => command.env("PARTNER_STORE", url),
            None => command.env_remove("PARTNER_STORE"),
        };
        command
    }

    /// Runs the constellation for `run_for` (headless) with `messages`
    /// given up front: its events.
    pub fn headless(&self, run_for: &str, messages: &[(&str, &str)]) -> Vec<serde_json::Value> {
        let mut command = self.command();
        command
            .args([
                "run",
                "--headless",
                "--config",
                "partner.toml",
                "--for",
                run_for,
            ])
            .args(self.store_args());
        for (agent, text) in messages {
            command.arg("--message").arg(format!("{agent}={text}"));
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            self.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The daemon of the team whose lease on `agent` is in force, as
    /// `partner status` says (`None` off PostgreSQL, or when none is).
    pub fn holder(&self, agent: &str) -> Option<String> {
        self.url()?;
        let out = self.command().args(["status", "--json"]).output().ok()?;
        let status: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        status["agents"]
            .as_array()?
            .iter()
            .find(|a| a["agent"] == agent && a["running"] == true)
            .and_then(|a| a["host"].as_str())
            .map(str::to_string)
    }

    /// Starts `partner serve` on the path's store (named `host` in a
    /// team), once it answers on its socket.
    pub fn serve(&self, host: &str) -> Served {
        self.serve_with(host, &[])
    }

    /// [`RunPath::serve`], listening on TCP at `addr` too.
    pub fn serve_listening(&self, host: &str, addr: std::net::SocketAddr) -> Served {
        self.serve_with(host, &["--listen", &addr.to_string()])
    }

    /// [`RunPath::serve`] with more arguments.
    pub fn serve_with(&self, host: &str, extra: &[&str]) -> Served {
        let socket = self.path().join(format!("{host}.sock"));
        let log = self.path().join(format!("{host}.log"));
        let mut command = self.command();
        command
            .args(["serve", "--config", "partner.toml"])
            .args(self.store_args())
            .arg("--socket")
            .arg(&socket)
            .args(extra);
        if self.url().is_some() {
            command.args(["--host-name", host]);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let served = Served { child, socket, log };
        let started = Instant::now();
        while served.client().is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{}: the daemon did not listen: {}",
                self.name(),
                served.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        served
    }
}

/// A running `partner serve`, killed (`-9`) when dropped.
pub struct Served {
    /// Its process.
    pub child: Child,
    /// Its socket.
    pub socket: PathBuf,
    log: PathBuf,
}

impl Served {
    /// A client of its socket, as the partner.
    pub fn client(&self) -> Result<Client, partner::protocol::client::ClientError> {
        let data = super::daemon::data_dir_with(&[]);
        Client::connect_with(
            &self.socket,
            "test",
            None,
            super::daemon::cookie_of(&data, &self.socket),
        )
    }

    /// What it logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends the partner's message to `agent`; what the daemon answered.
    pub fn message(&self, agent: &str, text: &str) -> String {
        let mut client = self.client().unwrap();
        let (answer, _) = client
            .request(Op::Message {
                agent: agent.into(),
                text: text.into(),
            })
            .unwrap_or_else(|e| panic!("the message was refused: {e}\n{}", self.log()));
        answer
    }

    /// Waits (up to `within`) until every agent this daemon runs is idle.
    pub fn settle(&self, within: Duration) {
        let started = Instant::now();
        loop {
            let busy = self.client().ok().and_then(|mut c| {
                let (_, data) = c.request(Op::Status).ok()?;
                let partner::protocol::Returned::Status(status) = data else {
                    return None;
                };
                Some(status.agents.iter().any(|a| {
                    a.host.is_none() && matches!(a.state, RunState::Generating | RunState::Waiting)
                }))
            });
            if busy == Some(false) {
                return;
            }
            assert!(
                started.elapsed() < within,
                "the agents did not settle: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops it as a service manager would (SIGTERM), and waits.
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (up to `within`) until `ready()` holds; false if it never did.
pub fn until(within: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < within {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ready()
}
