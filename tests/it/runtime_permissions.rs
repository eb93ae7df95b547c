//! Permission levels, every decision kind, standing rules, timeouts,
//! escalation chains, markers and implicit checks, over a real SQLite file.

use crate::support;

use std::time::Duration;

use partner::engine::exec::{ActionStatus, ExecError};
use partner::policy::{Authority, Decision, Policy};
use partner::store::memory::roster::Roster;
use partner::store::memory::{BlockKind, BlockPermission as P};
use support::{Rig, rig};

const POLICY: &str = r#"
default = "allow"
request_timeout = "1h"
[roles]
anchor = "supervisor"
[platforms.bluesky]
agents = ["*"]
[platforms.discord]
agents = ["anchor"]
[rate_limits]
default = { burst = 100, per_minute = 100 }
calc = { burst = 2, per_minute = 1 }
[[rules]]
verb = "post"
decide = "ask"
authority = ["agent:anchor", "partner"]
reason = "public posts are reviewed"
[[rules]]
verb = "recall"
op = "delete"
decide = "ask"
authority = "partner"
[[rules]]
verb = "recall"
op = "patch"
decide = "ask"
routine = "allow"
[[rules]]
verb = "web"
decide = "deny"
reason = "no web today"
"#;

fn r() -> Rig {
    let r = rig(Policy::from_toml(POLICY).unwrap());
    for (label, permission) in [
        ("ro", P::ReadOnly),
        ("partner_only", P::Partner),
        ("human_only", P::Human),
        ("log", P::Append),
        ("notes", P::ReadWrite),
        ("scratch", P::Admin),
    ] {
        r.block("ada", label, BlockKind::Working, permission, "start\n");
    }
    r
}

const PARTNER: Authority = Authority::Partner;

fn anchor() -> Authority {
    Authority::Agent("anchor".into())
}

fn request_of(report: &partner::engine::exec::ActionReport) -> String {
    assert_eq!(report.status, ActionStatus::Pending, "{}", report.text);
    report.request.as_ref().unwrap().id.clone()
}

#[test]
fn every_block_permission_level() {
    let r = r();
    let ro = r.one("ada", "/context ro + \"x\"");
    assert_eq!(
        (ro.status, ro.text.as_str()),
        (ActionStatus::Denied, "block 'ro' is read-only")
    );
    let log_append = r.one("ada", "/context log + \"entry\"");
    assert_eq!(log_append.status, ActionStatus::Executed);
    let log_replace = r.one("ada", "/context log \"start\" -> \"x\"");
    assert!(
        log_replace.text.contains("only takes appends"),
        "{}",
        log_replace.text
    );
    for label in ["partner_only", "human_only"] {
        let asked = r.one("ada", &format!("/context {label} + \"x\""));
        assert_eq!(
            asked.request.as_ref().unwrap().waiting_on(),
            &PARTNER,
            "{}",
            asked.text
        );
        assert!(
            asked.text.contains("needs the partner's consent"),
            "{}",
            asked.text
        );
    }
    assert_eq!(
        r.one("ada", "/context notes + \"x\"").status,
        ActionStatus::Executed
    );
    let delete_rw = r.one("ada", "/recall delete notes");
    assert!(
        delete_rw.text.contains("only with admin permission"),
        "{}",
        delete_rw.text
    );
    let delete_admin = r.one("ada", "/recall delete scratch");
    let id = request_of(&delete_admin);
    let done = r
        .exec
        .decide(&id, Decision::ApproveOnce, &PARTNER, None)
        .unwrap();
    assert_eq!(done.status, ActionStatus::Executed);
    assert_eq!(r.value("ada", "scratch"), None);
}

#[test]
fn ask_never_runs_before_approval_and_approve_once_runs_it() {
    let r = r();
    let asked = r.one("ada", "/post bluesky \"launch day!\"");
    let id = request_of(&asked);
    assert!(
        (r.exec.store().sqlite().unwrap().conn())
            .outbox()
            .unwrap()
            .is_empty(),
        "nothing posted while it waits"
    );
    assert_eq!(asked.request.as_ref().unwrap().waiting_on(), &anchor());
    let posted = r
        .exec
        .decide(&id, Decision::ApproveOnce, &anchor(), None)
        .unwrap();
    assert_eq!(posted.status, ActionStatus::Executed);
    assert_eq!(
        (r.exec.store().sqlite().unwrap().conn())
            .outbox()
            .unwrap()
            .len(),
        1
    );
    let again = r
        .exec
        .decide(&id, Decision::ApproveOnce, &PARTNER, None)
        .unwrap_err();
    assert!(matches!(again, ExecError::NotWaiting { .. }), "{again}");
    assert_eq!(
        r.one("ada", "/post bluesky \"second\"").status,
        ActionStatus::Pending,
        "once is once"
    );
}

