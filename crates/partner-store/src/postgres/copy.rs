//! Moving a constellation between back ends: every table copied row by
//! row, ids and all, then each table's rows compared on both sides by a
//! digest of their values (not only counted). The destination must be
//! empty; the copy is one transaction on PostgreSQL, so a failed copy
//! leaves nothing behind there.

use postgres::types::ToSql;
use postgres::{GenericClient, Transaction};
use rusqlite::types::Value;
use sha2::{Digest, Sha256};

use super::{PgStore, failed};
use crate::memory::{MemoryError, MemoryResult, MemoryStore};

/// The tables a constellation is made of, parents first, each with the
/// columns that order its rows.
pub const TABLES: &[(&str, &str)] = &[
    ("agents", "name"),
    ("blocks", "id"),
    ("block_history", "block_id, version"),
    ("archival", "id"),
    ("messages", "id"),
    ("inbox", "id"),
    ("intentions", "id"),
    ("outbox", "id"),
    ("pending", "id"),
    ("standing_rules", "id"),
    ("trace", "seq"),
    ("rate_buckets", "agent, verb"),
    ("learned_rules", "id"),
    ("partners", "name"),
    ("data_watches", "agent, source"),
    ("parse_failures", "id"),
    ("meta", "key"),
    ("vectors", "domain, ref_id, embedder"),
];

/// Rows written to PostgreSQL per statement.
const BATCH: usize = 200;

/// What was copied of one table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Copied {
    /// The table.
    pub table: String,
    /// Rows at the source.
    pub from: u64,
    /// Rows at the destination after the copy.
    pub to: u64,
    /// The rows' values are the same on both sides.
    pub same: bool,
    /// Rows the destination held already and kept beside the copy: the
    /// partners added before it (`partner partners add`, then `store
    /// copy`, as a team is set up).
    pub kept: u64,
}

/// A column as PostgreSQL types it.
#[derive(Debug, Clone)]
struct Column {
    name: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Int8,
    Int4,
    Bool,
    Float,
    Text,
    Bytes,
}

/// The copied columns of `table` on PostgreSQL (the ones the server
/// computes left out), by their type there.
fn columns(client: &mut impl GenericClient, table: &str) -> MemoryResult<Vec<Column>> {
    let rows = client
        .query(
            "SELECT column_name, data_type FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
               AND data_type <> 'tsvector' AND NOT (table_name = 'vectors' AND column_name = 'seq')
             ORDER BY ordinal_position",
            &[&table],
        )
        .map_err(failed)?;
    rows.iter()
        .map(|r| {
            let name: String = r.get(0);
            let kind = match r.get::<_, &str>(1) {
                "bigint" => Kind::Int8,
                "integer" => Kind::Int4,
                "boolean" => Kind::Bool,
                "double precision" => Kind::Float,
                "text" => Kind::Text,
                "bytea" => Kind::Bytes,
                other => {
                    return Err(MemoryError::Postgres(format!(
                        "{table}.{name} is a {other}, which a copy does not carry"
                    )));
                }
            };
            Ok(Column { name, kind })
        })
        .collect()
}

/// A value for PostgreSQL, from SQLite's, as the column types it.
fn to_pg(value: Value, kind: Kind, column: &str) -> MemoryResult<Box<dyn ToSql + Sync>> {
    let wrong = |found: &str| MemoryError::Corrupt {
        what: "a value to copy",
        value: format!("{column} holds {found}"),
    };
    Ok(match (value, kind) {
        (Value::Null, Kind::Int8) => Box::new(None::<i64>),
        (Value::Null, Kind::Int4) => Box::new(None::<i32>),
        (Value::Null, Kind::Bool) => Box::new(None::<bool>),
        (Value::Null, Kind::Float) => Box::new(None::<f64>),
        (Value::Null, Kind::Text) => Box::new(None::<String>),
        (Value::Null, Kind::Bytes) => Box::new(None::<Vec<u8>>),
        (Value::Integer(n), Kind::Int8) => Box::new(n),
        (Value::Integer(n), Kind::Int4) => {
            Box::new(i32::try_from(n).map_err(|_| wrong("a number too large"))?)
        }
        (Value::Integer(n), Kind::Bool) => Box::new(n != 0),
        (Value::Integer(n), Kind::Float) => Box::new(n as f64),
        (Value::Real(x), Kind::Float) => Box::new(x),
        (Value::Text(t), Kind::Text) => Box::new(t),
        (Value::Blob(b), Kind::Bytes) => Box::new(b),
        (Value::Text(_), _) => return Err(wrong("text")),
        (Value::Blob(_), _) => return Err(wrong("bytes")),
        (Value::Real(_), _) => return Err(wrong("a fraction")),
        (Value::Integer(_), _) => return Err(wrong("a number")),
    })
}

