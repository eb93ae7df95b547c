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
    let started = Instant::now();
    while Client::connect(&socket, "test").is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the daemon did not listen: {}",
            std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Daemon { child, socket }
}
