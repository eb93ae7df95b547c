//! One contract, two back ends: the store's operations — memory (versioned
//! blocks, archival entries, messages, search), the queue (a request is
//! decided once), the trace, the runtime's records of its agents — behave
//! the same on SQLite (a file in a temp dir) and on a real PostgreSQL
//! server (a fresh database per test, from `PARTNER_TEST_POSTGRES`), and
//! what either acknowledged survives kill -9. Leases and notices, which
//! are about several daemons, are tested on PostgreSQL. Every operation
//! goes through the store's own door, `Store::transaction`, as the
//! executor's do: each is its own committed transaction here.

pub(crate) use crate::support::postgres;

pub(crate) use partner::engine::store::Store;
pub(crate) use partner::policy::pending::{NewRequest, NewRule, RequestedAction};
pub(crate) use partner::policy::requests::{DecideError, Decided};
pub(crate) use partner::policy::{Authority, RequestStatus};
pub(crate) use partner::store::memory::backend::{BlockWrite, Memory, NewMessage};
pub(crate) use partner::store::memory::search::{MARK_END, MARK_START};
pub(crate) use partner::store::memory::{
    BlockKind, MemoryError, MemoryStore, NewBlock, Reach, SearchDomain, SearchQuery,
};
pub(crate) use partner::store::postgres::PgStore;

mod action;
mod crash;
mod inbox;
mod memory;
mod partners;
mod queue;
mod records;

/// A write of ada's `notes` from `base`.
pub(crate) fn write(value: &str, base: Option<i64>) -> BlockWrite<'_> {
    BlockWrite {
        agent: "ada",
        label: "notes",
        value,
        base,
    }
}

/// Runs `check` on a fresh store of each back end; the name says which.
pub(crate) fn on_both(check: impl Fn(&Store, &str)) {
    let dir = tempfile::tempdir().unwrap();
    check(&sqlite(&dir.path().join("c.db")), "sqlite");
    if let Some(db) = postgres::scratch() {
        check(&Store::from(PgStore::connect(&db.url).unwrap()), "postgres");
    }
}

/// A store on the SQLite file `path` (opened, migrated).
pub(crate) fn sqlite(path: &std::path::Path) -> Store {
    Store::from(MemoryStore::open(path).unwrap())
}

/// A store on the PostgreSQL database at `url` (connected, migrated).
pub(crate) fn pg(url: &str) -> Store {
    Store::from(PgStore::connect(url).unwrap())
}

pub(crate) const T: i64 = 1_795_262_400_000;

/// Two handles on one store of each back end (two connections, as two
/// daemons would have), and what the store is called.
pub(crate) fn two_handles_on_both(check: impl Fn(&Store, &Store, &str)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    check(&sqlite(&path), &sqlite(&path), "sqlite");
    if let Some(db) = postgres::scratch() {
        check(&pg(&db.url), &pg(&db.url), "postgres");
    }
}

/// A request of ada's to post, waiting on the partner.
pub(crate) fn ask(q: &Store, n: usize) -> partner::policy::PendingRequest {
    let canonical = format!("/post bluesky \"note {n}\" ?ask");
    q.transaction(|tx| ask_in(tx, &canonical)).unwrap()
}

/// Ada's request to run `canonical` (a post), waiting on the partner,
/// asked in `tx`.
pub(crate) fn ask_in(
    tx: &dyn partner::engine::exec::registry::ActionTx,
    canonical: &str,
) -> Result<partner::policy::PendingRequest, MemoryError> {
    let action = RequestedAction {
        target: Some("bluesky".into()),
        ..RequestedAction::default()
    };
    tx.ask(
        &NewRequest {
            agent: "ada",
            canonical,
            action: &action,
            verb: "post",
            marker: Some("?ask"),
            reason: "asks the partner",
            authorities: &[Authority::Partner],
            turn_id: "t1",
            thread: "main",
            raw_text: canonical,
            action_id: Some("t1:1:1"),
            on_behalf_of: &[],
            span: (0, canonical.len()),
            expires_at: None,
            deciders: &[],
            approvals_needed: 1,
        },
        T,
    )
}

/// Two connections to one store, and which back end it is on.
pub(crate) type Pair<T> = (&'static str, Box<T>, Box<T>);

/// What keeps the stores of [`pairs`] alive: the SQLite file's folder and
/// the scratch PostgreSQL database (dropped with it).
pub(crate) struct Kept {
    _dir: tempfile::TempDir,
    _scratch: Option<postgres::Scratch>,
}

/// A pair of connections to a fresh store of each back end, opened as
/// `sqlite` and `postgres` open them (the latter when a server is set).
pub(crate) fn pairs<T: ?Sized>(
    sqlite: impl Fn(&std::path::Path) -> Box<T>,
    postgres: impl Fn(&str) -> Box<T>,
) -> (Vec<Pair<T>>, Kept) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.db");
    let mut pairs = vec![("sqlite", sqlite(&path), sqlite(&path))];
    let scratch = postgres::scratch();
    if let Some(db) = &scratch {
        pairs.push(("postgres", postgres(&db.url), postgres(&db.url)));
    }
    (
        pairs,
        Kept {
            _dir: dir,
            _scratch: scratch,
        },
    )
}
