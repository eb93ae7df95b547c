//! The words an alternative cannot match without: literals it must read
//! (beyond the first, which the dispatch table checks where it would
//! begin), and for a rule it must go through, one of that rule's first
//! words. An alternative missing one of them anywhere in the request is
//! not tried at all — the cheapest parse is the one never started.
//!
//! Only ASCII words are kept: they match byte for byte (case aside), so
//! one missing from the request's bytes cannot be matched anywhere. Words
//! of other scripts are left out (case folding may change their bytes).

use super::model::{Part, Start};

/// Most needs kept for one alternative (longest words first: rarer, and
/// as cheap to look for).
const MAX_NEEDS: usize = 8;

/// Most words in one "any of" need (a rule's first words).
const MAX_CHOICES: usize = 8;

/// One thing an alternative needs: one of these words.
#[derive(Debug, Clone)]
pub(super) struct Need(Box<[Word]>);

/// A needed word, as the letter pairs it holds (lowercase ASCII): a
/// request lacking one of them cannot hold the word.
#[derive(Debug, Clone)]
struct Word {
    /// Its one byte, for a one-letter word.
    single: Option<u8>,
    /// Its pairs of adjacent bytes, as [`pair`] keys.
    pairs: Box<[u16]>,
}

impl Word {
    fn new(w: &str) -> Word {
        let b = w.as_bytes();
        Word {
            single: (b.len() == 1).then(|| b[0] & 0x1f),
            pairs: b.windows(2).map(|p| pair(p[0], p[1])).collect(),
        }
    }

    fn in_(&self, g: &Grams) -> bool {
        self.single.is_none_or(|b| g.singles & (1 << b) != 0)
            && self.pairs.iter().all(|&k| g.has(k))
    }
}

/// The byte pair `a b`, case aside, as one of 1,024 keys: a byte's low
/// five bits, which keep letters apart and make case no matter (other
/// bytes may share a key with a letter, which only lets more through).
fn pair(a: u8, b: u8) -> u16 {
    u16::from(a & 0x1f) << 5 | u16::from(b & 0x1f)
}

/// Which bytes and byte pairs a request holds, case aside: enough to rule
/// out most words it lacks with a few bit tests.
#[derive(Debug, Clone, Default)]
pub(super) struct Grams {
    /// A bit per byte's low five bits.
    singles: u32,
    pairs: [u64; 16],
}

impl Grams {
    /// The bytes and pairs of `s`.
    pub(super) fn of(s: &str) -> Grams {
        let mut g = Grams::default();
        let b = s.as_bytes();
        let Some(&first) = b.first() else {
            return g;
        };
        g.singles |= 1 << (first & 0x1f);
        let mut prev = first;
        for &c in &b[1..] {
            g.singles |= 1 << (c & 0x1f);
            let k = pair(prev, c);
            g.pairs[usize::from(k >> 6)] |= 1 << (k & 63);
            prev = c;
        }
        g
    }

    fn has(&self, k: u16) -> bool {
        self.pairs[usize::from(k >> 6)] & (1 << (k & 63)) != 0
    }
}

impl Need {
    /// False when no word of it can be in the request `g` describes.
    fn met(&self, g: &Grams) -> bool {
        self.0.iter().any(|w| w.in_(g))
    }
}

/// What each alternative of a rule set needs.
#[derive(Debug, Clone, Default)]
pub(super) struct Needs {
    per_alt: Vec<Vec<Need>>,
}

impl Needs {
    /// Needs for `alts` (each alternative's parts), with `starts(part)`
    /// giving a nested rule's first words.
    pub(super) fn new<'a>(
        alts: impl Iterator<Item = &'a [Part]>,
        starts: &mut dyn FnMut(&Part) -> Option<Vec<Start>>,
    ) -> Needs {
        Needs {
            per_alt: alts.map(|parts| alternative(parts, starts)).collect(),
        }
    }

    /// True when no alternative needs anything (nothing to check).
    pub(super) fn is_empty(&self) -> bool {
        self.per_alt.iter().all(Vec::is_empty)
    }

    /// Of the alternatives in `mask`, those whose needs the request `g`
    /// describes may meet.
    pub(super) fn filter(&self, g: &Grams, mut mask: u64) -> u64 {
        for (i, needs) in self.per_alt.iter().enumerate().take(64) {
            if mask & (1 << i) != 0 && !needs.iter().all(|n| n.met(g)) {
                mask &= !(1 << i);
            }
        }
        mask
    }
}

fn alternative(parts: &[Part], starts: &mut dyn FnMut(&Part) -> Option<Vec<Start>>) -> Vec<Need> {
    let mut needs: Vec<Need> = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        match part {
            Part::Str(words) => {
                // The dispatch table already looked at the first word of
                // a first part.
                let skip = usize::from(k == 0);
                for w in words.iter().skip(skip) {
                    if let Some(w) = ascii_word(w) {
                        needs.push(Need(Box::new([Word::new(&w)])));
                    }
                }
            }
            Part::Rules {
                optional: false, ..
            } => {
                if let Some(need) = starts(part).and_then(|s| choices(&s)) {
                    needs.push(need);
                }
            }
            Part::Rules { .. } | Part::Wild { .. } | Part::Num { .. } => {}
        }
    }
    needs.sort_by_key(|n| std::cmp::Reverse(n.0.iter().map(|w| w.pairs.len()).min().unwrap_or(0)));
    needs.truncate(MAX_NEEDS);
    needs
}

/// One of a rule's first words, when every alternative must begin with
/// one of a few ASCII words.
fn choices(starts: &[Start]) -> Option<Need> {
    let mut words: Vec<Box<str>> = Vec::new();
    for start in starts {
        let Start::Words(first) = start else {
            return None;
        };
        for w in first.words() {
            words.push(ascii_word(w)?);
        }
    }
    words.sort();
    words.dedup();
    (!words.is_empty() && words.len() <= MAX_CHOICES)
        .then(|| Need(words.iter().map(|w| Word::new(w)).collect()))
}

fn ascii_word(w: &str) -> Option<Box<str>> {
    (!w.is_empty() && w.is_ascii()).then(|| w.to_ascii_lowercase().into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::{Grams, Word};

    fn may_hold(s: &str, w: &str) -> bool {
        Word::new(w).in_(&Grams::of(s))
    }

    #[test]
    fn a_request_rules_out_words_it_cannot_hold() {
        assert!(may_hold("Play Yesterday BY the Beatles", "by"));
        assert!(may_hold("by", "by"));
        assert!(
            may_hold("nearby", "by"),
            "inside a word counts: spacing may allow it"
        );
        assert!(may_hold("x A y", "a"));
        assert!(!may_hold("b", "by"));
        assert!(!may_hold("play yesterday", "album"));
        assert!(!may_hold("play yesterday", "from"));
        assert!(!may_hold("", "a"));
        // Every word of a request passes, whatever its case.
        let r = "Schedule a TEAM sync for tomorrow at 3pm, in Room 4 with Alice";
        for w in r.split([' ', ',']).filter(|w| !w.is_empty()) {
            assert!(may_hold(r, &w.to_ascii_lowercase()), "{w}");
        }
    }
}
