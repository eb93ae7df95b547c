//! The house's load-bearing walls: which crate may name which, as
//! `ARCHITECTURE.md` draws them. Cargo refuses a name a crate does not
//! list; this keeps each list exactly what the drawing says, so the
//! drawing stays true, and keeps the lists within what the design allows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The partner crates a manifest lists as normal dependencies.
fn listed(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
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

/// The partner crates `crate_dir`'s `Cargo.toml` lists as dependencies.
fn partner_dependencies(crate_dir: &str) -> BTreeSet<String> {
    listed(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates")
            .join(crate_dir)
            .join("Cargo.toml"),
    )
}

/// The graph `ARCHITECTURE.md` draws under "Crates": each crate and the
/// partner crates it names (`a, b ──► (no partner crate)` for leaves;
/// a parenthesised remark after a name is not part of it).
fn drawn_graph() -> BTreeMap<String, BTreeSet<String>> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    let crates = &text[text.find("## Crates").expect("a Crates section")..];
    let block = &crates[crates.find("```text\n").expect("the drawing") + 8..];
    let block = &block[..block.find("```").unwrap()];
    let names = |list: &str| -> BTreeSet<String> {
        list.split(',')
            .map(|n| n.split('(').next().unwrap_or("").trim().to_string())
            .filter(|n| n.starts_with("partner"))
            .collect()
    };
    let mut graph = BTreeMap::new();
    for line in block.lines().filter(|l| l.contains("──►")) {
        let (from, to) = line.split_once("──►").unwrap();
        for crate_name in names(from) {
            graph.insert(crate_name, names(to));
        }
    }
    graph
}

