//! A rule set's dispatch table: which of its alternatives may begin at a
//! place of the request, by the place's first two bytes, without trying
//! any of them.

use super::model::Start;

/// Which alternatives of a rule set (at most 64, a bit each) may begin at
/// a place, looked up by the place's first two bytes, lowercase. It may
/// let through an alternative that cannot begin there (only two bytes of
/// its words are compared), never keep out one that can.
#[derive(Debug, Clone, Default)]
pub(super) struct Dispatch {
    /// (first byte << 8 | second byte, or 0 for any second byte) → the
    /// alternatives with a first word beginning so, sorted by key.
    keys: Vec<(u16, u64)>,
    /// Alternatives that may begin with anything (a wildcard, a number,
    /// nothing, a word that is not ASCII).
    always: u64,
    /// Bit `b` set when some first word begins with byte `b`: most places
    /// are turned down by this alone.
    firsts: u128,
    /// Bit `b` set when a key for byte `b` takes any second byte (a
    /// one-letter word, or one whose second character is not ASCII).
    any_second: u128,
}

impl Dispatch {
    pub(super) fn new(starts: &[Start]) -> Option<Dispatch> {
        if starts.len() > 64 {
            return None;
        }
        let mut d = Dispatch::default();
        let mut keys: Vec<(u16, u64)> = Vec::new();
        for (i, start) in starts.iter().enumerate() {
            let bit = 1u64 << i;
            let Start::Words(words) = start else {
                d.always |= bit;
                continue;
            };
            if !words.other.is_empty() {
                d.always |= bit;
            }
            for w in &words.ascii {
                let b = w.as_bytes();
                let second = match b.get(1) {
                    Some(&c) if c.is_ascii() => u16::from(c.to_ascii_lowercase()),
                    _ => 0,
                };
                keys.push((u16::from(b[0]) << 8 | second, bit));
                d.firsts |= 1u128 << b[0];
                if second == 0 {
                    d.any_second |= 1u128 << b[0];
                }
            }
        }
        keys.sort_unstable_by_key(|k| k.0);
        for (key, bit) in keys {
            match d.keys.last_mut() {
                Some(last) if last.0 == key => last.1 |= bit,
                _ => d.keys.push((key, bit)),
            }
        }
        Some(d)
    }

    #[inline]
    fn lookup(&self, key: u16) -> u64 {
        self.keys
            .binary_search_by_key(&key, |k| k.0)
            .map_or(0, |i| self.keys[i].1)
    }

    /// The alternatives that may begin at byte `at` of `s`.
    #[inline]
    fn at(&self, s: &[u8], at: usize) -> u64 {
        let Some(&b0) = s.get(at) else {
            return 0;
        };
        let b0 = b0.to_ascii_lowercase();
        if !b0.is_ascii() || self.firsts & (1u128 << b0) == 0 {
            return 0;
        }
        let any_second = if self.any_second & (1u128 << b0) != 0 {
            self.lookup(u16::from(b0) << 8)
        } else {
            0
        };
        let b0 = u16::from(b0) << 8;
        match s.get(at + 1) {
            Some(&b1) => any_second | self.lookup(b0 | u16::from(b1.to_ascii_lowercase())),
            None => any_second,
        }
    }

    /// The alternatives of `count` that may begin anywhere from byte
    /// `index` of `s` on (where an open wildcard may end and they begin).
    pub(super) fn mask_from(&self, s: &str, index: usize, count: usize) -> u64 {
        let all = if count >= 64 {
            u64::MAX
        } else {
            (1u64 << count) - 1
        };
        if self.firsts.count_ones() == 1 {
            return self.mask_from_one(s.as_bytes(), index, all);
        }
        self.mask_from_each(s.as_bytes(), index, all)
    }

    /// [`Dispatch::mask_from`] when every first word begins with one byte
    /// (a quote, often): from one of its places to the next.
    fn mask_from_one(&self, bytes: &[u8], index: usize, all: u64) -> u64 {
        let lo = self.firsts.trailing_zeros() as u8;
        let up = lo.to_ascii_uppercase();
        let mut mask = self.always;
        let mut at = index;
        while mask & all != all {
            let Some(p) = bytes.get(at..).and_then(|r| memchr::memchr2(lo, up, r)) else {
                break;
            };
            mask |= self.at(bytes, at + p);
            at += p + 1;
        }
        mask
    }

