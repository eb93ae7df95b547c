//! A real terminal for end-to-end console tests: a tmux session running a
//! command, its screen as text, and keys typed into it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    session: String,
}

impl Tmux {
    /// A 200×50 terminal running `command` (its session named after `name`).
    pub fn start(name: &str, command: &str) -> Tmux {
        Tmux::sized(name, command, 200, 50)
    }

    /// A `width`×`height` terminal running `command`.
    pub fn sized(name: &str, command: &str, width: u16, height: u16) -> Tmux {
        let session = format!("partner-{name}-{}", std::process::id());
        let status = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &session,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                command,
            ])
            .status()
            .expect("tmux is needed for the console end-to-end test (it is part of CI's image)");
        assert!(status.success());
        Tmux { session }
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.session])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its colours (SGR escape sequences).
    pub fn screen_with_colors(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-e", "-p", "-t", &self.session])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Pastes tmux's buffer as a terminal paste (bracketed, when the
    /// program asked for that).
    pub fn paste(&self) {
        assert!(
            Command::new("tmux")
                .args(["paste-buffer", "-p", "-t", &self.session])
                .status()
                .unwrap()
                .success()
        );
    }

    /// Types keys (tmux names: `Enter`, `C-s`, `Tab`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.session.as_str()];
        args.extend_from_slice(keys);
        assert!(Command::new("tmux").args(&args).status().unwrap().success());
    }

    /// Waits until the screen satisfies `pred`, returning it.
    pub fn wait(&self, what: &str, within: Duration, pred: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < within,
                "timed out waiting for {what}; the screen was:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.session])
            .status();
    }
}

/// The first pending row waiting on the partner: its request id.
pub fn first_partner_request(screen: &str) -> Option<String> {
    screen.lines().find_map(|line| {
        let inner = line.split('│').nth(1).or_else(|| line.split('┃').nth(1))?;
        let id = inner.trim_start_matches('▸').split_whitespace().next()?;
        (id.starts_with('r')
            && id[1..].chars().all(|c| c.is_ascii_digit())
            && inner.contains("partner ·"))
        .then(|| id.to_string())
    })
}

/// Writes a constellation of one scripted agent, `ada`, to `dir`.
pub fn constellation(dir: &Path, console: &str, policy: &str, pulses: &str) {
    std::fs::write(
        dir.join("partner.toml"),
        format!(
            "name = \"seams\"\npolicy = \"policy.toml\"\n{console}\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
    std::fs::write(
        dir.join("script.toml"),
        format!("[agents.ada]\npulses = [{pulses}]\n"),
    )
    .unwrap();
}

/// `partner run` on the constellation in `dir`, in a terminal: its process
/// id is written to `pid`, its exit code to `exit` when it ends (the pane
/// stays open after, to be read).
pub fn console(name: &str, dir: &Path, extra: &str) -> Tmux {
    let command = format!(
        "cd {} && sh -c 'echo $$ > pid; exec env TERM=xterm-256color COLORTERM= {} run --config partner.toml --db c.db --no-bell {extra}'; echo $? > exit; exec sh",
        dir.display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let tmux = Tmux::start(name, &command);
    tmux.wait("the console", Duration::from_secs(20), |s| {
        s.contains("Turns") && s.contains("Pending")
    });
    tmux
}

/// The console's exit code, once it has exited (waiting up to `within`).
pub fn wait_exit(dir: &Path, within: Duration) -> Option<String> {
    let started = Instant::now();
    while started.elapsed() < within {
        if let Ok(code) = std::fs::read_to_string(dir.join("exit")) {
            return Some(code.trim().to_string());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}
