//! Characters as the matcher sees them: separators (white space and
//! Unicode punctuation), the scripts that put spaces between words, where a
//! separator is needed, and case-insensitive literal matching.

use std::sync::LazyLock;

use regex::Regex;

use super::parse::Spacing;

static SEPARATOR: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^[\s\p{P}]").ok());
static WORD_SCRIPT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^[\p{Latin}\p{Cyrillic}\p{Greek}\p{Armenian}\p{Georgian}\p{Hangul}\p{Arabic}\p{Hebrew}\p{Devanagari}\p{Bengali}\p{Tamil}\p{Telugu}\p{Kannada}\p{Malayalam}\p{Gujarati}\p{Gurmukhi}\p{Oriya}\p{Sinhala}\p{Ethiopic}\p{Mongolian}]",
    )
    .ok()
});

fn test(re: &LazyLock<Option<Regex>>, c: char) -> bool {
    let mut buf = [0u8; 4];
    re.as_ref()
        .is_some_and(|r| r.is_match(c.encode_utf8(&mut buf)))
}

/// The ASCII separators, by byte: white space (with vertical tab) and
/// punctuation as Unicode counts it (`$`, `+`, `<`, `=`, `>`, `^`, `` ` ``,
/// `|`, `~` are symbols, not punctuation). Bytes past ASCII are not.
const SEP_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let seps = b" \t\n\x0b\x0c\r!\"#%&'()*,-./:;?@[\\]_{}";
    let mut i = 0;
    while i < seps.len() {
        table[seps[i] as usize] = true;
        i += 1;
    }
    table
};

/// White space or Unicode punctuation (`[\s\p{P}]`).
#[inline]
pub fn is_sep(c: char) -> bool {
    if c.is_ascii() {
        return SEP_BYTE[c as usize];
    }
    c.is_whitespace() || c == '\u{feff}' || test(&SEPARATOR, c)
}

/// A letter of a script that separates words with spaces.
fn word_script(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    test(&WORD_SCRIPT, c)
}

/// True when `a` then `b` need a separator between them in auto spacing:
/// two digits, or two letters of word-spaced scripts.
pub fn needs_sep_auto(a: char, b: char) -> bool {
    (a.is_ascii_digit() && b.is_ascii_digit()) || (word_script(a) && word_script(b))
}

/// True when `a` then `b` need a separator in `mode` (never asked for
/// `none`).
pub fn requires_sep(a: char, b: char, mode: Spacing) -> bool {
    match mode {
        Spacing::Required => true,
        Spacing::Optional | Spacing::None => false,
        Spacing::Auto => needs_sep_auto(a, b),
    }
}

/// The character before byte `i` of `s`.
#[inline]
pub fn char_before(s: &str, i: usize) -> Option<char> {
    match s.as_bytes().get(i.wrapping_sub(1)) {
        Some(&b) if b.is_ascii() && i <= s.len() => Some(char::from(b)),
        _ => s[..i].chars().next_back(),
    }
}

/// The character at byte `i` of `s`.
#[inline]
pub fn char_at(s: &str, i: usize) -> Option<char> {
    match s.as_bytes().get(i) {
        Some(&b) if b.is_ascii() => Some(char::from(b)),
        _ => s[i..].chars().next(),
    }
}

/// True when a match may end at byte `i` in `mode`: the start or end, or
/// (required) a separator follows, or (auto) the characters either side
/// do not both need one.
pub fn boundary_ok(s: &str, i: usize, mode: Spacing) -> bool {
    if i == 0 || i >= s.len() {
        return true;
    }
    match mode {
        Spacing::Required => char_at(s, i).is_some_and(is_sep),
        Spacing::Optional | Spacing::None => true,
        Spacing::Auto => match (char_before(s, i), char_at(s, i)) {
            (Some(a), Some(b)) => !needs_sep_auto(a, b),
            _ => true,
        },
    }
}

/// The end of the separator run starting at byte `i`.
pub fn skip_seps(s: &str, i: usize) -> usize {
    let mut j = i;
    for c in s[i..].chars() {
        if !is_sep(c) {
            break;
        }
        j += c.len_utf8();
    }
    j
}

fn fold(c: char) -> char {
    let mut l = c.to_lowercase();
    match (l.next(), l.next()) {
        (Some(x), None) => x,
        _ => c,
    }
}

/// `eq_ignore_ascii_case` for the short words of a grammar: byte by byte,
/// stopping at the first that differs (most candidates differ early).
#[inline]
fn same_but_ascii_case(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || x.eq_ignore_ascii_case(y))
}

/// The end of `word` matched case-insensitively at byte `i`, if it is there.
#[inline]
pub fn literal_at(s: &str, i: usize, word: &str) -> Option<usize> {
    // Bytes equal but for ASCII case are a match whatever the word's
    // script (the characters are the same, case aside).
    let end = i.checked_add(word.len())?;
    if let Some(hay) = s.as_bytes().get(i..end)
        && same_but_ascii_case(hay, word.as_bytes())
    {
        return Some(end);
    }
    if word.is_ascii() {
        return None;
    }
    let mut j = i;
    let mut rest = s.get(i..)?.chars();
    for w in word.chars() {
        let c = rest.next()?;
        if fold(c) != fold(w) {
            return None;
        }
        j += c.len_utf8();
    }
    Some(j)
}

