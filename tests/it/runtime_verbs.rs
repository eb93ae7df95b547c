//! Every verb and op of the dialect executed against a real SQLite file.

use crate::support;

use partner::engine::exec::{ActionStatus, ExecConfig, TurnContext};
use partner::policy::Policy;
use partner::store::memory::backend::{Memory, NewMessage};
use partner::store::memory::roster::Roster;
use partner::store::memory::{BlockKind, BlockPermission as P};
use support::{Rig, START, rig, rig_with};

fn seeded() -> Rig {
    let r = rig(Policy::permissive());
    r.block(
        "ada",
        "persona",
        BlockKind::Core,
        P::ReadWrite,
        "I am Ada, warm and brief.",
    );
    r.block(
        "ada",
        "human",
        BlockKind::Working,
        P::ReadWrite,
        "Prefers mornings.",
    );
    r.block(
        "ada",
        "project_notes",
        BlockKind::Archival,
        P::Admin,
        "alpha\nbeta\n",
    );
    r
}

#[test]
fn recall_read_search_insert_append_delete_patch() {
    let r = seeded();
    let read = r.ok("ada", "/recall project notes");
    assert!(
        read.text.contains("project_notes (archival, v1") && read.text.contains("alpha"),
        "{}",
        read.text
    );
    assert!(read.needs_continuation);

    r.ok("ada", "/recall insert \"Dana prefers email for contracts\"");
    let search = r.ok("ada", "/recall \"dana email\"");
    assert!(
        search.text.contains("Archival memory (1)") && search.text.contains("[email]"),
        "{}",
        search.text
    );

    let created = r.ok("ada", "/recall insert launch_log \"moved to May\"");
    assert!(
        created.text.starts_with("stored launch_log (archival, v1"),
        "{}",
        created.text
    );
    assert_eq!(created.memory.as_ref().unwrap().version_after, 1);

    let appended = r.ok("ada", "/recall project_notes + \"gamma\"");
    assert_eq!(
        r.value("ada", "project_notes").unwrap(),
        "alpha\nbeta\ngamma"
    );
    let change = appended.memory.unwrap();
    assert_eq!((change.version_before, change.version_after), (Some(1), 2));

    r.ok("ada", "/recall patch project_notes ```diff\n--- a\n+++ b\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n```");
    assert_eq!(
        r.value("ada", "project_notes").unwrap(),
        "alpha\nBETA\ngamma"
    );

    r.ok("ada", "/recall delete project_notes");
    assert_eq!(r.value("ada", "project_notes"), None);
    r.exec
        .partner_undo("ada", "project_notes", &partner::policy::Authority::Partner)
        .unwrap();
    assert_eq!(
        r.value("ada", "project_notes").unwrap(),
        "alpha\nBETA\ngamma"
    );
}

#[test]
fn recall_errors_name_what_is_wrong() {
    let r = seeded();
    let missing = r.one("ada", "/recall append ghost \"x\"");
    assert_eq!(missing.status, ActionStatus::Failed);
    assert!(
        missing
            .text
            .contains("you have no block 'ghost'; your blocks are"),
        "{}",
        missing.text
    );
    r.block("ada", "tiny", BlockKind::Working, P::ReadWrite, "");
    let big = "x".repeat(5001);
    let over = r.one("ada", &format!("/recall append tiny \"{big}\""));
    assert!(
        over.text.contains("1 over its limit of 5000"),
        "{}",
        over.text
    );
    let bad = r.one("ada", "/recall patch project_notes \"not a diff\"");
    assert!(bad.text.contains("does not apply"), "{}", bad.text);
    assert_eq!(
        r.value("ada", "project_notes").unwrap(),
        "alpha\nbeta\n",
        "nothing half-applied"
    );
}

