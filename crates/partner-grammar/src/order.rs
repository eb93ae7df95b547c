//! The order an alternative reads its needed words in (see `needs`): an
//! alternative whose words are all in a request, but not one after the
//! other as it reads them, cannot match it. What every alternative of a
//! rule reads, in an order each reads it, is what a rule going through
//! that one needs of it — a rule's alternatives may begin differently and
//! all end with one of the same words.
//!
//! Order is only checked for alternatives that read some of the same
//! words as another alternative of their rule, the other way round: that
//! is where it tells them apart, and elsewhere the words alone say nearly
//! as much for less.

use std::collections::HashMap;

/// Most steps kept in order for one alternative (the first ones: any
/// leading part of an order holds as the whole does).
const MAX_STEPS: usize = 8;

/// One step of an order: one of these words (lowercase ASCII).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Step {
    words: Box<[Box<str>]>,
    /// The bytes its words begin with, in either case (a bit per byte).
    firsts: u128,
    /// The one byte every word begins with, when they share it.
    lead: Option<u8>,
}

impl Step {
    /// A step reading one of `words` (lowercase ASCII, none empty).
    pub(super) fn of(words: Vec<Box<str>>) -> Step {
        let heads = || words.iter().filter_map(|w| w.as_bytes().first().copied());
        let firsts = heads().fold(0u128, |m, c| {
            m | 1 << (c & 0x7f) | 1 << (c.to_ascii_uppercase() & 0x7f)
        });
        let lead = heads().next().filter(|&c| heads().all(|d| d == c));
        Step {
            words: words.into_boxed_slice(),
            firsts,
            lead,
        }
    }

    /// Where the first of its words to end, among those at or after byte
    /// `from` of `b` (case aside), ends. Places are walked in order until
    /// one is past the best end so far: a word beginning there ends later.
    fn end_after(&self, b: &[u8], from: usize) -> Option<usize> {
        let mut best = usize::MAX;
        let mut at = from;
        while at < b.len().min(best) {
            let i = match self.lead {
                Some(lo) => match super::find::find_either_case(&b[at..], lo) {
                    Some(i) => at + i,
                    None => break,
                },
                None => at,
            };
            if i >= best {
                break;
            }
            if b[i] < 0x80 && self.firsts & (1 << b[i]) != 0 {
                // A word's second byte (case aside) first, then the rest.
                let second = b.get(i + 1).map_or(0, |c| c | 0x20);
                for w in &self.words {
                    let w = w.as_bytes();
                    let end = i + w.len();
                    if w.get(1).is_none_or(|c| c | 0x20 == second)
                        && end < best
                        && b.get(i..end).is_some_and(|h| h.eq_ignore_ascii_case(w))
                    {
                        best = end;
                    }
                }
            }
            at = i + 1;
        }
        (best != usize::MAX).then_some(best)
    }
}

/// The orders of a rule's alternatives.
#[derive(Debug, Clone, Default)]
pub(super) struct Order {
    /// Each alternative's steps (none when its order is not checked).
    per_alt: Vec<Vec<Step>>,
    /// The first 64 alternatives whose order is checked, a bit each.
    checked: u64,
    /// What every alternative reads, in an order each reads it.
    common: Vec<Step>,
}

impl Order {
    /// The orders of alternatives reading `steps`, each alternative
    /// beginning with one of `first` when every one does.
    pub(super) fn new(mut steps: Vec<Vec<Step>>, first: Option<Step>) -> Order {
        for s in &mut steps {
            s.truncate(MAX_STEPS);
        }
        let common = common(&steps, first);
        let permuted = permuted(&steps);
        for (k, (s, keep)) in steps.iter_mut().zip(permuted).enumerate() {
            // A match asks about 64 alternatives at most at once.
            if !keep || s.len() < 2 || k >= 64 {
                s.clear();
            }
        }
        let checked = steps
            .iter()
            .take(64)
            .enumerate()
            .fold(0, |m, (i, s)| m | u64::from(!s.is_empty()) << i);
        Order {
            per_alt: steps,
            checked,
            common,
        }
    }

    /// True when some alternative's order is checked.
    pub(super) fn checks(&self) -> bool {
        self.checked != 0
    }

    /// What a rule going through this one needs of it, in order.
    pub(super) fn common(&self) -> &[Step] {
        &self.common
    }

    /// Of the alternatives in `mask`, those that may read their words in
    /// `b` in order.
    #[inline]
    pub(super) fn filter(&self, b: &[u8], mut mask: u64) -> u64 {
        for i in super::viable::bits_down(mask & self.checked) {
            if !self.per_alt.get(i).is_none_or(|steps| in_order(steps, b)) {
                mask &= !(1 << i);
                #[cfg(test)]
                tests::OUT_OF_ORDER.with(|c| c.set(c.get() + 1));
            }
        }
        mask
    }
}

