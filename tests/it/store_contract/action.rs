//! An action's transaction on both back ends: everything an action writes
//! — its memory, messages, outbox, intentions, the decision of its request
//! and the standing rule it makes, its rate-limit token and its trace
//! record — goes through one `ActionTx`, and commits together or not at
//! all, on SQLite and on PostgreSQL alike.

use super::*;
use partner::engine::exec::registry::ActionTx;
use partner::policy::RateLimit;
use partner::store::memory::roster::{NewIntention, Outgoing};
use partner::store::trace::TraceOutcome;

/// A store of either kind, for opening an action's transaction on it.
enum Either {
    Sqlite(Box<MemoryStore>),
    Postgres(Box<PgStore>),
}

impl Either {
    fn action(
        &self,
        work: &dyn Fn(&dyn ActionTx) -> Result<(), MemoryError>,
    ) -> Result<(), MemoryError> {
        match self {
            Either::Sqlite(store) => store.transaction(|tx| work(tx)),
            Either::Postgres(store) => store.transaction(|tx| work(tx)),
        }
    }

    /// Outside any action: each read its own.
    fn read<T>(&self, read: impl Fn(&dyn ActionTx) -> T) -> T {
        match self {
            Either::Sqlite(store) => read(&*store.read()),
            Either::Postgres(store) => store
                .transaction(|tx| Ok::<_, MemoryError>(read(tx)))
                .unwrap(),
        }
    }
}

const LIMIT: RateLimit = RateLimit {
    burst: 3,
    per_minute: 0.0,
};

/// Everything an approved action writes, then `end`.
fn everything(
    tx: &dyn ActionTx,
    request: &str,
    end: Result<(), MemoryError>,
) -> Result<(), MemoryError> {
    tx.write_block(&write("moved to monday", None), "ada", T + 1)?;
    tx.add_archival("ada", "the launch moved", T + 1)?;
    let note = NewMessage {
        agent: "ada",
        thread: "main",
        role: "assistant",
        content: "moved",
        lineage: &[],
        turn: None,
    };
    tx.add_message(&note, T + 1)?;
    let post = Outgoing {
        agent: "ada",
        channel: "bluesky",
        target: None,
        content: "moved to monday",
        public: true,
    };
    tx.enqueue(&post, T + 1)?;
    let due = NewIntention {
        agent: "ada",
        what: "check the launch",
        due_text: "tomorrow",
        due_at: Some(T + 86_400_000),
        next_session: false,
    };
    tx.add_intention(&due, T + 1)?;
    let approved = Decided {
        status: RequestStatus::Approved,
        decision: "approve_always",
        by: "partner:alice",
        note: None,
        claimant: None,
    };
    tx.decide(request, &approved, T + 1)
        .map_err(|e| MemoryError::Conflict(e.to_string()))?;
    tx.add_rule(
        &NewRule {
            agent: "ada",
            verb: "post",
            op: None,
            target: Some("bluesky"),
            allow: true,
            reason: None,
            by: "partner:alice",
            expires_at: None,
        },
        T + 1,
    )?;
    assert!(tx.take("ada", "post", LIMIT, T + 1)?.is_ok());
    let record = crate::support::console::record(
        0,
        "ada",
        "/post bluesky \"moved\"",
        TraceOutcome::Executed,
        "queued",
    );
    tx.append(record)?;
    end
}

#[test]
fn an_actions_writes_commit_together_or_not_at_all_on_both() {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = vec![(
        "sqlite",
        Either::Sqlite(Box::new(
            MemoryStore::open(dir.path().join("c.db")).unwrap(),
        )),
    )];
    let scratch = postgres::scratch();
    if let Some(db) = &scratch {
        stores.push((
            "postgres",
            Either::Postgres(Box::new(PgStore::connect(&db.url).unwrap())),
        ));
    }
    for (on, store) in &stores {
        let notes = NewBlock::new("ada", "notes", BlockKind::Working, "launch friday");
        store
            .action(&|tx| tx.create_block(&notes, "ada", T).map(|_| ()))
            .unwrap();
        store
            .action(&|tx| {
                let asked = ask_in(tx, "/post bluesky \"moved\" ?ask").unwrap().id;
                assert!(asked.starts_with('r'));
                Ok(())
            })
            .unwrap();
        let id = store.read(|tx| tx.waiting().unwrap()[0].id.clone());
        // Stopped at the end: nothing of it is there.
        let stopped =
            store.action(&|tx| everything(tx, &id, Err(MemoryError::Conflict("stop".into()))));
        assert!(stopped.is_err(), "{on}");
        store.read(|tx| {
            assert_eq!(
                tx.block("ada", "notes").unwrap().unwrap().version,
                1,
                "{on}"
            );
            assert_eq!(tx.archival_count("ada").unwrap(), 0, "{on}");
            assert!(tx.outbox().unwrap().is_empty(), "{on}");
            assert!(tx.intentions("ada", false).unwrap().is_empty(), "{on}");
            assert_eq!(
                tx.waiting().unwrap().len(),
                1,
                "{on}: the request still waits"
            );
            assert!(tx.rules(T + 2).unwrap().is_empty(), "{on}");
            assert_eq!(tx.len().unwrap(), 0, "{on}: no trace record");
            // The token was given back: three remain.
            for _ in 0..3 {
                assert!(
                    tx.available("ada", "post", LIMIT, T + 2).unwrap().is_ok(),
                    "{on}"
                );
            }
        });
        // Run to the end: all of it, at once.
        store.action(&|tx| everything(tx, &id, Ok(()))).unwrap();
        store.read(|tx| {
            let block = tx.block("ada", "notes").unwrap().unwrap();
            assert_eq!(
                (block.version, block.value.as_str()),
                (2, "moved to monday"),
                "{on}"
            );
            assert_eq!(tx.archival_count("ada").unwrap(), 1, "{on}");
            assert_eq!(tx.outbox().unwrap().len(), 1, "{on}");
            assert_eq!(tx.intentions("ada", false).unwrap().len(), 1, "{on}");
            assert!(tx.waiting().unwrap().is_empty(), "{on}");
            let decided = tx.request(&id).unwrap().unwrap();
            assert_eq!(decided.decided_by.as_deref(), Some("partner:alice"), "{on}");
            assert_eq!(tx.rules(T + 2).unwrap().len(), 1, "{on}");
            assert_eq!(tx.len().unwrap(), 1, "{on}");
            assert_eq!(tx.record("t1").unwrap().unwrap().seq, 1, "{on}");
        });
        // The same decision again, in another action, is told who came first.
        let again = store.action(&|tx| everything(tx, &id, Ok(())));
        let said = again.unwrap_err().to_string();
        assert!(
            said.contains("already decided by partner:alice"),
            "{on}: {said}"
        );
    }
}
