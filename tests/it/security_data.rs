//! Data leaving where it should not: secrets in URLs, queries and targets,
//! fetches to this machine, its network or a cloud metadata service
//! (directly or through a redirect), and searches reading other agents'
//! private memory. Fetches go to real servers on 127.0.0.1 that record
//! what reaches them.

use crate::support;
use support::output_text as text;
use support::partner_output as partner;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use partner::engine::exec::{ActionStatus, TurnContext};
use partner::policy::Policy;
use partner::store::memory::backend::{Memory, NewMessage};
use partner::store::memory::{BlockKind, BlockPermission};
use support::{Rig, rig};

/// A server that records each request line and answers `respond(path)`:
/// a status and, for redirects, a location.
fn recording_server(
    respond: impl Fn(&str) -> (u16, Option<String>) + Send + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            log.lock().unwrap().push(path.clone());
            let (status, location) = respond(&path);
            let location = location
                .map(|l| format!("location: {l}\r\n"))
                .unwrap_or_default();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n{location}connection: close\r\n\r\nok"
            );
        }
    });
    (base, seen)
}

fn port_of(base: &str) -> &str {
    base.rsplit(':').next().unwrap()
}

fn one(r: &Rig, agent: &str, text: &str) -> partner::engine::exec::ActionReport {
    let mut ctx = TurnContext::new(agent, "main", "t");
    let report = r.exec.run_turn(&mut ctx, text);
    assert!(report.errors.is_empty(), "{text}: {:?}", report.errors);
    report.actions.into_iter().next().unwrap()
}

const KEY: &str = "AKIAIOSFODNN7EXAMPLE";

