//! The verb registry: every verb's meaning in one place. Verbs from a verb
//! file run through a real handler, appear in prompts, are checked like
//! built-in verbs, and survive a decision made in another process and a
//! replay. Errors have a side: a busy database is partner's trouble, never
//! the model's mistake, and a decision that meets it stays pending.

use crate::support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use partner::dialect::{BUILTIN_VERBS, VerbTable};
use partner::engine::exec::registry::Registry;
use partner::engine::exec::{ActionStatus, TurnContext};
use partner::policy::{Authority, Decision, Policy, RequestStatus, pending};
use partner::store::memory::{BlockKind, BlockPermission};
use support::{Rig, rig};

const VERBS: &str = r#"
[verbs.shout]
aliases = ["yell"]
summary = "tell anchor something loudly"
action = { kind = "tell", agent = "anchor" }

[verbs.jot]
summary = "add a line to your log"
action = { kind = "append", block = "log" }

[verbs.recall]
aliases = ["memo"]
"#;

fn table() -> VerbTable {
    let mut table = VerbTable::builtin();
    table.extend_from_toml(VERBS).unwrap();
    table
}

fn turn(r: &Rig, agent: &str, text: &str) -> Vec<partner::engine::exec::ActionReport> {
    let mut ctx = TurnContext::new(agent, "main", "t");
    let report = r.exec.run_turn(&mut ctx, text);
    assert!(report.errors.is_empty(), "{text}: {:?}", report.errors);
    report.actions
}

/// What others told anchor (waiting in its inbox).
fn told_anchor(r: &Rig) -> Vec<String> {
    r.inbox("anchor").into_iter().map(|m| m.content).collect()
}

