//! A daemon (`partner serve`, a real process) and its clients over the
//! Unix socket: events per second delivered to 1, 4 and 16 subscribed
//! clients (a scripted reply of 2,000 words is 2,000 token events, timed
//! until every client has read the reply's end), and the latency of a
//! decision: from a client's `decide` to the executed action's event
//! reaching it, and to the continuation of the agent's turn that waited.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use partner::policy::Decision;
use partner::protocol::client::Client;
use partner::protocol::{Op, Sequenced, ServerMsg};
use partner::runtime::Event;

const WORDS: usize = 2_000;

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &Path) -> Daemon {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"bench\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"24h\"\n\n[[agents]]\nname = \"bo\"\nmodel = \"scripted:x\"\npulse = \"24h\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("policy.toml"), "default = \"allow\"\n").unwrap();
    let words = "word ".repeat(WORDS);
    std::fs::write(
        dir.join("script.toml"),
        format!(
            "[agents.ada]\nunexpected = \"{words}\"\n[agents.bo]\nunexpected = \"/recall insert \\\"noted\\\" ?ask\"\n"
        ),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_partner"))
        .current_dir(dir)
        .args(["serve", "--config", "partner.toml", "--db", "b.db"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while Client::connect(&dir.join("b.db.sock"), "bench").is_err() {
        assert!(started.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(50));
    }
    Daemon(child)
}

/// A subscribed client on a thread: says on `done` each time it has read
/// a reply's end, and how many events it read for it.
fn listener(socket: &Path, done: mpsc::Sender<usize>) {
    let mut client = Client::connect(socket, "bench").unwrap();
    client.subscribe().unwrap();
    client.set_timeout(Duration::from_secs(60)).unwrap();
    std::thread::spawn(move || {
        // Events by number: a snapshot (sent when the client fell behind a
        // burst) carries the recent ones it has not seen.
        let mut count = 0;
        let mut last = 0u64;
        loop {
            let events = match client.read() {
                Ok(ServerMsg::Event(e)) => vec![e],
                Ok(ServerMsg::Snapshot { snapshot }) => snapshot.recent,
                Ok(_) => Vec::new(),
                Err(_) => return,
            };
            for Sequenced { seq, event, .. } in events {
                if seq <= last {
                    continue;
                }
                last = seq;
                count += 1;
                if matches!(event, Event::ReplyFinished { .. }) {
                    if done.send(count).is_err() {
                        return;
                    }
                    count = 0;
                }
            }
        }
    });
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let _daemon = serve(dir.path());
    let socket = dir.path().join("b.db.sock");
    let mut control = Client::connect(&socket, "control").unwrap();

    let mut group = c.benchmark_group("daemon");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    let mut clients = 0;
    let (tx, rx) = mpsc::channel();
    for n in [1usize, 4, 16] {
        while clients < n {
            listener(&socket, tx.clone());
            clients += 1;
        }
        // One reply to learn how many events it is.
        control
            .request(Op::Message {
                agent: "ada".into(),
                text: "talk".into(),
            })
            .unwrap();
        let per_client = (0..n).map(|_| rx.recv().unwrap()).max().unwrap();
        group.throughput(Throughput::Elements((per_client * n) as u64));
        group.bench_function(format!("events_to_{n}_clients"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let started = Instant::now();
                    control
                        .request(Op::Message {
                            agent: "ada".into(),
                            text: "talk".into(),
                        })
                        .unwrap();
                    for _ in 0..n {
                        rx.recv_timeout(Duration::from_secs(60)).unwrap();
                    }
                    total += started.elapsed();
                }
                total
            })
        });
    }
    group.finish();

    // A decision: the request made by running a line as the agent, then
    // timed from `decide` until the executed action's event arrives.
    let mut watcher = Client::connect(&socket, "watcher").unwrap();
    watcher.subscribe().unwrap();
    let mut group = c.benchmark_group("daemon");
    group.sample_size(20);
    group.bench_function("decision_to_effect", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                control
                    .request(Op::Run {
                        agent: "ada".into(),
                        text: "/recall insert \"noted\" ?ask".into(),
                    })
                    .unwrap();
                let id = request_of(&mut watcher, "ada");
                let started = Instant::now();
                approve(&mut control, id);
                next_event(&mut watcher, |e| matches!(e, Event::ActionExecuted { .. }));
                total += started.elapsed();
            }
            total
        })
    });
    // The partner's decision on a request an agent's turn waits on, timed
    // from `decide` until the agent's continuation starts (what a console
    // adds on top is a keypress handled in microseconds and one write to
    // the socket).
    group.bench_function("decision_to_continuation", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                control
                    .request(Op::Message {
                        agent: "bo".into(),
                        text: "note it".into(),
                    })
                    .unwrap();
                let id = request_of(&mut watcher, "bo");
                let started = Instant::now();
                approve(&mut control, id);
                next_event(&mut watcher, |e| {
                    matches!(e, Event::TurnStarted {
                        agent,
                        kind: partner::runtime::provider::PromptKind::Continuation,
                        ..
                    } if agent == "bo")
                });
                total += started.elapsed();
            }
            total
        })
    });
    group.finish();
}

/// Reads events until one `is` wants.
fn next_event(watcher: &mut Client, is: impl Fn(&Event) -> bool) -> Event {
    loop {
        if let ServerMsg::Event(Sequenced { event, .. }) = watcher.read().unwrap()
            && is(&event)
        {
            return event;
        }
    }
}

/// The id of the next permission request `agent` makes.
fn request_of(watcher: &mut Client, agent: &str) -> String {
    let event = next_event(
        watcher,
        |e| matches!(e, Event::PermissionRequested { agent: a, .. } if a == agent),
    );
    match event {
        Event::PermissionRequested { id, .. } => id,
        _ => unreachable!("next_event returned what was asked for"),
    }
}

/// The partner approves request `id` once.
fn approve(control: &mut Client, id: String) {
    control
        .request(Op::Decide {
            request: id,
            decision: Decision::ApproveOnce,
        })
        .unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
