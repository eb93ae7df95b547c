//! Search by meaning in the console, in a real terminal: a constellation
//! with the tiny local model embeds its memory in the background (the
//! status line shows it catching up), and `/` in the memory pane lists
//! hybrid hits with the side that found each and its score.

use crate::support;

use std::time::Duration;

use support::models::tiny_model;
use support::tmux::{console, wait_exit};

#[test]
fn the_memory_pane_searches_by_meaning_and_says_which_side_found_each_hit() {
    let dir = tempfile::tempdir().unwrap();
    tiny_model(&dir.path().join("model"));
    std::fs::write(
        dir.path().join("partner.toml"),
        "name = \"recall\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\nblocks = [{ label = \"plans\", value = \"Dana: we ship on Friday\" }, { label = \"pets\", value = \"the cat and the dog\" }, { label = \"dates\", value = \"the launch date moved\" }]\n\n[embeddings]\nkind = \"model2vec\"\npath = \"model\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.path().join("script.toml"),
        "[agents.ada]\npulses = []\n",
    )
    .unwrap();
    let tmux = console("recall", dir.path(), "");
    tmux.keys(&["Tab", "Tab"]);
    tmux.wait("the memory pane", Duration::from_secs(10), |s| {
        s.contains("┏ Memory")
    });
    // The blocks are embedded in the background; the first search may
    // come before, so search until meaning answers.
    let mut screen = String::new();
    for _ in 0..20 {
        tmux.keys(&["/", "launch", "Enter"]);
        screen = tmux.wait("the hits", Duration::from_secs(10), |s| {
            s.contains("hits for “launch”")
        });
        if screen.contains("ship on Friday") {
            break;
        }
        tmux.keys(&["Escape"]);
        std::thread::sleep(Duration::from_millis(500));
    }
    let line_of = |text: &str| {
        screen
            .lines()
            .find(|l| l.contains(text))
            .unwrap_or_else(|| panic!("no line with {text}:\n{screen}"))
            .to_string()
    };
    assert!(line_of("ship on Friday").contains("meaning"), "{screen}");
    assert!(line_of("date moved").contains("both"), "{screen}");
    assert!(!screen.contains("ada/pets"), "{screen}");
    // Enter opens the hit's block.
    tmux.keys(&["Enter"]);
    tmux.wait("the block", Duration::from_secs(10), |s| {
        s.contains("Memory · ada") && !s.contains("hits for")
    });
    tmux.keys(&["q"]);
    assert_eq!(
        wait_exit(dir.path(), Duration::from_secs(10)).as_deref(),
        Some("0")
    );
}