/// A value as SQLite keeps it, from PostgreSQL's row.
fn from_pg(row: &postgres::Row, i: usize, kind: Kind) -> Value {
    let or_null = |v: Option<Value>| v.unwrap_or(Value::Null);
    match kind {
        Kind::Int8 => or_null(row.get::<_, Option<i64>>(i).map(Value::Integer)),
        Kind::Int4 => or_null(
            row.get::<_, Option<i32>>(i)
                .map(|n| Value::Integer(n.into())),
        ),
        Kind::Bool => or_null(
            row.get::<_, Option<bool>>(i)
                .map(|b| Value::Integer(b.into())),
        ),
        Kind::Float => or_null(row.get::<_, Option<f64>>(i).map(Value::Real)),
        Kind::Text => or_null(row.get::<_, Option<String>>(i).map(Value::Text)),
        Kind::Bytes => or_null(row.get::<_, Option<Vec<u8>>>(i).map(Value::Blob)),
    }
}

/// Feeds one value to a table's digest, the same whichever side it came
/// from (a boolean is a number on SQLite; a whole REAL stays a REAL).
fn digest_value(hash: &mut Sha256, value: &Value, kind: Kind) {
    let text = match (value, kind) {
        (Value::Null, _) => "N".to_string(),
        (Value::Integer(n), Kind::Float) => format!("F{:?}", *n as f64),
        (Value::Integer(n), _) => format!("I{n}"),
        (Value::Real(x), _) => format!("F{x:?}"),
        (Value::Text(t), _) => format!("T{}:{t}", t.len()),
        (Value::Blob(b), _) => format!("B{}", hex::encode(b)),
    };
    hash.update(text.as_bytes());
    hash.update([0]);
}

fn select(table: &str, order: &str, columns: &[Column]) -> String {
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    format!("SELECT {} FROM {table} ORDER BY {order}", names.join(", "))
}

/// A table's rows on SQLite, each handed to `each` in order.
fn sqlite_rows(
    store: &MemoryStore,
    (table, order): (&str, &str),
    columns: &[Column],
    mut each: impl FnMut(Vec<Value>) -> MemoryResult<()>,
) -> MemoryResult<()> {
    let conn = store.read();
    let mut stmt = conn.prepare(&select(table, order, columns))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let values = (0..columns.len())
            .map(|i| row.get::<_, Value>(i))
            .collect::<Result<Vec<_>, _>>()?;
        each(values)?;
    }
    Ok(())
}

/// A table's rows on PostgreSQL, a page at a time through a portal.
fn pg_rows(
    tx: &mut Transaction<'_>,
    (table, order): (&str, &str),
    columns: &[Column],
    mut each: impl FnMut(Vec<Value>) -> MemoryResult<()>,
) -> MemoryResult<()> {
    let portal = tx
        .bind(&select(table, order, columns), &[])
        .map_err(failed)?;
    loop {
        let page = tx.query_portal(&portal, 1000).map_err(failed)?;
        for row in &page {
            each(
                (0..columns.len())
                    .map(|i| from_pg(row, i, columns[i].kind))
                    .collect(),
            )?;
        }
        if page.len() < 1000 {
            return Ok(());
        }
    }
}

