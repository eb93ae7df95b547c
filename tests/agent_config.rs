//! Loading constellation configs: the shipped example, the demo, and clear
//! errors for bad files.

use std::path::Path;

use partner::agent::{AgentRole, ConstellationConfig, demo_config};

#[test]
fn the_demo_and_the_example_load() {
    let demo = demo_config().unwrap();
    assert_eq!(
        demo.agents
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>(),
        vec!["sage", "anchor", "scout"]
    );
    assert!(
        demo.policy.has_role("anchor"),
        "supervisors get an authority role"
    );
    assert_eq!(demo.agent("sage").unwrap().role, AgentRole::PartnerFacing);
    let example = ConstellationConfig::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/partner.toml"
    )))
    .unwrap();
    assert_eq!(example.partner, "Sam");
    assert!(
        example.providers.contains_key("ollama") && example.providers.contains_key("anthropic")
    );
    assert_eq!(example.agent("ada").unwrap().blocks[0].label, "persona");
}

fn error(text: &str) -> String {
    ConstellationConfig::from_toml(text, "partner.toml", Path::new("."), None, None)
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_configs_say_what_and_where() {
    assert_eq!(
        error("[[agents]]\nname = \"a\"\nmodel = \"gpt\"\n"),
        "partner.toml: agent a: model 'gpt' must be provider:model"
    );
    assert!(
        error("[[agents]]\nname = \"a\"\nmodel = \"x:y\"\nrole = \"boss\"\n")
            .starts_with("partner.toml: line 4, column 8: unknown variant `boss`")
    );
    assert_eq!(
        error("[[agents]]\nname = \"a\"\nmodel = \"lmstudio:m\"\n"),
        "partner.toml: provider lmstudio needs a base_url in [providers.lmstudio]"
    );
    assert_eq!(
        error(
            "[[agents]]\nname = \"a\"\nmodel = \"x:y\"\npulse = \"often\"\n[providers.x]\nbase_url = \"http://h\"\n"
        ),
        "partner.toml: agent a pulse: 'often' is not a duration like 30s, 10m or 1h"
    );
    assert_eq!(
        error("agents = []\n"),
        "partner.toml: the constellation has no agents"
    );
    assert!(
        error("[[agents]]\nname = \"a\"\nmodel = \"scripted:y\"\n")
            .contains("scripted provider needs `script = \"FILE\"`")
    );
}

#[test]
fn the_shell_section_sets_how_approved_commands_run() {
    const AGENTS: &str =
        "[providers.s]\nkind = \"scripted\"\n[[agents]]\nname = \"ada\"\nmodel = \"s:x\"\n";
    let text = format!("[shell]\ndir = \"work\"\ntimeout = \"5m\"\nmax_output = 4096\n{AGENTS}");
    let c =
        ConstellationConfig::from_toml(&text, "partner.toml", Path::new("/cfg"), None, Some(""))
            .unwrap();
    assert_eq!(c.exec.shell.dir.as_deref(), Some(Path::new("/cfg/work")));
    assert_eq!(c.exec.shell.timeout, std::time::Duration::from_secs(300));
    assert_eq!(c.exec.shell.max_output, 4096);
    for bad in [
        "timeout = \"0s\"",
        "timeout = \"2h\"",
        "max_output = 0",
        "nonsense = 1",
    ] {
        let text = format!("[shell]\n{bad}\n{AGENTS}");
        let e =
            ConstellationConfig::from_toml(&text, "partner.toml", Path::new("."), None, Some(""))
                .unwrap_err();
        assert!(
            e.to_string().contains("shell") || e.to_string().contains("nonsense"),
            "{bad}: {e}"
        );
    }
}
