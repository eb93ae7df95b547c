//! Every command on either back end: one session of `partner memory`,
//! `exec`, `pending`, `trace`, `replay --verify` and `grammar learned`
//! run against a SQLite file (`--db`) and against a PostgreSQL database
//! (`--store`, and `PARTNER_STORE`), each command answering the same,
//! word for word, on both (times and durations aside).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::postgres;

/// One command of the session: its arguments (before the store's) and
/// what it reads on standard input.
struct Step {
    args: &'static [&'static str],
    stdin: &'static str,
}

const SESSION: &[Step] = &[
    Step {
        args: &["memory", "set", "ada", "notes", "-", "--kind", "working"],
        stdin: "alpha",
    },
    Step {
        args: &["exec", "--agent", "ada", "-"],
        stdin: "/recall notes + \"beta\"\n/post bluesky \"hello\" ?public\n/calc 20% of 350",
    },
    Step {
        args: &["pending", "list"],
        stdin: "",
    },
    Step {
        args: &["pending", "approve", "r1"],
        stdin: "",
    },
    Step {
        args: &["pending", "approve", "r1"],
        stdin: "",
    },
    Step {
        args: &[
            "exec",
            "--agent",
            "ada",
            "--deny-all",
            "/post bluesky \"again\"",
        ],
        stdin: "",
    },
    Step {
        args: &["exec", "--agent", "ada", "/aprove r1"],
        stdin: "",
    },
    Step {
        args: &["memory", "list"],
        stdin: "",
    },
    Step {
        args: &["memory", "show", "ada", "notes"],
        stdin: "",
    },
    Step {
        args: &["memory", "history", "ada", "notes"],
        stdin: "",
    },
    Step {
        args: &["memory", "search", "beta"],
        stdin: "",
    },
    Step {
        args: &["memory", "show", "ada", "ghost"],
        stdin: "",
    },
    Step {
        args: &["pending", "rules"],
        stdin: "",
    },
    Step {
        args: &["trace", "show"],
        stdin: "",
    },
    Step {
        args: &["replay", "--verify"],
        stdin: "",
    },
    Step {
        args: &[
            "grammar",
            "learned",
            "add",
            "show me my notes",
            "/recall notes",
        ],
        stdin: "",
    },
    Step {
        args: &["grammar", "learned", "list"],
        stdin: "",
    },
    Step {
        args: &["grammar", "learned", "reset"],
        stdin: "",
    },
    Step {
        args: &["memory", "undo", "ada", "notes"],
        stdin: "",
    },
    Step {
        args: &["memory", "show", "ada", "notes"],
        stdin: "",
    },
    Step {
        args: &["replay", "--verify"],
        stdin: "",
    },
];

fn run(dir: &Path, args: &[&str], env: Option<&str>, stdin: &str) -> Output {
    use std::io::Write;
    let mut command = Command::new(env!("CARGO_BIN_EXE_partner"));
    command
        .current_dir(dir)
        .args(args)
        .env_remove("PARTNER_STORE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(store) = env {
        command.env("PARTNER_STORE", store);
    }
    let mut child = command.spawn().unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// What a command said, with the times and durations that differ from
/// run to run masked.
fn said(o: &Output) -> String {
    let text = format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    crate::support::mask_times(&text)
}

/// The session's answers on one store.
fn session(dir: &Path, store: &[&str], env: Option<&str>) -> Vec<String> {
    SESSION
        .iter()
        .map(|step| {
            let mut args = step.args.to_vec();
            args.extend_from_slice(store);
            let answer = said(&run(dir, &args, env, step.stdin));
            format!("$ partner {}\n{answer}", step.args.join(" "))
        })
        .collect()
}

#[test]
fn every_command_answers_the_same_on_sqlite_and_postgresql() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let on_sqlite = session(dir.path(), &["--db", "c.db"], None);
    let on_postgres = session(dir.path(), &["--store", &db.url], None);
    for (sqlite, pg) in on_sqlite.iter().zip(&on_postgres) {
        assert_eq!(sqlite, pg, "SQLite said one thing and PostgreSQL another");
    }
    let all = on_postgres.join("\n");
    // What the session did, so the two cannot agree by both failing.
    for expected in [
        "/recall append notes \"beta\" → executed: appended to notes (working, v2",
        "→ pending: waiting for agent:anchor to approve (r1)",
        "= 70",
        "/post bluesky \"hello\" ?public → executed: queued a public post to bluesky",
        "partner: request r1 is already approved by partner",
        "partner said no: denied from the command line",
        "did you mean /approve?",
        "partner: no block 'ghost' for agent ada",
        "learned #1: show me my notes  →  /recall notes",
        "forgot 1 phrasings",
        "steps matched",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    // Nothing was written to a file when the store is PostgreSQL.
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.starts_with("c.db"))
        .collect();
    assert!(files.is_empty(), "files beside the SQLite one: {files:?}");
}

