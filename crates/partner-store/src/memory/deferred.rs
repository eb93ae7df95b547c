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

/// The triggers that keep the text index at once, as the schema makes
/// them (dropped here: this connection's notes replace them).
const IMMEDIATE: [&str; 7] = [
    "blocks_fts_insert",
    "blocks_fts_delete",
    "blocks_fts_update",
    "archival_fts_insert",
    "archival_fts_delete",
    "messages_fts_insert",
    "messages_fts_delete",
];

/// Makes the text index of `conn`'s database (an in-memory scratch
/// database: the change is to its schema) follow its tables in batches.
pub fn defer(conn: &Connection) -> MemoryResult<()> {
    let mut sql = String::new();
    for trigger in IMMEDIATE {
        sql.push_str(&format!("DROP TRIGGER main.{trigger};\n"));
    }
    sql.push_str(&format!(
        "CREATE TEMP TABLE {NOTES} (
            seq INTEGER PRIMARY KEY,
            tbl TEXT NOT NULL,
            added INTEGER NOT NULL,
            row INTEGER NOT NULL,
            a TEXT,
            b TEXT
        );
        CREATE TEMP TRIGGER blocks_noted_insert AFTER INSERT ON main.blocks BEGIN
            INSERT INTO {NOTES}(tbl, added, row, a, b) VALUES ('blocks', 1, new.id, new.label, new.value);
        END;
        CREATE TEMP TRIGGER blocks_noted_delete AFTER DELETE ON main.blocks BEGIN
            INSERT INTO {NOTES}(tbl, added, row, a, b) VALUES ('blocks', 0, old.id, old.label, old.value);
        END;
        CREATE TEMP TRIGGER blocks_noted_update AFTER UPDATE OF label, value ON main.blocks BEGIN
            INSERT INTO {NOTES}(tbl, added, row, a, b) VALUES ('blocks', 0, old.id, old.label, old.value);
            INSERT INTO {NOTES}(tbl, added, row, a, b) VALUES ('blocks', 1, new.id, new.label, new.value);
        END;
        CREATE TEMP TRIGGER archival_noted_insert AFTER INSERT ON main.archival BEGIN
            INSERT INTO {NOTES}(tbl, added, row, a) VALUES ('archival', 1, new.id, new.content);
        END;
        CREATE TEMP TRIGGER archival_noted_delete AFTER DELETE ON main.archival BEGIN
            INSERT INTO {NOTES}(tbl, added, row, a) VALUES ('archival', 0, old.id, old.content);
        END;
        CREATE TEMP TRIGGER messages_noted_insert AFTER INSERT ON main.messages BEGIN
            INSERT INTO {NOTES}(tbl, added, row, a) VALUES ('messages', 1, new.id, new.content);
        END;
        CREATE TEMP TRIGGER messages_noted_delete AFTER DELETE ON main.messages BEGIN
            INSERT INTO {NOTES}(tbl, added, row, a) VALUES ('messages', 0, old.id, old.content);
        END;"
    ));
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
    for (table, columns, values) in [
        ("blocks", "label, value", "a, b"),
        ("archival", "content", "a"),
        ("messages", "content", "a"),
    ] {
        conn.prepare_cached(&format!(
            "INSERT INTO main.{table}_fts({table}_fts, rowid, {columns})
             SELECT CASE added WHEN 0 THEN 'delete' END, row, {values}
             FROM temp.{NOTES} WHERE tbl = '{table}' ORDER BY seq"
        ))?
        .execute([])?;
    }
    conn.prepare_cached(&format!("DELETE FROM temp.{NOTES}"))?
        .execute([])?;
    Ok(())
}
