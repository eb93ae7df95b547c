//! A request runs at most once. Deciders racing on the same requests —
//! threads with executors of their own (their own connections, as two
//! processes have) on one SQLite file and on one PostgreSQL database, and
//! two `partner pending approve` at once, with a daemon and without —
//! each request's command runs exactly once or never, the losers are told
//! who decided before anything runs, and the trace has one execution per
//! request. A claim left by a process that is gone is closed as
//! interrupted, never run again and never left waiting.

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use partner::engine::exec::{ActionStatus, ExecConfig, Executor, ShellConfig, TurnContext};
use partner::policy::{Authority, Decision, Policy};
use partner::store::memory::MemoryStore;

use crate::support::{self, Rng, daemon};

/// A constellation's executor on `store`, running commands in `work`.
fn executor(store: partner_engine::store::Store, work: &Path) -> Executor {
    let config = ExecConfig {
        shell: ShellConfig {
            dir: Some(work.to_path_buf()),
            ..ShellConfig::default()
        },
        agents: vec!["ada".into()],
        ..ExecConfig::default()
    };
    Executor::with_parts(
        Arc::new(store),
        Policy::from_toml("default = \"allow\"\n").unwrap(),
        config,
        Arc::new(partner::core::clock::SystemClock),
    )
    .unwrap()
}

/// `m` shell requests by ada, each appending a line to its own file.
fn ask(exec: &Executor, m: usize) -> Vec<String> {
    (0..m)
        .map(|i| {
            let mut ctx = TurnContext::new("ada", &format!("t{i}"), "main");
            let report = exec.run_turn(&mut ctx, &format!("/shell echo ran >> ran-{i}.log"));
            let action = &report.actions[0];
            assert_eq!(action.status, ActionStatus::Pending, "{action:?}");
            action.request.as_ref().unwrap().id.clone()
        })
        .collect()
}

/// `n` deciders, each with its own executor from `open`, deciding every
/// request in an order of its own (mostly approving); what each got.
fn race(
    open: &(dyn Fn() -> Executor + Sync),
    ids: &[String],
    n: usize,
    seed: u64,
) -> Vec<(String, Result<ActionStatus, String>)> {
    let barrier = Barrier::new(n);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for k in 0..n {
            let (barrier, results) = (&barrier, &results);
            s.spawn(move || {
                let exec = open();
                let mut rng = Rng(seed ^ ((k as u64 + 1) * 0x9e37_79b9));
                let mut order: Vec<&String> = ids.iter().collect();
                for i in (1..order.len()).rev() {
                    order.swap(i, rng.next(i + 1));
                }
                barrier.wait();
                for id in order {
                    let decision = if rng.next(8) == 0 {
                        Decision::Deny(None)
                    } else {
                        Decision::ApproveOnce
                    };
                    let got = exec
                        .decide(id, decision, &Authority::Partner, None)
                        .map(|r| r.status)
                        .map_err(|e| e.to_string());
                    results.lock().unwrap().push((id.clone(), got));
                }
            });
        }
    });
    results.into_inner().unwrap()
}

/// Every request ran once or never; the winners' word agrees with the
/// files and the trace; every loser was told who decided.
fn check(
    exec: &Executor,
    work: &Path,
    ids: &[String],
    got: &[(String, Result<ActionStatus, String>)],
) {
    let (trace, _) = exec.trace().unwrap();
    for (i, id) in ids.iter().enumerate() {
        let lines = std::fs::read_to_string(work.join(format!("ran-{i}.log")))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        let executed = trace
            .iter()
            .filter(|t| t.decision.request.as_deref() == Some(id.as_str()))
            .filter(|t| t.outcome == partner::store::trace::TraceOutcome::Executed)
            .count();
        let won: Vec<&Result<ActionStatus, String>> = got
            .iter()
            .filter(|(r, g)| r == id && g.is_ok())
            .map(|(_, g)| g)
            .collect();
        assert_eq!(won.len(), 1, "{id}: {} deciders won: {got:?}", won.len());
        assert!(lines <= 1, "{id} ran {lines} times");
        assert_eq!(
            executed, lines,
            "{id}: the trace says {executed}, the file {lines}"
        );
        let approved = matches!(won[0], Ok(ActionStatus::Executed));
        assert_eq!(
            approved,
            lines == 1,
            "{id}: {:?} but ran {lines} times",
            won[0]
        );
        for (_, g) in got.iter().filter(|(r, g)| r == id && g.is_err()) {
            let why = g.as_ref().unwrap_err();
            assert!(
                why.contains("already") && why.contains("partner"),
                "{id}: a loser was told {why:?}"
            );
        }
    }
}

#[test]
fn n_deciders_run_each_of_m_requests_once_or_never_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let db = dir.path().join("c.db");
    let open = || executor(MemoryStore::open(&db).unwrap().into(), &work);
    for (round, (n, m)) in [(4, 6), (6, 3), (2, 8)].into_iter().enumerate() {
        let first = open();
        let ids = ask(&first, m);
        let got = race(&open, &ids, n, 0x5eed + round as u64);
        check(&first, &work, &ids, &got);
        for i in 0..m {
            let _ = std::fs::remove_file(work.join(format!("ran-{i}.log")));
        }
        // The next round's files are new: the request ids go on.
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).unwrap();
    }
}

