//! Finding a literal's words further on in a request, as a parse with an
//! open wildcard must: the leftmost place they match at or after a byte.
//! Candidates are the places holding the first word's first byte, or its
//! first two when it begins with punctuation (a quote is common).

use super::parse::Spacing;
use super::text::{boundary_ok, char_at, literal_at, match_words, with_leading_seps};

/// Where byte `lo` (an ASCII letter, lowercase, a digit or punctuation) first occurs
/// in `b` in either case: eight bytes a step, setting the case bit (a byte
/// then equals a lowercase letter only if it was that letter) and finding
/// the first zero byte of the difference. The last few bytes are read as
/// the eight that end `b`, those already read left out.
pub(super) fn find_either_case(b: &[u8], lo: u8) -> Option<usize> {
    let byte = Spread::of(lo);
    let zeros = |chunk: &[u8; 8]| byte.flags(u64::from_le_bytes(*chunk));
    let mut chunks = b.as_chunks::<8>().0.iter();
    let mut at = 0;
    for chunk in chunks.by_ref() {
        let zero = zeros(chunk);
        if zero != 0 {
            return Some(at + zero.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let left = b.len() - at;
    if left == 0 {
        return None;
    }
    if let Some(last) = b.last_chunk::<8>() {
        // Bytes before `at` hold no match, so no borrow comes from them.
        let zero = zeros(last) >> (8 * (8 - left)) << (8 * (8 - left));
        return (zero != 0).then(|| b.len() - 8 + zero.trailing_zeros() as usize / 8);
    }
    b[at..]
        .iter()
        .position(|&c| c | byte.case == lo)
        .map(|i| at + i)
}

/// The leftmost place at or after byte `from` where `words` match (as
/// [`match_words`] would there), and where they end. Candidates are found
/// by their first byte when the first word starts with a printable ASCII
/// byte; otherwise every place is tried.
#[inline]
pub fn find_words(
    s: &str,
    from: usize,
    words: &[String],
    mode: Spacing,
    lead: bool,
) -> Option<(usize, usize)> {
    let first = words.first()?.as_bytes().first().copied()?;
    if !first.is_ascii_graphic() {
        return find_words_anywhere(s, from, words, mode, lead);
    }
    if first.is_ascii_alphanumeric()
        && let [word] = words
    {
        return find_word(s, from, word, lead);
    }
    // Punctuation has no case: a quoted literal (`'with'`, TypeAgent's
    // reading) is found by its quote.
    find_words_by_first_byte(s, from, words, first, mode, lead)
}

/// The leftmost place at or after `from` where `words` match and end at
/// a word boundary (as a wildcard before them may end there), and where
/// they end.
#[inline(always)]
pub(super) fn find_bounded(
    s: &str,
    mut from: usize,
    words: &[String],
    mode: Spacing,
    lead: bool,
) -> Option<(usize, usize)> {
    while from <= s.len() {
        let (start, end) = find_words(s, from, words, mode, lead)?;
        if boundary_ok(s, end, mode) {
            return Some((start, end));
        }
        from = if end > start { end } else { end + 1 };
    }
    None
}

/// A byte to find eight at a time: the byte in every lane, and the case
/// bit to set in every lane when it is a lowercase letter (a byte then
/// equals a lowercase letter only if it was that letter, in either case).
#[derive(Clone, Copy)]
struct Spread {
    want: u64,
    case8: u64,
    case: u8,
}

impl Spread {
    const ONES: u64 = 0x0101_0101_0101_0101;

    #[inline(always)]
    fn of(lo: u8) -> Spread {
        let case = if lo.is_ascii_lowercase() { 0x20 } else { 0 };
        Spread {
            want: u64::from(lo) * Self::ONES,
            case8: u64::from(case) * Self::ONES,
            case,
        }
    }

    /// The bytes of `chunk` equal to the byte, flagged in their high bits
    /// (the zero bytes of the difference): every equal byte is flagged; a
    /// byte above an equal one may be flagged falsely (a borrow only runs
    /// upwards), so the lowest flag is always true.
    #[inline(always)]
    fn flags(self, chunk: u64) -> u64 {
        let diff = (chunk | self.case8) ^ self.want;
        diff.wrapping_sub(Self::ONES) & !diff & (0x80 * Self::ONES)
    }
}

/// Where bytes `lo0` then `lo1` (each an ASCII letter, lowercase, in
/// either case, or a byte as it is) first occur together in `b`: eight
/// places a step, each flagged place checked.
fn find_pair_either_case(b: &[u8], lo0: u8, lo1: u8) -> Option<usize> {
    let (first, second) = (Spread::of(lo0), Spread::of(lo1));
    let eq = |c: u8, lo: u8, byte: Spread| c | byte.case == lo;
    let window = |at: usize| {
        let c0 = <[u8; 8]>::try_from(b.get(at..at + 8)?).ok()?;
        let c1 = <[u8; 8]>::try_from(b.get(at + 1..at + 9)?).ok()?;
        Some(first.flags(u64::from_le_bytes(c0)) & second.flags(u64::from_le_bytes(c1)))
    };
    let first_true = |at: usize, mut flags: u64| {
        while flags != 0 {
            let p = at + flags.trailing_zeros() as usize / 8;
            if eq(b[p], lo0, first) && eq(b[p + 1], lo1, second) {
                return Some(p);
            }
            flags &= flags - 1;
        }
        None
    };
    let mut at = 0;
    while let Some(flags) = window(at) {
        if let Some(p) = first_true(at, flags) {
            return Some(p);
        }
        at += 8;
    }
    let last = b.len().saturating_sub(1);
    if at >= last {
        return None;
    }
    // The places left are read as the last nine bytes' eight, those
    // already read left out.
    match b
        .len()
        .checked_sub(9)
        .and_then(|base| Some((base, window(base)?)))
    {
        Some((base, flags)) => {
            let skip = 8 * (at - base);
            first_true(base, flags >> skip << skip)
        }
        None => (at..last).find(|&p| eq(b[p], lo0, first) && eq(b[p + 1], lo1, second)),
    }
}

/// Where the next place holding an ASCII word's first two bytes (case
/// aside) is, at or after `from`.
#[inline(always)]
fn next_pair(bytes: &[u8], from: usize, first: u8, second: u8) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let at = find_pair_either_case(
        rest,
        first.to_ascii_lowercase(),
        second.to_ascii_lowercase(),
    )?;
    Some(from + at)
}

/// Where the next candidate for a word beginning with ASCII byte `first`
/// is, at or after `from`: eight bytes a step when the rest is short,
/// memchr when long.
#[inline(always)]
fn next_candidate(bytes: &[u8], from: usize, first: u8) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let at = if rest.len() < 64 {
        find_either_case(rest, first.to_ascii_lowercase())?
    } else {
        memchr::memchr2(first.to_ascii_lowercase(), first.to_ascii_uppercase(), rest)?
    };
    Some(from + at)
}

/// [`find_words`] for one word beginning with an ASCII letter or digit
/// (most literals after a wildcard): it is at a candidate or nowhere there.
fn find_word(s: &str, from: usize, word: &str, lead: bool) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    let w = word.as_bytes();
    let first = *w.first()?;
    let ascii = word.is_ascii();
    let mut q = from;
    loop {
        let pos = next_candidate(bytes, q, first)?;
        // The candidate's first byte is the word's, case aside.
        let end = pos + w.len();
        let here = match bytes.get(pos + 1..end) {
            Some(rest) if rest.eq_ignore_ascii_case(&w[1..]) => Some(end),
            _ if ascii => None,
            _ => literal_at(s, pos, word),
        };
        if let Some(end) = here {
            // What match_words would find from the separators before it.
            return Some((with_leading_seps(s, from, pos, lead), end));
        }
        q = pos + 1;
    }
}

