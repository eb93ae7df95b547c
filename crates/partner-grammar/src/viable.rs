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
    /// The alternatives of `count` that may begin, as bits (alternative
    /// `i` is bit `i`), when that is how they are known and `count` fits.
    pub(super) fn mask(&self, count: usize) -> Option<u64> {
        match *self {
            Viable::Mask(m) => Some(m & first_bits(count)),
            Viable::Every if count <= 64 => Some(first_bits(count)),
            _ => None,
        }
    }

    /// Whether alternative `i` may begin.
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

/// The lowest `count` bits set (all 64 for more).
pub(super) fn first_bits(count: usize) -> u64 {
    u64::MAX
        .checked_shr(64usize.saturating_sub(count) as u32)
        .unwrap_or(0)
}

/// The bits of `mask` from the highest down.
pub(super) fn bits_down(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let i = 63usize.checked_sub(mask.leading_zeros() as usize)?;
        mask &= !(1 << i);
        Some(i)
    })
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

#[cfg(test)]
mod tests {
    use super::{bits_down, first_bits};

    #[test]
    fn bits_are_read_from_the_highest_down_and_counts_bound_them() {
        assert_eq!(bits_down(0).count(), 0);
        assert_eq!(bits_down(0b1011).collect::<Vec<_>>(), vec![3, 1, 0]);
        assert_eq!(bits_down(1 << 63 | 1).collect::<Vec<_>>(), vec![63, 0]);
        assert_eq!(bits_down(u64::MAX).count(), 64);
        assert_eq!(first_bits(0), 0);
        assert_eq!(first_bits(3), 0b111);
        assert_eq!(first_bits(64), u64::MAX);
        assert_eq!(first_bits(1000), u64::MAX);
    }
}