#[test]
fn n_deciders_run_each_of_m_requests_once_or_never_on_postgresql() {
    let Some(db) = support::postgres::scratch() else {
        panic!("this test needs PostgreSQL: set PARTNER_TEST_POSTGRES, as .ci/run does");
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let open = || {
        executor(
            partner::store::postgres::PgStore::connect(&db.url)
                .unwrap()
                .into(),
            &work,
        )
    };
    let first = open();
    let ids = ask(&first, 6);
    let got = race(&open, &ids, 4, 0xfeed);
    check(&first, &work, &ids, &got);
}

/// A claim held by a process that is gone: the request is closed as
/// interrupted, its agent told so, and it is neither run nor waiting.
#[test]
fn a_claim_whose_process_is_gone_is_closed_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let store = MemoryStore::open(dir.path().join("c.db")).unwrap();
    let exec = executor(store.into(), &work);
    let ids = ask(&exec, 1);
    // A process of this machine that no longer runs claimed it.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let gone = format!("{}:999999999:1", host.trim());
    let conn = rusqlite::Connection::open(dir.path().join("c.db")).unwrap();
    conn.execute(
        "UPDATE pending SET status = 'running', decided_by = 'partner', decision = 'approve_once', claimed_by = ?1",
        [&gone],
    )
    .unwrap();
    drop(conn);
    let second = exec.decide(&ids[0], Decision::ApproveOnce, &Authority::Partner, None);
    let why = second.unwrap_err().to_string();
    assert!(why.contains("already running"), "{why}");
    let closed = exec.settle_interrupted().unwrap();
    assert_eq!(closed.len(), 1, "{closed:?}");
    assert_eq!(closed[0].status, ActionStatus::Failed);
    assert!(
        closed[0].text.contains("whether it finished is not known"),
        "{closed:?}"
    );
    assert!(exec.pending().unwrap().is_empty());
    assert!(!work.join("ran-0.log").exists());
    // A claim of this very process is left alone.
    assert!(exec.settle_interrupted().unwrap().is_empty());
}

/// Two `partner pending approve` a moment apart, on SQLite without a
/// daemon and through one: the command runs once; the second is told who
/// decided, and runs nothing.
#[test]
fn two_approvals_a_moment_apart_run_the_command_once() {
    for served in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(
            dir.path().join("partner.toml"),
            "name = \"once\"\npolicy = \"policy.toml\"\n[shell]\ndir = \"work\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"1s\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("policy.toml"), "default = \"allow\"\n").unwrap();
        std::fs::write(
            dir.path().join("script.toml"),
            "[agents.ada]\npulses = [\"/shell echo ran >> count; sleep 4\"]\n",
        )
        .unwrap();
        let _daemon = if served {
            let d = daemon::serve(dir.path());
            wait_waiting(dir.path());
            Some(d)
        } else {
            let (code, _, err) = support::headless(dir.path(), "3s", &[]);
            assert_eq!(code, Some(0), "{err}");
            None
        };
        let approve = || {
            std::process::Command::new(env!("CARGO_BIN_EXE_partner"))
                .current_dir(dir.path())
                .args(["pending", "--db", "c.db", "approve", "r1"])
                .output()
                .unwrap()
        };
        let (first, second) = std::thread::scope(|s| {
            let first = s.spawn(|| (approve(), Instant::now()));
            std::thread::sleep(Duration::from_millis(500));
            let second = (approve(), Instant::now());
            (first.join().unwrap(), second)
        });
        let ((first, first_ended), (second, second_ended)) = (first, second);
        let count = std::fs::read_to_string(work.join("count")).unwrap_or_default();
        assert_eq!(count.lines().count(), 1, "served {served}: ran {count:?}");
        let said = |o: &std::process::Output| {
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        };
        // Whichever came first ran it; the other was told, and said so
        // while the command still ran.
        let (won, lost, won_ended, lost_ended) = if !said(&first).contains("already") {
            (&first, &second, first_ended, second_ended)
        } else {
            (&second, &first, second_ended, first_ended)
        };
        assert!(won.status.success(), "{}", said(won));
        assert!(!said(won).contains("already"), "{}", said(won));
        assert!(
            said(lost).contains("already running") && said(lost).contains("partner"),
            "served {served}: the other was told {:?}",
            said(lost)
        );
        assert!(
            lost_ended < won_ended,
            "served {served}: the other waited for the run to end before saying so"
        );
    }
}

fn wait_waiting(dir: &Path) {
    let started = Instant::now();
    loop {
        let (_, out, _) =
            support::partner_in(dir, &["pending", "--db", "c.db", "list", "--json"], "");
        if out.contains("\"r1\"") {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no request");
        std::thread::sleep(Duration::from_millis(100));
    }
}
