//! The console says what is so, in a real terminal: a model call that
//! failed is a failed turn with its cause one key away, at 80×24. The
//! partner's own command (`!`) is judged, asked about with its risk and
//! run as the partner — never a request in the queue. A waiting command is
//! shown and refused as the host that would run it judged it.

use crate::support;

use std::time::Duration;

use crossterm::event::KeyCode;
use partner::engine::exec::{ExecConfig, PARTNER};
use partner::policy::Policy;
use partner::tui::app::{Command, Overlay};
use partner::tui::backend::{BackendOp, Reply};
use partner::tui::panes::{OutputView, Pane};
use support::driving::*;
use support::tmux::Tmux;

/// An executor whose commands run in its own temporary directory.
fn shell_rig() -> support::Rig {
    let mut config = ExecConfig::default();
    config.shell.dir = Some(tempfile::tempdir().unwrap().keep());
    support::rig_with(Policy::permissive(), config)
}

#[test]
fn the_partners_own_command_is_judged_asked_and_run_outside_the_queue() {
    let rig = shell_rig();
    let mut app = wide();
    assert_eq!(app.queue.selected.as_deref(), Some("r1"));
    key(&mut app, KeyCode::Char('!'));
    typed(&mut app, r"printf 'a\tb\n'");
    let commands = key(&mut app, KeyCode::Enter);
    let [Command::Op(BackendOp::Host(partner::protocol::Op::PlanCommand { text }))] =
        commands.as_slice()
    else {
        panic!("only a plan is asked for: {commands:?}");
    };
    app.on_reply(Reply::CommandPlan(rig.exec.plan_command(text)));
    let shown = screen(&mut app, 80, 24);
    let flat = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("risk LOW"), "{shown}");
    assert!(flat.contains("y: yes"), "the keys fit at 80×24: {shown}");
    // `a` is no answer: nothing runs and nothing is decided.
    let commands = key(&mut app, KeyCode::Char('a'));
    assert!(commands.is_empty(), "{commands:?}");
    assert!(matches!(app.overlay, Overlay::None));
    app.on_reply(Reply::CommandPlan(rig.exec.plan_command(text)));
    let commands = key(&mut app, KeyCode::Char('y'));
    assert!(decisions(&commands).is_empty());
    let [Command::Op(BackendOp::Host(partner::protocol::Op::RunCommand { command, .. }))] =
        commands.as_slice()
    else {
        panic!("the command runs: {commands:?}");
    };
    assert_eq!(app.queue.selected.as_deref(), Some("r1"));
    let report = rig.exec.run_partner_command(command, None).unwrap();
    app.on_reply(Reply::CommandRan(OutputView::ended(command, Ok(&report))));
    let shown = screen(&mut app, 80, 24);
    assert!(
        shown.contains("a       b"),
        "tabs keep their columns: {shown}"
    );
    assert!(shown.contains("exit 0"), "{shown}");
    let commands = key(&mut app, KeyCode::Char('y'));
    assert!(
        matches!(commands.as_slice(), [Command::Copy(text)] if text == "a       b\n"),
        "{commands:?}"
    );
    // Recorded as the partner's, outside any request.
    let trace = rig.trace();
    let record = trace.last().unwrap();
    assert_eq!(
        (record.agent.as_str(), record.verb.as_str()),
        (PARTNER, "shell")
    );
    assert_eq!(record.data["stdout"], "a\tb\n");
    assert!(record.decision.request.is_none());
    assert!(rig.exec.pending().unwrap().is_empty());
}

#[test]
fn the_partner_stops_their_own_command_with_esc() {
    let rig = shell_rig();
    let mut app = wide();
    app.on_reply(Reply::CommandPlan(rig.exec.plan_command("sleep 30")));
    let commands = key(&mut app, KeyCode::Char('y'));
    let [Command::Op(BackendOp::Host(partner::protocol::Op::RunCommand { command, run }))] =
        commands.as_slice()
    else {
        panic!("the command runs: {commands:?}");
    };
    let (command, run) = (command.clone(), *run);
    assert!(screen(&mut app, 80, 24).contains("Esc stops"));
    let commands = key(&mut app, KeyCode::Esc);
    assert!(
        commands.iter().any(|c| matches!(
            c,
            Command::Op(BackendOp::Host(partner::protocol::Op::StopCommand { run: asked }))
                if *asked == run
        )),
        "Esc asked the host to stop that run: {commands:?}"
    );
    assert!(matches!(app.overlay, Overlay::Output(_)), "the view stays");
    // The host stops the run it was asked to: here, the executor's cancel.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    stop.send(true).unwrap();
    let started = std::time::Instant::now();
    let report = rig
        .exec
        .run_partner_command(&command, Some(&stopped))
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    app.on_reply(Reply::CommandRan(OutputView::ended(&command, Ok(&report))));
    let shown = screen(&mut app, 80, 24);
    assert!(shown.contains("you stopped it"), "{shown}");
    key(&mut app, KeyCode::Esc);
    assert!(
        matches!(app.overlay, Overlay::None),
        "Esc closes it once ended"
    );
    app.on_reply(Reply::Pending(Vec::new(), Default::default()));
    let commands = key(&mut app, KeyCode::Char(':'));
    assert!(commands.is_empty());
    typed(&mut app, "output");
    key(&mut app, KeyCode::Enter);
    assert!(
        matches!(app.overlay, Overlay::Output(_)),
        ":output shows it again"
    );
}

