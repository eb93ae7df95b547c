//! Verb matching: exact name → exact alias → case-folded → simple
//! morphology → edit distance within the verb's strictness.

use strsim::damerau_levenshtein;

use super::error::ParseErrorKind;
use super::verbs::{PhraseEntry, Strictness, VerbTable};

/// The verbs one phrase means: one, or two for an alias whose argument
/// decides.
pub type PhraseEntries = smallvec::SmallVec<[PhraseEntry; 2]>;

/// How a written verb was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The canonical name, exactly.
    Exact,
    /// An alias, exactly.
    Alias,
    /// A name or alias in another letter case.
    CaseFolded,
    /// An inflected form (`searching`, `told`, `recalled`).
    Morphology,
    /// A misspelling within the verb's edit-distance threshold.
    Fuzzy(usize),
}

/// The result of matching a written verb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerbMatch {
    /// The verbs the phrase means: one, or two for an alias whose argument
    /// decides (`remember`, `get`).
    /// (Inline for two: a match is made per action, and allocating for
    /// it showed in the parse profile.)
    pub entries: PhraseEntries,
    /// How many whitespace-separated words the phrase used (2 for `look up`).
    pub words: usize,
    /// How it matched.
    pub kind: MatchKind,
}

/// Words shorter than this are never matched by edit distance.
const MIN_FUZZY_LEN: usize = 4;

/// Irregular forms that simple suffix rules miss.
const IRREGULAR: &[(&str, &str)] = &[
    ("told", "tell"),
    ("sent", "send"),
    ("found", "find"),
    ("got", "get"),
    ("gotten", "get"),
    ("sought", "search"),
];

/// Matches the verb token `first` (and, for multi-word aliases, the words
/// after it on the line) against `table`.
pub fn match_verb(
    table: &VerbTable,
    first: &str,
    following: &[&str],
) -> Result<VerbMatch, ParseErrorKind> {
    let folded = first.bytes().any(|b| b.is_ascii_uppercase());
    let lower: std::borrow::Cow<'_, str> = if folded {
        first.to_ascii_lowercase().into()
    } else {
        first.into()
    };
    let exact_kind = |entries: &[PhraseEntry]| {
        if folded {
            MatchKind::CaseFolded
        } else if entries.iter().any(|e| e.canonical) {
            MatchKind::Exact
        } else {
            MatchKind::Alias
        }
    };

    // Multi-word phrases, longest first: `look up`, `search web`, `look_up`.
    let joined = lower.contains(['_', '-']);
    let head = lower
        .split(['_', '-'])
        .find(|w| !w.is_empty())
        .unwrap_or("");
    if joined || (!following.is_empty() && table.starts_phrase(head)) {
        let token_words: Vec<&str> = lower.split(['_', '-']).filter(|w| !w.is_empty()).collect();
        let max_extra = table.max_words().saturating_sub(token_words.len());
        for extra in (0..=max_extra.min(following.len())).rev() {
            if token_words.len() + extra < 2 {
                continue;
            }
            let mut phrase = token_words.join(" ");
            for word in &following[..extra] {
                phrase.push(' ');
                phrase.push_str(&word.to_ascii_lowercase());
            }
            if let Some(entries) = table.lookup(&phrase) {
                return Ok(VerbMatch {
                    entries: PhraseEntries::from_slice(entries),
                    words: 1 + extra,
                    kind: exact_kind(entries),
                });
            }
        }
    }

    if let Some(entries) = table.lookup(&lower) {
        return Ok(VerbMatch {
            entries: PhraseEntries::from_slice(entries),
            words: 1,
            kind: exact_kind(entries),
        });
    }

    let not_strict = |entries: &[PhraseEntry]| -> PhraseEntries {
        entries
            .iter()
            .filter(|e| table.spec(e.spec).strictness != Strictness::Strict)
            .copied()
            .collect()
    };

    let lower = lower.as_ref();
    for stem in stems(lower) {
        if let Some(entries) = table.lookup(&stem) {
            let entries = not_strict(entries);
            if !entries.is_empty() {
                return Ok(VerbMatch {
                    entries,
                    words: 1,
                    kind: MatchKind::Morphology,
                });
            }
        }
    }

    table.near.get_or(first, || fuzzy(table, first, lower))
}

/// Words longer than this are no verb's misspelling; they are not compared.
const MAX_FUZZY_LEN: usize = 32;

