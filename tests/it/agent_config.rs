//! Loading constellation configs: the shipped example, the demo, and clear
//! errors for bad files.

use std::path::Path;

use partner::runtime::{AgentRole, ConstellationConfig, demo_config};

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

/// Every number, duration and size a config or policy file sets, each
/// given values no field expects: each is a clear error naming the file
/// (or a value within its bounds), never a panic.
#[test]
fn every_config_and_policy_field_with_extreme_values_is_a_clear_error_or_in_bounds() {
    const FIELDS: &[(&str, &str)] = &[
        ("runtime", "max_passes"),
        ("runtime", "history"),
        ("runtime", "max_tokens"),
        ("runtime", "max_reply_bytes"),
        ("runtime", "pulse"),
        ("providers.x", "timeout"),
        ("providers.x", "connect_timeout"),
        ("providers.x", "reply_deadline"),
        ("providers.x", "backoff"),
        ("providers.x", "retries"),
        ("providers.x", "context"),
        ("shell", "timeout"),
        ("shell", "max_output"),
        ("agent", "pulse"),
        ("agent", "context"),
        ("block", "limit"),
        ("sampling", "temperature"),
        ("sampling", "top_p"),
        ("sampling", "max_tokens"),
        ("policy", "request_timeout"),
        ("policy.limits", "archival_bytes"),
        ("policy.rate_limits", "default"),
    ];
    let huge = format!("\"{}\"", "9".repeat(100_000));
    let extremes = [
        "0",
        "-1",
        "9223372036854775807",
        "18446744073709551615",
        "nan",
        "inf",
        "-inf",
        "1e308",
        "0.5",
        "\"0s\"",
        "\"-5s\"",
        "\"999999999 years\"",
        "\"18446744073709551615s\"",
        huge.as_str(),
        "[[[[[[[[[[[[]]]]]]]]]]]]",
        "{ burst = -1, per_minute = nan }",
        "{ burst = 4294967295, per_minute = 1e308 }",
    ];
    for (section, field) in FIELDS {
        for value in extremes {
            let set = format!("{field} = {value}\n");
            let in_section = |name: &str| if *section == name { set.as_str() } else { "" };
            let mut policy = String::from("default = \"allow\"\n");
            if *section == "policy" {
                policy.push_str(&set);
            } else if let Some(table) = section.strip_prefix("policy.") {
                policy.push_str(&format!("[{table}]\n{set}"));
            }
            let text = format!(
                "[runtime]\n{}[shell]\n{}[providers.x]\nbase_url = \"http://127.0.0.1:9/v1\"\n{}[[agents]]\nname = \"ada\"\nmodel = \"x:m\"\n{}{}[[agents.blocks]]\nlabel = \"notes\"\nvalue = \"v\"\n{}",
                in_section("runtime"),
                in_section("shell"),
                in_section("providers.x"),
                in_section("agent"),
                if *section == "sampling" {
                    format!("sampling = {{ {field} = {value} }}\n")
                } else {
                    String::new()
                },
                in_section("block"),
            );
            let what = format!("{section}.{field} = {:.40}", value);
            let loaded = std::panic::catch_unwind(|| {
                ConstellationConfig::from_toml(
                    &text,
                    "partner.toml",
                    Path::new("."),
                    Some(&policy),
                    None,
                )
            })
            .unwrap_or_else(|_| panic!("{what}: a panic"));
            match loaded {
                Err(e) => {
                    let said = e.to_string();
                    assert!(said.starts_with("partner.toml"), "{what}: {said:.300}");
                    assert!(said.len() < 600, "{what}: an error of {} bytes", said.len());
                }
                Ok(c) => {
                    let ten_years = std::time::Duration::from_secs(10 * 365 * 86_400);
                    assert!((1..=32).contains(&c.max_passes), "{what}");
                    assert!(c.history <= 10_000, "{what}");
                    assert!((1024..=16 << 20).contains(&c.max_reply_bytes), "{what}");
                    assert!(c.agents[0].pulse <= ten_years, "{what}");
                    assert!(
                        c.agents[0]
                            .blocks
                            .iter()
                            .all(|b| (1..=1_000_000).contains(&b.char_limit)),
                        "{what}"
                    );
                    assert!(
                        c.exec.shell.timeout <= std::time::Duration::from_secs(3600),
                        "{what}"
                    );
                    assert!(c.policy.limits.archival_bytes >= 1, "{what}");
                    if let Some(t) = c.policy.request_timeout {
                        assert!(t <= ten_years, "{what}");
                    }
                    for rate in c.policy.rate_limits.values() {
                        assert!(
                            rate.per_minute.is_finite() && rate.per_minute > 0.0,
                            "{what}: {rate:?}"
                        );
                    }
                }
            }
        }
    }
}

/// `pulse = "off"` means the same under `[runtime]` as on an agent; a
/// one-agent config with no policy of its own is not warned about the
/// built-in policy's example authorities, while a policy the user wrote
/// that names a missing agent is.
#[test]
fn pulse_off_everywhere_and_warnings_only_about_what_the_user_wrote() {
    let one = "name = \"solo\"\n[runtime]\npulse = \"off\"\n[providers.s]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"s:m\"\n";
    let config =
        ConstellationConfig::from_toml(one, "partner.toml", Path::new("."), None, None).unwrap();
    assert_eq!(config.agents[0].pulse, std::time::Duration::ZERO);
    assert_eq!(config.warnings(), Vec::<String>::new());
    let policy = "[[rules]]\nverb = \"post\"\ndecide = \"ask\"\nauthority = [\"agent:anchor\", \"partner\"]\n";
    let config =
        ConstellationConfig::from_toml(one, "partner.toml", Path::new("."), Some(policy), None)
            .unwrap();
    let warnings = config.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("agent:anchor"), "{warnings:?}");
}