#[test]
fn a_blocked_command_of_the_partners_is_never_asked_about_nor_run() {
    let rig = shell_rig();
    let mut app = wide();
    let blocked = "cat ~/.ssh/id_partner_test_absent";
    let plan = rig.exec.plan_command(blocked);
    app.on_reply(Reply::CommandPlan(plan));
    assert!(matches!(app.overlay, Overlay::None), "nothing is asked");
    let notice = app.notice.clone().unwrap();
    assert!(
        notice.warning && notice.text.starts_with("blocked, not run"),
        "{notice:?}"
    );
    // Sent anyway (a stale console, a hostile client): refused and recorded.
    let report = rig.exec.run_partner_command(blocked, None).unwrap();
    assert_eq!(report.status.as_str(), "failed", "{report:?}");
    assert!(report.text.contains("blocked, not run"), "{}", report.text);
    assert!(
        report.data["stdout"].is_null(),
        "it did not run: {report:?}"
    );
    // A request in words the system cannot propose for says so.
    let plan = rig.exec.plan_command("could you tidy things up a little?");
    assert!(plan.runnable().is_err(), "{plan:?}");
}

#[test]
fn a_failed_model_call_is_a_failed_turn_with_its_cause_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: the model server is down.
    let port = support::closed_port();
    std::fs::write(
        dir.path().join("partner.toml"),
        format!(
            "name = \"truth\"\n[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nretries = 0\n\n[[agents]]\nname = \"ada\"\nmodel = \"local:m\"\npulse = \"off\"\n"
        ),
    )
    .unwrap();
    let command = format!(
        "cd {} && env TERM=xterm-256color {} run --config partner.toml --db c.db --no-bell; exec sh",
        dir.path().display(),
        env!("CARGO_BIN_EXE_partner"),
    );
    let tmux = Tmux::sized("failed-turn", &command, 80, 24);
    tmux.wait("the console", Duration::from_secs(20), |s| {
        s.contains("Turns")
    });
    tmux.keys(&[":", "msg ada hello there", "Enter"]);
    let screen = tmux.wait("the failed turn", Duration::from_secs(20), |s| {
        s.contains("failed")
    });
    assert!(
        !screen
            .lines()
            .any(|l| l.contains("ada") && l.contains("response …")),
        "the turn still looks in progress:\n{screen}"
    );
    // The notification, opened whole, gives the cause and what to do.
    tmux.keys(&["N"]);
    tmux.wait("the notifications", Duration::from_secs(5), |s| {
        s.contains("Notifications")
    });
    tmux.keys(&["Enter"]);
    let whole = tmux.wait("the cause", Duration::from_secs(5), |s| {
        s.contains("What to do")
    });
    let flat = whole.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("refused") || flat.contains("Connection"),
        "the cause is not shown:\n{whole}"
    );
    assert!(flat.contains(&format!("127.0.0.1:{port}")), "{whole}");
}