#[test]
fn only_the_authority_waited_on_or_the_partner_decides() {
    let r = r();
    let id = request_of(&r.one("ada", "/recall delete scratch"));
    let err = r
        .exec
        .decide(&id, Decision::ApproveOnce, &anchor(), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("request {id} waits on partner, not agent:anchor")
    );
    let by_agent = r.one("anchor", &format!("/approve {id}"));
    assert_eq!(by_agent.status, ActionStatus::Failed);
    assert!(
        by_agent.text.contains("waits on partner"),
        "{}",
        by_agent.text
    );
}

#[test]
fn approve_always_creates_a_standing_rule_scoped_to_verb_and_target() {
    let r = r();
    let id = request_of(&r.one("ada", "/post bluesky \"one\""));
    r.exec
        .decide(&id, Decision::ApproveAlways, &PARTNER, None)
        .unwrap();
    assert_eq!(
        r.one("ada", "/post bluesky \"two\"").status,
        ActionStatus::Executed
    );
    assert_eq!(
        r.one("worker", "/post bluesky \"three\"").status,
        ActionStatus::Pending,
        "another agent still asks"
    );
    let rules =
        partner::policy::pending::rules(&r.exec.store().sqlite().unwrap().conn(), support::START)
            .unwrap();
    assert_eq!(
        (
            rules.len(),
            rules[0].verb.as_str(),
            rules[0].target.as_deref()
        ),
        (1, "post", Some("bluesky"))
    );
    assert!(
        partner::policy::pending::revoke_rule(
            &r.exec.store().sqlite().unwrap().conn(),
            rules[0].id,
            support::START
        )
        .unwrap()
    );
    assert_eq!(
        r.one("ada", "/post bluesky \"four\"").status,
        ActionStatus::Pending,
        "revoked"
    );
}

#[test]
fn approve_for_a_duration_lapses() {
    let r = r();
    let id = request_of(&r.one("ada", "/post bluesky \"one\""));
    r.exec
        .decide(
            &id,
            Decision::ApproveFor(Duration::from_secs(600)),
            &PARTNER,
            None,
        )
        .unwrap();
    assert_eq!(
        r.one("ada", "/post bluesky \"two\"").status,
        ActionStatus::Executed
    );
    r.clock.advance(Duration::from_secs(601));
    assert_eq!(
        r.one("ada", "/post bluesky \"three\"").status,
        ActionStatus::Pending
    );
}

