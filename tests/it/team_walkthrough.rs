//! The README's team set-up, executed as written: its shell block is read
//! from the README and run line by line, in order — partners with their
//! tokens in files, an existing constellation copied in, two daemons, the
//! status, a console attached over TCP with a token file, a partner
//! revoked — with only the server's URL, the addresses and the files
//! made the test's own. Then the daemon running the agents is killed and
//! the other takes them over, the console saying so.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::paths::until;
use crate::support::postgres;
use crate::support::tmux::Tmux;

/// The shell block of the README's "Setting a team up", as lines.
fn walkthrough() -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("the README");
    let from = readme
        .find("**Setting a team up.**")
        .expect("the README's team set-up");
    let block = &readme[from..];
    let start = block.find("```sh\n").expect("its shell block") + "```sh\n".len();
    let end = block[start..].find("```").unwrap() + start;
    block[start..end].lines().map(str::to_string).collect()
}

/// One daemon of the README's, killed when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A scripted constellation whose agent acts when pulsed, as
/// `partner.toml`.
fn constellation(dir: &Path) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"team\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1h\"\ngreeting = \"Morning.\"\n\n[[agents]]\nname = \"bo\"\nmodel = \"scripted:x\"\npulse = \"1h\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("script.toml"),
        "[agents.ada]\nreplies = [\"Good morning.\"]\n[agents.bo]\nreplies = [\"ok\"]\n",
    )
    .unwrap();
}

/// What the test makes its own in a README line: the server, the
/// addresses, the existing constellation's file, and `partner` itself.
fn localized(line: &str, url: &str, ports: &BTreeMap<&str, SocketAddr>, mine: &Path) -> String {
    let mut line = line
        .replace("postgres://partner:secret@db.example:5432/team", url)
        .replace(
            "~/.local/share/partner/mine.db",
            &mine.display().to_string(),
        )
        .replace("h2:7070", &ports["h2"].to_string());
    for (host, port) in ports {
        if line.contains(&format!("--host-name {host}")) {
            line = line.replace("0.0.0.0:7070", &port.to_string());
        }
    }
    line
}

/// A README line's words (quotes and `$PARTNER_STORE` as a shell reads
/// them), without its comment.
fn words(line: &str, url: &str) -> Vec<String> {
    let code = line.split("   #").next().unwrap_or(line);
    let code = code.split("  #").next().unwrap_or(code);
    code.split_whitespace()
        .map(|w| w.trim_matches('"').replace("$PARTNER_STORE", url))
        .collect()
}

/// `partner` with `args` in `dir`, the store in the environment.
fn partner(dir: &Path, url: &str, args: &[String]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .current_dir(dir)
        .env("PARTNER_STORE", url)
        .env("HOME", dir.join("home"))
        .env("XDG_DATA_HOME", dir.join("home/data"))
        .args(args);
    command
}

/// Runs one `partner` line of the README to its end: its output.
fn ran(dir: &Path, url: &str, args: &[String]) -> String {
    let out = partner(dir, url, args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "partner {}: {text}", args.join(" "));
    text
}

#[test]
fn the_readme_team_set_up_runs_as_written_and_survives_a_failover() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("home")).unwrap();
    constellation(d);
    // The existing constellation the README brings in.
    let mine = d.join("mine.db");
    let args: Vec<String> = [
        "run",
        "--headless",
        "--config",
        "partner.toml",
        "--for",
        "2s",
    ]
    .map(String::from)
    .into_iter()
    .chain(["--db".to_string(), mine.display().to_string()])
    .collect();
    ran(d, "", &args);
    let ports: BTreeMap<&str, SocketAddr> = [
        ("h1", crate::support::free_port()),
        ("h2", crate::support::free_port()),
    ]
    .into_iter()
    .collect();
    let mut url = String::new();
    let mut daemons: BTreeMap<String, Daemon> = BTreeMap::new();
    let mut consoles = Vec::new();
    let mut said = Vec::new();
    for line in walkthrough() {
        let line = localized(&line, &db.url, &ports, &mine);
        let trimmed = line.trim();
        if let Some(value) = trimmed.strip_prefix("export PARTNER_STORE=") {
            url = value.to_string();
            continue;
        }
        if !trimmed.starts_with("partner ") {
            // Setting PostgreSQL up, and comments: the test's server is
            // made already.
            continue;
        }
        let args: Vec<String> = words(trimmed, &url).split_off(1);
        if let Some(host) = trimmed
            .rsplit("# on ")
            .next()
            .filter(|_| trimmed.contains("# on "))
        {
            let child = partner(d, &url, &args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(d.join(format!("{host}.log"))).unwrap())
                .spawn()
                .unwrap();
            daemons.insert(host.to_string(), Daemon(child));
            let port = ports[host];
            assert!(
                until(Duration::from_secs(20), || std::net::TcpStream::connect(
                    port
                )
                .is_ok()),
                "{host} never listened on {port}"
            );
            continue;
        }
        if args[0] == "attach" {
            let command = format!(
                "cd {} && env TERM=xterm-256color COLORTERM= PARTNER_STORE={url} {} {} --no-bell; exec sh",
                d.display(),
                env!("CARGO_BIN_EXE_partner"),
                args.join(" ")
            );
            let console = Tmux::start("walkthrough", &command);
            console.wait("the agents, run on h1", Duration::from_secs(30), |s| {
                s.contains("ada@h1") && s.contains("bo@h1")
            });
            consoles.push(console);
            continue;
        }
        if args[0] == "status" {
            // Both daemons up by now: the idle one is listed too.
            assert!(
                until(Duration::from_secs(20), || crate::team::placement(d, &url)
                    .len()
                    == 2),
                "the agents never ran"
            );
        }
        said.push((trimmed.to_string(), ran(d, &url, &args)));
    }
    let out = |what: &str| {
        said.iter()
            .find(|(line, _)| line.contains(what))
            .map(|(_, out)| out.clone())
            .unwrap_or_else(|| panic!("the README ran no {what}: {said:?}"))
    };
    assert!(out("partners add alice").contains("alice.token"));
    assert!(
        !out("partners add alice").contains("ptk_"),
        "the token is not printed"
    );
    assert!(out("store copy").contains("every table is the same on both sides"));
    assert!(
        out("store copy").contains("there already, kept"),
        "{}",
        out("store copy")
    );
    let status = out("status");
    assert!(
        status.contains("h1") && status.contains("h2") && status.contains("h2  up, runs no agent"),
        "the idle daemon is a member too: {status}"
    );
    assert!(out("partners revoke bob").contains("revoked bob's token"));
    assert_eq!(daemons.len(), 2, "the README starts two daemons");
    assert_eq!(consoles.len(), 1, "the README attaches one console");
    // The daemon running the agents dies; the other takes them over, and
    // the console attached to it shows them running there.
    drop(daemons.remove("h1"));
    assert!(
        until(Duration::from_secs(20), || {
            let placed = crate::team::placement(d, &url);
            placed.len() == 2 && placed.iter().all(|(_, host)| host == "h2")
        }),
        "h2 never took the agents over: {:?}",
        crate::team::placement(d, &url)
    );
    let screen = consoles[0].wait("the agents running on h2", Duration::from_secs(20), |s| {
        !s.contains("@h1") && s.contains("ada") && !s.contains("? pending")
    });
    assert!(!screen.contains("refused"), "{screen}");
    consoles[0].keys(&["q"]);
}