#[test]
fn context_append_replace_archive_load_swap() {
    let r = seeded();
    r.ok("ada", "/context human + \"Likes tea.\"");
    assert_eq!(
        r.value("ada", "human").unwrap(),
        "Prefers mornings.\nLikes tea."
    );
    r.ok(
        "ada",
        "/context persona \"warm and brief\" -> \"warm and precise\"",
    );
    assert_eq!(
        r.value("ada", "persona").unwrap(),
        "I am Ada, warm and precise."
    );
    let miss = r.one("ada", "/context persona \"cold\" -> \"hot\"");
    assert!(
        miss.text.contains("'cold' is not in block 'persona'"),
        "{}",
        miss.text
    );

    r.ok("ada", "/context archive human");
    let kind = |label: &str| {
        (r.exec.store().sqlite().unwrap().conn())
            .block("ada", label)
            .unwrap()
            .unwrap()
            .kind
    };
    assert_eq!(kind("human"), BlockKind::Archival);
    r.ok("ada", "/context load human");
    assert_eq!(kind("human"), BlockKind::Working);
    r.ok("ada", "/context swap human project_notes");
    assert_eq!(
        (kind("human"), kind("project_notes")),
        (BlockKind::Archival, BlockKind::Working)
    );
    let wrong = r.one("ada", "/context load persona");
    assert!(
        wrong.text.contains("is core, so it cannot become working"),
        "{}",
        wrong.text
    );
}

#[test]
fn search_domains_time_and_role() {
    let r = seeded();
    {
        let conn = r.exec.store().sqlite().unwrap().conn();
        conn.add_message(
            &NewMessage {
                agent: "ada",
                thread: "main",
                role: "user",
                content: "when is the launch?",
                lineage: &[],
                turn: None,
            },
            START - 20 * 86_400_000,
        )
        .unwrap();
        conn.add_message(
            &NewMessage {
                agent: "ada",
                thread: "main",
                role: "assistant",
                content: "the launch is in May",
                lineage: &[],
                turn: None,
            },
            START - 1000,
        )
        .unwrap();
        conn.add_archival("ada", "launch checklist drafted", START)
            .unwrap();
        conn.add_archival("worker", "launch rehearsal booked", START)
            .unwrap();
    }
    let all = r.ok("ada", "/search launch");
    assert!(
        all.text.contains("Archival memory (1)") && all.text.contains("Conversations (2)"),
        "{}",
        all.text
    );
    let conv = r.ok("ada", "/search in conversations launch");
    assert!(!conv.text.contains("Archival"), "{}", conv.text);
    let recent = r.ok("ada", "/search in conversations launch < 2 weeks");
    assert!(
        recent.text.contains("Conversations (1)") && recent.text.contains("May"),
        "{}",
        recent.text
    );
    let old = r.ok("ada", "/search in conversations launch > 2 weeks");
    assert!(old.text.contains("when is the"), "{}", old.text);
    let role = r.ok("ada", "/search launch role:user");
    assert!(
        role.text.contains("Conversations (1)") && role.text.contains("user"),
        "{}",
        role.text
    );
    // Other agents' archival memory is private unless the policy says
    // otherwise (the security tests cover the rules in full).
    let everyone = r.ok("ada", "/search in constellation rehearsal");
    assert!(everyone.text.contains("nothing found"), "{}", everyone.text);
    let none = r.ok("ada", "/search zeppelin");
    assert!(none.text.contains("nothing found"), "{}", none.text);
}

#[test]
fn messages_go_to_the_outbox_and_tell_reaches_the_agent() {
    let policy = Policy::from_toml(
        "[platforms.bluesky]\nagents = [\"*\"]\n[platforms.discord]\nagents = [\"ada\"]\n",
    )
    .unwrap();
    let r = rig(policy);
    r.ok("ada", "/reply sounds good");
    r.ok("ada", "/post bluesky \"hello world\"");
    r.ok("ada", "/dm @dana \"your invoice\"");
    r.ok("ada", "/send @discord @general \"hi all\"");
    r.ok("ada", "/send @user \"found it\"");
    let told = r.ok("ada", "/tell @worker \"please check the build\"");
    assert_eq!(told.text, "told worker");
    let items = (r.exec.store().sqlite().unwrap().conn()).outbox().unwrap();
    let channels: Vec<(&str, bool)> = items
        .iter()
        .map(|i| (i.channel.as_str(), i.public))
        .collect();
    assert_eq!(
        channels,
        vec![
            ("reply", false),
            ("bluesky", true),
            ("dm", false),
            ("discord", true),
            ("user", false)
        ]
    );
    let inbox = r.inbox("worker");
    assert_eq!(inbox[0].content, "please check the build");
    assert_eq!(
        (inbox[0].thread.as_str(), inbox[0].from.as_str()),
        ("agent:ada", "agent:ada")
    );
    let unknown = r.one("ada", "/tell @nobody \"hi\"");
    assert!(
        unknown.text.contains("there is no agent named nobody"),
        "{}",
        unknown.text
    );
    let flagged = r.ok("ada", "/uncertain \"sarcasm or not?\"");
    assert_eq!(flagged.text, "flagged for the partner");
    // The handler says a run is a flag for review; nothing else is one.
    assert!(flagged.flagged);
    assert!(!unknown.flagged);
    assert!(!r.ok("ada", "/recall insert \"a fact\"").flagged);
}