#[test]
fn deny_reasons_go_back_and_deny_always_sticks() {
    let r = r();
    let id = request_of(&r.one("ada", "/post bluesky \"spicy take\""));
    let denied = r
        .exec
        .decide(
            &id,
            Decision::Deny(Some("not on launch day".into())),
            &anchor(),
            None,
        )
        .unwrap();
    assert_eq!(
        (denied.status, denied.text.as_str()),
        (
            ActionStatus::Denied,
            "agent:anchor said no: not on launch day"
        )
    );
    let id = request_of(&r.one("ada", "/post bluesky \"again\""));
    r.exec
        .decide(
            &id,
            Decision::DenyAlways(Some("no posting".into())),
            &PARTNER,
            None,
        )
        .unwrap();
    let blocked = r.one("ada", "/post bluesky \"and again\"");
    assert_eq!(
        (blocked.status, blocked.text.as_str()),
        (ActionStatus::Denied, "no posting")
    );
    assert!(
        (r.exec.store().sqlite().unwrap().conn())
            .outbox()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn escalation_walks_the_chain() {
    let r = r();
    let id = request_of(&r.one("ada", "/post bluesky \"x\""));
    let moved = r.one("anchor", &format!("/escalate {id} \"above my pay grade\""));
    assert_eq!(moved.status, ActionStatus::Executed, "{}", moved.text);
    assert!(moved.text.contains("passed"), "{}", moved.text);
    let request = partner::policy::pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(request.waiting_on(), &PARTNER);
    let last = r
        .exec
        .decide(&id, Decision::Escalate(None), &PARTNER, None)
        .unwrap_err();
    assert!(matches!(last, ExecError::LastAuthority(_)), "{last}");
    assert_eq!(
        r.exec
            .decide(&id, Decision::ApproveOnce, &PARTNER, None)
            .unwrap()
            .status,
        ActionStatus::Executed
    );
}

#[test]
fn supervisors_decide_with_dialect_actions_and_agents_cancel_their_own() {
    let r = r();
    let id = request_of(&r.one("ada", "/post bluesky \"x\""));
    let approved = r.one("anchor", "/approve");
    assert!(
        approved.text.starts_with(&format!(
            "approve once {id}: /post bluesky \"x\" → executed"
        )),
        "{}",
        approved.text
    );
    let id = request_of(&r.one("ada", "/post bluesky \"y\""));
    let cancelled = r.one("ada", &format!("/cancel {id}"));
    assert_eq!(cancelled.text, format!("cancelled {id}"));
    let denied = r.one("worker", "/approve r1");
    assert!(
        denied
            .text
            .contains("needs an authority role, and worker has none"),
        "{}",
        denied.text
    );
}

#[test]
fn requests_time_out_as_denied() {
    let r = r();
    let id = request_of(&r.one("ada", "/post bluesky \"x\""));
    r.clock.advance(Duration::from_secs(3599));
    assert!(r.exec.expire_overdue().unwrap().is_empty());
    r.clock.advance(Duration::from_secs(2));
    let expired = r.exec.expire_overdue().unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].status, ActionStatus::TimedOut);
    let request = partner::policy::pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(request.status.as_str(), "timed_out");
    let late = r
        .exec
        .decide(&id, Decision::ApproveOnce, &PARTNER, None)
        .unwrap_err();
    assert!(matches!(late, ExecError::NotWaiting { .. }));
    assert!(
        (r.exec.store().sqlite().unwrap().conn())
            .outbox()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn markers_take_part() {
    let r = r();
    assert_eq!(
        r.one("ada", "/calc 1+1 ?").status,
        ActionStatus::Pending,
        "? asks"
    );
    assert_eq!(
        r.one("ada", "/reply hi ?ask").status,
        ActionStatus::Pending,
        "?ask asks"
    );
    let serious = r.one("ada", "/post bluesky \"x\" !");
    assert_eq!(
        serious.request.unwrap().waiting_on(),
        &PARTNER,
        "! skips anchor"
    );
    let patch = "```diff\n--- a\n+++ b\n@@ -1 +1 @@\n-start\n+started\n```";
    assert_eq!(
        r.one("ada", &format!("/recall patch notes {patch}")).status,
        ActionStatus::Pending
    );
    assert_eq!(
        r.one("ada", &format!("/recall patch notes {patch} ."))
            .status,
        ActionStatus::Executed,
        ". is routine here"
    );
    assert_eq!(
        r.one("ada", "/web x .").status,
        ActionStatus::Denied,
        ". never overrides a deny"
    );
}

#[test]
fn implicit_checks_always_run() {
    let r = r();
    let unknown = r.one("ada", "/post mastodon \"x\"");
    assert_eq!(unknown.text, "no platform 'mastodon' is configured");
    let not_allowed = r.one("ada", "/send @discord @general \"x\"");
    assert_eq!(not_allowed.text, "ada may not post to discord");
    r.ok("ada", "/calc 1");
    r.ok("ada", "/calc 2");
    let limited = r.one("ada", "/calc 3");
    assert_eq!(limited.text, "rate limit for /calc: try again in 60s");
    r.clock.advance(Duration::from_secs(60));
    r.ok("ada", "/calc 4");
    let secret = r.one(
        "ada",
        "/tell @worker \"the key is sk-proj-abcdefghijklmnopqrstuvwx1234\"",
    );
    assert!(
        secret.text.contains("looks like it holds an API key"),
        "{}",
        secret.text
    );
    let email = r.one("ada", "/recall insert \"Dana: dana@example.com\"");
    assert!(email.text.contains("an email address"), "{}", email.text);
    let mut ctx = partner::engine::exec::TurnContext::new("anchor", "dm-with-dana", "t");
    ctx.private = true;
    let report = r
        .exec
        .run_turn(&mut ctx, "/send @discord @general \"recap\"");
    assert!(
        report.actions[0]
            .text
            .contains("this conversation is private"),
        "{}",
        report.actions[0].text
    );
}

#[test]
fn pending_requests_survive_a_restart() {
    let r = r();
    let id = request_of(&r.one("ada", "/post bluesky \"durable\""));
    let dir = r.dir;
    let db = dir.path().join("constellation.db");
    drop(r.exec);
    let exec = partner::engine::exec::Executor::open(
        &db,
        Policy::from_toml(POLICY).unwrap(),
        Default::default(),
    )
    .unwrap();
    let waiting = exec.pending().unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(
        (waiting[0].id.as_str(), waiting[0].canonical.as_str()),
        (id.as_str(), "/post bluesky \"durable\"")
    );
    assert_eq!(waiting[0].raw_text, "/post bluesky \"durable\"");
    let done = exec
        .decide(&id, Decision::ApproveOnce, &PARTNER, None)
        .unwrap();
    assert_eq!(done.status, ActionStatus::Executed);
}

#[test]
fn every_outcome_has_one_trace_record_and_replay_matches() {
    let r = r();
    r.ok("ada", "/context notes + \"a\"");
    r.one("ada", "/context ro + \"x\"");
    let id = request_of(&r.one("ada", "/post bluesky \"x\""));
    r.exec
        .decide(&id, Decision::ApproveOnce, &anchor(), None)
        .unwrap();
    r.one("ada", "/recall append ghost \"x\"");
    r.ok("ada", "/remind \"in 2 hours\" \"stretch\"");
    r.turn("ada", "/reply hi\nscratch that");
    let records = r.trace();
    let outcomes: Vec<&str> = records.iter().map(|t| t.outcome.as_str()).collect();
    assert_eq!(
        &outcomes[6..],
        [
            "executed",
            "denied",
            "executed",
            "failed",
            "executed",
            "cancelled"
        ]
    );
    let mut ids: Vec<&str> = records.iter().map(|t| t.id.as_str()).collect();
    ids.dedup();
    assert_eq!(ids.len(), records.len());
    let approved = &records[8];
    assert_eq!(approved.decision.request.as_deref(), Some(id.as_str()));
    assert_eq!(
        approved.decision.decided_by.as_deref(),
        Some("agent:anchor")
    );
    let stored =
        partner::store::trace::store::count(&r.exec.store().sqlite().unwrap().conn()).unwrap();
    assert_eq!(stored as usize, records.len());

    let verification =
        partner::engine::exec::replay::verify(&partner::store::trace::TraceInput::Database(r.db()))
            .unwrap();
    assert_eq!(verification.divergence, None);
    assert_eq!(verification.steps, records.len());

    let mut tampered = records.clone();
    tampered[6].result = "appended to something else".into();
    let (_, divergence) = partner::engine::exec::replay::verify_records(&tampered).unwrap();
    let divergence = divergence.expect("a changed result diverges");
    assert_eq!(divergence.step, 7);
    assert_eq!(
        divergence.what,
        format!(
            "result: was \"appended to something else\", now {:?}",
            records[6].result
        )
    );
}

#[test]
fn a_torn_trace_file_tail_is_skipped_with_a_warning() {
    let r = r();
    r.ok("ada", "/context notes + \"a\"");
    let path = r.dir.path().join("export.jsonl");
    let mut bytes = Vec::new();
    partner::store::trace::store::export_jsonl(
        &r.exec.store().sqlite().unwrap().conn(),
        &mut bytes,
    )
    .unwrap();
    bytes.extend_from_slice(b"{\"id\":\"t99\",\"seq\":99,\"ti");
    std::fs::write(&path, &bytes).unwrap();
    let (records, warnings) = partner::store::trace::read_trace(&path).unwrap();
    assert_eq!(records.len(), 7);
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.contains("torn last line"),
        "{}",
        warnings[0]
    );
    // A damaged line in the middle is skipped too.
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(&std::fs::read(&path).unwrap()[..10]);
    std::fs::write(&path, &bytes).unwrap();
    let (_, warnings) = partner::store::trace::read_trace(&path).unwrap();
    assert!(warnings[0].message.contains("damaged"), "{warnings:?}");
}
