//! The console in a real terminal (tmux) where it meets the rest: it keeps
//! redrawing and taking keys while an approved effect hangs, and the
//! constellation file's `[console]` theme and keymap are the ones used.

use crate::support;

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use support::tmux::{console, constellation, first_partner_request, wait_exit};

/// The colour sequences of the screen's first line (the title bar).
fn title_colors(screen: &str) -> Vec<String> {
    let line = screen.lines().next().unwrap_or("");
    line.split('\u{1b}')
        .skip(1)
        .filter_map(|s| s.find('m').map(|end| s[..end].to_string()))
        .collect()
}

#[test]
fn the_constellation_file_chooses_the_theme_and_the_keymap() {
    let pulses = "\"Nothing to do.\"";
    let with_file = tempfile::tempdir().unwrap();
    constellation(
        with_file.path(),
        "[console]\ntheme = \"light\"\nkeymap = \"emacs\"\n",
        "",
        pulses,
    );
    let tmux = console("config-file", with_file.path(), "");
    let from_file = title_colors(&tmux.screen_with_colors());
    // Emacs's other-window: the focus moves from Turns to Pending.
    tmux.keys(&["C-x", "o"]);
    tmux.wait("C-x o to move the focus", Duration::from_secs(5), |s| {
        s.contains("┏ Pending")
    });
    tmux.keys(&["C-x", "C-c"]);
    assert_eq!(
        wait_exit(with_file.path(), Duration::from_secs(5)).as_deref(),
        Some("0"),
        "C-x C-c quits with the emacs keymap; the screen was:\n{}",
        tmux.screen()
    );
    drop(tmux);

    let mut colors = Vec::new();
    for theme in ["light", "dark"] {
        let dir = tempfile::tempdir().unwrap();
        constellation(dir.path(), "", "", pulses);
        let tmux = console(
            &format!("theme-{theme}"),
            dir.path(),
            &format!("--theme {theme}"),
        );
        colors.push(title_colors(&tmux.screen_with_colors()));
        // Without the emacs keymap, C-x o does nothing.
        tmux.keys(&["C-x", "o"]);
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            tmux.screen().contains("┏ Turns"),
            "the default keymap has no C-x o"
        );
        tmux.keys(&["q"]);
        assert_eq!(
            wait_exit(dir.path(), Duration::from_secs(5)).as_deref(),
            Some("0")
        );
    }
    assert!(!from_file.is_empty(), "the title bar is coloured");
    assert_eq!(from_file, colors[0], "the file's theme is light");
    assert_ne!(colors[0], colors[1], "light and dark differ");
}

#[test]
fn the_console_redraws_at_once_while_an_approved_fetch_hangs() {
    // A server that accepts and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            seen.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    constellation(
        dir.path(),
        "",
        "[network]\nallow_hosts = [\"127.0.0.1\"]\n[[rules]]\nverb = \"fetch\"\ndecide = \"ask\"\n",
        &format!("\"/fetch http://127.0.0.1:{port}/slow\""),
    );
    let tmux = console("slow-fetch", dir.path(), "");
    tmux.wait("the fetch request", Duration::from_secs(20), |s| {
        first_partner_request(s).is_some()
    });
    tmux.keys(&["a"]);
    let started = Instant::now();
    while accepted.load(Ordering::SeqCst) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the approved fetch starts; the screen was:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(10));
    }

    // Each Tab moves the focus to the next pane: the screen must show it at
    // once although the fetch hangs (for up to its 15 s timeout).
    let mut delays = Vec::new();
    for _ in 0..6 {
        let before = tmux.screen();
        let pressed = Instant::now();
        tmux.keys(&["Tab"]);
        loop {
            if tmux.screen() != before {
                break;
            }
            assert!(
                pressed.elapsed() < Duration::from_secs(3),
                "the console did not redraw within 3 s while the fetch hung"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        delays.push(pressed.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    delays.sort();
    let median = delays[delays.len() / 2];
    assert!(
        median < Duration::from_millis(100),
        "the console redraws within 100 ms (median {median:?}, all {delays:?})"
    );
    tmux.keys(&["q"]);
    assert_eq!(
        wait_exit(dir.path(), Duration::from_secs(5)).as_deref(),
        Some("0")
    );
}