#[test]
fn the_drawn_graph_is_what_every_manifest_lists() {
    let graph = drawn_graph();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates: Vec<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    assert!(crates.len() >= 12, "{crates:?}");
    let mut differ = Vec::new();
    for name in &crates {
        let has = partner_dependencies(name);
        match graph.get(name) {
            Some(drawn) if *drawn == has => {}
            Some(drawn) => differ.push(format!("{name}: drawn {drawn:?}, listed {has:?}")),
            None => differ.push(format!("{name} is not in the drawing")),
        }
    }
    let top = listed(&root.join("Cargo.toml"));
    if graph.get("partner") != Some(&top) {
        differ.push(format!(
            "partner: drawn {:?}, listed {top:?}",
            graph.get("partner")
        ));
    }
    assert!(
        differ.is_empty(),
        "ARCHITECTURE.md's drawing is not what the manifests list:\n{}",
        differ.join("\n")
    );
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
        // The protocol at the bottom: the values every client reads, in
        // the language its actions are written in; nothing that runs,
        // stores or judges.
        ("partner-protocol", &["partner-core", "partner-dialect"]),
        (
            "partner-store",
            &["partner-core", "partner-dialect", "partner-protocol"],
        ),
        (
            "partner-policy",
            &[
                "partner-core",
                "partner-dialect",
                "partner-protocol",
                "partner-store",
            ],
        ),
        (
            "partner-engine",
            &[
                "partner-core",
                "partner-dialect",
                "partner-gate",
                "partner-lisp",
                "partner-mcp",
                "partner-policy",
                "partner-protocol",
                "partner-store",
            ],
        ),
        // MCP servers' tools: below the engine, naming only core and the
        // gate (whose sandbox a stdio server runs in).
        ("partner-mcp", &["partner-core", "partner-gate"]),
        (
            "partner-runtime",
            &[
                "partner-core",
                "partner-dialect",
                "partner-engine",
                "partner-mcp",
                "partner-policy",
                "partner-protocol",
                "partner-store",
            ],
        ),
        (
            "partner-host",
            &[
                "partner-core",
                "partner-engine",
                "partner-gate",
                "partner-lisp",
                "partner-policy",
                "partner-protocol",
                "partner-runtime",
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

/// The public types each crate defines (`pub struct|enum|trait|type`), by
/// name.
fn public_types() -> BTreeMap<String, BTreeSet<String>> {
    fn walk(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(&root).unwrap().flatten() {
        let crate_name = entry.file_name().to_string_lossy().into_owned();
        let mut files = Vec::new();
        walk(&entry.path().join("src"), &mut files);
        for file in files {
            for line in std::fs::read_to_string(&file).unwrap().lines() {
                let line = line.trim_start();
                for kind in ["pub struct ", "pub enum ", "pub trait ", "pub type "] {
                    if let Some(rest) = line.strip_prefix(kind) {
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                            names.entry(name).or_default().insert(crate_name.clone());
                        }
                    }
                }
            }
        }
    }
    names
}

/// One name per concept: no public type name is defined by two crates,
/// except these, which were so when the rule was made (`BlockWrite`,
/// `Found` and `Memory` were too: renamed, or the same value written
/// twice and now once) (each pair is in
/// crates that meet rarely, and is renamed when one of them is next
/// touched). A new clash fails here.
#[test]
fn no_two_crates_name_a_public_type_alike() {
    const KNOWN: &[&str] = &[
        "BlockWrite",
        "Due",
        "Effect",
        "Expr",
        "Found",
        "Item",
        "Memory",
        "Notice",
        "Part",
        "Policy",
        "Reach",
        "Report",
        "Rule",
        "Shape",
        "Value",
        "Via",
        "View",
    ];
    let shared: Vec<String> = public_types()
        .into_iter()
        .filter(|(name, crates)| crates.len() > 1 && !KNOWN.contains(&name.as_str()))
        .map(|(name, crates)| format!("{name}: {crates:?}"))
        .collect();
    assert!(
        shared.is_empty(),
        "public types named alike in two crates:\n{}",
        shared.join("\n")
    );
    // The names this rule was made for are one each now.
    for name in ["Op", "Span", "Door", "RunState", "AgentRow", "TraceSource"] {
        let crates = public_types().remove(name).unwrap_or_default();
        assert!(crates.len() <= 1, "{name} is defined in {crates:?}");
    }
}

/// The packages `root` builds with, normal dependencies and theirs, read
/// from `Cargo.lock` (every version of a name counted).
fn build_tree(root: &str) -> BTreeSet<String> {
    let lock: toml::Table = toml::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap(),
    )
    .unwrap();
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for package in lock["package"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_string();
        let entry = deps.entry(name).or_default();
        for dep in package
            .get("dependencies")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
        {
            // "name" or "name version" (when several versions are locked).
            let dep = dep.as_str().unwrap();
            entry.insert(dep.split(' ').next().unwrap().to_string());
        }
    }
    // Cargo.lock lists dev-dependencies too: for the partner crates, keep
    // only what their manifests list as normal dependencies.
    let normal = |name: &str| -> Option<BTreeSet<String>> {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates")
            .join(name)
            .join("Cargo.toml");
        let text = std::fs::read_to_string(manifest).ok()?;
        let manifest: toml::Table = toml::from_str(&text).unwrap();
        Some(
            manifest
                .get("dependencies")
                .and_then(|d| d.as_table())
                .map(|d| d.keys().cloned().collect())
                .unwrap_or_default(),
        )
    };
    let mut seen = BTreeSet::new();
    let mut next = vec![root.to_string()];
    while let Some(name) = next.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let mut children = deps.get(&name).cloned().unwrap_or_default();
        if let Some(listed) = normal(&name) {
            children.retain(|c| listed.contains(c));
        }
        next.extend(children);
    }
    seen
}

/// The console's build holds none of the sandbox's, the shell reader's or
/// the database drivers' crates: it names the protocol, and the protocol
/// names only core and the dialect.
#[test]
fn the_consoles_build_holds_no_sandbox_shell_reader_or_database() {
    let tree = build_tree("partner-tui");
    assert!(
        tree.contains("partner-protocol") && tree.contains("ratatui"),
        "{tree:?}"
    );
    for forbidden in [
        "landlock",
        "seccompiler",
        "brush-parser",
        "rusqlite",
        "libsqlite3-sys",
        "postgres",
        "tokio-postgres",
        "partner-gate",
        "partner-engine",
        "partner-store",
        "partner-policy",
        "partner-runtime",
        "partner-host",
    ] {
        assert!(
            !tree.contains(forbidden),
            "partner-tui builds with {forbidden}"
        );
    }
    // The drawing is right about the top crate too: it builds with all.
    assert!(build_tree("partner-engine").contains("landlock"));
    assert!(build_tree("partner-store").contains("rusqlite"));
    // The protocol itself: no driver, no sandbox, no runtime of its own.
    let protocol = build_tree("partner-protocol");
    for forbidden in ["rusqlite", "postgres", "landlock", "partner-store"] {
        assert!(
            !protocol.contains(forbidden),
            "partner-protocol builds with {forbidden}"
        );
    }
}
