//! `/shell` end to end against a real SQLite file: every command waits for
//! the partner whatever the policy, standing rule or marker says; an
//! authority agent cannot approve one; a blocked command cannot be
//! approved (not once, not always, not by editing it into something
//! blocked); an approved command runs, and its exit status and output are
//! the action's result, in the trace; a request in words is proposed or
//! handed back to the agent with the context.

use crate::support;

use partner::engine::exec::{ActionStatus, ExecConfig, ShellConfig, TurnContext};
use partner::policy::{Authority, Decision, Policy, RequestStatus, pending};
use support::{Rig, rig_with};

/// Everything allowed, with anchor a supervisor: `/shell` must still ask
/// the partner.
const POLICY: &str = r#"
default = "allow"
[roles]
anchor = "supervisor"
[[rules]]
verb = "shell"
decide = "allow"
"#;

fn shell_rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let config = ExecConfig {
        shell: ShellConfig {
            index: Some(dir.path().join("index.sqlite")),
            dir: Some(dir.keep()),
            ..ShellConfig::default()
        },
        ..ExecConfig::default()
    };
    rig_with(Policy::from_toml(POLICY).unwrap(), config)
}

fn submit(r: &Rig, agent: &str, text: &str) -> partner::engine::exec::ActionReport {
    let mut ctx = TurnContext::new(agent, "t1", "main");
    let report = r.exec.run_turn(&mut ctx, text);
    assert_eq!(report.actions.len(), 1, "{text}: {report:?}");
    report.actions.into_iter().next().unwrap()
}

fn request_of(report: &partner::engine::exec::ActionReport) -> String {
    assert_eq!(report.status, ActionStatus::Pending, "{report:?}");
    report.request.as_ref().unwrap().id.clone()
}

