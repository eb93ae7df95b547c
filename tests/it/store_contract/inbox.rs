//! The inbox behaves alike on both back ends: messages wait in the order
//! sent until settled, a turn's beginnings are counted, a greeting goes
//! only to an agent never spoken to (once, however many daemons start at
//! once), and what a cut turn stored is taken back.

use super::{NewMessage, T, postgres};
use partner::store::memory::inbox::{NewDelivery, Settled};
use partner_engine::store::{Store, StoreAt};

fn delivery<'a>(agent: &'a str, text: &'a str) -> NewDelivery<'a> {
    NewDelivery {
        agent,
        thread: "main",
        from: "user",
        content: text,
        lineage: &[],
    }
}

/// A fresh store of each back end, and what it is called.
fn each() -> Vec<(
    tempfile::TempDir,
    Option<postgres::Scratch>,
    Store,
    &'static str,
)> {
    let dir = tempfile::tempdir().unwrap();
    let file = Store::open(&StoreAt::File(dir.path().join("c.db"))).unwrap();
    let mut out = vec![(dir, None, file, "sqlite")];
    if let Some(db) = postgres::scratch() {
        let store = Store::open(&StoreAt::Postgres(db.url.clone())).unwrap();
        out.push((tempfile::tempdir().unwrap(), Some(db), store, "postgres"));
    }
    out
}

#[test]
fn messages_wait_in_order_until_settled_alike_on_both() {
    for (_dir, _db, store, on) in each() {
        let ids: Vec<i64> = ["one", "two", "three"]
            .iter()
            .enumerate()
            .map(|(i, text)| {
                store
                    .transaction(|tx| tx.deliver(&delivery("ada", text), T + i as i64))
                    .unwrap()
            })
            .collect();
        store
            .transaction(|tx| tx.deliver(&delivery("bo", "elsewhere"), T))
            .unwrap();
        let waiting = store.read(|tx| tx.waiting_for("ada", 2)).unwrap();
        let texts: Vec<&str> = waiting.iter().map(|d| d.content.as_str()).collect();
        assert_eq!(texts, ["one", "two"], "{on}: oldest first, a page at most");
        // Begun twice (the first turn was cut short), then answered.
        assert_eq!(store.transaction(|tx| tx.begin(ids[0])).unwrap(), Some(1));
        assert_eq!(store.transaction(|tx| tx.begin(ids[0])).unwrap(), Some(2));
        assert!(
            store
                .transaction(|tx| tx.settle(ids[0], Settled::Answered, T + 9))
                .unwrap()
        );
        assert!(
            !store
                .transaction(|tx| tx.settle(ids[0], Settled::Answered, T + 9))
                .unwrap(),
            "{on}: settled once"
        );
        assert_eq!(
            store.transaction(|tx| tx.begin(ids[0])).unwrap(),
            None,
            "{on}: a settled message is not begun again"
        );
        let counts = store.read(|tx| tx.waiting_counts()).unwrap();
        assert_eq!(
            counts,
            [("ada".to_string(), 2), ("bo".to_string(), 1)],
            "{on}"
        );
    }
}

#[test]
fn a_greeting_goes_once_to_an_agent_never_spoken_to_alike_on_both() {
    for (_dir, db, store, on) in each() {
        let hello = delivery("ada", "good morning");
        assert!(store.transaction(|tx| tx.greet(&hello, T)).unwrap(), "{on}");
        assert!(
            !store.transaction(|tx| tx.greet(&hello, T)).unwrap(),
            "{on}"
        );
        // An agent with a conversation already is not greeted.
        let said = NewMessage {
            agent: "bo",
            thread: "main",
            role: "assistant",
            content: "hi",
            lineage: &[],
            turn: None,
        };
        store.transaction(|tx| tx.add_message(&said, T)).unwrap();
        let hello_bo = delivery("bo", "good morning");
        assert!(
            !store.transaction(|tx| tx.greet(&hello_bo, T)).unwrap(),
            "{on}"
        );
        // Daemons starting at once greet a new agent once between them.
        if let Some(db) = &db {
            let url = db.url.clone();
            let ready = std::sync::Barrier::new(6);
            let greeted: usize = std::thread::scope(|s| {
                let handles: Vec<_> = (0..6)
                    .map(|_| {
                        let (url, ready) = (url.clone(), &ready);
                        s.spawn(move || {
                            let store = Store::open(&StoreAt::Postgres(url)).unwrap();
                            let hello = delivery("cy", "good morning");
                            ready.wait();
                            usize::from(store.transaction(|tx| tx.greet(&hello, T)).unwrap())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            assert_eq!(greeted, 1, "{on}: six daemons at once");
        }
    }
}

#[test]
fn what_a_cut_turn_stored_is_taken_back_alike_on_both() {
    for (_dir, _db, store, on) in each() {
        for (turn, text) in [
            (Some("ada-m1"), "task, as sent"),
            (Some("ada-m1"), "a reply"),
            (Some("ada-m2"), "another turn's"),
            (None, "before turns were named"),
        ] {
            let message = NewMessage {
                agent: "ada",
                thread: "main",
                role: "user",
                content: text,
                lineage: &[],
                turn,
            };
            store.transaction(|tx| tx.add_message(&message, T)).unwrap();
        }
        let gone = store
            .transaction(|tx| tx.forget_turn("ada", "ada-m1"))
            .unwrap();
        assert_eq!(gone, 2, "{on}");
        let left = store
            .read(|tx| tx.recent_messages("ada", "main", 10))
            .unwrap();
        let texts: Vec<&str> = left.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, ["another turn's", "before turns were named"], "{on}");
    }
}