fn partner(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn every_built_in_verb_has_exactly_one_handler() {
    let registry = Registry::builtin();
    for verb in BUILTIN_VERBS {
        assert!(
            registry.handler(&verb.verb).is_some(),
            "/{} has no handler",
            verb.verb
        );
    }
    // Authority verbs are the ones that need a role, from the registry.
    let roles: Vec<&str> = BUILTIN_VERBS
        .iter()
        .filter(|v| registry.handler(&v.verb).unwrap().needs_role())
        .map(|v| v.verb.name())
        .collect();
    assert_eq!(roles, ["approve", "deny", "escalate", "halt"]);
}

#[test]
fn a_verb_from_a_verb_file_runs_and_is_checked_like_any_other() {
    let mut r = rig(Policy::permissive());
    r.exec.set_verbs(table()).unwrap();
    r.block(
        "ada",
        "log",
        BlockKind::Working,
        BlockPermission::Append,
        "day 1",
    );
    r.block(
        "ada",
        "rules",
        BlockKind::Working,
        BlockPermission::ReadOnly,
        "x",
    );

    let shouted = turn(&r, "ada", "/yell \"we launch friday\"");
    assert_eq!(shouted[0].status, ActionStatus::Executed, "{shouted:?}");
    assert_eq!(told_anchor(&r), vec!["we launch friday".to_string()]);

    let jotted = turn(&r, "ada", "/jot \"shipped the beta\"");
    assert_eq!(jotted[0].status, ActionStatus::Executed, "{jotted:?}");
    assert_eq!(
        r.value("ada", "log").as_deref(),
        Some("day 1\nshipped the beta")
    );
    // A secret in a custom verb's text asks the partner, as for /tell.
    let secret = turn(&r, "ada", "/shout \"key AKIAIOSFODNN7EXAMPLE\"");
    assert_eq!(secret[0].status, ActionStatus::Pending, "{secret:?}");
    // The new alias of a built-in verb works too.
    let memo = turn(&r, "ada", "/memo insert \"remember this\"");
    assert_eq!(memo[0].status, ActionStatus::Executed);

    // In a chain, the custom verb takes the previous link's output.
    let chained = turn(&r, "ada", "/recall read log -> /shout");
    assert_eq!(chained[1].status, ActionStatus::Executed, "{chained:?}");
    assert!(told_anchor(&r).last().unwrap().contains("shipped the beta"));

    // The agents' prompts list it (with its summary) for everyone.
    let verbs = partner::runtime::turn::allowed_verbs(&r.exec, "ada", false);
    let shout = verbs
        .iter()
        .find(|v| v.verb.name() == "shout")
        .expect("listed");
    assert_eq!(shout.summary, "tell anchor something loudly");
    // The compact profile names the constellation's own verbs with the
    // everyday ones, and not the rest (the verb table says which).
    let refs: Vec<_> = verbs.iter().collect();
    let compact = partner::runtime::prompt::profile::instructions(
        partner::runtime::prompt::Profile::Compact,
        partner::runtime::prompt::ActionFormat::Dialect,
        &refs,
    );
    let named = compact.lines().find(|l| l.starts_with("Verbs: ")).unwrap();
    assert!(
        named.contains("shout") && named.contains("recall"),
        "{named}"
    );
    assert!(!named.contains("context"), "{named}");
}

#[test]
fn a_custom_verb_without_an_action_is_refused_at_load() {
    let mut table = VerbTable::builtin();
    table
        .extend_from_toml("[verbs.shout]\naliases = [\"yell\"]\n")
        .unwrap();
    let err = Registry::new(table).unwrap_err();
    assert!(
        err.to_string().contains("verb 'shout' has no action"),
        "{err}"
    );
    let config = "[verbs.shout]\nsummary = \"x\"\n[[agents]]\nname = \"a\"\nmodel = \"scripted:x\"\n[providers.scripted]\nkind = \"scripted\"\n";
    let Err(err) = partner::runtime::ConstellationConfig::from_toml(
        config,
        "t.toml",
        Path::new("."),
        None,
        Some(""),
    ) else {
        panic!("accepted");
    };
    assert!(err.to_string().contains("has no action"), "{err}");
    // A built-in verb's meaning cannot be rebound.
    let mut table = VerbTable::builtin();
    assert!(
        table
            .extend_from_toml("[verbs.post]\naction = { kind = \"tell\", agent = \"x\" }\n")
            .is_err()
    );
}

#[test]
fn custom_verbs_survive_a_decision_from_another_process_and_replay() {
    let policy = Policy::from_toml(
        "[[rules]]\nverb = \"shout\"\ndecide = \"ask\"\nauthority = \"partner\"\n",
    )
    .unwrap();
    let mut r = rig(policy);
    r.exec.set_verbs(table()).unwrap();
    let first = turn(&r, "ada", "/shout \"first\"");
    let second = turn(&r, "ada", "/shout \"second\"");
    let (a, b) = (
        first[0].request.as_ref().unwrap().id.clone(),
        second[0].request.as_ref().unwrap().id.clone(),
    );
    // Decided here...
    let done = r
        .exec
        .decide(&a, Decision::ApproveOnce, &Authority::Partner, None)
        .unwrap();
    assert_eq!(done.status, ActionStatus::Executed, "{done:?}");
    // ...and from a shell, by a process that only knows the database.
    std::fs::write(
        r.dir.path().join("p.toml"),
        "[[rules]]\nverb = \"shout\"\ndecide = \"ask\"\nauthority = \"partner\"\n",
    )
    .unwrap();
    let out = partner(
        r.dir.path(),
        &[
            "pending",
            "--db",
            "constellation.db",
            "--policy",
            "p.toml",
            "approve",
            &b,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        told_anchor(&r),
        vec!["first".to_string(), "second".to_string()]
    );
    let request = pending::get(&r.exec.store().sqlite().unwrap().conn(), &b)
        .unwrap()
        .unwrap();
    assert_eq!(request.status, RequestStatus::Approved);

    // Replay knows the constellation's verbs from the database.
    let out = partner(
        r.dir.path(),
        &["replay", "--db", "constellation.db", "--verify"],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("all "),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_busy_database_is_partners_trouble_not_the_models() {
    let r = rig(Policy::permissive());
    r.exec
        .store()
        .sqlite()
        .unwrap()
        .set_busy_timeout(Duration::from_millis(100))
        .unwrap();
    // Another process holds the write lock.
    let other = rusqlite::Connection::open(r.db()).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let busy = turn(&r, "ada", "/recall insert \"while busy\"");
    assert_eq!(busy[0].status, ActionStatus::Failed);
    assert!(busy[0].system_error, "{busy:?}");
    assert!(busy[0].text.contains("not yours"), "{}", busy[0].text);
    other.execute_batch("COMMIT").unwrap();
    let fine = turn(&r, "ada", "/recall insert \"after\"");
    assert_eq!(fine[0].status, ActionStatus::Executed);
    assert!(!fine[0].system_error);
    // An agent's own mistake is not a system error.
    let mistake = turn(&r, "ada", "/recall read nowhere");
    assert_eq!(mistake[0].status, ActionStatus::Failed);
    assert!(!mistake[0].system_error, "{mistake:?}");
}

#[test]
fn a_decision_that_meets_a_busy_database_stays_pending() {
    let policy = Policy::from_toml("[[rules]]\nverb = \"reply\"\ndecide = \"ask\"\n").unwrap();
    let r = rig(policy);
    let asked = turn(&r, "ada", "/reply \"hello\"");
    let id = asked[0].request.as_ref().unwrap().id.clone();
    r.exec
        .store()
        .sqlite()
        .unwrap()
        .set_busy_timeout(Duration::from_millis(100))
        .unwrap();
    let other = rusqlite::Connection::open(r.db()).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let err = r
        .exec
        .decide(&id, Decision::ApproveOnce, &Authority::Partner, None)
        .unwrap_err();
    other.execute_batch("COMMIT").unwrap();
    assert!(
        err.to_string().contains("locked") || err.to_string().contains("problem on its side"),
        "{err}"
    );
    let request = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(request.status, RequestStatus::Waiting);
    let done = r
        .exec
        .decide(&id, Decision::ApproveOnce, &Authority::Partner, None)
        .unwrap();
    assert_eq!(done.status, ActionStatus::Executed);
}