/// Writes `rows` into `table` on PostgreSQL, ids as they are.
fn pg_insert(
    tx: &mut Transaction<'_>,
    table: &str,
    columns: &[Column],
    rows: Vec<Vec<Value>>,
) -> MemoryResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let mut params: Vec<Box<dyn ToSql + Sync>> = Vec::new();
    let mut tuples = Vec::new();
    for row in rows {
        let mut slots = Vec::new();
        for (value, column) in row.into_iter().zip(columns) {
            params.push(to_pg(value, column.kind, &column.name)?);
            slots.push(format!("${}", params.len()));
        }
        tuples.push(format!("({})", slots.join(", ")));
    }
    let sql = format!(
        "INSERT INTO {table} ({}) OVERRIDING SYSTEM VALUE VALUES {}",
        names.join(", "),
        tuples.join(", ")
    );
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
    tx.execute(&sql, &refs).map_err(failed)?;
    Ok(())
}

/// A table's row count and the digest of its rows, as `rows` reads them.
fn digest(
    columns: &[Column],
    rows: impl FnOnce(&mut dyn FnMut(Vec<Value>) -> MemoryResult<()>) -> MemoryResult<()>,
) -> MemoryResult<(u64, Vec<u8>)> {
    let (mut n, mut hash) = (0u64, Sha256::new());
    rows(&mut |row| {
        n += 1;
        for (value, column) in row.iter().zip(columns) {
            digest_value(&mut hash, value, column.kind);
        }
        Ok(())
    })?;
    Ok((n, hash.finalize().to_vec()))
}

/// Each table's row count and digest on SQLite.
fn sqlite_digest(
    store: &MemoryStore,
    table: (&str, &str),
    columns: &[Column],
) -> MemoryResult<(u64, Vec<u8>)> {
    digest(columns, |each| sqlite_rows(store, table, columns, each))
}

/// Each table's row count and digest on PostgreSQL.
fn pg_digest(
    tx: &mut Transaction<'_>,
    table: (&str, &str),
    columns: &[Column],
) -> MemoryResult<(u64, Vec<u8>)> {
    digest(columns, |each| pg_rows(tx, table, columns, each))
}

