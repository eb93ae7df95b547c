//! `partner partners`: the people who decide, each with a name and a
//! token of their own. A token is printed once, when its partner is added
//! (the store keeps only its hash); a daemon's TCP listener accepts only
//! these tokens, and a console shows one to act under its partner's name.

use std::io::Write;

use serde::Serialize;

use super::common::{DbArg, line, write_json};
use crate::core::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result};
use crate::policy::partners::{PartnerError, PartnerRecord, Partners};
use crate::store::memory::MemoryStore;
use crate::store::postgres::PgStore;
use partner_engine::store::StoreAt;

/// Options of `partner partners`.
#[derive(Debug, Clone, clap::Args)]
pub struct PartnersOptions {
    #[command(flatten)]
    /// The database.
    pub db: DbArg,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: PartnersCommand,
}

/// `partner partners` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum PartnersCommand {
    /// Add a partner and print their token (shown this once), or write
    /// it to a new file only they may read (`--token-file`).
    Add {
        /// Their name: lowercase letters, digits, '-' or '_'.
        name: String,
        /// Write the token to this new file (mode 600) instead of
        /// printing it: the file `partner attach --token-file` reads.
        #[arg(long, value_name = "FILE")]
        token_file: Option<std::path::PathBuf>,
    },
    /// List the partners, revoked ones too.
    List,
    /// Revoke a partner's token: it opens nothing from now on, and a
    /// connection made with it may do nothing more.
    Revoke {
        /// The partner's name.
        name: String,
    },
}

/// What `partner partners add --json` prints: the token, or the file
/// it was written to.
#[derive(Serialize)]
struct Added<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token_file: Option<String>,
}

/// Writes `token` to `path`, a new file only its owner may read.
fn write_token(path: &std::path::Path, token: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(format!("{token}\n").as_bytes())?;
    file.sync_all()
}

fn store(options: &PartnersOptions) -> Result<Box<dyn Partners>> {
    match options.db.store_at()? {
        StoreAt::Postgres(url) => Ok(Box::new(PgStore::connect(&url)?)),
        StoreAt::File(path) => Ok(Box::new(MemoryStore::open(path)?)),
    }
}

fn refused(e: PartnerError) -> Error {
    match e {
        PartnerError::Store(e) => e.into(),
        other => Error::Usage(other.to_string()),
    }
}

/// Runs `partner partners`.
pub fn run_partners(options: &PartnersOptions, out: &mut dyn Write) -> Result<i32> {
    let store = store(options)?;
    let now = SystemClock.now_ms();
    match &options.command {
        PartnersCommand::Add { name, token_file } => {
            if let Some(file) = token_file
                && file.exists()
            {
                return Err(Error::Usage(format!(
                    "{} exists: give a new file for the token; nothing was added",
                    file.display()
                )));
            }
            let token = store.add_partner(name, now).map_err(refused)?;
            let shown = match token_file {
                Some(file) => {
                    write_token(file, &token).map_err(|e| {
                        Error::Runtime(format!(
                            "{name} was added, but the token could not be written to {} ({e}): `partner partners revoke {name}`, then add them again",
                            file.display()
                        ))
                    })?;
                    Some(file.display().to_string())
                }
                None => None,
            };
            if options.json {
                let added = Added {
                    name,
                    token: shown.is_none().then_some(token.as_str()),
                    token_file: shown,
                };
                write_json(out, &added)?;
            } else if let Some(file) = shown {
                line(
                    out,
                    format!(
                        "added partner {name}; their token is in {file} (only there: the store keeps its hash)"
                    ),
                )?;
            } else {
                line(
                    out,
                    format!("added partner {name}; their token (shown once):"),
                )?;
                line(out, &token)?;
            }
        }
        PartnersCommand::List => {
            let partners = store.partners()?;
            if options.json {
                write_json(out, &partners)?;
            } else if partners.is_empty() {
                line(out, "no partners yet: `partner partners add NAME` adds one")?;
            } else {
                for p in &partners {
                    line(out, listed(p))?;
                }
            }
        }
        PartnersCommand::Revoke { name } => {
            let revoked = store.revoke_partner(name, now).map_err(refused)?;
            line(
                out,
                if revoked {
                    format!("revoked {name}'s token")
                } else {
                    format!("{name}'s token was revoked already")
                },
            )?;
        }
    }
    Ok(0)
}

/// One partner, a line.
fn listed(p: &PartnerRecord) -> String {
    let since = format_time(p.created_at);
    match p.revoked_at {
        Some(at) => format!("{}  added {since}  revoked {}", p.name, format_time(at)),
        None => format!("{}  added {since}", p.name),
    }
}