fn fuzzy(table: &VerbTable, written: &str, lower: &str) -> Result<VerbMatch, ParseErrorKind> {
    let len = lower.chars().count();
    if len > MAX_FUZZY_LEN {
        return Err(ParseErrorKind::UnknownVerb {
            written: written.chars().take(MAX_FUZZY_LEN).collect::<String>() + "…",
            suggestions: Vec::new(),
        });
    }
    // (distance, phrase, entries within threshold)
    let mut accepted: Vec<(usize, &str, Vec<PhraseEntry>)> = Vec::new();
    let mut strict_near: Option<(usize, String)> = None;
    let mut nearby: Vec<(usize, String)> = Vec::new();

    for (phrase, entries) in table.single_word_phrases() {
        let plen = phrase.chars().count();
        // Every use below wants a distance of at most 2 or a prefix, and
        // the distance is at least the difference in length: a phrase
        // further off in length is not compared (a prefix is exactly that
        // far), so an unknown word costs little.
        let distance = if plen.abs_diff(len) <= 2 && letters_apart(lower, phrase) <= 4 {
            damerau_levenshtein(lower, phrase)
        } else if len >= 2 && phrase.starts_with(lower) {
            plen - len
        } else {
            continue;
        };
        let name_of = |e: &PhraseEntry| table.spec(e.spec).verb.name().to_string();
        if distance <= 2 || (len >= 2 && phrase.starts_with(lower)) {
            for e in entries {
                nearby.push((distance, name_of(e)));
            }
        }
        if len < MIN_FUZZY_LEN || distance == 0 {
            continue;
        }
        // Loose verbs get distance 2 on their own name only; aliases at most 1.
        let within: Vec<PhraseEntry> = entries
            .iter()
            .filter(|e| {
                let max = table.spec(e.spec).strictness.max_distance();
                distance <= if e.canonical { max } else { max.min(1) }
            })
            .cloned()
            .collect();
        if !within.is_empty() {
            accepted.push((distance, phrase, within));
        }
        if plen >= MIN_FUZZY_LEN && distance <= 2 {
            for e in entries {
                if table.spec(e.spec).strictness == Strictness::Strict
                    && strict_near.as_ref().is_none_or(|(d, _)| distance < *d)
                {
                    strict_near = Some((distance, name_of(e)));
                }
            }
        }
    }

    let best = accepted.iter().map(|(d, _, _)| *d).min();
    if let Some((d, suggestion)) = strict_near
        && best.is_none_or(|b| d <= b)
    {
        return Err(ParseErrorKind::StrictVerbMisspelled {
            written: written.to_string(),
            suggestion,
        });
    }
    if let Some(best) = best {
        return at_best(table, written, &accepted, best);
    }
    unknown(written, nearby)
}

/// Of the phrases accepted within their verbs' distance, those nearest
/// `best`: their one verb, or an ambiguity naming every verb they mean.
fn at_best(
    table: &VerbTable,
    written: &str,
    accepted: &[(usize, &str, Vec<PhraseEntry>)],
    best: usize,
) -> Result<VerbMatch, ParseErrorKind> {
    let mut nearest: Vec<&(usize, &str, Vec<PhraseEntry>)> =
        accepted.iter().filter(|(d, _, _)| *d == best).collect();
    nearest.sort_by_key(|(_, phrase, _)| *phrase);
    let mut verbs: Vec<String> = Vec::new();
    for (_, _, entries) in &nearest {
        for e in entries {
            let name = table.spec(e.spec).verb.name().to_string();
            if !verbs.contains(&name) {
                verbs.push(name);
            }
        }
    }
    let (_, _, first_entries) = nearest[0];
    let one_phrase_explains_all = verbs.len() == first_entries.len();
    if verbs.len() == 1 || one_phrase_explains_all {
        return Ok(VerbMatch {
            entries: PhraseEntries::from_slice(first_entries),
            words: 1,
            kind: MatchKind::Fuzzy(best),
        });
    }
    verbs.sort();
    Err(ParseErrorKind::AmbiguousVerb {
        written: written.to_string(),
        candidates: verbs,
    })
}

/// An unknown verb, with up to three verbs near it as suggestions.
fn unknown(written: &str, mut nearby: Vec<(usize, String)>) -> Result<VerbMatch, ParseErrorKind> {
    nearby.sort();
    let mut suggestions: Vec<String> = Vec::new();
    for (_, name) in nearby {
        if !suggestions.contains(&name) && suggestions.len() < 3 {
            suggestions.push(name);
        }
    }
    Err(ParseErrorKind::UnknownVerb {
        written: written.to_string(),
        suggestions,
    })
}

/// How many letters one word has that the other lacks, counted both ways
/// (letters grouped in 64 buckets, which can only lower the count): each
/// edit changes it by at most 2, so words more than 4 apart are more than
/// two edits apart. Cheap, so most phrases are never compared in full.
fn letters_apart(a: &str, b: &str) -> usize {
    let mut counts = [0i32; 64];
    for c in a.chars() {
        counts[c as usize % 64] += 1;
    }
    for c in b.chars() {
        counts[c as usize % 64] -= 1;
    }
    counts.iter().map(|n| n.unsigned_abs() as usize).sum()
}

/// Candidate base forms of an inflected word, most likely first.
fn stems(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return out;
    }
    for (form, base) in IRREGULAR {
        if word == *form {
            out.push(base.to_string());
        }
    }
    let undouble = |base: &str| -> Option<String> {
        let b = base.as_bytes();
        (b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2])
            .then(|| base[..base.len() - 1].to_string())
    };
    if let Some(base) = word
        .strip_suffix("ies")
        .or_else(|| word.strip_suffix("ied"))
    {
        out.push(format!("{base}y"));
    }
    if let Some(base) = word.strip_suffix("ing") {
        out.push(base.to_string());
        out.push(format!("{base}e"));
        out.extend(undouble(base));
    }
    if let Some(base) = word.strip_suffix("ed") {
        out.push(base.to_string());
        out.push(format!("{base}e"));
        out.extend(undouble(base));
    }
    if let Some(base) = word.strip_suffix("es") {
        out.push(base.to_string());
    }
    if let Some(base) = word.strip_suffix('s') {
        out.push(base.to_string());
    }
    out.retain(|s| s.len() >= 2);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_cover_common_inflections() {
        assert!(stems("searching").contains(&"search".to_string()));
        assert!(stems("recalled").contains(&"recall".to_string()));
        assert!(stems("told").contains(&"tell".to_string()));
        assert!(stems("stopped").contains(&"stop".to_string()));
        assert!(stems("calculating").contains(&"calculate".to_string()));
        assert!(stems("replied").contains(&"reply".to_string()));
        assert!(stems("r2d2").is_empty());
    }
}
