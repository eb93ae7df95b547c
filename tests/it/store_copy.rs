//! `partner store copy`, with real processes: the demo's constellation
//! moved from its SQLite file to PostgreSQL and back into a new file, each
//! table compared on both sides, the copy back replaying the demo's trace
//! without a divergence; a destination that holds a constellation is
//! refused with nothing changed.

use std::path::Path;
use std::process::Command;

use crate::support::postgres;

fn partner(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_partner"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_demo_moves_to_postgresql_and_back_and_still_replays() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let (code, _, err) = partner(&[
        "run",
        "--headless",
        "--demo",
        "--for",
        "60s",
        "--approve-all",
        "--db",
        path(&a),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = partner(&["store", "copy", "--from", path(&a), "--to", &db.url]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("every table is the same on both sides"),
        "{out}"
    );
    for table in ["blocks", "block_history", "pending", "trace", "agents"] {
        let line = out.lines().find(|l| l.starts_with(table)).unwrap();
        assert!(line.ends_with("same") && !line.contains(" 0 → "), "{line}");
    }
    // The copy replays its trace, and so does `replay --verify` on it.
    assert!(out.contains("the copy's trace replays: all "), "{out}");
    let (code, out, err) = partner(&["replay", "--verify", "--store", &db.url]);
    assert_eq!(code, 0, "replay --verify on PostgreSQL: {out}{err}");
    assert!(out.starts_with("all "), "{out}");
    // Again into the same database: refused, nothing added.
    let (code, out, err) = partner(&["store", "copy", "--from", path(&a), "--to", &db.url]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("already holds a constellation"), "{err}");
    // And back, into a new file: the same rows, and the trace replays.
    let (code, out, err) = partner(&["store", "copy", "--from", &db.url, "--to", path(&b)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("every table is the same on both sides"),
        "{out}"
    );
    let (code, out, err) = partner(&["replay", "--verify", "--db", path(&b)]);
    assert_eq!(code, 0, "replay --verify of the copy: {out}{err}");
    let trace = |db: &Path| partner(&["trace", "show", "--json", "--db", path(db)]).1;
    assert_eq!(trace(&a), trace(&b));
    // Into a file that holds a constellation: refused.
    let (code, _, err) = partner(&["store", "copy", "--from", &db.url, "--to", path(&a)]);
    assert_ne!(code, 0);
    assert!(err.contains("already holds a constellation"), "{err}");
    // A source file that is not there: refused, not copied as empty.
    let missing = dir.path().join("missing.db");
    let (code, _, err) = partner(&["store", "copy", "--from", path(&missing), "--to", &db.url]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no database file"), "{err}");
    assert!(!missing.exists());
    // Two files: not a copy this command makes.
    let (code, _, err) = partner(&["store", "copy", "--from", path(&a), "--to", path(&b)]);
    assert_eq!(code, 2, "{err}");
}

/// The team walk-through's order: partners added on PostgreSQL first,
/// then an existing constellation copied in — the partners are kept (a
/// name on both sides is refused, nothing copied).
#[test]
fn partners_added_before_a_copy_are_kept_beside_it() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    crate::support::made_database(dir.path());
    let file = dir.path().join("c.db");
    let (code, out, err) = partner(&["partners", "add", "alice", "--store", &db.url]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = partner(&["partners", "add", "bob", "--db", path(&file)]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = partner(&["store", "copy", "--from", path(&file), "--to", &db.url]);
    assert_eq!(code, 0, "{out}{err}");
    let partners = out.lines().find(|l| l.starts_with("partners")).unwrap();
    assert!(partners.contains("1 there already, kept"), "{partners}");
    assert!(
        out.contains("every table is the same on both sides"),
        "{out}"
    );
    let (_, listed, _) = partner(&["partners", "list", "--store", &db.url]);
    assert!(
        listed.contains("alice") && listed.contains("bob"),
        "{listed}"
    );
    // The same name on both sides: which one is meant? Refused.
    let other = tempfile::tempdir().unwrap();
    crate::support::made_database(other.path());
    let second = other.path().join("c.db");
    partner(&["partners", "add", "alice", "--db", path(&second)]);
    let fresh = postgres::scratch().unwrap();
    partner(&["partners", "add", "alice", "--store", &fresh.url]);
    let (code, out, err) = partner(&["store", "copy", "--from", path(&second), "--to", &fresh.url]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("alice is a partner on both sides"), "{err}");
    let (_, listed, _) = partner(&["partners", "list", "--store", &fresh.url]);
    assert_eq!(listed.matches("alice").count(), 1, "{listed}");
}
