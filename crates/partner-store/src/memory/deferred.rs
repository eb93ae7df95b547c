//! A text index brought up to date in batches, for a store that one thread
//! works through step by step, each step a savepoint of one long
//! transaction (replay's scratch store). FTS5 writes what it holds pending
//! to a segment of its own at every savepoint, so a step that adds one
//! entry left a one-entry segment and set off merges: a fifth of a long
//! replay. Here the triggers that keep the `*_fts` tables note each change
//! instead (in a table of the connection's temporary schema, so a failed
//! step's savepoint undoes its notes with it), and the notes are applied,
//! in order and in one statement per table, before anything reads the
//! index ([`catch_up`], which every full-text search calls) and before the
//! batch commits.

use rusqlite::Connection;

use super::MemoryResult;

/// The table the changes are noted in, in the temporary schema.
const NOTES: &str = "text_index_pending";

/// The tables the text index covers: the columns it indexes (at most two,
/// noted as `a` and `b`), and whether rows are changed in place (blocks)
/// or only added and deleted.
const INDEXED: [(&str, &[&str], bool); 3] = [
    ("blocks", &["label", "value"], true),
    ("archival", &["content"], false),
    ("messages", &["content"], false),
];

/// The note of a row of `table` added (`new`) or taken out (`old`).
fn note(table: &str, columns: &[&str], row: &str) -> String {
    let added = u8::from(row == "new");
    let slots = ["a", "b"][..columns.len()].join(", ");
    let values: Vec<String> = columns.iter().map(|c| format!("{row}.{c}")).collect();
    format!(
        "INSERT INTO {NOTES}(tbl, added, row, {slots}) VALUES ('{table}', {added}, {row}.id, {});",
        values.join(", ")
    )
}

/// Makes the text index of `conn`'s database (an in-memory scratch
/// database: the change is to its schema) follow its tables in batches:
/// the schema's triggers that keep it at once (`{table}_fts_insert`,
/// `_delete`, `_update`) are dropped and triggers that note are made.
pub fn defer(conn: &Connection) -> MemoryResult<()> {
    let mut sql = format!(
        "CREATE TEMP TABLE {NOTES} (
            seq INTEGER PRIMARY KEY,
            tbl TEXT NOT NULL,
            added INTEGER NOT NULL,
            row INTEGER NOT NULL,
            a TEXT,
            b TEXT
        );\n"
    );
    for (table, columns, in_place) in INDEXED {
        let (added, removed) = (note(table, columns, "new"), note(table, columns, "old"));
        sql.push_str(&format!(
            "DROP TRIGGER main.{table}_fts_insert;
             DROP TRIGGER main.{table}_fts_delete;
             CREATE TEMP TRIGGER {table}_noted_insert AFTER INSERT ON main.{table} BEGIN {added} END;
             CREATE TEMP TRIGGER {table}_noted_delete AFTER DELETE ON main.{table} BEGIN {removed} END;\n"
        ));
        if in_place {
            let changed = columns.join(", ");
            sql.push_str(&format!(
                "DROP TRIGGER main.{table}_fts_update;
                 CREATE TEMP TRIGGER {table}_noted_update AFTER UPDATE OF {changed} ON main.{table}
                 BEGIN {removed} {added} END;\n"
            ));
        }
    }
    // One transaction: the immediate triggers are not dropped without the
    // notes that replace them.
    conn.execute_batch(&format!(
        "SAVEPOINT defer_text_index;\n{sql}\nRELEASE defer_text_index;"
    ))?;
    Ok(())
}

/// Applies the noted changes to the text index, oldest first, and forgets
/// them; nothing to do for a connection that does not defer.
pub fn catch_up(conn: &Connection) -> MemoryResult<()> {
    let defers: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM temp.sqlite_master WHERE name = ?1)")?
        .query_row([NOTES], |r| r.get(0))?;
    if !defers {
        return Ok(());
    }
    let noted: bool = conn
        .prepare_cached(&format!("SELECT EXISTS (SELECT 1 FROM temp.{NOTES})"))?
        .query_row([], |r| r.get(0))?;
    if !noted {
        return Ok(());
    }
    // A null in the table-named column is an entry added; 'delete' takes
    // out the values the entry was indexed with.
    for (table, columns, _) in INDEXED {
        let slots = ["a", "b"][..columns.len()].join(", ");
        let columns = columns.join(", ");
        conn.prepare_cached(&format!(
            "INSERT INTO main.{table}_fts({table}_fts, rowid, {columns})
             SELECT CASE added WHEN 0 THEN 'delete' END, row, {slots}
             FROM temp.{NOTES} WHERE tbl = '{table}' ORDER BY seq"
        ))?
        .execute([])?;
    }
    conn.prepare_cached(&format!("DELETE FROM temp.{NOTES}"))?
        .execute([])?;
    Ok(())
}