/// True when `steps` can be taken in `b` one after another (a word of
/// each, ending as early as it can).
fn in_order(steps: &[Step], b: &[u8]) -> bool {
    let mut at = 0;
    for step in steps {
        match step.end_after(b, at) {
            Some(end) => at = end,
            None => return false,
        }
    }
    true
}

/// For each alternative, whether it takes two steps one after the other
/// that another alternative takes the other way round. Each ordered pair of
/// steps an alternative takes is noted with the first two alternatives
/// taking it, so that the work grows with the alternatives, not with their
/// pairs (a grammar file may hold many).
fn permuted(steps: &[Vec<Step>]) -> Vec<bool> {
    const NONE: usize = usize::MAX;
    let mut ids: HashMap<&[Box<str>], u32> = HashMap::new();
    let seqs: Vec<Vec<u32>> = steps
        .iter()
        .map(|s| {
            s.iter()
                .map(|step| {
                    let next = ids.len() as u32;
                    *ids.entry(&step.words).or_insert(next)
                })
                .collect()
        })
        .collect();
    let pairs = |seq: &[u32]| -> Vec<(u32, u32)> {
        (0..seq.len())
            .flat_map(|i| (i + 1..seq.len()).map(move |j| (seq[i], seq[j])))
            .collect()
    };
    let mut takers: HashMap<(u32, u32), [usize; 2]> = HashMap::new();
    for (alt, seq) in seqs.iter().enumerate() {
        for pair in pairs(seq) {
            let t = takers.entry(pair).or_insert([NONE; 2]);
            if t[0] == NONE {
                t[0] = alt;
            } else if t[0] != alt && t[1] == NONE {
                t[1] = alt;
            }
        }
    }
    seqs.iter()
        .enumerate()
        .map(|(alt, seq)| {
            pairs(seq).into_iter().any(|(x, y)| {
                takers
                    .get(&(y, x))
                    .is_some_and(|t| t.iter().any(|&a| a != NONE && a != alt))
            })
        })
        .collect()
}

/// What every one of a rule's alternatives reads, in an order each reads
/// it: one of their first words (`first`, when each begins with one of a
/// few), then what they all read after their first step (which is at or
/// after where they begin, so may be that first word).
fn common(steps: &[Vec<Step>], first: Option<Step>) -> Vec<Step> {
    let skip = usize::from(first.is_some());
    let mut rest: Option<Vec<Step>> = None;
    for s in steps {
        let tail = s.get(skip..).unwrap_or(&[]);
        rest = Some(match rest {
            None => tail.to_vec(),
            Some(r) => common_subsequence(&r, tail),
        });
    }
    let mut out: Vec<Step> = first.into_iter().collect();
    out.extend(rest.unwrap_or_default());
    out.truncate(MAX_STEPS);
    out
}