#[test]
fn fetch_never_reaches_this_machine_or_its_network() {
    let (base, seen) = recording_server(|_| (200, None));
    let port = port_of(&base).to_string();
    let r = rig(Policy::permissive());
    for url in [
        format!("http://127.0.0.1:{port}/collect?k={KEY}"),
        format!("http://127.0.0.1:{port}/plain"),
        format!("http://localhost:{port}/x"),
        format!("http://LOCALHOST.:{port}/x"),
        format!("http://127.1:{port}/x"),
        format!("http://2130706433:{port}/x"),
        format!("http://0x7f000001:{port}/x"),
        format!("http://0.0.0.0:{port}/x"),
        format!("http://[::1]:{port}/x"),
        format!("http://[::ffff:127.0.0.1]:{port}/x"),
        // IPv4-translated and 6to4 forms of 127.0.0.1 (issue 28).
        format!("http://[::ffff:0:127.0.0.1]:{port}/x"),
        format!("http://[2002:7f00:1::]:{port}/x"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://metadata.google.internal/computeMetadata/v1/".to_string(),
        "http://10.0.0.1/".to_string(),
        "http://192.168.1.1/".to_string(),
        "http://[fd00:ec2::254]/".to_string(),
    ] {
        let report = one(&r, "ada", &format!("/fetch {url}"));
        assert!(
            matches!(report.status, ActionStatus::Denied | ActionStatus::Failed),
            "{url}: {report:?}"
        );
        assert!(
            report.text.contains("may not reach")
                || report.text.contains("which agents may not reach")
                || report.text.contains("could not fetch"),
            "{url}: {}",
            report.text
        );
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
}

#[test]
fn a_redirect_is_checked_like_the_first_url() {
    let (inner, inner_seen) = recording_server(|_| (200, None));
    let inner_port = port_of(&inner).to_string();
    let (outer, outer_seen) = recording_server(move |path| match path {
        "/to-metadata" => (302, Some("http://169.254.169.254/latest/".into())),
        "/to-localhost" => (301, Some(format!("http://localhost:{inner_port}/x"))),
        "/relative" => (302, Some("/final".into())),
        _ => (200, None),
    });
    // The partner lets agents reach the outer server's address only.
    let mut policy = Policy::permissive();
    policy.network.allow_hosts = vec![format!("127.0.0.1:{}", port_of(&outer))];
    let r = rig(policy);
    for path in ["/to-metadata", "/to-localhost"] {
        let report = one(&r, "ada", &format!("/fetch {outer}{path}"));
        assert_eq!(report.status, ActionStatus::Failed, "{path}: {report:?}");
        assert!(report.text.contains("may not reach"), "{}", report.text);
    }
    assert!(inner_seen.lock().unwrap().is_empty());
    // A redirect within the allowed host is followed.
    let report = one(&r, "ada", &format!("/fetch {outer}/relative"));
    assert_eq!(report.status, ActionStatus::Executed, "{report:?}");
    assert!(outer_seen.lock().unwrap().contains(&"/final".to_string()));
}

#[test]
fn secrets_in_any_outgoing_field_ask_the_partner() {
    let (base, seen) = recording_server(|_| (200, None));
    let mut policy = Policy::from_toml(
        "[platforms.discord]\nagents = [\"*\"]\n[rate_limits]\ndefault = { burst = 100, per_minute = 100 }\n",
    )
    .unwrap();
    policy.network.allow_hosts = vec!["127.0.0.1".into()];
    let r = rig(policy);
    for text in [
        format!("/fetch {base}/collect?k={KEY}"),
        format!("/fetch {base}/{KEY}"),
        format!("/web {KEY}"),
        format!("/send @discord @{KEY} \"hello\""),
        format!("/tell @anchor \"the key is {KEY}\""),
        "/reply \"password = hunter2hunter2\"".to_string(),
        "/recall insert \"token: ghp_abcdefghijklmnopqrstuvwxyz0123456789\"".to_string(),
    ] {
        let report = one(&r, "ada", &text);
        assert_eq!(report.status, ActionStatus::Pending, "{text}: {report:?}");
        let request = report.request.unwrap();
        assert_eq!(
            request.authorities,
            vec![partner::policy::Authority::Partner],
            "{text}"
        );
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
}

#[test]
fn a_supervisor_never_decides_a_secret_leaving() {
    // Posts go through anchor; a post holding a secret goes to the partner.
    let policy = Policy::from_toml(
        "[roles]\nanchor = \"supervisor\"\n[platforms.bluesky]\nagents = [\"*\"]\n[[rules]]\nverb = \"post\"\ndecide = \"ask\"\nauthority = [\"agent:anchor\", \"partner\"]\n",
    )
    .unwrap();
    let r = rig(policy);
    let report = one(&r, "ada", &format!("/post bluesky \"our key {KEY}\""));
    let request = report.request.unwrap();
    assert_eq!(
        request.authorities,
        vec![partner::policy::Authority::Partner]
    );
}

fn private_memory() -> Rig {
    let r = rig(Policy::permissive());
    r.block(
        "anchor",
        "secret",
        BlockKind::Working,
        BlockPermission::ReadWrite,
        "password = hunter2 for the vault",
    );
    r.exec
        .partner_set_block(
            partner::store::trace::BlockSpec {
                agent: "anchor".into(),
                label: "team_calendar".into(),
                kind: BlockKind::Working,
                permission: BlockPermission::ReadWrite,
                char_limit: 5000,
                description: String::new(),
                value: "vault review on Friday".into(),
                shared: true,
            },
            &partner::policy::Authority::Partner,
        )
        .unwrap();
    {
        let conn = r.exec.store().sqlite().unwrap().conn();
        conn.add_archival("anchor", "vault combination 1234", 0)
            .unwrap();
        conn.add_message(
            &NewMessage {
                agent: "anchor",
                thread: "main",
                role: "user",
                content: "the vault password changed",
                lineage: &[],
                turn: None,
            },
            0,
        )
        .unwrap();
    }
    r
}

#[test]
fn constellation_search_reads_only_what_others_share() {
    let r = private_memory();
    let report = one(&r, "worker", "/search in constellation vault");
    assert!(
        !report.text.contains("hunter2")
            && !report.text.contains("combination")
            && !report.text.contains("password changed"),
        "{}",
        report.text
    );
    assert!(report.text.contains("team_calendar"), "{}", report.text);
    // Without `in constellation` only its own memory is searched.
    let own = one(&r, "worker", "/search vault");
    assert!(own.text.contains("nothing found"), "{}", own.text);
    // What an agent told another stays readable by the one who said it.
    one(&r, "worker", "/tell @anchor \"the vault alarm is loud\"");
    let told = one(&r, "worker", "/search in constellation alarm");
    assert!(told.text.contains("alarm"), "{}", told.text);
}

#[test]
fn the_policy_decides_how_far_a_search_reads() {
    let r = private_memory();
    drop(r);
    let open =
        Policy::from_toml("[visibility]\ndefault = \"none\"\nagents = { auditor = \"all\" }\n");
    assert!(open.is_err(), "\"none\" is not a reach");
    let policy =
        Policy::from_toml("[visibility]\ndefault = \"own\"\nagents = { auditor = \"all\" }\n")
            .unwrap();
    let r = rig(policy);
    r.block(
        "anchor",
        "secret",
        BlockKind::Working,
        BlockPermission::ReadWrite,
        "password = hunter2 for the vault",
    );
    let worker = one(&r, "worker", "/search in constellation vault");
    assert!(worker.text.contains("nothing found"), "{}", worker.text);
    let auditor = one(&r, "auditor", "/search in constellation vault");
    assert!(auditor.text.contains("hunter2"), "{}", auditor.text);
}

#[test]
fn a_dm_thread_from_the_command_line_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("p.toml"),
        "[platforms.bluesky]\nagents = [\"*\"]\n[rate_limits]\ndefault = { burst = 100, per_minute = 100 }\n",
    )
    .unwrap();
    let args = [
        "exec", "--db", "c.db", "--policy", "p.toml", "--agent", "ada",
    ];
    let public = partner(
        d,
        &[&args[..], &["--thread", "main", "/post bluesky \"hi\""]].concat(),
        "",
    );
    assert!(text(&public).contains("→ executed"), "{}", text(&public));
    let private = partner(
        d,
        &[&args[..], &["--thread", "dm:dana", "/post bluesky \"hi\""]].concat(),
        "",
    );
    assert!(
        text(&private).contains("→ pending") && text(&private).contains("private"),
        "{}",
        text(&private)
    );
}

#[test]
fn archival_entries_have_a_size_limit() {
    let r = rig(Policy::permissive());
    let big = "x".repeat(64 * 1024 + 1);
    let report = one(&r, "ada", &format!("/recall insert \"{big}\""));
    assert_eq!(report.status, ActionStatus::Failed);
    assert!(
        report.text.contains("65536 bytes"),
        "{}",
        &report.text[..120]
    );
    let fits = "y".repeat(64 * 1024);
    assert_eq!(
        one(&r, "ada", &format!("/recall insert \"{fits}\"")).status,
        ActionStatus::Executed
    );
    let policy = Policy::from_toml("[limits]\narchival_bytes = 100\n").unwrap();
    let r = rig(policy);
    let report = one(
        &r,
        "ada",
        &format!("/recall insert \"{}\"", "z".repeat(101)),
    );
    assert_eq!(report.status, ActionStatus::Failed);
}

#[test]
fn a_database_with_a_bad_schema_version_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for version in [-3, 0] {
        let out = partner(
            d,
            &["memory", "--db", "v.db", "set", "ada", "notes", "v"],
            "",
        );
        assert!(out.status.success(), "{}", text(&out));
        {
            let conn = rusqlite::Connection::open(d.join("v.db")).unwrap();
            conn.pragma_update(None, "user_version", version).unwrap();
        }
        for args in [
            vec!["memory", "--db", "v.db", "list"],
            vec!["exec", "--db", "v.db", "--agent", "ada", "/recall x"],
            vec!["pending", "--db", "v.db", "list"],
        ] {
            let out = partner(d, &args, "");
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
            let said = text(&out);
            assert_eq!(said.lines().count(), 1, "{args:?}: {said}");
            assert!(said.contains("cannot be used"), "{said}");
            assert!(!said.contains("CREATE TABLE"), "{said}");
        }
        std::fs::remove_file(d.join("v.db")).unwrap();
        let _ = std::fs::remove_file(d.join("v.db-wal"));
        let _ = std::fs::remove_file(d.join("v.db-shm"));
    }
}

