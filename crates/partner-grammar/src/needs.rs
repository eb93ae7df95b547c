//! The words an alternative cannot match without: literals it must read
//! (beyond the first, which the dispatch table checks where it would
//! begin), and for a rule it must go through, one of that rule's first
//! words. An alternative missing one of them anywhere in the request is
//! not tried at all — the cheapest parse is the one never started.
//!
//! The same words are also kept in the order the alternative reads them
//! (see `order`): one whose words are in the request, but not in that
//! order, cannot match either.
//!
//! Only ASCII words are kept: they match byte for byte (case aside), so
//! one missing from the request's bytes cannot be matched anywhere. Words
//! of other scripts are left out (case folding may change their bytes).

use super::model::{Part, Start};
use super::order::{Order, Step};

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
    fn of(words: &[Box<str>]) -> Need {
        Need(words.iter().map(|w| Word::new(w)).collect())
    }

    /// False when no word of it can be in the request `g` describes.
    fn met(&self, g: &Grams) -> bool {
        self.0.iter().any(|w| w.in_(g))
    }

    /// How rare it is: the fewest letter pairs a word of it holds.
    fn rarity(&self) -> usize {
        self.0.iter().map(|w| w.pairs.len()).min().unwrap_or(0)
    }
}

/// What a rule an alternative goes through tells of it: what its
/// alternatives begin with, and what every one of them reads, in order.
pub(super) struct Nested {
    pub starts: Vec<Start>,
    pub common: Vec<Step>,
}

/// What each alternative of a rule set needs.
#[derive(Debug, Clone, Default)]
pub(super) struct Needs {
    /// Each alternative's needs, rarest first.
    per_alt: Vec<Vec<Need>>,
    /// The order they read them in.
    order: Order,
    /// Whether any alternative has anything to check.
    checks: bool,
}

impl Needs {
    /// Needs for `alts` (each alternative's parts), with `inner(part)`
    /// giving a nested rule's first words and what all its alternatives
    /// read in order; `starts` is what each of `alts` begins with.
    pub(super) fn new<'a>(
        alts: impl Iterator<Item = &'a [Part]>,
        starts: &[Start],
        inner: &mut dyn FnMut(&Part) -> Option<Nested>,
    ) -> Needs {
        let (per_alt, steps): (Vec<_>, Vec<_>) =
            alts.map(|parts| alternative(parts, inner)).unzip();
        let order = Order::new(steps, choices(starts).map(Step::of));
        let checks = order.checks() || per_alt.iter().any(|n| !n.is_empty());
        Needs {
            per_alt,
            order,
            checks,
        }
    }

    /// True when there is nothing to check.
    pub(super) fn is_empty(&self) -> bool {
        !self.checks
    }

    /// What a rule going through this one needs of it, in order.
    pub(super) fn common(&self) -> &[Step] {
        self.order.common()
    }

    /// Of the alternatives in `mask`, those whose needs the request `s`
    /// (`g` describing its letters) may meet: each word somewhere, and in
    /// order where that is checked.
    pub(super) fn filter(&self, g: &Grams, s: &str, mut mask: u64) -> u64 {
        for i in super::viable::bits_down(mask) {
            let Some(needs) = self.per_alt.get(i) else {
                continue;
            };
            if !needs.iter().all(|n| n.met(g)) {
                mask &= !(1 << i);
                #[cfg(test)]
                tests::LEFT_OUT.with(|c| c.set(c.get() + 1));
            }
        }
        self.order.filter(s.as_bytes(), mask)
    }
}

