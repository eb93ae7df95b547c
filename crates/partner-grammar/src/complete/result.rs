//! What completion answers: the public result (words by separator mode,
//! properties to fill, how much of the prefix they follow), the candidates
//! the search finds, and how they settle into the result.

use serde_json::{Value as Json, json};

use super::super::parse::Spacing;
use super::super::text::wildcard_text;
use super::super::value::{Value, utf16_len};

/// Which way the person is typing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Adding text: offer what comes next.
    Forward,
    /// Deleting: offer the last matched word again.
    Backward,
}

/// Completions that share a separator mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The words offered.
    pub completions: Vec<String>,
    /// `autoSpacePunctuation`, `spacePunctuation`, `optionalSpacePunctuation`
    /// or `none`.
    pub separator_mode: &'static str,
}

/// A wildcard to fill: the value so far and where the wildcard lands.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    /// The partial value.
    pub value: Value,
    /// The property paths to fill.
    pub names: Vec<String>,
    /// The separator mode before it.
    pub separator_mode: &'static str,
}

/// What may follow a prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Literal words, by separator mode.
    pub groups: Vec<Group>,
    /// Wildcards to fill.
    pub properties: Vec<Property>,
    /// How much of the prefix (UTF-16 units) the completions follow.
    pub matched_prefix_length: usize,
    /// True when only the grammar's own words can follow.
    pub closed_set: bool,
    /// True when the other direction would answer differently.
    pub direction_sensitive: bool,
    /// `all`, `some` or `none` of the candidates sit after a wildcard.
    pub after_wildcard: &'static str,
}

impl Completion {
    /// The reference's JSON shape.
    pub fn to_json(&self) -> Json {
        json!({
            "groups": self.groups.iter().map(|g| json!({
                "completions": g.completions,
                "separatorMode": g.separator_mode,
            })).collect::<Vec<_>>(),
            "properties": self.properties.iter().map(|p| json!({
                "match": p.value.to_json(),
                "propertyNames": p.names,
                "separatorMode": p.separator_mode,
            })).collect::<Vec<_>>(),
            "matchedPrefixLength": self.matched_prefix_length,
            "closedSet": self.closed_set,
            "directionSensitive": self.direction_sensitive,
            "afterWildcard": self.after_wildcard,
        })
    }
}

/// The reference's name for a separator mode.
pub(super) fn mode_name(mode: Spacing) -> &'static str {
    match mode {
        Spacing::Auto => "autoSpacePunctuation",
        Spacing::Required => "spacePunctuation",
        Spacing::Optional => "optionalSpacePunctuation",
        Spacing::None => "none",
    }
}

/// What a candidate offers.
pub(super) enum Kind {
    Word(String),
    Property(Property),
}

/// One thing that may follow the prefix, and where.
pub(super) struct Candidate {
    pub at: usize,
    pub kind: Kind,
    pub mode: Spacing,
    pub after_wildcard: bool,
    /// A keyword after a wildcard whose end is open: it may be offered at
    /// any place after this wildcard start where the rest of the
    /// candidates settle.
    pub range: Option<usize>,
    /// A keyword begun at the end of a wildcard's text: it pins the place.
    pub partial: bool,
}

/// Where the candidates settle (the most of the prefix they follow, at
/// least `min_prefix` UTF-16 units), keywords after an open wildcard
/// placed there or dropped; the place, if any.
fn settle(
    candidates: &mut Vec<Candidate>,
    prefix: &str,
    min_prefix: Option<usize>,
    direction: Direction,
) -> Option<usize> {
    let min = min_prefix.unwrap_or(0);
    let allowed = |at: usize| utf16_len(&prefix[..at]) >= min;
    if direction == Direction::Forward {
        // A keyword after an open wildcard follows a keyword begun inside
        // a wildcard when there is one; otherwise it stands at the end.
        let partial_at = candidates.iter().filter(|c| c.partial).map(|c| c.at).max();
        match partial_at {
            Some(p) => candidates.retain_mut(|c| match c.range {
                Some(start) => {
                    let fits = start < p && wildcard_text(prefix, start, p, c.mode).is_some();
                    c.at = p;
                    c.range = None;
                    fits
                }
                None => true,
            }),
            None => {
                for c in candidates.iter_mut() {
                    c.range = None;
                }
            }
        }
    }
    // Where the fixed candidates settle; (backward) keywords after an open
    // wildcard follow them there.
    let best = candidates
        .iter()
        .filter(|c| c.range.is_none())
        .map(|c| c.at)
        .filter(|at| allowed(*at))
        .max();
    if let Some(b) = best {
        // A place reached only through wildcards, pinned by no keyword, is
        // no place to offer what follows another wildcard.
        let at_best: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| c.range.is_none() && c.at == b)
            .collect();
        let open = !at_best.is_empty() && at_best.iter().all(|c| c.after_wildcard && !c.partial);
        candidates.retain_mut(|c| match c.range {
            None => true,
            Some(start) => {
                let fits = !open
                    && start < b
                    && b <= prefix.len()
                    && wildcard_text(prefix, start, b, c.mode).is_some();
                c.at = b;
                fits
            }
        });
    }
    best
}

/// The completion the candidates make: each one at the place they settle,
/// words grouped by separator mode (each once), a property once for each
/// path that reaches it (as the reference lists them).
pub(super) fn build(
    mut candidates: Vec<Candidate>,
    prefix: &str,
    min_prefix: Option<usize>,
    direction: Direction,
) -> Completion {
    let best = settle(&mut candidates, prefix, min_prefix, direction);
    let mut groups: Vec<Group> = Vec::new();
    let mut properties = Vec::new();
    // Whether any candidate follows a wildcard, and whether a keyword
    // does not (a property that follows none makes it neither).
    let (mut after, mut keyword_before) = (false, false);
    if let Some(best) = best {
        for c in candidates.into_iter().filter(|c| c.at == best) {
            match (c.after_wildcard, &c.kind) {
                (true, _) => after = true,
                (false, Kind::Word(_)) => keyword_before = true,
                (false, Kind::Property(_)) => {}
            }
            match c.kind {
                Kind::Word(w) => {
                    let mode = mode_name(c.mode);
                    match groups.iter_mut().find(|g| g.separator_mode == mode) {
                        Some(g) => {
                            if !g.completions.contains(&w) {
                                g.completions.push(w);
                            }
                        }
                        None => groups.push(Group {
                            completions: vec![w],
                            separator_mode: mode,
                        }),
                    }
                }
                Kind::Property(p) => properties.push(p),
            }
        }
    }
    let length = best.map_or(0, |b| utf16_len(&prefix[..b]));
    Completion {
        closed_set: properties.is_empty(),
        groups,
        properties,
        matched_prefix_length: length,
        direction_sensitive: length > 0,
        after_wildcard: match (after, keyword_before) {
            (false, _) => "none",
            (true, true) => "some",
            (true, false) => "all",
        },
    }
}