/// Where `words` match starting exactly at byte `i` (separators before the
/// first word allowed when `lead`), as the reference's regular expression
/// would: fewest leading separators, then the longest separator runs
/// between words that still let the rest match. Returns the end.
pub fn match_words(
    s: &str,
    i: usize,
    words: &[String],
    mode: Spacing,
    lead: bool,
) -> Option<usize> {
    let mut start = i;
    loop {
        if let Some(end) = literal_at(s, start, &words[0])
            && let Some(end) = match_rest(s, end, words, 1, mode)
        {
            return Some(end);
        }
        if !lead {
            return None;
        }
        let c = char_at(s, start)?;
        if !is_sep(c) {
            return None;
        }
        start += c.len_utf8();
    }
}

fn match_rest(s: &str, i: usize, words: &[String], k: usize, mode: Spacing) -> Option<usize> {
    if k >= words.len() {
        return Some(i);
    }
    if mode == Spacing::None {
        let end = literal_at(s, i, &words[k])?;
        return match_rest(s, end, words, k + 1, mode);
    }
    let prev = words[k - 1].chars().next_back()?;
    let next = words[k].chars().next()?;
    let min_one = requires_sep(prev, next, mode);
    // Separator positions after i, longest run first.
    let mut at = skip_seps(s, i);
    loop {
        if min_one && at == i {
            return None;
        }
        if let Some(end) = literal_at(s, at, &words[k])
            && let Some(end) = match_rest(s, end, words, k + 1, mode)
        {
            return Some(end);
        }
        if at == i {
            return None;
        }
        at -= char_before(s, at)?.len_utf8();
    }
}

/// A wildcard's text between bytes `a` and `b`: without separators at
/// either end (all kept in `none` spacing); `None` when nothing is left.
pub fn wildcard_text(s: &str, a: usize, b: usize, mode: Spacing) -> Option<&str> {
    let t = &s[a..b];
    if mode == Spacing::None {
        return (!t.is_empty()).then_some(t);
    }
    // ASCII separators bytewise; a character of another script left at
    // either end may be a separator too.
    let b = t.as_bytes();
    let sep = |c: u8| SEP_BYTE[usize::from(c)];
    let mut first = 0;
    while first < b.len() && sep(b[first]) {
        first += 1;
    }
    let mut end = b.len();
    while end > first && sep(b[end - 1]) {
        end -= 1;
    }
    let mut t = &t[first..end];
    let ends = t.as_bytes();
    if ends.first().is_some_and(|c| !c.is_ascii()) || ends.last().is_some_and(|c| !c.is_ascii()) {
        t = t.trim_matches(is_sep);
    }
    (!t.is_empty()).then_some(t)
}

/// A number at byte `i` (after separators when `lead`), as JavaScript's
/// `Number` reads the reference's numeric forms: `0x`, `0o`, `0b`, or a
/// decimal with fraction and exponent. Returns the number, where its text
/// starts, and its end.
pub fn number_at(s: &str, i: usize, lead: bool) -> Option<(f64, usize, usize)> {
    let mut start = i;
    loop {
        if let Some((n, end)) = number_here(s, start) {
            return Some((n, start, end));
        }
        if !lead {
            return None;
        }
        let c = char_at(s, start)?;
        if !is_sep(c) {
            return None;
        }
        start += c.len_utf8();
    }
}

/// The first place at or after byte `from` where [`number_at`] finds a
/// number: the number, that place, and the number's end. A number begins
/// at a digit or at a sign before one, so only those are tried, with the
/// separators before them when `lead`.
pub fn next_number(s: &str, from: usize, lead: bool) -> Option<(f64, usize, usize)> {
    let b = s.as_bytes();
    let mut digit = from;
    loop {
        digit += b.get(digit..)?.iter().position(u8::is_ascii_digit)?;
        let start = if digit > from && matches!(b[digit - 1], b'+' | b'-') {
            digit - 1
        } else {
            digit
        };
        if let Some((n, end)) = number_here(s, start) {
            return Some((n, with_leading_seps(s, from, start, lead), end));
        }
        digit += 1;
    }
}