#[test]
fn every_command_waits_for_the_partner_whatever_the_policy_says() {
    let r = shell_rig();
    for text in [
        "/shell echo hi",
        "/run echo hi .",
        "/exec echo hi",
        "/sh echo hi",
        "/bash echo hi",
        "/shell echo hi .",
    ] {
        let report = submit(&r, "ada", text);
        let id = request_of(&report);
        let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
            .unwrap()
            .unwrap();
        assert_eq!(req.authorities, vec![Authority::Partner], "{text}");
        assert!(req.reason.contains("risk LOW"), "{}", req.reason);
    }
    // A trailing `.` is the command's argument, not a routine marker.
    let report = submit(&r, "ada", "/shell ls .");
    let id = request_of(&report);
    let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(req.canonical, "/shell ls .");
    // An authority agent cannot approve it, not even with /approve.
    let by_anchor = r.exec.decide(
        &id,
        Decision::ApproveOnce,
        &Authority::Agent("anchor".into()),
        None,
    );
    assert!(by_anchor.is_err(), "{by_anchor:?}");
    let approve = submit(&r, "anchor", &format!("/approve {id}"));
    assert_ne!(approve.status, ActionStatus::Executed, "{approve:?}");
    let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(req.status, RequestStatus::Waiting);
    // Approving always is refused: one command at a time.
    assert!(
        r.exec
            .decide(&id, Decision::ApproveAlways, &Authority::Partner, None)
            .is_err()
    );
    assert!(
        pending::rules(&r.exec.store().sqlite().unwrap().conn(), support::START + 1)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn an_approved_command_runs_and_its_output_is_the_result_in_the_trace() {
    let r = shell_rig();
    let id = request_of(&submit(
        &r,
        "ada",
        "/shell echo from-the-gate; echo oops >&2; exit 3",
    ));
    let done = r
        .exec
        .decide(&id, Decision::ApproveOnce, &Authority::Partner, None)
        .unwrap();
    assert_eq!(done.status, ActionStatus::Executed, "{done:?}");
    assert!(
        done.text.contains("exit 3")
            && done.text.contains("from-the-gate")
            && done.text.contains("oops"),
        "{}",
        done.text
    );
    let record = r
        .trace()
        .into_iter()
        .rev()
        .find(|t| t.verb == "shell")
        .unwrap();
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["outcome"], "executed", "{json}");
    assert_eq!(json["data"]["status"], 3, "{json}");
    assert_eq!(json["data"]["stdout"], "from-the-gate\n", "{json}");
}

#[test]
fn a_blocked_command_cannot_be_approved_in_any_way() {
    let r = shell_rig();
    let report = submit(&r, "ada", "/shell sudo rm -rf -- /");
    let id = request_of(&report);
    let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert!(req.reason.contains("BLOCKED"), "{}", req.reason);
    for decision in [Decision::ApproveOnce, Decision::ApproveAlways] {
        let e = r
            .exec
            .decide(&id, decision, &Authority::Partner, None)
            .unwrap_err();
        assert!(e.to_string().contains("blocked"), "{e}");
    }
    // Edited into another blocked command: refused too.
    let e = r
        .exec
        .decide(
            &id,
            Decision::ApproveEdited("/shell bash -c 'rm -rf /'".into()),
            &Authority::Partner,
            None,
        )
        .unwrap_err();
    assert!(e.to_string().contains("blocked"), "{e}");
    let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(req.status, RequestStatus::Waiting, "still waiting");
    // Edited into something harmless: that runs, and only that.
    let done = r
        .exec
        .decide(
            &id,
            Decision::ApproveEdited("/shell echo edited".into()),
            &Authority::Partner,
            None,
        )
        .unwrap();
    assert_eq!(done.status, ActionStatus::Executed);
    assert!(done.text.contains("edited"), "{}", done.text);
    // Denying is always possible.
    let id = request_of(&submit(&r, "ada", "/shell mkfs.ext4 /dev/sda1"));
    let denied = r
        .exec
        .decide(&id, Decision::Deny(None), &Authority::Partner, None)
        .unwrap();
    assert_eq!(denied.status, ActionStatus::Denied);
}

#[test]
fn requests_in_words_are_proposed_or_handed_back_with_the_context() {
    let r = shell_rig();
    // `bash` is on this machine's PATH: run it is proposed as `bash`.
    let report = submit(&r, "ada", "/shell please run my bash");
    let id = request_of(&report);
    let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(req.canonical, "/shell bash");
    assert!(
        req.reason.contains("proposed for \"please run my bash\""),
        "{}",
        req.reason
    );
    assert!(
        req.action
            .proposal
            .as_deref()
            .unwrap()
            .contains("bash: executable at"),
        "{:?}",
        req.action
    );
    // Nothing the system knows: the agent gets the context and proposes.
    let report = submit(&r, "ada", "/shell make my wallpaper blue");
    assert_eq!(report.status, ActionStatus::Failed, "{report:?}");
    assert!(
        report.text.contains("System Context:") && report.text.contains("/shell COMMAND"),
        "{}",
        report.text
    );
    assert!(
        pending::waiting(&r.exec.store().sqlite().unwrap().conn())
            .unwrap()
            .iter()
            .all(|p| p.canonical != "/shell make my wallpaper blue")
    );
}

#[test]
fn fenced_blocks_are_commands_whole() {
    let r = shell_rig();
    // `/shell` alone on its line takes the block after it.
    let id = request_of(&submit(
        &r,
        "ada",
        "Checking.\n/shell\n```\nls -la\n```\nDone.",
    ));
    let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(req.canonical, "/shell ls -la");
    // A block of several lines is one script: every line is in the request
    // and every line runs.
    let id = request_of(&submit(
        &r,
        "ada",
        "/shell ```bash\necho first\necho second\n```",
    ));
    let req = pending::get(&r.exec.store().sqlite().unwrap().conn(), &id)
        .unwrap()
        .unwrap();
    assert!(
        req.canonical.contains("echo first\necho second"),
        "{}",
        req.canonical
    );
    let done = r
        .exec
        .decide(&id, Decision::ApproveOnce, &Authority::Partner, None)
        .unwrap();
    assert!(done.text.contains("first\nsecond"), "{}", done.text);
}

/// Halting the agent (`:halt` in the console) stops its approved command
/// while it runs, with everything it started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halting_the_agent_stops_its_running_command() {
    let config = "[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\n";
    // It also starts a `setsid` child that tries to outlive it.
    let script = "[agents.ada]\nreplies = [\"/shell setsid sleep 13377 >/dev/null 2>&1 & sleep 30; echo never\"]\n";
    let r = support::runtime::running(config, "", script);
    r.handle.send_message("ada", "wait a while");
    let started = std::time::Instant::now();
    let id = loop {
        let waiting = r.handle.executor().pending().unwrap();
        if let Some(req) = waiting.iter().find(|p| p.verb == "shell") {
            break req.id.clone();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no request"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let handle = r.handle.clone();
    let decided = tokio::spawn(async move {
        handle
            .decide(&id, Decision::ApproveOnce, Authority::Partner)
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let halted_at = std::time::Instant::now();
    r.handle.halt("ada", "the partner stopped it");
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), decided)
        .await
        .expect("the decision returns soon after the halt")
        .unwrap();
    assert!(halted_at.elapsed() < std::time::Duration::from_secs(5));
    assert!(answer.is_ok(), "{answer:?}");
    let (trace, _) = r.handle.executor().trace().unwrap();
    let record = trace
        .iter()
        .rev()
        .find(|t| t.verb == "shell")
        .expect("traced");
    let json = serde_json::to_value(record).unwrap();
    assert_eq!(json["outcome"], "failed", "{json}");
    assert!(record.result.contains("stopped"), "{}", record.result);
    assert!(
        !sleeping(13377),
        "the setsid child outlived the halt of its agent"
    );
}

/// True when a live `sleep SECONDS` process exists.
fn sleeping(seconds: u32) -> bool {
    let want = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let dir = e.path();
        let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        cmdline == want.as_bytes() && !zombie
    })
}
