//! An agent with npm's filesystem server, decided in a real terminal: it
//! lists the folder and reads a file freely (rules allow them); its write
//! waits in the queue — shown as server, tool and arguments
//! pretty-printed, with what it would change in the file as a diff —
//! until the partner presses `a` (or edits the arguments with `E`), and
//! only then is the file changed. In the embedded console on SQLite, and
//! in a console attached to `partner serve` on PostgreSQL.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::tmux::{Tmux, first_partner_request};

fn npm_servers() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("PARTNER_TEST_MCP").map(PathBuf::from) else {
        eprintln!("SKIPPED: PARTNER_TEST_MCP is not set (.ci/run installs the npm servers)");
        return None;
    };
    let bin = dir.join("node_modules/.bin/mcp-server-filesystem");
    assert!(bin.exists(), "PARTNER_TEST_MCP holds no {}", bin.display());
    Some(bin)
}

/// A constellation whose agent `ada` lists `root` and writes a plan in it
/// through the filesystem server.
fn fs_constellation(dir: &Path, server: &Path, root: &Path) {
    let root = root.display();
    std::fs::write(
        dir.join("partner.toml"),
        format!(
            "name = \"tools\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n\n[[mcp]]\nname = \"fs\"\ncommand = \"{}\"\nargs = [\"{root}\"]\nwrites = [\"{root}\"]\ntimeout = 10\n",
            server.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("policy.toml"),
        "default = \"allow\"\n[[rules]]\nverb = \"fs.list*\"\ndecide = \"allow\"\n[[rules]]\nverb = \"fs.read*\"\ndecide = \"allow\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("script.toml"),
        format!(
            "[agents.ada]\npulses = [\"Writing the plan.\\n/fs.list_directory path=\\\"{root}\\\"\\n/fs.read_text_file path=\\\"{root}/plan.md\\\"\\n/fs.write_file path=\\\"{root}/plan.md\\\" content=\\\"ship monday\\\"\", \"Resting.\"]\ncontinuations = [\"Noted.\"]\n"
        ),
    )
    .unwrap();
}

/// A folder `notes` holding a plan, and the constellation over it.
fn notes_constellation(server: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("notes");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("plan.md"), "ship friday").unwrap();
    fs_constellation(dir.path(), server, &root);
    (dir, root)
}

/// The write waits, shown field by field; `a` lets it run as asked, or
/// `E` with new arguments (`edited`: the content written instead).
fn the_write_waits_for_a(console: &Tmux, root: &Path, edited: Option<&str>) {
    let screen = console.wait("the write in the queue", Duration::from_secs(40), |s| {
        first_partner_request(s).is_some() && s.contains("write_file")
    });
    // Listed and read without asking: their results are on screen.
    assert!(screen.contains("✓ [FILE] plan.md"), "{screen}");
    assert!(screen.contains("✓ ship friday"), "{screen}");
    let before = std::fs::read_to_string(root.join("plan.md")).unwrap();
    assert_eq!(before, "ship friday", "written before the approval");
    for shown in [
        "server   fs",
        "tool     write_file",
        "\"content\": \"ship monday\"",
        "would change the file:",
        "-ship friday",
        "+ship monday",
    ] {
        assert!(screen.contains(shown), "{shown:?} not on screen:\n{screen}");
    }
    let id = first_partner_request(&screen).unwrap();
    let written = match edited {
        None => {
            console.keys(&["a"]);
            "ship monday"
        }
        Some(content) => {
            console.keys(&["E"]);
            console.wait("the arguments to edit", Duration::from_secs(10), |s| {
                s.contains(&format!("editing the action of {id}"))
                    && s.contains("/fs.write_file {\"content\":\"ship monday\"")
            });
            let line = format!(
                "/fs.write_file {{\"path\":\"{}\",\"content\":\"{content}\"}}",
                root.join("plan.md").display()
            );
            console.keys(&["End", "C-j", &line, "C-s"]);
            content
        }
    };
    let started = Instant::now();
    while std::fs::read_to_string(root.join("plan.md"))
        .ok()
        .as_deref()
        != Some(written)
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the approved write did not happen:\n{}",
            console.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_agents_write_through_an_mcp_server_waits_for_a_key_in_the_embedded_console() {
    let Some(server) = npm_servers() else {
        return;
    };
    let (dir, root) = notes_constellation(&server);
    let console = support::tmux::console("mcp-fs-embedded", dir.path(), "");
    the_write_waits_for_a(&console, &root, None);
}

#[test]
fn an_agents_write_through_an_mcp_server_waits_for_a_key_in_an_attached_console_on_postgresql() {
    let Some(server) = npm_servers() else {
        return;
    };
    let Some(pg) = support::postgres::scratch() else {
        return;
    };
    let (dir, root) = notes_constellation(&server);
    let socket = dir.path().join("s.sock");
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir.path())
        .args(["serve", "--config", "partner.toml", "--store", &pg.url])
        .arg("--socket")
        .arg(&socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("serve.log")).unwrap())
        .spawn()
        .unwrap();
    let console = Tmux::start(
        "mcp-fs-attached",
        &format!(
            "cd {} && sleep 2 && env TERM=xterm-256color COLORTERM= {} attach --socket {} --no-bell; exec sh",
            dir.path().display(),
            env!("CARGO_BIN_EXE_partner"),
            socket.display(),
        ),
    );
    console.wait("the attached console", Duration::from_secs(30), |s| {
        s.contains("Turns") && s.contains("attached")
    });
    // Edited in the console: the arguments the partner wrote are the call's.
    the_write_waits_for_a(&console, &root, Some("ship tuesday"));
    let _ = daemon.kill();
    let _ = daemon.wait();
}
