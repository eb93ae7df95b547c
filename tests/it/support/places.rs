//! Constellations and fake homes in places the sandbox shows as they are
//! (outside `/tmp`), and the partner run there: asking for a command as
//! an agent, approving it, reading the queue and the trace.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::partner_in as partner_run_in;
use super::sandbox::SECRET;

/// A constellation in a directory outside `/tmp` (so that the private
/// `/tmp` is not what hides the doors): agent ada says `pulse` on its
/// first pulse; commands run in `work`.
pub struct Place {
    _root: tempfile::TempDir,
    /// The constellation's directory (its config, database and socket).
    pub dir: PathBuf,
    /// Where its commands run.
    pub work: PathBuf,
}

pub fn place(pulse: &str, extra: &str) -> Place {
    let root = super::sandbox::outside_tmp();
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

pub fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The waiting requests (id, canonical form), oldest first.
pub fn waiting(dir: &Path) -> Vec<(String, String)> {
    let (_, out, _) = partner_run_in(dir, &["pending", "--db", "c.db", "list", "--json"], "");
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
pub fn wait_for_requests(dir: &Path, n: usize) -> Vec<(String, String)> {
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
pub fn shell_records(dir: &Path) -> Vec<Value> {
    let (_, out, _) = partner_run_in(dir, &["trace", "show", "--db", "c.db", "--json"], "");
    let all: Vec<Value> = serde_json::from_str(out.trim()).unwrap_or_default();
    all.into_iter().filter(|r| r["verb"] == "shell").collect()
}

/// Waits for the record of request `id`'s command.
pub fn record_of(dir: &Path, id: &str) -> Value {
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

/// A fake home holding fake secrets, with a working directory inside.
pub fn fake_home(root: &Path) -> PathBuf {
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

/// `partner` in `dir` with HOME at `home` (and every wall the machine
/// has): its exit code and what it printed.
pub fn partner_at(dir: &Path, home: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("PARTNER_NO_SANDBOX")
        .env_remove("PARTNER_NO_NAMESPACES")
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
pub fn ask_and_approve(dir: &Path, home: &Path, db: &Path, command: &str) -> (String, String) {
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