/// The longest run of steps `a` and `b` both take in the same order.
fn common_subsequence(a: &[Step], b: &[Step]) -> Vec<Step> {
    // longest[i][j]: the longest common part of a[i..] and b[j..].
    let mut longest = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            longest[i][j] = if a[i] == b[j] {
                longest[i + 1][j + 1] + 1
            } else {
                longest[i + 1][j].max(longest[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            out.push(a[i].clone());
            (i, j) = (i + 1, j + 1);
        } else if longest[i + 1][j] >= longest[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::{Step, common_subsequence, permuted};
    use crate::{LoadOptions, MatchOptions, NoFiles, load_grammar, match_grammar};

    thread_local! {
        /// Alternatives left out for their order, so far.
        pub(crate) static OUT_OF_ORDER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn step(words: &[&str]) -> Step {
        Step::of(words.iter().map(|w| Box::from(*w)).collect())
    }

    /// The earliest end of a word of `words` at or after `from`, trying
    /// every place.
    fn earliest_end(b: &[u8], words: &[&str], from: usize) -> Option<usize> {
        (from..b.len())
            .flat_map(|i| words.iter().map(move |w| (i, w.as_bytes())))
            .filter(|(i, w)| {
                b.get(*i..i + w.len())
                    .is_some_and(|h| h.eq_ignore_ascii_case(w))
            })
            .map(|(i, w)| i + w.len())
            .min()
    }

    #[test]
    fn a_step_ends_where_trying_every_place_says() {
        let texts = [
            "'generate' 12 'images' 'of' a red car 'use' 'the' 'caption' sunset",
            "Use the CAPTION, captioned; with withdrawn",
            "aaaa ab abc 'a' ''a'' é ü",
            "",
        ];
        let steps: [&[&str]; 5] = [
            &["'use'", "'caption'", "'captioned'", "'with'"],
            &["caption", "captioned", "with", "use"],
            &["abc", "b", "a"],
            &["'a'", "a'"],
            &[",", "x;"],
        ];
        for text in texts {
            for words in steps {
                let s = step(words);
                for from in 0..=text.len() {
                    assert_eq!(
                        s.end_after(text.as_bytes(), from),
                        earliest_end(text.as_bytes(), words, from),
                        "{text:?} {words:?} from {from}"
                    );
                }
            }
        }
    }

    #[test]
    fn alternatives_reading_words_the_other_way_round_are_told_apart() {
        let (a, b, c) = (step(&["a"]), step(&["b"]), step(&["c", "d"]));
        let alts = vec![
            vec![a.clone(), b.clone(), c.clone()],
            vec![a.clone(), c.clone(), b.clone()],
            vec![a.clone(), b.clone()],
            vec![c.clone(), c.clone()],
            vec![],
        ];
        assert_eq!(permuted(&alts), [true, true, false, false, false]);
        // Each alone, or the same order twice: nothing to tell apart.
        assert_eq!(permuted(&alts[..1]), [false]);
        let same = vec![alts[0].clone(), alts[0].clone()];
        assert_eq!(permuted(&same), [false, false]);
    }

    #[test]
    fn many_alternatives_are_worked_out_in_time() {
        // A grammar file may hold thousands of alternatives reading the
        // same words in other orders: telling them apart grows with them,
        // not with their pairs.
        let alts: Vec<String> = (0..4_000)
            .map(|i| format!("w{} x{} y{} z -> {i}", i % 7, i % 5, i % 3))
            .chain((0..4_000).map(|i| format!("w{} z y{} x{} -> {i}", i % 7, i % 3, i % 5)))
            .collect();
        let text = format!("<Start> = {};", alts.join(" | "));
        let started = std::time::Instant::now();
        let options = LoadOptions::default();
        let g = load_grammar("t.agr", &text, &options, &NoFiles).expect("the grammar loads");
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
        let found = match_grammar(&g, "w1 z y1 x1", &MatchOptions::default());
        assert!(!found.is_empty());
    }

    #[test]
    fn the_common_order_is_in_both() {
        let (a, b, c, d) = (step(&["a"]), step(&["b"]), step(&["c"]), step(&["d"]));
        let x = [a.clone(), b.clone(), c.clone(), d.clone()];
        let y = [b.clone(), a.clone(), d.clone(), c.clone()];
        let common = common_subsequence(&x, &y);
        assert_eq!(common.len(), 2);
        for seq in [&x[..], &y[..]] {
            let mut at = 0;
            for s in &common {
                let found = seq[at..].iter().position(|t| t == s);
                assert!(found.is_some(), "{common:?} in order in {seq:?}");
                at += found.unwrap_or(0) + 1;
            }
        }
        assert!(common_subsequence(&x, &[]).is_empty());
    }

    #[test]
    fn leaving_out_alternatives_by_their_order_never_changes_a_match() {
        // Alternatives reading the same words in other orders, through
        // rules whose alternatives begin differently but end alike.
        let grammars = [
            "<Start> = <Go> $(a:wildcard) <With> $(b:wildcard) <Count> -> { a, b, n: 0 } | <Go> $(n:number) <Thing> of $(a:wildcard) <With> $(b:wildcard) -> { n, a, b } | <Go> (a | single) <Thing> $(a:wildcard) <With> $(b:wildcard) -> { a, b };\n<Go> = (please)? (make | create);\n<With> = with (the)? caption | use (the)? caption | captioned;\n<Count> = $(n:number) <Thing> -> n | single <Thing> -> 1 | (a | an) <Thing> -> 1;\n<Thing> = image | images | photo;",
            "<Start> = send $(t:wildcard) subject $(s:wildcard) body $(b:wildcard) -> { t, s, b } | send $(t:wildcard) body $(b:wildcard) subject $(s:wildcard) -> { t, s, b };",
            "<Start> [spacing=none] = go $(x:wildcard) by $(y:wildcard) to -> { x, y } | go $(x:wildcard) to $(y:wildcard) by -> { x, y };",
        ];
        let inputs = [
            "make 3 images of a car use caption sunset",
            "make a car with caption sunset 2 images",
            "please create a car with the caption x a photo",
            "make images of a car use caption x",
            "MAKE 2 IMAGES OF x WITH CAPTION y",
            "make a photo of a dog captioned here",
            "create single image cat use the caption dusk",
            "make caption 2 images of x use caption y",
            "send bob subject hi body hello",
            "send bob body hello subject hi",
            "send subject body subject body",
            "send bob body hello",
            "goxbyyto",
            "goxtoyby",
            "gotobytoby",
            "",
        ];
        OUT_OF_ORDER.with(|c| c.set(0));
        crate::needs::tests::same_with_needs_off(&grammars, &inputs);
        assert!(
            OUT_OF_ORDER.with(std::cell::Cell::get) > 0,
            "some alternatives were left out for their order"
        );
    }
}
