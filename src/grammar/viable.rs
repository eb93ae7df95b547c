//! Which alternatives of a rule are worth trying at a place: those whose
//! first words begin there (or, after an open wildcard, occur later in the
//! request). Alternatives whose first words are not known are always tried.

use super::model::{FirstWords, RuleSet};
use super::text::{char_at, is_sep, literal_at};

/// True when one of `firsts` (when known) can begin at byte `index`,
/// after separators when `lead`.
pub(super) fn may_start(s: &str, index: usize, firsts: Option<&FirstWords>, lead: bool) -> bool {
    let Some(firsts) = firsts else {
        return true;
    };
    let mut at = index;
    loop {
        if firsts.any_at(s, at) {
            return true;
        }
        if !lead {
            return false;
        }
        match char_at(s, at) {
            Some(c) if is_sep(c) => at += c.len_utf8(),
            _ => return false,
        }
    }
}

/// True when one of `firsts` (when known) occurs anywhere from byte
/// `index` on: where a pending wildcard may end and the alternative begin.
pub(super) fn may_occur(s: &str, index: usize, firsts: Option<&FirstWords>) -> bool {
    let Some(firsts) = firsts else {
        return true;
    };
    let rest = s.as_bytes().get(index..).unwrap_or_default();
    firsts.words().any(|w| match w.as_bytes().first() {
        Some(&b) if b.is_ascii_alphanumeric() => {
            let (lo, up) = (b.to_ascii_lowercase(), b.to_ascii_uppercase());
            memchr::memchr2_iter(lo, up, rest).any(|at| literal_at(s, index + at, w).is_some())
        }
        _ => true,
    })
}

/// The alternatives of a rule worth trying at a place.
pub(super) enum Viable<'a> {
    /// A bit per alternative.
    Mask(u64),
    /// Every one (when not pruning).
    Every,
    /// Too many to remember: each is checked when asked.
    Each {
        s: &'a str,
        rules: &'a RuleSet,
        index: usize,
        wild: bool,
        lead: bool,
    },
}

impl Viable<'_> {
    pub(super) fn has(&self, i: usize) -> bool {
        match *self {
            Viable::Mask(m) => m & (1 << i) != 0,
            Viable::Every => true,
            Viable::Each {
                s,
                rules,
                index,
                wild,
                lead,
            } => viable_at(s, rules, i, index, wild, lead),
        }
    }
}

/// True when alternative `i` of `rules` may begin at byte `index` (after
/// separators when `lead`), or anywhere after it when a wildcard is open.
pub(super) fn viable_at(
    s: &str,
    rules: &RuleSet,
    i: usize,
    index: usize,
    wild: bool,
    lead: bool,
) -> bool {
    if wild {
        may_occur(s, index, rules.firsts(i))
    } else {
        may_start(s, index, rules.firsts(i), lead)
    }
}
