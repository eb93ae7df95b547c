//! The text index written once per commit. FTS5 writes what it holds
//! pending to a segment of its own at every savepoint, and partner runs
//! each transaction of a shared commit (a group of them, a batch of
//! replay's) as a savepoint: a transaction that added one entry left a
//! one-entry segment and set off merges — a sixth of the work under the
//! lock that eight writers share, a fifth of a long replay.
//!
//! So a shared commit defers its text index from its second transaction
//! on (a replay batch from its first): it holds a row in
//! `text_index_deferral` ([`defer`]), never committed, so only its own
//! connection ever sees it; while the row is there the schema's triggers
//! note each change in `text_index_pending` (a savepoint undone takes its
//! notes with it) instead of writing the index, and the notes are applied
//! in order, one statement per table, before anything on that connection
//! reads the index ([`catch_up`], which every full-text search calls) and
//! before the commit ([`finish`]). Every other writer — another process,
//! the `sqlite3` shell — sees no row and indexes at once; every other
//! reader sees only committed data, whose index is never behind.

use rusqlite::Connection;

use super::MemoryResult;

/// The tables the text index covers: the columns it indexes (noted as
/// `a` and `b`, in the order of the schema's noting triggers).
const INDEXED: [(&str, &[&str]); 3] = [
    ("blocks", &["label", "value"]),
    ("archival", &["content"]),
    ("messages", &["content"]),
];

/// Makes the transaction open on `conn` defer its text index until
/// [`finish`].
pub(super) fn defer(conn: &Connection) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO text_index_deferral (one) VALUES (1)")?
        .execute([])?;
    Ok(())
}

/// Applies the changes noted on `conn` to the text index, oldest first,
/// and forgets them; nothing to do when none are (on every connection but
/// the one a deferring transaction is open on).
pub fn catch_up(conn: &Connection) -> MemoryResult<()> {
    Ok(apply(conn)?)
}

/// [`catch_up`], with SQLite's error.
fn apply(conn: &Connection) -> rusqlite::Result<()> {
    let noted: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM text_index_pending)")?
        .query_row([], |r| r.get(0))?;
    if !noted {
        return Ok(());
    }
    // A null in the table-named column is an entry added; 'delete' takes
    // out the values the entry was indexed with.
    for (table, columns) in INDEXED {
        let slots = ["a", "b"][..columns.len()].join(", ");
        let columns = columns.join(", ");
        conn.prepare_cached(&format!(
            "INSERT INTO {table}_fts({table}_fts, rowid, {columns})
             SELECT CASE added WHEN 0 THEN 'delete' END, row, {slots}
             FROM text_index_pending WHERE tbl = '{table}' ORDER BY seq"
        ))?
        .execute([])?;
    }
    conn.prepare_cached("DELETE FROM text_index_pending")?
        .execute([])?;
    Ok(())
}

/// Before the deferring transaction on `conn` commits: the notes applied,
/// the deferral taken back (the commit leaves neither).
pub(super) fn finish(conn: &Connection) -> rusqlite::Result<()> {
    apply(conn)?;
    // With a condition: emptying a table outright writes its page even
    // when it holds nothing, and a commit of one transaction defers nothing.
    conn.prepare_cached("DELETE FROM text_index_deferral WHERE one = 1")?
        .execute([])?;
    Ok(())
}