/// The rows of a fixture table under `tests/fixtures/egress`, comments
/// left out.
fn egress_table(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/egress")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// A rig whose agents may reach a recording server on this machine (and
/// act a thousand times a minute), for the egress tables.
fn egress_rig() -> (Rig, String, Arc<Mutex<Vec<String>>>) {
    let (base, seen) = recording_server(|_| (200, None));
    let mut policy =
        Policy::from_toml("[rate_limits]\ndefault = { burst = 1000, per_minute = 1000 }\n")
            .unwrap();
    policy.network.allow_hosts = vec!["127.0.0.1".into()];
    (rig(policy), base, seen)
}

/// Each `(kind, how, line)`: the line, its collector's address made the
/// recording server's, must ask the partner naming the kind, and nothing
/// may reach the server.
fn every_line_asks(rows: &[(String, String, String)]) {
    let (r, base, seen) = egress_rig();
    let mut missed = Vec::new();
    for (kind, how, line) in rows {
        // What would leave goes to a server on this machine that records it.
        let line = line.replace("https://collector.example.com", &base);
        let report = one(&r, "ada", &line);
        let asked = report.status == ActionStatus::Pending
            && report.request.as_ref().is_some_and(|q| {
                q.authorities == vec![partner::policy::Authority::Partner]
                    && q.reason.contains(kind.as_str())
            });
        if !asked {
            missed.push(format!(
                "{kind} ({how}): {line}: {:?} {}",
                report.status, report.text
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "{} of {} went without asking:\n{}",
        missed.len(),
        rows.len(),
        missed.join("\n")
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
}

#[test]
fn encoded_secrets_ask_the_partner_and_name_what_they_hold() {
    let rows: Vec<(String, String, String)> = egress_table("encoded_secrets.tsv")
        .iter()
        .map(|row| {
            let mut cells = row.splitn(3, '\t');
            let mut next = || cells.next().unwrap().to_string();
            (next(), next(), next())
        })
        .collect();
    assert!(rows.len() >= 100, "{} rows", rows.len());
    every_line_asks(&rows);
}

/// Issue 49: a fake GitHub token hidden the ways that went without
/// asking (base64 of base64, hex of base64, invisible characters inside,
/// groups joined by `_`, `/` or `,`, HTML entities, fullwidth, case
/// swapped, split across path and query) and the ways that did not.
#[test]
fn a_github_token_hidden_every_way_asks_the_partner() {
    let rows: Vec<(String, String, String)> = egress_table("github_token_hidings.tsv")
        .iter()
        .map(|row| {
            let (how, line) = row.split_once('\t').unwrap();
            ("a GitHub token".into(), how.into(), line.into())
        })
        .collect();
    assert!(rows.len() >= 25, "{} rows", rows.len());
    every_line_asks(&rows);
}

#[test]
fn ordinary_urls_go_without_asking() {
    let (r, base, seen) = egress_rig();
    let urls = egress_table("ordinary_urls.txt");
    assert!(urls.len() >= 100, "{} urls", urls.len());
    let mut asked = Vec::new();
    for url in &urls {
        // In a message, whole; and fetched, its path and query sent to a
        // server on this machine.
        let told = one(&r, "ada", &format!("/tell @anchor \"see {url}\""));
        let path = url.splitn(4, '/').nth(3).unwrap_or("");
        let fetched = one(&r, "ada", &format!("/fetch {base}/{path}"));
        for report in [told, fetched] {
            if report.status != ActionStatus::Executed {
                asked.push(format!("{url}: {:?} {}", report.status, report.text));
            }
        }
    }
    assert!(
        asked.is_empty(),
        "{} of {} were held:\n{}",
        asked.len(),
        urls.len(),
        asked.join("\n")
    );
    assert_eq!(seen.lock().unwrap().len(), urls.len());
}
