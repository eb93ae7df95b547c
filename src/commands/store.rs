//! `partner store copy`: moves a constellation between a SQLite file and
//! PostgreSQL, in either direction, and compares every table after.

use std::io::Write;

use super::common::{line, write_json};
use crate::error::{Error, Result};
use crate::store::memory::MemoryStore;
use crate::store::postgres::PgStore;
use crate::store::postgres::copy::{self, Copied};
use partner_engine::exec::replay::verify_store;
use partner_engine::store::{Store, StoreAt};

/// Options of `partner store`.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreOptions {
    /// What to do.
    #[command(subcommand)]
    pub command: StoreCommand,
}

/// `partner store` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum StoreCommand {
    /// Copy every table of a constellation into an empty database of the
    /// other kind, then compare each table's rows on both sides and replay
    /// the copy's trace.
    Copy {
        /// The source: a database file, or `postgres://user@host/db`.
        #[arg(long, value_name = "FILE|URL")]
        from: String,
        /// The destination, of the other kind; it must hold no constellation.
        #[arg(long, value_name = "FILE|URL")]
        to: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn is_postgres(place: &str) -> bool {
    matches!(StoreAt::parse(place), StoreAt::Postgres(_))
}

/// Runs `partner store`.
pub fn run_store(options: &StoreOptions, out: &mut dyn Write) -> Result<i32> {
    let StoreCommand::Copy { from, to, json } = &options.command;
    // Opening a file that is not there would make an empty constellation
    // and copy nothing, as if that were all.
    if !is_postgres(from) && !std::path::Path::new(from).exists() {
        return Err(Error::Usage(format!("there is no database file {from}")));
    }
    let copied = match (is_postgres(from), is_postgres(to)) {
        (false, true) => copy::sqlite_to_pg(&MemoryStore::open(from)?, &PgStore::connect(to)?)?,
        (true, false) => copy::pg_to_sqlite(&PgStore::connect(from)?, &MemoryStore::open(to)?)?,
        _ => {
            return Err(Error::Usage(
                "copy between a database file and PostgreSQL: one of --from and --to is a postgres:// URL".into(),
            ));
        }
    };
    let same = copied.iter().all(|c| c.same);
    // The copy replays its own trace, re-executed on a scratch store.
    let replay = verify_store(&Store::open(&StoreAt::parse(to))?)?;
    let replays = replay.divergence.is_none();
    let replayed = match &replay.divergence {
        None => format!(
            "the copy's trace replays: all {} steps matched ({} re-executed)",
            replay.steps, replay.redone
        ),
        Some(d) => format!(
            "THE COPY'S TRACE DIVERGES at step {} ({}): {} — {}",
            d.step, d.id, d.canonical, d.what
        ),
    };
    if *json {
        write_json(
            out,
            &serde_json::json!({ "tables": copied, "replay": replayed, "faithful": same && replays }),
        )?;
    } else {
        for c in &copied {
            line(out, row(c))?;
        }
        line(
            out,
            if same {
                "every table is the same on both sides"
            } else {
                "SOME TABLES DIFFER: the copy is not faithful"
            },
        )?;
        line(out, replayed)?;
    }
    Ok(if same && replays { 0 } else { 1 })
}

fn row(c: &Copied) -> String {
    let verdict = if c.same { "same" } else { "DIFFERENT" };
    let kept = match c.kept {
        0 => String::new(),
        n => format!(" ({n} there already, kept)"),
    };
    format!(
        "{:<16} {:>9} → {:<9} {verdict}{kept}",
        c.table, c.from, c.to
    )
}