/// Where a match of something at `at` may begin: with the separators just
/// before it (back to `from` at most) when `lead`.
#[inline(always)]
pub(super) fn with_leading_seps(s: &str, from: usize, at: usize, lead: bool) -> usize {
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

fn number_here(s: &str, i: usize) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let rest = &b[i..];
    let lower = |k: usize| rest.get(k).map(u8::to_ascii_lowercase);
    if rest.first() == Some(&b'0') {
        for (p, radix) in [(b'o', 8), (b'x', 16), (b'b', 2)] {
            if lower(1) == Some(p) {
                let digits = rest[2..]
                    .iter()
                    .take_while(|c| (**c as char).is_digit(radix))
                    .count();
                if digits > 0 {
                    let text = std::str::from_utf8(&rest[2..2 + digits]).ok()?;
                    let n = u128::from_str_radix(text, radix).map_or(f64::INFINITY, |v| v as f64);
                    return Some((n, i + 2 + digits));
                }
            }
        }
    }
    let mut k = 0;
    if matches!(rest.first(), Some(b'+' | b'-')) {
        k = 1;
    }
    let int = rest[k..].iter().take_while(|c| c.is_ascii_digit()).count();
    if int == 0 {
        return None;
    }
    k += int;
    if rest.get(k) == Some(&b'.') {
        let frac = rest[k + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if frac > 0 {
            k += 1 + frac;
        }
    }
    if matches!(lower(k), Some(b'e')) {
        let mut e = k + 1;
        if matches!(rest.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        if matches!(rest.get(e), Some(b'1'..=b'9')) {
            e += 1 + rest[e + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            k = e;
        }
    }
    let text = std::str::from_utf8(&rest[..k]).ok()?;
    Some((text.parse().ok()?, i + k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first place at or after `from` where `number_at` finds a
    /// number, trying every place.
    fn next_number_naive(s: &str, from: usize, lead: bool) -> Option<(f64, usize, usize)> {
        (from..=s.len())
            .filter(|&at| s.is_char_boundary(at))
            .find_map(|at| number_at(s, at, lead).map(|(n, _, end)| (n, at, end)))
    }

    #[test]
    fn the_next_number_is_where_trying_every_place_finds_it() {
        let requests = [
            "generate 12 images of a red car",
            "x -5, +7 a1 b-2 0x1F 0b 3.5e2 1e -.5 +-3",
            "room\u{3000}4 ～9 é 10",
            "in 10 minutes, in 3pm, at 4:30",
            "no numbers here",
            "",
            "-",
            "7",
        ];
        for s in requests {
            for lead in [true, false] {
                for from in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
                    assert_eq!(
                        next_number(s, from, lead),
                        next_number_naive(s, from, lead),
                        "{s:?} from {from} lead {lead}"
                    );
                }
            }
        }
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_match_as_the_reference_expression_would() {
        let w = words(&["play", "music"]);
        assert_eq!(
            match_words("  Play, Music!", 0, &w, Spacing::Auto, true),
            Some(13)
        );
        assert_eq!(match_words("playmusic", 0, &w, Spacing::Auto, true), None);
        assert_eq!(
            match_words("playmusic", 0, &w, Spacing::Optional, true),
            Some(9)
        );
        assert_eq!(
            match_words(" play music", 0, &w, Spacing::None, false),
            None
        );
        assert!(boundary_ok("再生音楽", 6, Spacing::Auto));
        assert!(!boundary_ok("playback", 4, Spacing::Auto));
    }

    #[test]
    fn ascii_separators_are_the_unicode_class() {
        for b in 0u8..128 {
            let c = char::from(b);
            let unicode = c.is_whitespace() || test(&SEPARATOR, c);
            assert_eq!(is_sep(c), unicode, "{c:?}");
        }
        assert_eq!(wildcard_text("  a, b!", 0, 7, Spacing::Auto), Some("a, b"));
        assert_eq!(char_before("aé", 3), Some('é'));
        assert_eq!(char_before("ab", 0), None);
        assert_eq!(char_at("éa", 0), Some('é'));
    }

    #[test]
    fn literals_match_whatever_their_case_and_script() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let (x, y) = ([a, b'q'], [b, b'Q']);
                assert_eq!(same_but_ascii_case(&x, &y), x.eq_ignore_ascii_case(&y));
            }
        }
        assert_eq!(literal_at("SCHEDULE a", 0, "schedule"), Some(8));
        assert_eq!(literal_at("x Été", 2, "été"), Some(7));
        assert_eq!(literal_at("x ÉTÉ", 2, "été"), Some(7));
        assert_eq!(literal_at("x été", 2, "ete"), None);
        assert_eq!(literal_at("sched", 0, "schedule"), None);
        assert_eq!(
            wildcard_text("\u{3000}x\u{3001} ", 0, 8, Spacing::Auto),
            Some("x")
        );
        assert_eq!(wildcard_text(" é, ", 0, 5, Spacing::Auto), Some("é"));
    }

    #[test]
    fn numbers_read_like_javascript() {
        assert_eq!(number_at(" 0x1f", 0, true), Some((31.0, 1, 5)));
        assert_eq!(number_at("-2.5e3x", 0, false), Some((-2500.0, 0, 6)));
        assert_eq!(number_at("12e0", 0, false), Some((12.0, 0, 2)));
        assert_eq!(number_at("abc", 0, true), None);
    }

    #[test]
    fn wildcards_lose_their_separators() {
        assert_eq!(
            wildcard_text(" hello, ", 0, 8, Spacing::Auto),
            Some("hello")
        );
        assert_eq!(wildcard_text(" , ", 0, 3, Spacing::Auto), None);
        assert_eq!(wildcard_text(" x", 0, 2, Spacing::None), Some(" x"));
    }
}