#[test]
fn calc_units_percentages_and_variables() {
    let r = rig(Policy::permissive());
    assert_eq!(r.ok("ada", "/calc 20% of 350").text, "20% of 350 = 70");
    assert!(
        r.ok("ada", "/calc 5 feet to meters")
            .text
            .contains("1.524 m")
    );
    r.ok("ada", "/calc radius = 5");
    let area = r.ok("ada", "/calc pi * radius^2");
    assert!(
        area.text.starts_with("pi * radius^2 = approx. 78.539"),
        "{}",
        area.text
    );
    let worker = r.one("worker", "/calc radius * 2");
    assert_eq!(
        worker.status,
        ActionStatus::Failed,
        "variables are per agent: {}",
        worker.text
    );
    let bad = r.one("ada", "/calc 1 +* ");
    assert!(bad.text.starts_with("I couldn't calculate"), "{}", bad.text);
}

#[test]
fn data_sources_list_read_search_monitor_pause() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "invoice 4471 overdue\nall good\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "nothing here\n").unwrap();
    let config = ExecConfig {
        data_sources: [("inbox".to_string(), dir.path().to_path_buf())].into(),
        ..ExecConfig::default()
    };
    let r = rig_with(Policy::permissive(), config);
    assert!(r.ok("ada", "/data list").text.contains("inbox:"));
    assert!(r.ok("ada", "/data read inbox").text.contains("2 files"));
    let found = r.ok("ada", "/data search inbox \"OVERDUE\"");
    assert!(
        found.text.contains("a.txt:1: invoice 4471 overdue"),
        "{}",
        found.text
    );
    assert!(
        r.ok("ada", "/data monitor inbox")
            .text
            .starts_with("watching inbox")
    );
    assert!(r.ok("ada", "/data pause inbox").text.starts_with("paused"));
    let unknown = r.one("ada", "/data read outbox");
    assert!(
        unknown.text.contains("the sources are inbox"),
        "{}",
        unknown.text
    );
}

#[test]
fn intentions_remind_complete_dismiss_list() {
    let r = rig(Policy::permissive());
    let set = r.ok("ada", "/remind \"in 20 minutes\" \"check the build\"");
    assert!(
        set.text
            .starts_with("reminder #1 set, due 2026-11-21T12:20:00Z"),
        "{}",
        set.text
    );
    r.ok("ada", "[[REMIND: next session | review notes]]");
    let listed = r.ok("ada", "/intentions");
    assert!(
        listed.text.contains("#1 [pending] check the build")
            && listed.text.contains("next session"),
        "{}",
        listed.text
    );
    r.ok("ada", "/complete 1 \"green\"");
    r.ok("ada", "/dismiss 2");
    let all = (r.exec.store().sqlite().unwrap().conn())
        .intentions("ada", false)
        .unwrap();
    assert_eq!(
        all.iter().map(|i| i.status.as_str()).collect::<Vec<_>>(),
        vec!["completed", "dismissed"]
    );
    let bad = r.one("ada", "/remind \"when pigs fly\" \"x\"");
    assert!(bad.text.contains("couldn't tell when"), "{}", bad.text);
    let none = r.one("ada", "/complete 99");
    assert!(none.text.contains("no intention #99"), "{}", none.text);
}

