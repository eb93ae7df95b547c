//! [`Partners`]: the people who decide, each with a name and a token of
//! their own, on either back end. A token is shown once, when the partner
//! is added; the store keeps only its SHA-256, so a copy of the database
//! does not let anyone in. A revoked partner's token opens nothing, and
//! a connection made with it is refused its next decision.

use partner_core::clock::Millis;
use partner_store::memory::{MemoryError, MemoryStore};
use partner_store::postgres::{PgStore, failed};
use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

/// What every token starts with, so that one pasted in the wrong place is
/// recognised (and a secret scanner can find it).
pub const TOKEN_PREFIX: &str = "ptk_";

/// The longest name a partner may have.
pub const MAX_NAME: usize = partner_protocol::request::MAX_PARTNER_NAME;

/// One partner as the store keeps it (never the token).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartnerRecord {
    /// The name decisions are recorded under (`partner:NAME`).
    pub name: String,
    /// When the partner was added.
    pub created_at: Millis,
    /// When the partner was revoked, if they were.
    pub revoked_at: Option<Millis>,
}

impl PartnerRecord {
    /// True while the partner's token opens the door.
    pub fn active(&self) -> bool {
        self.revoked_at.is_none()
    }
}

/// Why a partner could not be added or revoked.
#[derive(Debug, thiserror::Error)]
pub enum PartnerError {
    /// The name is not one a partner may have.
    #[error(
        "{0:?} is not a partner's name: 1 to {MAX_NAME} lowercase letters, digits, '-' or '_', starting with a letter"
    )]
    BadName(String),
    /// A partner of that name exists (revoked or not: names are not reused,
    /// so the record of who decided stays unambiguous).
    #[error("there is already a partner named {0}")]
    Exists(String),
    /// No partner has that name.
    #[error("there is no partner named {0}")]
    NoPartner(String),
    /// The random bytes for a token could not be read.
    #[error("cannot make a token: {0}")]
    Random(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] MemoryError),
}

impl From<rusqlite::Error> for PartnerError {
    fn from(e: rusqlite::Error) -> Self {
        PartnerError::Store(e.into())
    }
}

/// Checks a partner's name.
pub fn check_name(name: &str) -> Result<(), PartnerError> {
    if partner_protocol::request::is_partner_name(name) {
        Ok(())
    } else {
        Err(PartnerError::BadName(name.to_string()))
    }
}

/// A new token: the prefix and 32 random bytes, in hex.
pub fn new_token() -> Result<String, PartnerError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| PartnerError::Random(e.to_string()))?;
    Ok(format!("{TOKEN_PREFIX}{}", hex::encode(bytes)))
}

/// What the store keeps of a token.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.trim().as_bytes()))
}

/// The partners of a constellation, on whichever database holds it.
pub trait Partners: Send + Sync {
    /// Adds a partner; their token, which is not kept and cannot be shown
    /// again.
    fn add_partner(&self, name: &str, now: Millis) -> Result<String, PartnerError>;
    /// Every partner, revoked ones too, by name.
    fn partners(&self) -> Result<Vec<PartnerRecord>, MemoryError>;
    /// Revokes a partner's token; false when it was revoked already.
    fn revoke_partner(&self, name: &str, now: Millis) -> Result<bool, PartnerError>;
    /// The active partner a token belongs to, if any.
    fn partner_of(&self, token: &str) -> Result<Option<String>, MemoryError>;
    /// True when `name` is an active partner.
    fn is_active(&self, name: &str) -> Result<bool, MemoryError> {
        Ok(self
            .partners()?
            .iter()
            .any(|p| p.name == name && p.active()))
    }
}

impl Partners for MemoryStore {
    fn add_partner(&self, name: &str, now: Millis) -> Result<String, PartnerError> {
        check_name(name)?;
        let token = new_token()?;
        self.transaction(|tx| {
            let added = tx
                .execute(
                    "INSERT INTO partners (name, token_hash, created_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (name) DO NOTHING",
                    params![name, token_hash(&token), now],
                )
                .map_err(MemoryError::from)?;
            if added == 0 {
                return Err(PartnerError::Exists(name.to_string()));
            }
            Ok(token)
        })
    }

    fn partners(&self) -> Result<Vec<PartnerRecord>, MemoryError> {
        let conn = self.read();
        let mut stmt =
            conn.prepare("SELECT name, created_at, revoked_at FROM partners ORDER BY name")?;
        let rows = stmt.query_map([], |r| {
            Ok(PartnerRecord {
                name: r.get(0)?,
                created_at: r.get(1)?,
                revoked_at: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn revoke_partner(&self, name: &str, now: Millis) -> Result<bool, PartnerError> {
        self.transaction(|tx| {
            let found: Option<Option<Millis>> = tx
                .query_row(
                    "SELECT revoked_at FROM partners WHERE name = ?1",
                    [name],
                    |r| r.get(0),
                )
                .optional()
                .map_err(MemoryError::from)?;
            match found {
                None => Err(PartnerError::NoPartner(name.to_string())),
                Some(Some(_)) => Ok(false),
                Some(None) => {
                    tx.execute(
                        "UPDATE partners SET revoked_at = ?2 WHERE name = ?1",
                        params![name, now],
                    )
                    .map_err(MemoryError::from)?;
                    Ok(true)
                }
            }
        })
    }

    fn partner_of(&self, token: &str) -> Result<Option<String>, MemoryError> {
        Ok(self
            .read()
            .query_row(
                "SELECT name FROM partners WHERE token_hash = ?1 AND revoked_at IS NULL",
                [token_hash(token)],
                |r| r.get(0),
            )
            .optional()?)
    }
}

impl Partners for PgStore {
    fn add_partner(&self, name: &str, now: Millis) -> Result<String, PartnerError> {
        check_name(name)?;
        let token = new_token()?;
        let added = self.transaction(|tx| {
            tx.conn()
                .execute(
                    "INSERT INTO partners (name, token_hash, created_at) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO NOTHING",
                    &[&name, &token_hash(&token), &now],
                )
                .map_err(failed)
        })?;
        if added == 0 {
            return Err(PartnerError::Exists(name.to_string()));
        }
        Ok(token)
    }

    fn partners(&self) -> Result<Vec<PartnerRecord>, MemoryError> {
        let rows = self.transaction(|tx| {
            tx.conn()
                .query(
                    "SELECT name, created_at, revoked_at FROM partners ORDER BY name",
                    &[],
                )
                .map_err(failed)
        })?;
        Ok(rows
            .iter()
            .map(|r| PartnerRecord {
                name: r.get(0),
                created_at: r.get(1),
                revoked_at: r.get(2),
            })
            .collect())
    }

    fn revoke_partner(&self, name: &str, now: Millis) -> Result<bool, PartnerError> {
        let row = self.transaction(|tx| {
            tx.conn()
                .query_opt(
                    "UPDATE partners SET revoked_at = COALESCE(revoked_at, $2) WHERE name = $1
                 RETURNING revoked_at = $2",
                    &[&name, &now],
                )
                .map_err(failed)
        })?;
        match row {
            None => Err(PartnerError::NoPartner(name.to_string())),
            Some(row) => Ok(row.get::<_, bool>(0)),
        }
    }

    fn partner_of(&self, token: &str) -> Result<Option<String>, MemoryError> {
        let row = self.transaction(|tx| {
            tx.conn()
                .query_opt(
                    "SELECT name FROM partners WHERE token_hash = $1 AND revoked_at IS NULL",
                    &[&token_hash(token)],
                )
                .map_err(failed)
        })?;
        Ok(row.map(|r| r.get(0)))
    }
}
