//! npm's knowledge-graph memory server as an agent's tool: the graph it
//! keeps lands only where its entry lets it write, an entity the agent
//! stores is found again by a search, and the calls are the trace's.

use std::sync::Arc;
use std::time::Duration;

use crate::mcp::{npm_servers, skipped, stdio};
use crate::support::rig;
use partner::engine::exec::ActionStatus;
use partner::mcp::{McpHub, ServerState};
use partner::policy::Policy;

#[test]
fn an_agent_keeps_and_finds_facts_in_the_memory_servers_graph() {
    let Some(servers) = npm_servers() else {
        return skipped("the memory server test");
    };
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let graph = root.path().join("graph.jsonl");
    let bin = servers.join("node_modules/.bin/mcp-server-memory");
    let mut config = stdio("mem", &bin, &[]);
    config.env = [("MEMORY_FILE_PATH".to_string(), graph.display().to_string())].into();
    config.timeout_secs = Some(10);
    config.writes = vec![root.path().to_path_buf()];
    let hub = McpHub::start(&[config], root.path(), Duration::from_secs(30)).unwrap();
    let status = hub.status();
    assert_eq!(status[0].state, ServerState::Ready, "{status:?}");
    let policy = "default = \"ask\"\n[[rules]]\nverb = \"mem.*\"\ndecide = \"allow\"\n";
    let mut r = rig(Policy::from_toml(policy).unwrap());
    r.exec.attach_mcp(Arc::new(hub)).unwrap();

    let stored = r.one(
        "ada",
        r#"/mem.create_entities {"entities": [{"name": "Dana", "entityType": "person", "observations": ["prefers email over calls"]}]}"#,
    );
    assert_eq!(stored.status, ActionStatus::Executed, "{}", stored.text);
    let found = r.one("ada", "/mem.search_nodes query=Dana");
    assert_eq!(found.status, ActionStatus::Executed, "{}", found.text);
    assert!(
        found.text.contains("prefers email over calls"),
        "{}",
        found.text
    );
    let kept = std::fs::read_to_string(&graph).unwrap();
    assert!(kept.contains("Dana"), "{kept}");
    assert_eq!(found.data["mcp"]["tool"], "search_nodes", "{}", found.data);
}
