//! The web verbs, `/fetch` and `/web`, against HTTP servers on 127.0.0.1.

use crate::support;

use partner::engine::exec::{ActionStatus, ExecConfig, FetchConfig, WebConfig};
use partner::policy::Policy;
use support::{http_server, rig, rig_with};

#[test]
fn fetch_converts_html_pages_long_text_and_fails_cleanly() {
    let long: String = (0..400)
        .map(|i| format!("line {i} of the long page\n"))
        .collect();
    let base = http_server(move |path| match path {
        "/page" => (
            200,
            "text/html",
            "<html><body><h1>Docs</h1><p>Use <b>partner</b> wisely.</p></body></html>".into(),
        ),
        "/long" => (200, "text/plain", long.clone()),
        "/image" => (200, "image/png", "\u{1}PNG".into()),
        _ => (404, "text/plain", "no".into()),
    });
    let config = ExecConfig {
        fetch: FetchConfig {
            page_chars: 3000,
            ..FetchConfig::default()
        },
        ..ExecConfig::default()
    };
    // The test server is on loopback, which agents reach only where the
    // policy allows the host.
    let mut policy = Policy::permissive();
    policy.network.allow_hosts = vec!["127.0.0.1".into()];
    let r = rig_with(policy, config);
    let page = r.ok("ada", &format!("/fetch {base}/page"));
    assert!(
        page.text.contains("# Docs") && page.text.contains("**partner**"),
        "{}",
        page.text
    );
    let raw = r.ok("ada", &format!("/fetch {base}/page html"));
    assert!(raw.text.contains("<h1>Docs</h1>"), "{}", raw.text);
    let first = r.ok("ada", &format!("/fetch {base}/long"));
    assert!(
        first
            .text
            .contains("[page 1 of 4; /fetch continue for the next]"),
        "{}",
        first.text
    );
    let second = r.ok("ada", "/fetch continue");
    assert!(second.text.contains("page 2 of 4"), "{}", second.text);
    let missing = r.one("ada", &format!("/fetch {base}/nope"));
    assert_eq!(missing.status, ActionStatus::Failed);
    assert!(missing.text.contains("answered 404"), "{}", missing.text);
    let binary = r.one("ada", &format!("/fetch {base}/image"));
    assert!(
        binary.text.contains("is not text (image/png)"),
        "{}",
        binary.text
    );
    let offline = r.one("ada", "/fetch http://127.0.0.1:9/unreachable");
    assert!(
        offline
            .text
            .starts_with("could not fetch http://127.0.0.1:9/unreachable"),
        "{}",
        offline.text
    );
}

#[test]
fn web_search_needs_an_endpoint() {
    let r = rig(Policy::permissive());
    let none = r.one("ada", "/web rust tui");
    assert!(
        none.text.contains("web search is not configured"),
        "{}",
        none.text
    );
    let base = http_server(|path| {
        assert!(
            path.contains("q=rust+tui") || path.contains("q=rust%20tui"),
            "{path}"
        );
        (200, "application/json", r#"{"results":[{"title":"Ratatui","url":"https://ratatui.rs","content":"Rust TUI library"}]}"#.into())
    });
    let config = ExecConfig {
        web: Some(WebConfig {
            endpoint: format!("{base}/search"),
        }),
        ..ExecConfig::default()
    };
    let r = rig_with(Policy::permissive(), config);
    let found = r.ok("ada", "/web rust tui");
    assert!(
        found.text.contains("1. Ratatui — https://ratatui.rs"),
        "{}",
        found.text
    );
}
