//! Finding a literal's words further on in a request, as a parse with an
//! open wildcard must: the leftmost place they match at or after a byte.
//! Candidates are the places holding the first word's first byte.

use super::parse::Spacing;
use super::text::{char_at, char_before, is_sep, literal_at, match_words};

/// Where byte `lo` (an ASCII letter, lowercase, a digit or punctuation) first occurs
/// in `b` in either case: eight bytes a step, setting the case bit (a byte
/// then equals a lowercase letter only if it was that letter) and finding
/// the first zero byte of the difference. The last few bytes are read as
/// the eight that end `b`, those already read left out.
fn find_either_case(b: &[u8], lo: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    let case = if lo.is_ascii_lowercase() { 0x20 } else { 0 };
    let (want, case8) = (u64::from(lo) * ONES, case * ONES);
    // The lowest zero byte of the difference sets the lowest flagged bit
    // (a borrow can only flag bytes above a zero byte).
    let zeros = |chunk: &[u8; 8]| {
        let diff = (u64::from_le_bytes(*chunk) | case8) ^ want;
        diff.wrapping_sub(ONES) & !diff & HIGH
    };
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
        .position(|&c| c | case as u8 == lo)
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

/// A match may begin with the separators just before the word at `at`
/// (back to `from` at most) when `lead`.
#[inline(always)]
fn with_leading_seps(s: &str, from: usize, at: usize, lead: bool) -> usize {
    let mut start = at;
    if lead {
        while start > from {
            match char_before(s, start) {
                Some(c) if is_sep(c) => start -= c.len_utf8(),
                _ => break,
            }
        }
    }
    start
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
        let pos = next_candidate(bytes, q, first)?;
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
