//! Helpers shared by the runtime commands: opening the executor, reading
//! text arguments, printing JSON.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::engine::exec::{ExecConfig, Executor};
use crate::error::{Error, Result};
use crate::policy::Policy;
use partner_engine::store::StoreAt;

/// Loads a policy file, or the built-in default.
pub fn load_policy(path: Option<&Path>) -> Result<Policy> {
    let Some(path) = path else {
        return Ok(Policy::default());
    };
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Policy::from_toml(&text).map_err(|source| Error::Policy {
        path: path.to_path_buf(),
        source,
    })
}

/// Opens the executor over the store `at` with a policy file (or the
/// default).
pub fn open_executor(at: &StoreAt, policy: Option<&Path>, agents: &[String]) -> Result<Executor> {
    let policy = load_policy(policy)?;
    let config = ExecConfig {
        agents: agents.to_vec(),
        ..ExecConfig::default()
    };
    Ok(Executor::open_at(at, policy, config)?)
}

/// The text of an argument that may be `-` for standard input.
pub fn text_arg(value: &str, stdin: &mut dyn Read) -> Result<String> {
    if value != "-" {
        return Ok(value.to_string());
    }
    let mut bytes = Vec::new();
    stdin.read_to_end(&mut bytes).map_err(Error::Stdin)?;
    String::from_utf8(bytes).map_err(|e| Error::NotText {
        what: "standard input".into(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Writes a value as one line of JSON.
pub fn write_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(|e| Error::Write(e.into()))?;
    writeln!(out).map_err(Error::Write)
}

/// Writes one line.
pub fn line(out: &mut dyn Write, text: impl std::fmt::Display) -> Result<()> {
    writeln!(out, "{text}").map_err(Error::Write)
}

/// The store given to a command: a database file (`--db`) or any store
/// (`--store`, a file or a `postgres://` URL; `PARTNER_STORE` when neither
/// flag is given).
#[derive(Debug, Clone, clap::Args)]
pub struct DbArg {
    /// The constellation's database file: a command that writes creates
    /// it if missing, one that only reads (replay, trace, pending list)
    /// refuses a missing one. Default: the database `partner` itself uses
    /// (for ./partner.toml, else the demo), in the platform's data
    /// directory. Accepted before or after any subcommand.
    #[arg(long, value_name = "FILE", global = true)]
    pub db: Option<PathBuf>,
    /// The constellation's store: a database file, or a PostgreSQL
    /// database (`postgres://user@host:port/db`) shared by a team's
    /// daemons. Default: `PARTNER_STORE`, else as `--db`.
    #[arg(long, value_name = "URL", global = true, conflicts_with = "db")]
    pub store: Option<String>,
}

/// The environment variable naming the store when no flag does.
pub const STORE_ENV: &str = "PARTNER_STORE";

impl DbArg {
    /// No flag given: the default store.
    pub fn default_store() -> DbArg {
        DbArg {
            db: None,
            store: None,
        }
    }

    /// The database file to open (for the commands that need a file).
    pub fn path(&self) -> Result<PathBuf> {
        match self.store_at()? {
            StoreAt::File(path) => Ok(path),
            StoreAt::Postgres(_) => Err(Error::Usage(
                "this command needs a database file (--db), not a PostgreSQL store".into(),
            )),
        }
    }

    /// Where the store is: `--store`, `--db`, `PARTNER_STORE`, the
    /// `[store] url` of ./partner.toml, or the default database file.
    pub fn store_at(&self) -> Result<StoreAt> {
        if let Some(at) = &self.store {
            return Ok(StoreAt::parse(at));
        }
        if let Some(db) = &self.db {
            return Ok(StoreAt::File(db.clone()));
        }
        if let Ok(at) = std::env::var(STORE_ENV)
            && !at.trim().is_empty()
        {
            return Ok(StoreAt::parse(&at));
        }
        let (config, _) = super::run::load_constellation(&super::run::RunOptions::default())?;
        if let Some(at) = &config.store {
            return Ok(StoreAt::parse(at));
        }
        Ok(StoreAt::File(super::run::database_path(
            None,
            &config.name,
        )?))
    }

    /// The store to read, which must exist: a mistyped path is an error,
    /// never a new empty database answering that nothing is there (a
    /// PostgreSQL store is reached, or its error says why not).
    pub fn existing_at(&self) -> Result<StoreAt> {
        let at = self.store_at()?;
        if let StoreAt::File(path) = &at
            && !path.exists()
        {
            return Err(Error::Usage(format!(
                "no database at {} (check the path; partner, partner serve and partner exec create one)",
                path.display()
            )));
        }
        Ok(at)
    }

    /// The database file to read, which must exist.
    pub fn existing(&self) -> Result<PathBuf> {
        match self.existing_at()? {
            StoreAt::File(path) => Ok(path),
            StoreAt::Postgres(_) => Err(Error::Usage(
                "this command needs a database file (--db), not a PostgreSQL store".into(),
            )),
        }
    }
}

/// The `[embeddings]` of the constellation config `config`, or of
/// ./partner.toml when none is given and it exists (none otherwise, as
/// the demo has none): the embedder commands outside a running
/// constellation search with.
pub fn embeddings(config: Option<&Path>) -> Result<crate::engine::embed::EmbeddingsConfig> {
    let options = super::run::RunOptions {
        config: config.map(Path::to_path_buf),
        ..super::run::RunOptions::default()
    };
    Ok(super::run::load_constellation(&options)?.0.exec.embeddings)
}

/// Text read from a file or standard input (`what` names it in the error
/// when it is not UTF-8, with where it stops being text).
pub fn read_text(what: &str, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| Error::NotText {
        what: what.to_string(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Adds the verbs and aliases of a verb file to `table`: an unreadable
/// file, one that is not text or not a valid verb file is an error naming
/// it.
pub fn add_verb_file(table: &mut crate::dialect::VerbTable, path: &Path) -> Result<()> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = read_text(&path.display().to_string(), bytes)?;
    table
        .extend_from_toml(&text)
        .map_err(|source| Error::VerbFile {
            path: path.to_path_buf(),
            source,
        })
}
