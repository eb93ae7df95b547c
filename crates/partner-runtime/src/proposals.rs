//! Plain words to dialect actions (the dialect's [`Proposer`], re-exported)
//! and what the partner teaches: a learned phrasing stored in the
//! database, for every process's proposer to read.

pub use partner_dialect::proposals::*;

/// Stores that `words` stand for `action`, once it is sure they do (see
/// [`learnable`]). Returns what was learned, in words.
pub fn learn(
    store: &dyn partner_store::memory::learned::Phrasings,
    words: &str,
    action: &str,
    now: partner_core::clock::Millis,
) -> Result<String, String> {
    let (words, action, rule) = learnable(words, action)?;
    let id = store
        .learn(&rule, &words, &action, now)
        .map_err(|e| e.to_string())?;
    Ok(format!("learned #{id}: {words}  →  {action}"))
}