#[test]
fn partner_store_in_the_environment_selects_postgresql() {
    let Some(db) = postgres::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let set = run(
        dir.path(),
        &["memory", "set", "ada", "notes", "-"],
        Some(&db.url),
        "from the environment",
    );
    assert!(set.status.success(), "{}", said(&set));
    // The block is in PostgreSQL: read there through --store, and no
    // default database file was made.
    let shown = run(
        dir.path(),
        &["memory", "show", "ada", "notes", "--store", &db.url],
        None,
        "",
    );
    assert!(
        said(&shown).contains("from the environment"),
        "{}",
        said(&shown)
    );
    let mut client = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    let value: String = client
        .query_one(
            "SELECT value FROM blocks WHERE agent = 'ada' AND label = 'notes'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(value, "from the environment");
    // --db wins over the environment; --db and --store together are refused.
    let file = run(
        dir.path(),
        &["memory", "list", "--db", "y.db"],
        Some(&db.url),
        "",
    );
    assert!(
        said(&file).contains("no database at y.db"),
        "{}",
        said(&file)
    );
    let both = run(
        dir.path(),
        &["memory", "list", "--db", "x.db", "--store", &db.url],
        None,
        "",
    );
    assert_eq!(both.status.code(), Some(2), "{}", said(&both));
}

#[test]
fn the_store_named_in_partner_toml_is_the_default_for_every_command_run_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = |store: &str| {
        std::fs::write(
            d.join("partner.toml"),
            format!(
                "name = \"kept\"\n[store]\nurl = \"{store}\"\n[providers.s]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"s:x\"\n"
            ),
        )
        .unwrap();
    };
    std::fs::write(d.join("script.toml"), "[agents.ada]\n").unwrap();
    // A file, relative to the config.
    config("mine.db");
    let set = run(
        d,
        &["memory", "set", "ada", "notes", "-"],
        None,
        "in the file",
    );
    assert!(set.status.success(), "{}", said(&set));
    assert!(d.join("mine.db").exists());
    let Some(db) = postgres::scratch() else {
        return;
    };
    // A PostgreSQL database.
    config(&db.url);
    let set = run(
        d,
        &["memory", "set", "ada", "notes", "-"],
        None,
        "on the server",
    );
    assert!(set.status.success(), "{}", said(&set));
    let shown = run(
        d,
        &["memory", "show", "ada", "notes", "--store", &db.url],
        None,
        "",
    );
    assert!(said(&shown).contains("on the server"), "{}", said(&shown));
    // No daemon runs it yet, and status says so of each agent it knows.
    let status = run(d, &["status"], None, "");
    assert_eq!(status.status.code(), Some(1), "{}", said(&status));
    assert!(
        said(&status).contains("ada  not running (no daemon has run it)"),
        "{}",
        said(&status)
    );
    // `partner run` runs it there as one member of its team: it takes the
    // agents' leases as `MACHINE.PID`, and gives them up as it stops.
    let ran = run(d, &["run", "--headless", "--for", "3s"], None, "");
    assert_eq!(ran.status.code(), Some(0), "{}", said(&ran));
    let mut client = ::postgres::Client::connect(&db.url, ::postgres::NoTls).unwrap();
    let row = client
        .query_one(
            "SELECT host, expires_at FROM agent_leases WHERE agent = 'ada'",
            &[],
        )
        .unwrap();
    let host: String = row.get(0);
    let pid = host.rsplit('.').next().unwrap();
    assert!(pid.parse::<u32>().is_ok(), "{host}");
    assert_eq!(row.get::<_, i64>(1), 0, "the lease was given up");
}