#[test]
fn pulse_and_halt_change_agent_state() {
    let policy = Policy::from_toml("[roles]\nanchor = \"supervisor\"\n").unwrap();
    let r = rig(policy);
    r.ok("ada", "/pulse 30m");
    let state = (r.exec.store().sqlite().unwrap().conn())
        .agent_state("ada")
        .unwrap();
    assert_eq!(state.pulse_secs, Some(1800));
    let asked = r.one("anchor", "/halt \"runaway loop\" !");
    assert_eq!(
        asked.status,
        ActionStatus::Pending,
        "! asks the partner: {}",
        asked.text
    );
    let id = asked.request.unwrap().id;
    let halted = r
        .exec
        .decide(
            &id,
            partner::policy::Decision::ApproveOnce,
            &partner::policy::Authority::Partner,
            None,
        )
        .unwrap();
    assert!(
        halted.text.starts_with("halted ada, anchor, worker"),
        "{}",
        halted.text
    );
    let stopped = r.one("ada", "/reply hi");
    assert_eq!(stopped.status, ActionStatus::Failed);
    assert!(
        stopped.text.contains("you are halted (runaway loop)"),
        "{}",
        stopped.text
    );
    r.exec.resume("ada").unwrap();
    r.ok("ada", "/reply hi");
}

#[test]
fn summarize_hands_text_back_and_chains_run_link_by_link() {
    let r = seeded();
    let reports = r.turn(
        "ada",
        "/recall project_notes -> /summarize -> /tell @worker",
    );
    assert_eq!(reports.len(), 3);
    assert!(
        reports[1]
            .text
            .starts_with("Summarize this:\nproject_notes"),
        "{}",
        reports[1].text
    );
    let told = r.inbox("worker");
    assert!(
        told[0].content.starts_with("Summarize this:"),
        "the chain passed the previous output on"
    );
    let stopped = r.turn("ada", "/recall append ghost \"x\" -> /tell @worker");
    assert_eq!(stopped[0].status, ActionStatus::Failed);
    assert_eq!(stopped[1].status, ActionStatus::NotRun);
}

#[test]
fn references_resolve_against_the_context() {
    let r = seeded();
    let mut ctx = TurnContext::new("ada", "main", "t1");
    ctx.last_message = Some("the user said hello".into());
    let report = r.exec.run_turn(&mut ctx, "/recall insert @last");
    assert_eq!(report.actions[0].status, ActionStatus::Executed);
    assert!(
        report.actions[0].canonical.contains("the user said hello"),
        "{}",
        report.actions[0].canonical
    );
    let report = r
        .exec
        .run_turn(&mut ctx, "/calc 2 + 2\n/recall insert @last.output");
    assert!(
        report.actions[1].canonical.contains("2 + 2 = 4"),
        "{}",
        report.actions[1].canonical
    );
    let mut fresh = TurnContext::new("ada", "empty", "t2");
    let report = r.exec.run_turn(&mut fresh, "/reply @last.output");
    assert_eq!(report.actions[0].status, ActionStatus::Failed);
    assert!(
        report.actions[0]
            .text
            .contains("couldn't resolve @last.output"),
        "{}",
        report.actions[0].text
    );
    let report = r.exec.run_turn(&mut fresh, "/summarize @thread");
    assert!(
        report.actions[0].text.contains("no messages yet"),
        "{}",
        report.actions[0].text
    );
}

#[test]
fn batches_run_together_and_report_together() {
    let r = seeded();
    let report = r.one(
        "ada",
        "/batch {\n/recall project_notes\n/calc 6 * 7\n/search alpha\n}",
    );
    assert_eq!(report.status, ActionStatus::Executed);
    assert_eq!(report.children.len(), 3);
    assert!(
        report.text.contains("1. /recall read project_notes") && report.text.contains("6 * 7 = 42"),
        "{}",
        report.text
    );
}

#[test]
fn parse_failures_are_recorded_for_alias_suggestions() {
    let r = rig(Policy::permissive());
    let mut ctx = TurnContext::new("ada", "main", "t1");
    let report = r.exec.run_turn(&mut ctx, "/frobnicate the notes");
    assert_eq!(report.errors.len(), 1);
    // What is kept, read as the table holds it.
    let (agent, text): (String, String) = r
        .exec
        .store()
        .sqlite()
        .unwrap()
        .conn()
        .query_row(
            "SELECT agent, text FROM parse_failures ORDER BY id DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(agent, "ada");
    assert_eq!(text, "/frobnicate the notes");
}