/// Refuses a copy that would leave out a column: each table must have the
/// same columns on SQLite as on PostgreSQL.
fn same_columns(store: &MemoryStore, table: &str, columns: &[Column]) -> MemoryResult<()> {
    let conn = store.read();
    let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
    let mut here: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut there: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    here.sort();
    there.sort();
    if here == there {
        return Ok(());
    }
    let only = |a: &[String], b: &[String]| {
        a.iter()
            .filter(|c| !b.contains(c))
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(MemoryError::BadSchema(format!(
        "{table} differs between the back ends (only on SQLite: [{}]; only on PostgreSQL: [{}]); nothing was copied",
        only(&here, &there),
        only(&there, &here)
    )))
}

/// True when no table of the constellation holds a row on SQLite.
fn sqlite_empty(store: &MemoryStore) -> MemoryResult<bool> {
    let conn = store.read();
    for (table, _) in TABLES {
        let n: i64 = conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))?;
        if n > 0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Copies the constellation in `from` to `to`, which must hold none yet,
/// in one transaction there; each table compared after.
pub fn sqlite_to_pg(from: &MemoryStore, to: &PgStore) -> MemoryResult<Vec<Copied>> {
    to.transaction(|session| {
        let mut tx = session.conn();
        let mut copied = Vec::new();
        for &table in TABLES {
            let columns = columns(&mut *tx, table.0)?;
            same_columns(from, table.0, &columns)?;
            let kept = match table.0 {
                "partners" => set_partners_aside(from, &mut tx, table, &columns)?,
                _ => Vec::new(),
            };
            let there: i64 = tx
                .query_one(&format!("SELECT COUNT(*) FROM {}", table.0), &[])
                .map_err(failed)?
                .get(0);
            if there > 0 {
                return Err(not_empty(to.location(), table.0));
            }
            let mut batch = Vec::new();
            sqlite_rows(from, table, &columns, |row| {
                batch.push(row);
                if batch.len() == BATCH {
                    pg_insert(&mut tx, table.0, &columns, std::mem::take(&mut batch))?;
                }
                Ok(())
            })?;
            pg_insert(&mut tx, table.0, &columns, batch)?;
            restart_identity(&mut tx, table.0)?;
            let (n, source) = sqlite_digest(from, table, &columns)?;
            let (m, copy) = pg_digest(&mut tx, table, &columns)?;
            let kept_rows = kept.len() as u64;
            pg_insert(&mut tx, table.0, &columns, kept)?;
            copied.push(Copied {
                table: table.0.to_string(),
                from: n,
                to: m + kept_rows,
                same: n == m && source == copy,
                kept: kept_rows,
            });
        }
        Ok(copied)
    })
}

/// Copies the constellation in `from` to `to`, a SQLite store that holds
/// none yet; each table compared after.
pub fn pg_to_sqlite(from: &PgStore, to: &MemoryStore) -> MemoryResult<Vec<Copied>> {
    if !sqlite_empty(to)? {
        return Err(not_empty(&to.path().display().to_string(), "its tables"));
    }
    from.transaction(|session| {
        let mut tx = session.conn();
        let mut copied = Vec::new();
        for &table in TABLES {
            let columns = columns(&mut *tx, table.0)?;
            same_columns(to, table.0, &columns)?;
            let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            let slots: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
            let insert = format!(
                "INSERT INTO {} ({}) VALUES ({})",
                table.0,
                names.join(", "),
                slots.join(", ")
            );
            to.transaction(|sqlite| -> MemoryResult<()> {
                let mut stmt = sqlite.prepare(&insert)?;
                pg_rows(&mut tx, table, &columns, |row| {
                    stmt.execute(rusqlite::params_from_iter(row))?;
                    Ok(())
                })
            })?;
            let (n, source) = pg_digest(&mut tx, table, &columns)?;
            let (m, copy) = sqlite_digest(to, table, &columns)?;
            copied.push(Copied {
                table: table.0.to_string(),
                from: n,
                to: m,
                same: n == m && source == copy,
                kept: 0,
            });
        }
        Ok(copied)
    })
}

/// The partners PostgreSQL holds already (added before the copy), taken
/// out of the table for the copy to compare what it wrote, and put back
/// after it; a name on both sides is refused (which one is meant?).
fn set_partners_aside(
    from: &MemoryStore,
    tx: &mut Transaction<'_>,
    table: (&str, &str),
    columns: &[Column],
) -> MemoryResult<Vec<Vec<Value>>> {
    let name = columns
        .iter()
        .position(|c| c.name == "name")
        .ok_or_else(|| MemoryError::BadSchema("partners has no name column".into()))?;
    let mut there = Vec::new();
    pg_rows(tx, table, columns, |row| {
        there.push(row);
        Ok(())
    })?;
    let conn = from.read();
    for row in &there {
        let Value::Text(who) = &row[name] else {
            continue;
        };
        let both: i64 = conn.query_row(
            "SELECT COUNT(*) FROM partners WHERE name = ?1",
            [who],
            |r| r.get(0),
        )?;
        if both > 0 {
            return Err(MemoryError::BadSchema(format!(
                "{who} is a partner on both sides; revoke one (`partner partners revoke {who}`) and copy again; nothing was copied"
            )));
        }
    }
    tx.execute("DELETE FROM partners", &[]).map_err(failed)?;
    Ok(there)
}

/// An identity column goes on after the highest id copied.
fn restart_identity(tx: &mut Transaction<'_>, table: &str) -> MemoryResult<()> {
    let identity: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'id'
               AND is_identity = 'YES')",
            &[&table],
        )
        .map_err(failed)?
        .get(0);
    if identity {
        tx.execute(
            &format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM {table}), false)"
            ),
            &[],
        )
        .map_err(failed)?;
    }
    Ok(())
}

fn not_empty(place: &str, table: &str) -> MemoryError {
    MemoryError::Conflict(format!(
        "{place} already holds a constellation ({table} is not empty); copy into an empty database"
    ))
}
