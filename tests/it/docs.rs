//! The documents say what the code does: the dialect's verb table in
//! `docs/dialect.md` is the one `BUILTIN_VERBS` makes (run with
//! `PARTNER_UPDATE_DOCS=1` to write it there), the README stays a README
//! (under 500 lines, its reference chapters in `docs/`), and every link
//! between the documents points at a file that exists.

use std::path::{Path, PathBuf};

use partner::dialect::{BUILTIN_VERBS, Strictness};

const BEGIN: &str = "<!-- verbs: generated from BUILTIN_VERBS by tests/it/docs.rs -->";
const END: &str = "<!-- verbs: end -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The table of built-in verbs, as `docs/dialect.md` shows it.
fn verb_table() -> String {
    let mut out =
        String::from("| verb | aliases | strictness | what it does |\n|---|---|---|---|\n");
    for v in BUILTIN_VERBS {
        let aliases: Vec<String> = v
            .aliases
            .iter()
            .map(|(name, op)| match op {
                Some(op) => format!("{name} ({})", op.as_str()),
                None => (*name).to_string(),
            })
            .collect();
        let strictness = match v.strictness {
            Strictness::Strict => "strict",
            Strictness::Normal => "normal",
            Strictness::Loose => "loose",
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            v.verb.name(),
            aliases.join(", "),
            strictness,
            v.summary.replace('|', "\\|"),
        ));
    }
    out
}

#[test]
fn the_dialect_chapter_lists_every_built_in_verb_as_the_table_says() {
    let path = root().join("docs/dialect.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        panic!("docs/dialect.md has no generated verb table between {BEGIN} and {END}");
    };
    let shown = &text[b + BEGIN.len()..e];
    let want = format!("\n{}", verb_table());
    if shown != want {
        if std::env::var_os("PARTNER_UPDATE_DOCS").is_some() {
            let updated = format!("{}{BEGIN}{want}{}", &text[..b], &text[e..]);
            std::fs::write(&path, updated).unwrap();
            return;
        }
        panic!(
            "docs/dialect.md's verb table differs from BUILTIN_VERBS (PARTNER_UPDATE_DOCS=1 writes it):\n{want}"
        );
    }
    for v in BUILTIN_VERBS {
        assert!(
            shown.contains(&format!("| `{}` |", v.verb.name())),
            "{}",
            v.verb.name()
        );
    }
}

#[test]
fn the_readme_is_short_and_its_chapters_are_in_docs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 500, "README.md has {lines} lines");
    for chapter in [
        "agents",
        "team",
        "dialect",
        "runtime",
        "grammar",
        "gate",
        "lisp",
        "search",
        "parse",
        "performance",
        "layout",
    ] {
        let link = format!("(docs/{chapter}.md)");
        assert!(readme.contains(&link), "the README links {link}");
    }
}

/// The relative links of one markdown file: (target file, as written).
fn links(file: &Path) -> Vec<(PathBuf, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        let path = target.split('#').next().unwrap_or("");
        if !path.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push((dir.join(path), target.to_string()));
        }
    }
    out
}

#[test]
fn every_link_between_the_documents_points_at_a_file() {
    let mut files = vec![
        root().join("README.md"),
        root().join("ARCHITECTURE.md"),
        root().join("SECURITY.md"),
    ];
    for entry in std::fs::read_dir(root().join("docs")).unwrap().flatten() {
        files.push(entry.path());
    }
    let mut broken = Vec::new();
    let mut seen = 0;
    for file in &files {
        for (target, written) in links(file) {
            seen += 1;
            if !target.exists() {
                broken.push(format!("{}: {written}", file.display()));
            }
        }
    }
    assert!(seen > 20, "only {seen} links read");
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}
