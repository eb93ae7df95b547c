//! The house's load-bearing walls: which crate may name which, as
//! `ARCHITECTURE.md` draws them. Cargo refuses a name a crate does not
//! list; this keeps each list from growing past what the design allows.

use std::collections::BTreeSet;
use std::path::Path;

/// The partner crates `crate_dir`'s `Cargo.toml` lists as dependencies.
fn partner_dependencies(crate_dir: &str) -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates")
        .join(crate_dir)
        .join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| {
            d.keys()
                .filter(|k| k.starts_with("partner-"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn each_crate_names_only_what_the_architecture_allows_it() {
    // Each crate, and the partner crates it may list (no more).
    let allowed: &[(&str, &[&str])] = &[
        ("partner-core", &[]),
        ("partner-grammar", &[]),
        ("partner-lisp", &[]),
        ("partner-dialect", &["partner-core", "partner-grammar"]),
        ("partner-gate", &["partner-core"]),
        ("partner-store", &["partner-core", "partner-dialect"]),
        (
            "partner-policy",
            &["partner-core", "partner-dialect", "partner-store"],
        ),
        (
            "partner-protocol",
            &[
                "partner-core",
                "partner-dialect",
                "partner-gate",
                "partner-policy",
                "partner-store",
            ],
        ),
        // The console: never the executor, the runtime, the daemon, the
        // store, the permission engine or the gate — their values reach it
        // through the protocol; the language crates for highlighting and
        // completion only.
        (
            "partner-tui",
            &[
                "partner-core",
                "partner-protocol",
                "partner-dialect",
                "partner-grammar",
            ],
        ),
    ];
    for (name, may) in allowed {
        let may: BTreeSet<String> = may.iter().map(|s| s.to_string()).collect();
        let has = partner_dependencies(name);
        let extra: Vec<&String> = has.difference(&may).collect();
        assert!(extra.is_empty(), "{name} names {extra:?}, which it may not");
    }
    // Nothing below the daemon names it or the console.
    for name in ["partner-engine", "partner-runtime", "partner-host"] {
        let has = partner_dependencies(name);
        assert!(!has.contains("partner-tui"), "{name} names the console");
        if name != "partner-host" {
            assert!(!has.contains("partner-host"), "{name} names the daemon");
        }
    }
    assert!(!partner_dependencies("partner-engine").contains("partner-runtime"));
}
