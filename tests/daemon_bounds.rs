//! The daemon against hostile sizes and hostile peers, with real
//! processes: a snapshot never outgrows the line limit (long texts are cut
//! with a marker and fetched whole on demand), and connections that never
//! say hello cannot lock the owner out.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use partner::agent::Event;
use partner::protocol::client::Client;
use partner::protocol::{MAX_LINE, Op, ServerMsg, Status};
use support::daemon::serve;

/// One scripted agent that answers every message with `reply`.
fn answering(dir: &Path, reply: &str) {
    std::fs::write(
        dir.join("partner.toml"),
        "name = \"bounds\"\npolicy = \"policy.toml\"\n[providers.scripted]\nkind = \"scripted\"\nscript = \"script.toml\"\n\n[[agents]]\nname = \"ada\"\nmodel = \"scripted:x\"\npulse = \"off\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("policy.toml"), "default = \"allow\"\n").unwrap();
    std::fs::write(
        dir.join("script.toml"),
        format!("[agents.ada]\nunexpected = \"{reply}\"\n"),
    )
    .unwrap();
}

fn status(client: &mut Client) -> Status {
    let (_, data) = client.request(Op::Status).unwrap();
    serde_json::from_value(data.unwrap()).unwrap()
}

/// Waits until `client` has read `n` finished replies.
fn replies_finished(client: &mut Client, n: usize, within: Duration) {
    let started = Instant::now();
    let mut seen = 0;
    while seen < n {
        assert!(
            started.elapsed() < within,
            "only {seen} of {n} replies ended"
        );
        if let Ok(ServerMsg::Event(e)) = client.read()
            && matches!(e.event, Event::ReplyFinished { .. })
        {
            seen += 1;
        }
    }
}

#[test]
fn a_console_attaches_after_ten_long_replies_and_two_long_messages_and_fetches_them_whole() {
    let dir = tempfile::tempdir().unwrap();
    // One 120 KB word: one token event and one finished reply of 120 KB.
    let long = "x".repeat(120_000);
    answering(dir.path(), &long);
    let daemon = serve(dir.path());
    let mut watcher = Client::connect(&daemon.socket, "watcher").unwrap();
    watcher.subscribe().unwrap();
    assert!(matches!(
        watcher.read().unwrap(),
        ServerMsg::Snapshot { .. }
    ));
    let mut control = Client::connect(&daemon.socket, "control").unwrap();
    // One at a time, so each message gets its own reply: two of 600 KB,
    // then eight short ones.
    for i in 0..10 {
        let text = if i < 2 {
            format!("{i}{}", "m".repeat(600_000))
        } else {
            format!("go {i}")
        };
        control
            .request(Op::Message {
                agent: "ada".into(),
                text,
            })
            .unwrap();
        replies_finished(&mut watcher, 1, Duration::from_secs(60));
    }

    // A new console attaches: its snapshot arrives, within the line limit.
    let mut console = Client::connect(&daemon.socket, "console").unwrap();
    console.subscribe().unwrap();
    let snapshot = match console.read().expect("a snapshot within the line limit") {
        ServerMsg::Snapshot { snapshot } => snapshot,
        other => panic!("expected a snapshot, got {other:?}"),
    };
    let size = partner::protocol::line(&ServerMsg::Snapshot {
        snapshot: snapshot.clone(),
    })
    .len();
    assert!(size <= MAX_LINE, "a snapshot of {size} bytes");
    let finished: Vec<_> = snapshot
        .recent
        .iter()
        .filter(|e| matches!(e.event, Event::ReplyFinished { .. }))
        .collect();
    assert_eq!(finished.len(), 10, "every reply is in the snapshot");
    for e in &finished {
        let Event::ReplyFinished { text, .. } = &e.event else {
            unreachable!()
        };
        assert!(text.len() < 120_000, "a long text is cut in a snapshot");
        assert!(
            text.contains("cut"),
            "the cut is marked: {}",
            &text[text.len() - 80..]
        );
        assert!(e.cut > 0, "the event says how much was cut");
    }
    // On demand, the whole event comes back.
    let whole = partner::protocol::client::fetch_event(&mut console, finished[3].seq).unwrap();
    let Event::ReplyFinished { text, .. } = whole else {
        panic!("{whole:?}")
    };
    assert_eq!(text, long);
    let message = snapshot
        .recent
        .iter()
        .find(|e| matches!(&e.event, Event::MessageReceived { from, .. } if from == "partner"))
        .expect("the partner's message is in the snapshot");
    let Event::MessageReceived { text, .. } =
        partner::protocol::client::fetch_event(&mut console, message.seq).unwrap()
    else {
        panic!()
    };
    assert_eq!(text.len(), 600_001);

    // A console's link fetches the cut texts whole: it shows every
    // reply as the model wrote it.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let whole_replies = runtime.block_on(async {
        use partner::tui::backend::link::RuntimeLink;
        let link = partner::tui::backend::remote::RemoteRuntime::connect(&daemon.socket)
            .await
            .unwrap();
        let mut events = link.events();
        let mut replies = Vec::new();
        while replies.len() < 10 {
            match tokio::time::timeout(Duration::from_secs(30), events.recv()).await {
                Ok(Ok(Event::ReplyFinished { text, .. })) => replies.push(text),
                Ok(Ok(_)) => {}
                other => panic!("the console's link stopped: {other:?}"),
            }
        }
        replies
    });
    assert!(whole_replies.iter().all(|t| *t == long));

    // The daemon still answers.
    assert_eq!(status(&mut control).agents.len(), 1);
}