/// [`find_words`] for words whose first begins with printable ASCII byte
/// `first` (several words, or one beginning with punctuation).
fn find_words_by_first_byte(
    s: &str,
    from: usize,
    words: &[String],
    first: u8,
    mode: Spacing,
    lead: bool,
) -> Option<(usize, usize)> {
    // An ASCII first word is at a candidate or not, byte for byte (case
    // aside): a candidate where it is not is passed over at once, as any
    // match from there begins at a later candidate.
    let head = words[0].as_bytes();
    let ascii = head.is_ascii();
    let bytes = s.as_bytes();
    let mut q = from;
    loop {
        // Punctuation (a quote) is common in a request that has it: an
        // ASCII word is looked for by its first two bytes.
        let pos = match head.get(1) {
            Some(&second) if ascii => next_pair(bytes, q, first, second)?,
            _ => next_candidate(bytes, q, first)?,
        };
        if ascii
            && !bytes
                .get(pos..pos + head.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(head))
        {
            q = pos + 1;
            continue;
        }
        let start = with_leading_seps(s, from, pos, lead);
        if s.is_char_boundary(start)
            && let Some(end) = match_words(s, start, words, mode, lead)
        {
            return Some((start, end));
        }
        q = pos + 1;
    }
}

/// [`find_words`] when the first word does not begin with a printable
/// ASCII byte: every place is tried.
fn find_words_anywhere(
    s: &str,
    from: usize,
    words: &[String],
    mode: Spacing,
    lead: bool,
) -> Option<(usize, usize)> {
    let mut at = from;
    loop {
        if at > s.len() {
            return None;
        }
        if let Some(end) = match_words(s, at, words, mode, lead) {
            return Some((at, end));
        }
        at += char_at(s, at)?.len_utf8();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_byte_is_found_in_either_case_as_memchr_finds_it() {
        let hay: Vec<u8> = (0..=255u8).chain(0..=255u8).rev().collect();
        for lo in (b'a'..=b'z').chain(b'0'..=b'9') {
            for from in 0..hay.len() {
                for len in [0, 1, 7, 8, 9, 17, 40] {
                    let b = &hay[from..(from + len).min(hay.len())];
                    let up = lo.to_ascii_uppercase();
                    assert_eq!(
                        find_either_case(b, lo),
                        memchr::memchr2(lo, up, b),
                        "{lo} {from} {len}"
                    );
                }
            }
        }
        assert_eq!(find_either_case(b"schedule a TEAM sync", b't'), Some(11));
    }

    #[test]
    fn a_pair_of_bytes_is_found_in_either_case_as_a_plain_search_finds_it() {
        let hay: Vec<u8> = b"xAaTat'c'C\x00\xffaat  'with' At".repeat(3);
        let eq = |c: u8, lo: u8| c.to_ascii_lowercase() == lo;
        for (lo0, lo1) in [
            (b'a', b't'),
            (b'\'', b'c'),
            (b'a', b'a'),
            (b't', b'\''),
            (b'q', b'z'),
        ] {
            for from in 0..hay.len() {
                for len in [0, 1, 2, 8, 9, 10, 17, 40] {
                    let b = &hay[from..(from + len).min(hay.len())];
                    let naive = b.windows(2).position(|w| eq(w[0], lo0) && eq(w[1], lo1));
                    assert_eq!(find_pair_either_case(b, lo0, lo1), naive, "{from} {len}");
                }
            }
        }
    }

    /// Where `words` first match at or after `from`, trying every place.
    fn naive(s: &str, from: usize, words: &[String], lead: bool) -> Option<(usize, usize)> {
        (from..=s.len())
            .filter(|&at| s.is_char_boundary(at))
            .find_map(|at| match_words(s, at, words, Spacing::Auto, lead).map(|end| (at, end)))
    }

    #[test]
    fn words_are_found_where_trying_every_place_finds_them() {
        let requests = [
            "schedule a team sync for tomorrow at 3pm in room 4 with Alice",
            "AT at aT  At, at!at",
            "for  FOR\tfor 4or f0r ƒor fór",
            "play Yesterday by the Beatles by Mr. BY",
            "x é, in 4 In\u{3000}in, x",
            "'send' '' 'WITH' 'with' ''with' 'blind'  'copy' 'blind' x 'copy'",
        ];
        let phrases: [&[&str]; 10] = [
            &["at"],
            &["for"],
            &["in"],
            &["by", "the"],
            &["with"],
            &["4"],
            &["é"],
            &["'with'"],
            &["'blind'", "'copy'"],
            &["''"],
        ];
        for s in requests.iter().map(|r| r.to_string()) {
            for phrase in phrases {
                let words: Vec<String> = phrase.iter().map(|w| w.to_string()).collect();
                for lead in [true, false] {
                    for from in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
                        let want = naive(&s, from, &words, lead);
                        assert_eq!(
                            find_words(&s, from, &words, Spacing::Auto, lead),
                            want,
                            "{s:?} {phrase:?} from {from} lead {lead}"
                        );
                    }
                }
            }
        }
    }
}