/// At 80×24 every pane and overlay keeps `? help` on the status bar, and
/// what the console says is there whole: a message too long for the bar
/// wraps onto a line of its own above it, a question is as tall as it
/// needs. Status messages do not count as unseen problems.
#[test]
fn every_pane_and_overlay_fits_80x24() {
    let mut app = support::console::scene("dark");
    // The screen's words in reading order; inside a popup, only its own.
    let flat = |screen: &str| -> String {
        screen
            .lines()
            .map(|l| {
                let l = l.trim_matches('"');
                match (l.find('║'), l.rfind('║')) {
                    (Some(a), Some(b)) if a < b => &l[a + '║'.len_utf8()..b],
                    _ => l.trim_matches(|c| c == '┃' || c == ' '),
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let check = |app: &mut partner::tui::app::App, what: &str, whole: &[&str]| {
        let shown = screen(app, 80, 24);
        let last = shown.lines().nth(23).unwrap_or("");
        assert!(
            last.contains("? help"),
            "{what}: the footer lost `? help`:\n{shown}"
        );
        for text in whole {
            assert!(
                flat(&shown).contains(text),
                "{what}: `{text}` is not whole:\n{shown}"
            );
        }
    };
    for pane in [Pane::Turns, Pane::Pending, Pane::Memory, Pane::Trace] {
        app.focus = pane;
        check(&mut app, &format!("{pane:?}"), &[]);
    }
    app.focus = Pane::Turns;
    key(&mut app, KeyCode::Enter);
    check(
        &mut app,
        "Enter in turns",
        &["select an action first ([ and ] move between actions)"],
    );
    app.focus = Pane::Pending;
    key(&mut app, KeyCode::Char('a'));
    check(&mut app, "a", &["approve once r1 in 3s — U takes it back"]);
    key(&mut app, KeyCode::Char('A'));
    check(
        &mut app,
        "A",
        &[
            "Approve r2 and make a standing rule: from now on scout's /recall runs without asking?",
            "y: yes",
        ],
    );
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('i'));
    check(
        &mut app,
        "i in the queue",
        &["i works in the Memory pane (Tab moves there)"],
    );
    key(&mut app, KeyCode::Char(':'));
    typed(&mut app, "filter verb nosuch");
    key(&mut app, KeyCode::Enter);
    check(
        &mut app,
        ":filter verb nosuch",
        &["no verb 'nosuch' in the dialect or the trace; :filter clear drops every filter"],
    );
    for overlay in ['N', '?'] {
        key(&mut app, KeyCode::Char(overlay));
        check(&mut app, &format!("{overlay}"), &[]);
        key(&mut app, KeyCode::Esc);
    }
    assert_eq!(
        app.model.unseen, 0,
        "status messages are no problems to count"
    );
    // A message longer than three lines ends with where it is whole.
    app.warn("word ".repeat(80));
    check(&mut app, "a very long message", &["… (N shows it whole)"]);
}

/// The console holds a window of a long trace (its memory does not grow
/// with the database), and a filter still finds a record older than the
/// window, read from the database page by page; until the start of the
/// trace is reached it does not say that nothing matches.
#[test]
fn the_trace_pane_holds_a_window_and_its_filter_reaches_older_records() {
    use partner::store::trace::query::{newest_after, older};
    use partner::tui::model::MAX_TRACE;
    let dir = tempfile::tempdir().unwrap();
    let store = partner::store::memory::MemoryStore::open(dir.path().join("long.db")).unwrap();
    let total = 3 * MAX_TRACE as u64 / 2;
    store
        .transaction(|tx| -> Result<(), partner::store::memory::MemoryError> {
            for seq in 1..=total {
                let agent = if seq == 3 {
                    "rare"
                } else {
                    ["sage", "anchor"][(seq % 2) as usize]
                };
                let r = support::console::record(
                    seq,
                    agent,
                    &format!("/recall read note_{seq}"),
                    partner::store::trace::TraceOutcome::Executed,
                    "note (archival, v1)",
                );
                partner::store::trace::store::insert(tx, &r)?;
            }
            Ok(())
        })
        .unwrap();
    let mut app = wide();
    let (records, restart) = newest_after(&store.read(), 0, MAX_TRACE).unwrap();
    assert!(restart, "older records were left out");
    app.on_reply(Reply::Trace(records, total, restart));
    assert_eq!(app.model.trace.len(), MAX_TRACE);
    assert_eq!(app.model.trace[0].seq, total - MAX_TRACE as u64 + 1);

    app.focus = Pane::Trace;
    app.trace.agent = Some("rare".into());
    let shown = screen(&mut app, 120, 30);
    assert!(!shown.contains("No record matches"), "{shown}");
    assert!(shown.contains("Reading older records"), "{shown}");
    let mut pages = 0;
    let mut rounds = 0;
    let shown = loop {
        rounds += 1;
        let asked: Vec<(partner::store::trace::query::TraceFilter, u64)> = app
            .tick(support::console::NOW, 0.1)
            .into_iter()
            .filter_map(|c| match c {
                Command::Op(BackendOp::Host(partner::protocol::Op::OlderTrace {
                    filter,
                    before,
                })) => Some((filter, before)),
                _ => None,
            })
            .collect();
        for (filter, before) in asked {
            pages += 1;
            let page = older(&store.read(), before, &filter, 1_000).unwrap();
            app.on_reply(Reply::OlderTrace(filter, before, page));
        }
        let shown = screen(&mut app, 120, 30);
        if shown.contains(" t3 ") || rounds > 20 {
            break shown;
        }
    };
    assert!(
        shown.contains(" t3 ") && shown.contains(" rare "),
        "{shown}"
    );
    assert!(pages >= 1, "the record came from the database");
    assert!(app.model.trace.len() <= MAX_TRACE);

    // A filter nothing admits says so once the start was reached.
    app.trace.agent = Some("nobody".into());
    for _ in 0..5 {
        screen(&mut app, 120, 30);
        for c in app.tick(support::console::NOW, 0.1) {
            if let Command::Op(BackendOp::Host(partner::protocol::Op::OlderTrace {
                filter,
                before,
            })) = c
            {
                let page = older(&store.read(), before, &filter, 1_000).unwrap();
                app.on_reply(Reply::OlderTrace(filter, before, page));
            }
        }
    }
    let shown = screen(&mut app, 120, 30);
    assert!(shown.contains("No record matches the filters"), "{shown}");

    // A page that cannot be read is said to be so, not awaited forever.
    app.trace.agent = Some("ghost".into());
    screen(&mut app, 120, 30);
    let asked: Vec<_> = app
        .tick(support::console::NOW, 0.1)
        .into_iter()
        .filter_map(|c| match c {
            Command::Op(BackendOp::Host(partner::protocol::Op::OlderTrace { filter, before })) => {
                Some((filter, before))
            }
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1, "one page is asked for");
    for (filter, before) in asked {
        app.on_reply(Reply::OlderTraceFailed(
            filter,
            before,
            "disk I/O error".into(),
        ));
    }
    let shown = screen(&mut app, 120, 30);
    assert!(
        shown.contains("not be read (disk I/O error)") && !shown.contains("Reading older records"),
        "{shown}"
    );
}

/// A waiting command is shown and refused as the process that would run it
/// judged it — never as the console's own machine would: `ls` here is
/// harmless, but the host said it is blocked and cannot be sandboxed.
/// The queue holding r1, ada's `/shell ls` asked `age_s` ago, as the host
/// judged it: `assessment`, and no sandbox ("the host has no landlock").
fn waiting_ls(age_s: i64, assessment: partner::gate::Assessment) -> Reply {
    use partner::tui::backend::{CommandPreview, Previews};
    let r1 = support::console::request(
        "r1",
        "ada",
        "/shell ls",
        partner::policy::Authority::Partner,
        "a shell command",
        age_s,
    );
    let mut previews = Previews::default();
    previews.commands.insert(
        "r1".into(),
        CommandPreview {
            line: "ls".into(),
            assessment,
            sandbox: Err("the host has no landlock".into()),
        },
    );
    Reply::Pending(vec![r1], previews)
}

#[test]
fn a_waiting_command_is_shown_as_the_host_judged_it() {
    use partner::gate::{Assessment, Risk};
    let mut app = support::console::scene("dark");
    app.size = (180, 48);
    app.on_reply(waiting_ls(
        5,
        Assessment {
            risk: Risk::Blocked,
            reasons: vec!["the host's own finding".into()],
        },
    ));
    let shown = screen(&mut app, 180, 48);
    assert!(shown.contains("BLOCKED"), "{shown}");
    assert!(shown.contains("the host's own finding"), "{shown}");
    assert!(
        !shown.contains("LOW"),
        "the console judged it itself: {shown}"
    );
    let sent = key(&mut app, KeyCode::Char('a'));
    assert!(
        decisions(&sent).is_empty(),
        "a blocked command was approved"
    );
    let shown = screen(&mut app, 180, 48);
    assert!(shown.contains("cannot be approved"), "{shown}");
    // The same command judged harmless where it runs, but unsandboxed
    // there: approving asks once more, naming the host's reason (a fresh
    // console, whose selected request is r1).
    let mut app = support::console::scene("dark");
    app.size = (180, 48);
    app.on_reply(waiting_ls(
        4,
        Assessment {
            risk: Risk::Low,
            reasons: Vec::new(),
        },
    ));
    assert_eq!(app.queue.selected.as_deref(), Some("r1"));
    let sent = key(&mut app, KeyCode::Char('a'));
    assert!(decisions(&sent).is_empty(), "approved without asking again");
    let shown = screen(&mut app, 180, 48);
    assert!(
        shown.contains("NOT SANDBOXED (the host has no landlock)"),
        "{shown}"
    );
}
