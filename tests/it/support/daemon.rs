//! `partner serve` in a temp dir, for tests of the daemon and of consoles
//! attached to it: started, waited for until it answers, killed when
//! dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use partner::protocol::client::Client;

/// A running daemon over `c.db` in a directory.
pub struct Daemon {
    /// Its process.
    pub child: Child,
    /// Its socket.
    pub socket: PathBuf,
    /// Its data directory (where it keeps its socket's cookie).
    pub data: PathBuf,
}

impl Daemon {
    /// The cookie a client of its socket shows.
    pub fn cookie(&self) -> Option<String> {
        cookie_of(&self.data, &self.socket)
    }

    /// A client of its socket, as the partner.
    pub fn client(&self) -> Result<Client, partner::protocol::client::ClientError> {
        Client::connect_with(&self.socket, "test", None, self.cookie())
    }

    /// A hello line (JSON) with the cookie, for raw clients.
    pub fn hello(&self, client: &str) -> String {
        hello_line(client, self.cookie().as_deref())
    }
}

/// The cookie a daemon with data directory `data` keeps for `socket`.
pub fn cookie_of(data: &Path, socket: &Path) -> Option<String> {
    partner::core::doorman::read_cookie_at(&partner::core::doorman::cookie_in(data, socket)?)
}

/// A hello line (JSON, with its newline) for a raw client.
pub fn hello_line(client: &str, cookie: Option<&str>) -> String {
    let cookie = cookie
        .map(|c| format!(",\"cookie\":\"{c}\""))
        .unwrap_or_default();
    format!(
        "{{\"id\":0,\"op\":\"hello\",\"version\":{},\"client\":\"{client}\"{cookie}}}\n",
        partner::protocol::VERSION
    )
}

/// The data directory a process with `env` (over this one's) uses.
pub fn data_dir_with(env: &[(&str, PathBuf)]) -> PathBuf {
    let get = |key: &str| {
        env.iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(key).map(PathBuf::from))
    };
    match get("XDG_DATA_HOME") {
        Some(d) if d.is_absolute() => d.join("partner"),
        _ => get("HOME").unwrap().join(".local/share/partner"),
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves `dir`'s `partner.toml` over `dir/c.db`, its log in
/// `dir/serve.log`, once it answers on its socket.
pub fn serve(dir: &Path) -> Daemon {
    serve_with(dir, &[], &[])
}

/// [`serve`] with more arguments and environment variables.
pub fn serve_with(dir: &Path, extra: &[&str], env: &[(&str, PathBuf)]) -> Daemon {
    let child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (*k, v.as_os_str())))
        .args(["serve", "--config", "partner.toml", "--db", "c.db"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("serve.log")).unwrap())
        .spawn()
        .unwrap();
    let socket = dir.join("c.db.sock");
    let data = data_dir_with(env);
    let started = Instant::now();
    while Client::connect_with(&socket, "test", None, cookie_of(&data, &socket)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the daemon did not listen: {}",
            std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Daemon {
        child,
        socket,
        data,
    }
}

/// One daemon of a team on a shared store, killed (`-9`) when dropped.
pub struct TeamHost {
    /// Its process.
    pub child: Child,
    /// Its socket (`HOST.sock` in the directory).
    pub socket: PathBuf,
}

impl Drop for TeamHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `partner serve` in `dir` on the team store `url` as host `host`, its
/// constellation from `from` (`["--demo"]` or `["--config", "FILE"]`),
/// its stderr in `HOST.log`.
pub fn team_host(dir: &Path, url: &str, host: &str, from: &[&str]) -> TeamHost {
    let socket = dir.join(format!("{host}.sock"));
    let child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .arg("serve")
        .args(from)
        .args(["--store", url, "--host-name", host])
        .arg("--socket")
        .arg(&socket)
        .env_remove("PARTNER_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("{host}.log"))).unwrap())
        .spawn()
        .unwrap();
    TeamHost { child, socket }
}
