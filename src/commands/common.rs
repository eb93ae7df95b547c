//! Helpers shared by the runtime commands: opening the executor, reading
//! text arguments, printing JSON.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::exec::{ExecConfig, Executor};
use crate::permission::Policy;

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

/// Opens the executor over `db` with a policy file (or the default).
pub fn open_executor(db: &Path, policy: Option<&Path>, agents: &[String]) -> Result<Executor> {
    let policy = load_policy(policy)?;
    let config = ExecConfig {
        agents: agents.to_vec(),
        ..ExecConfig::default()
    };
    Ok(Executor::open(db, policy, config)?)
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

/// The database path given to a command.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArg {
    /// The constellation's database file (created if missing). Default: the
    /// database `partner` itself uses (for ./partner.toml, else the demo),
    /// in the platform's data directory. Accepted before or after any
    /// subcommand.
    #[arg(long, value_name = "FILE", global = true)]
    pub db: Option<PathBuf>,
}

impl DbArg {
    /// The database to open.
    pub fn path(&self) -> Result<PathBuf> {
        if let Some(db) = &self.db {
            return Ok(db.clone());
        }
        let (config, _) = super::run::load_constellation(&super::run::RunOptions::default())?;
        super::run::database_path(None, &config.name)
    }

    /// The database to read, which must exist: a mistyped path is an
    /// error, never a new empty database answering that nothing is there.
    pub fn existing(&self) -> Result<PathBuf> {
        let path = self.path()?;
        if path.exists() {
            Ok(path)
        } else {
            Err(Error::Usage(format!(
                "no database at {} (check the path; partner, partner serve and partner exec create one)",
                path.display()
            )))
        }
    }
}

/// The `[embeddings]` of the constellation config `config`, or of
/// ./partner.toml when none is given and it exists (none otherwise, as
/// the demo has none): the embedder commands outside a running
/// constellation search with.
pub fn embeddings(config: Option<&Path>) -> Result<crate::embed::EmbeddingsConfig> {
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