/// An alternative's needs, rarest first (at most [`MAX_NEEDS`]), and the
/// steps it takes in order.
fn alternative(
    parts: &[Part],
    inner: &mut dyn FnMut(&Part) -> Option<Nested>,
) -> (Vec<Need>, Vec<Step>) {
    let mut needs: Vec<Need> = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        match part {
            Part::Str(words) => {
                for (j, w) in words.iter().enumerate() {
                    let Some(w) = ascii_word(w) else { continue };
                    // The dispatch table already looked at the first word
                    // of a first part.
                    if k > 0 || j > 0 {
                        needs.push(Need::of(std::slice::from_ref(&w)));
                    }
                    steps.push(Step::of(vec![w]));
                }
            }
            Part::Rules {
                optional: false, ..
            } => {
                let Some(Nested { starts, common }) = inner(part) else {
                    continue;
                };
                // As for a literal, the dispatch table already looked at
                // the first words of a first part.
                if let Some(words) = choices(&starts).filter(|_| k > 0) {
                    needs.push(Need::of(&words));
                }
                steps.extend(common);
            }
            Part::Rules { .. } | Part::Wild { .. } | Part::Num { .. } => {}
        }
    }
    needs.sort_by_key(|n| std::cmp::Reverse(n.rarity()));
    needs.truncate(MAX_NEEDS);
    (needs, steps)
}

/// One of a rule's first words, when every alternative must begin with
/// one of a few ASCII words.
fn choices(starts: &[Start]) -> Option<Vec<Box<str>>> {
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
    (!words.is_empty() && words.len() <= MAX_CHOICES).then_some(words)
}

fn ascii_word(w: &str) -> Option<Box<str>> {
    (!w.is_empty() && w.is_ascii()).then(|| w.to_ascii_lowercase().into_boxed_str())
}

#[cfg(test)]
pub(super) mod tests {
    use super::{Grams, Word};
    use crate::{LoadOptions, MatchOptions, NoFiles, load_grammar, match_grammar};

    thread_local! {
        /// Set to match without leaving out alternatives by their needs.
        pub(crate) static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Alternatives left out so far.
        pub(crate) static LEFT_OUT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn leaving_out_alternatives_by_their_needs_never_changes_a_match() {
        let grammars = [
            // Needs after the first word, and one of a rule's first words.
            "<Start> = play $(t:<Phrase>) by $(a:wildcard) -> { t, a } | play $(t:<Phrase>) from (the)? album $(b:wildcard) -> { t, b } | play track $(n:number) -> n | play on $(d:wildcard) -> d;\n<Phrase> = $(x:wildcard) -> x | $(x:wildcard) <Term> -> x | the <Term> $(x:wildcard) -> x;\n<Term> = track | song;",
            // No spacing: a needed word inside another word still counts.
            "<Start> [spacing=none] = go $(x:wildcard) by $(y:wildcard) -> { x, y } | go $(x:wildcard) -> x;",
            // Optional parts need nothing; digits and punctuation in words.
            "<Start> = (please)? set $(x:wildcard) to $(n:number) -> { x, n } | set $(x:wildcard) to 3pm's slot -> x | set $(x:wildcard) -> x;",
        ];
        let inputs = [
            "play Yesterday by the Beatles",
            "PLAY yesterday FROM THE ALBUM help",
            "play the song hey jude by the beatles",
            "play Yesterday song",
            "play track 4",
            "play on kitchen",
            "play nearby standby",
            "gonearbyby",
            "gosomethingby x",
            "please set alarm to 7",
            "set alarm to 3PM'S slot",
            "set it",
            "SET X TO Y",
            "",
        ];
        LEFT_OUT.with(|c| c.set(0));
        same_with_needs_off(&grammars, &inputs);
        assert!(
            LEFT_OUT.with(std::cell::Cell::get) > 0,
            "some alternatives were left out"
        );
    }

    /// Asserts that every input matches each grammar as it does with the
    /// needed-word checks (letters and order) off.
    pub(crate) fn same_with_needs_off(grammars: &[&str], inputs: &[&str]) {
        let options = LoadOptions {
            enable_value_expressions: true,
            start_value_required: true,
            ..Default::default()
        };
        for text in grammars {
            let g = load_grammar("t.agr", text, &options, &NoFiles).expect("the grammar loads");
            for input in inputs {
                let pruned = match_grammar(&g, input, &MatchOptions::default());
                OFF.with(|o| o.set(true));
                let all = match_grammar(&g, input, &MatchOptions::default());
                OFF.with(|o| o.set(false));
                assert_eq!(pruned, all, "{text}\n{input}");
            }
        }
    }

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