    /// [`Dispatch::mask_from`] looking at every byte.
    fn mask_from_each(&self, bytes: &[u8], index: usize, all: u64) -> u64 {
        let mut mask = self.always;
        for at in index..bytes.len() {
            if mask & all == all {
                break;
            }
            let b = bytes[at].to_ascii_lowercase();
            if b.is_ascii() && self.firsts & (1u128 << b) != 0 {
                mask |= self.at(bytes, at);
            }
        }
        mask
    }

    /// The alternatives that may begin at byte `index` of `s` (after
    /// separators when `lead`).
    pub(super) fn mask_at(&self, s: &str, index: usize, lead: bool) -> u64 {
        let bytes = s.as_bytes();
        let mut mask = self.always;
        let mut at = index;
        loop {
            mask |= self.at(bytes, at);
            if !lead {
                return mask;
            }
            match bytes.get(at) {
                Some(b' ') => at += 1,
                Some(b) if b.is_ascii_alphanumeric() => return mask,
                _ => match super::text::char_at(s, at) {
                    Some(c) if super::text::is_sep(c) => at += c.len_utf8(),
                    _ => return mask,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Dispatch;
    use crate::model::Start;
    use crate::model::tests::words;

    #[test]
    fn the_dispatch_table_never_keeps_out_an_alternative_that_can_begin() {
        let alts = [
            vec!["play", "pause"],
            vec!["p"],
            vec!["select", "switch", "use"],
            vec!["über"],
            vec!["skip", "next"],
        ];
        let mut starts: Vec<Start> = alts.iter().map(|w| Start::Words(words(w))).collect();
        starts.push(Start::Any);
        let d = Dispatch::new(&starts).expect("six alternatives fit");
        let requests = [
            "play it",
            "  Pause now",
            "über alles",
            "xyz",
            "use the skip",
            "SWITCH",
            "p",
            "",
            "s",
            " , next",
        ];
        for r in requests {
            for at in (0..=r.len()).filter(|&i| r.is_char_boundary(i)) {
                // After an open wildcard: a first word anywhere further on.
                let from = d.mask_from(r, at, starts.len());
                for (i, start) in starts.iter().enumerate().take(5) {
                    let Start::Words(w) = start else { continue };
                    if crate::viable::may_occur(r, at, Some(w)) {
                        assert_ne!(from & (1 << i), 0, "{r:?} from {at}: alternative {i}");
                    }
                }
                for lead in [false, true] {
                    let mask = d.mask_at(r, at, lead);
                    assert_ne!(mask & (1 << 5), 0, "anything may begin anywhere");
                    for (i, start) in starts.iter().enumerate().take(5) {
                        let Start::Words(w) = start else { continue };
                        let exact = crate::viable::may_start(r, at, Some(w), lead);
                        if exact {
                            assert_ne!(mask & (1 << i), 0, "{r:?} at {at}: alternative {i}");
                        }
                    }
                }
            }
        }
        // And it does keep out what cannot begin (a word that is not ASCII
        // is always let through: case folding may change its bytes).
        assert_eq!(d.mask_at("xyz", 0, true) & 0b11111, 1 << 3);
        assert_eq!(d.mask_at("next", 0, false) & 0b10111, 1 << 4);
        assert_eq!(d.mask_from("go next", 1, 6) & 0b10111, 1 << 4);
    }

    #[test]
    fn first_words_of_one_first_byte_are_found_from_a_place_as_every_byte_finds_them() {
        for alts in [
            vec![vec!["'with'", "'the'"], vec!["'caption'"], vec!["'c'"]],
            vec![vec!["send"], vec!["s"], vec!["subject", "sent"]],
        ] {
            let mut starts: Vec<Start> = alts.iter().map(|w| Start::Words(words(w))).collect();
            starts.push(Start::Any);
            let d = Dispatch::new(&starts).expect("four alternatives fit");
            assert_eq!(d.firsts.count_ones(), 1);
            for r in [
                "'send' 'WITH' x 'Caption' 'c",
                "SEND it, s SubJect sent",
                "''''",
                "",
                "x'",
            ] {
                for at in 0..=r.len() + 1 {
                    for all in [0b1111, 0b0111, 0b0001] {
                        assert_eq!(
                            d.mask_from_one(r.as_bytes(), at, all),
                            d.mask_from_each(r.as_bytes(), at, all),
                            "{r:?} from {at}"
                        );
                    }
                }
            }
        }
    }
}
