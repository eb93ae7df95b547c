//! One console suite, three paths: the same walk through the console —
//! the greeting answered, a message that makes the agent ask to post, the
//! request approved with `a` and carried out once the undo window has
//! passed, the queue empty again — run in a real terminal (tmux) against
//! the embedded console, a console attached over the daemon's Unix
//! socket, and a console attached over TCP with a partner's token to one
//! daemon of a two-daemon team on PostgreSQL. Each fails if the console
//! shows an error notification nobody expected.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::support::paths::{Kept, RunPath, Served, Way, until};
use crate::support::postgres;
use crate::support::tmux::{Tmux, first_partner_request};

/// How the console reaches its constellation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Console {
    /// `partner run`: the runtime in the console's own process.
    Embedded,
    /// `partner attach` over a daemon's Unix socket.
    Socket,
    /// `partner attach --connect` over TCP, with a partner's token, to a
    /// daemon of a team on PostgreSQL.
    Team,
}

/// One agent who greets back and, asked to, posts (which waits on the
/// partner).
fn constellation(dir: &Path) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"paths\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"off\"\ngreeting = \"Good morning, ada.\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("policy.toml"),
        "default = \"allow\"\n[platforms.bluesky]\nagents = [\"*\"]\n\n[[rules]]\nverb = \"post\"\ndecide = \"ask\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("script.toml"),
        "[agents.ada]\nreplies = [\n  { from = \"partner\", when = \"Good morning\", say = \"Morning! Ready when you are.\" },\n  { from = \"partner\", when = \"announce\", say = \"/post bluesky \\\"the beta is out\\\"\" },\n]\ncontinuations = [\"Announced.\"]\nunexpected = \"?\"\n",
    )
    .unwrap();
}

/// The terminal command that opens the console on `path` (the daemons it
/// needs already started).
fn console_command(console: Console, path: &RunPath, tcp: Option<SocketAddr>) -> String {
    let bin = env!("CARGO_BIN_EXE_partner");
    let what = match console {
        Console::Embedded => "run --config partner.toml --db c.db --no-bell".to_string(),
        Console::Socket => "attach --socket h1.sock --no-bell".to_string(),
        Console::Team => format!(
            "attach --connect {} --token-file alice.token --no-bell",
            tcp.unwrap()
        ),
    };
    let store = path
        .url()
        .map(|u| format!("PARTNER_STORE={u}"))
        .unwrap_or_default();
    format!(
        "cd {} && env TERM=xterm-256color COLORTERM= {store} {bin} {what}; exec sh",
        path.path().display()
    )
}

/// The status bar's unseen-problems badge (`! 2`), if any.
fn unseen(screen: &str) -> Option<String> {
    let bar = screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    bar.split(" ! ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string)
}

/// The walk, in the console `tmux` shows.
fn walk(name: &str, tmux: &Tmux) {
    tmux.wait(
        &format!("{name}: the greeting answered"),
        Duration::from_secs(30),
        |s| s.contains("Ready when you are"),
    );
    tmux.keys(&[":", "msg ada please announce the beta", "Enter"]);
    let screen = tmux.wait("ada's request", Duration::from_secs(30), |s| {
        first_partner_request(s).is_some()
    });
    let id = first_partner_request(&screen).unwrap();
    tmux.keys(&["a"]);
    // The approval is held for the undo window, then sent and answered; a
    // slow capture may see either state, and both say the key was taken.
    let sent = format!("approve once: {id}");
    tmux.wait("the approval held or sent", Duration::from_secs(10), |s| {
        s.contains("U undoes") || s.contains("approve once in") || s.contains(&sent)
    });
    // A capture may catch a frame half written (the pane drawn, the status
    // bar not yet): wait for the whole screen to say it.
    let done = tmux.wait("the post carried out", Duration::from_secs(30), |s| {
        s.contains("Announced.") && s.contains("Nothing waits") && s.contains("0 pending")
    });
    assert!(done.contains("0 pending"), "{name}: {done}");
    // Nothing went wrong that nobody expected: no unseen problem, and the
    // notifications hold no error.
    assert_eq!(unseen(&done), None, "{name}, after {id}:\n{done}");
    tmux.keys(&["N"]);
    let notices = tmux.wait("the notifications", Duration::from_secs(5), |s| {
        s.contains("Notifications")
    });
    assert!(
        !notices.contains("error -") && !notices.contains("the host sent"),
        "{name}: {notices}"
    );
    tmux.keys(&["Escape", "q"]);
}

#[test]
fn the_same_walk_through_the_console_on_every_path() {
    for console in [Console::Embedded, Console::Socket, Console::Team] {
        let path = match console {
            Console::Team => match postgres::scratch() {
                Some(db) => RunPath::with(Way::Served, Kept::Postgres(db)),
                None => continue,
            },
            _ => RunPath::with(Way::Served, Kept::File),
        };
        let name = format!("{console:?}");
        constellation(path.path());
        let mut daemons: Vec<Served> = Vec::new();
        let mut tcp = None;
        match console {
            Console::Embedded => {}
            Console::Socket => daemons.push(path.serve("h1")),
            Console::Team => {
                let mut add = std::process::Command::new(env!("CARGO_BIN_EXE_partner"));
                let out = add
                    .current_dir(path.path())
                    .env("PARTNER_STORE", path.url().unwrap())
                    .args(["partners", "add", "alice", "--token-file", "alice.token"])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{out:?}");
                let port = crate::support::free_port();
                daemons.push(path.serve_listening("h1", port));
                assert!(
                    until(Duration::from_secs(20), || path.holder("ada").as_deref()
                        == Some("h1")),
                    "h1 never ran ada"
                );
                daemons.push(path.serve("h2"));
                tcp = Some(port);
            }
        }
        let tmux = Tmux::sized(
            &format!("paths-{name}"),
            &console_command(console, &path, tcp),
            160,
            48,
        );
        walk(&name, &tmux);
        for daemon in &daemons {
            assert!(
                !daemon.log().contains("panicked"),
                "{name}: {}",
                daemon.log()
            );
        }
    }
}
