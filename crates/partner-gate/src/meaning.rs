//! Programs found by meaning when their words do not match ("picture
//! editor" → GIMP): a vector for each entry of the index, made by the
//! constellation's embedder a batch at a time within a time budget (so a
//! request never waits long; `partner gate index` embeds them all), and a
//! scan for the entries nearest a request.

use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};

use super::context::Similar;
use partner_core::embedder::{Embedder, MAX_BATCH, cosine};

/// The entries of one kind without a vector from `embedder` (`?1`), after
/// row `?3`, in row order (`?2` at most): row and the text that says what
/// the program is.
const MISSING: [(&str, &str); 2] = [
    (
        "app",
        "SELECT a.rowid, a.name || '. ' || a.generic_name || '. ' || a.comment || '. ' || a.keywords
           FROM apps_fts a LEFT JOIN entry_vectors v ON v.kind = 'app' AND v.entry = a.rowid
          WHERE (v.entry IS NULL OR v.embedder != ?1) AND a.rowid > ?3
          ORDER BY a.rowid LIMIT ?2",
    ),
    (
        "package",
        "SELECT p.rowid, p.name || '. ' || p.description
           FROM packages_fts p LEFT JOIN entry_vectors v ON v.kind = 'package' AND v.entry = p.rowid
          WHERE (v.entry IS NULL OR v.embedder != ?1) AND p.rowid > ?3
          ORDER BY p.rowid LIMIT ?2",
    ),
];

fn sql(e: rusqlite::Error) -> String {
    format!("the index: {e}")
}

/// Embeds entries without a vector for up to `budget`: how many it
/// embedded, and whether some still wait.
pub fn embed_entries(
    conn: &Connection,
    embedder: &dyn Embedder,
    budget: Duration,
) -> Result<(usize, bool), String> {
    let started = Instant::now();
    let id = embedder.id();
    let mut embedded = 0;
    for (kind, missing) in MISSING {
        let mut after = 0i64;
        loop {
            let batch: Vec<(i64, String)> = conn
                .prepare_cached(missing)
                .map_err(sql)?
                .query_map(params![id, MAX_BATCH as i64, after], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .map_err(sql)?
                .collect::<Result<_, _>>()
                .map_err(sql)?;
            let Some(last) = batch.last() else {
                break;
            };
            if started.elapsed() >= budget {
                return Ok((embedded, true));
            }
            after = last.0;
            let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
            let vectors = embedder.embed(&texts).map_err(|e| e.to_string())?;
            let tx = conn.unchecked_transaction().map_err(sql)?;
            for ((entry, _), v) in batch.iter().zip(&vectors) {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                tx.execute(
                    "INSERT OR REPLACE INTO entry_vectors (kind, entry, embedder, vec)
                     VALUES (?1, ?2, ?3, ?4)",
                    params![kind, entry, id, bytes],
                )
                .map_err(sql)?;
            }
            tx.commit().map_err(sql)?;
            embedded += batch.len();
        }
    }
    Ok((embedded, false))
}

/// How long a request may spend embedding entries that have no vector yet.
const SEARCH_BUDGET: Duration = Duration::from_secs(2);

/// The entries nearest `words` in meaning, best first; the nearest marked
/// `whole` (it may be proposed). Entries without a vector are embedded
/// first, within a short budget.
pub fn nearest(
    conn: &Connection,
    embedder: &dyn Embedder,
    words: &str,
    limit: usize,
) -> Result<Vec<Similar>, String> {
    embed_entries(conn, embedder, SEARCH_BUDGET)?;
    let query = embedder
        .embed(&[words.to_string()])
        .map_err(|e| e.to_string())?
        .pop()
        .unwrap_or_default();
    if query.iter().all(|x| *x == 0.0) {
        return Ok(Vec::new());
    }
    let mut best: Vec<(f32, String, i64)> = Vec::new();
    let mut stmt = conn
        .prepare_cached("SELECT kind, entry, vec FROM entry_vectors WHERE embedder = ?1")
        .map_err(sql)?;
    let rows = stmt
        .query_map([embedder.id()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
            ))
        })
        .map_err(sql)?;
    for row in rows {
        let (kind, entry, bytes) = row.map_err(sql)?;
        let v: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let score = cosine(&query, &v);
        if score > 0.0 {
            best.push((score, kind, entry));
        }
    }
    best.sort_by(|a, b| b.0.total_cmp(&a.0));
    // As in memory search: nothing less than half as near as the nearest.
    let floor = best.first().map_or(0.0, |b| b.0 * 0.5);
    best.retain(|b| b.0 >= floor);
    best.truncate(limit);
    let mut out = Vec::new();
    for (i, (_, kind, entry)) in best.into_iter().enumerate() {
        let found = if kind == "app" {
            conn.query_row(
                "SELECT name, exec, CASE WHEN comment != '' THEN comment ELSE generic_name END
                 FROM apps_fts WHERE rowid = ?1",
                [entry],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        Some(r.get::<_, String>(1)?).filter(|s| !s.is_empty()),
                        r.get::<_, String>(2)?,
                    ))
                },
            )
        } else {
            conn.query_row(
                "SELECT name, NULL, description FROM packages_fts WHERE rowid = ?1",
                [entry],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
        }
        .optional()
        .map_err(sql)?;
        if let Some((name, command, description)) = found {
            out.push(Similar {
                name,
                command,
                description,
                whole: i == 0,
                by_meaning: true,
            });
        }
    }
    Ok(out)
}
