//! What completion answers: the public result (words by separator mode,
//! properties to fill, how much of the prefix they follow), the candidates
//! the search finds, and how they settle into the result.

use serde_json::{Value as Json, json};

use super::super::parse::Spacing;
use super::super::value::Value;

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
