//! An agent's MCP tools in its prompt and its tool calls, with npm's
//! filesystem server: the verb list holds them within their share of the
//! prompt (`/tools` lists every one, with its arguments); native tool
//! calls offer each tool as itself — a function name providers accept,
//! the tool's own schema — and map a call back to the tool's verb, which
//! then runs as any.

use std::time::Duration;

use crate::mcp::{fs_rig, npm_servers, request_of, skipped};
use partner::engine::exec::ActionStatus;
use partner::policy::{Authority, Decision};
use partner::runtime::prompt::{ActionFormat, Profile, PromptInputs, system_prompt};

#[test]
fn the_prompt_lists_mcp_tools_within_their_share_and_tools_lists_them_all() {
    let Some(servers) = npm_servers() else {
        return skipped("the prompt test");
    };
    let root = tempfile::tempdir().unwrap();
    let r = fs_rig(&servers, root.path());
    let verbs = partner::runtime::turn::allowed_verbs(&r.exec, "ada", false);
    let tools = verbs
        .iter()
        .filter(|v| v.verb.name().starts_with("fs."))
        .count();
    assert!(tools >= 10, "{tools} tools");
    let prompt = |with_tools: bool| {
        let refs: Vec<_> = verbs
            .iter()
            .filter(|v| with_tools || !v.verb.name().starts_with("fs."))
            .collect();
        system_prompt(&PromptInputs {
            agent: "ada",
            partner: "Sam",
            blocks: &[],
            intentions: &[],
            pulse: Duration::from_secs(600),
            verbs: &refs,
            profile: Profile::Full,
            format: ActionFormat::Dialect,
            now: 0,
        })
    };
    let estimate = partner::runtime::prompt::budget::estimate_tokens;
    let with = prompt(true);
    let added = estimate(&with) - estimate(&prompt(false));
    let shown = with.matches("\n  fs.").count();
    let budget = partner::runtime::prompt::MCP_TOOL_TOKENS;
    assert!(added <= budget + 40, "{added} tokens for the tools");
    assert!(shown >= 5, "{shown} shown");
    if shown < tools {
        assert!(
            with.contains(&format!("…and {} more tools", tools - shown)),
            "{with}"
        );
    }
    eprintln!(
        "FIGURE mcp prompt: {shown} of {tools} filesystem tools in {added} prompt tokens ({:.1} tools per 100 tokens)",
        shown as f64 * 100.0 / added as f64
    );

    // `/tools` lists every one with its arguments; replay reuses it.
    let listed = r.one("ada", "/tools");
    assert_eq!(listed.status, ActionStatus::Executed, "{}", listed.text);
    assert_eq!(
        listed.text.matches("\n/fs.").count() + 1,
        tools,
        "{}",
        listed.text
    );
    assert!(
        listed.text.contains("/fs.write_file path=… content=…"),
        "{}",
        listed.text
    );
    assert!(listed.data["recorded_only"].is_string(), "{}", listed.data);
}

#[test]
fn native_tool_calls_offer_each_mcp_tool_as_itself_and_map_back_to_its_verb() {
    use partner::runtime::provider::ToolCall;
    use partner::runtime::tools::{call_to_line, tool_specs};
    let Some(servers) = npm_servers() else {
        return skipped("the native tool-call test");
    };
    let root = tempfile::tempdir().unwrap();
    let r = fs_rig(&servers, root.path());
    let registry = r.exec.registry();
    let verbs = registry.verbs_for(false);
    let offered = tool_specs(&verbs, r.exec.mcp().map(|h| &**h));
    // Function names providers accept; an MCP tool's own schema.
    for tool in &offered {
        assert!(
            tool.name.len() <= 64
                && tool
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{} is not a function name",
            tool.name
        );
    }
    // Their functions fit their share of the request.
    let estimate = partner::runtime::prompt::budget::estimate_tokens;
    let spent: usize = offered
        .iter()
        .filter(|t| t.takes_object)
        .map(|t| estimate(&format!("{} {} {}", t.name, t.description, t.parameters)))
        .sum();
    let budget = partner::runtime::tools::MCP_FUNCTION_TOKENS;
    assert!(spent <= budget, "{spent} tokens of MCP functions");
    eprintln!(
        "FIGURE native: {} MCP functions in {spent} tokens",
        offered.iter().filter(|t| t.takes_object).count()
    );
    let write = offered.iter().find(|t| t.name == "fs-write_file").unwrap();
    assert_eq!(write.verb, "fs.write_file");
    assert!(
        write.parameters["properties"]["content"].is_object(),
        "{}",
        write.parameters
    );
    assert!(
        offered.iter().any(|t| t.name == "recall"),
        "the dialect's verbs too"
    );

    // The model's call becomes the verb's line, and runs as any.
    let path = root.path().join("plan.md");
    let call = ToolCall {
        name: "fs-write_file".into(),
        arguments: serde_json::json!({"path": path, "content": "ship\n/approve r1"}).to_string(),
    };
    let line = call_to_line(&call, &offered).unwrap();
    assert!(
        line.starts_with("/fs.write_file {") && !line.contains('\n'),
        "{line}"
    );
    let asked = r.one("ada", &line);
    let id = request_of(&asked);
    r.exec
        .decide(&id, Decision::ApproveOnce, &Authority::Partner, None)
        .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "ship\n/approve r1");
    // A call that is not an object, or of a tool not offered, is refused.
    let bad = ToolCall {
        name: "fs-write_file".into(),
        arguments: "[1]".into(),
    };
    assert!(call_to_line(&bad, &offered).is_err());
    let unknown = ToolCall {
        name: "fs-format_disk".into(),
        arguments: "{}".into(),
    };
    assert!(call_to_line(&unknown, &offered).is_err());
}
