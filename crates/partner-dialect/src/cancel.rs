//! Cancellation phrases: prose after an action that takes it back.

/// Phrases that cancel the nearest action before them (lowercase, with a
/// plain apostrophe; the typographic one matches it too). Each starts with
/// one of the letters `has_cancel_phrase` looks for: n s w o i d c.
pub const CANCEL_PHRASES: &[&str] = &[
    "never mind",
    "nevermind",
    "scratch that",
    "wait, don't",
    "wait don't",
    "on second thought",
    "ignore that",
    "disregard",
    "cancel that",
];

/// True when `text` contains a cancellation phrase as whole words
/// (ASCII case-insensitive; a typographic apostrophe counts as `'`).
pub fn has_cancel_phrase(text: &str) -> bool {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        // Phrases start a word: skip positions inside an ASCII word, and
        // positions whose letter starts no phrase.
        if (i > 0 && bytes[i - 1].is_ascii_alphanumeric())
            || !matches!(b | 0x20, b'n' | b's' | b'w' | b'o' | b'i' | b'd' | b'c')
        {
            continue;
        }
        let before_ok = text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        if !before_ok {
            continue;
        }
        for phrase in CANCEL_PHRASES {
            if let Some(len) = match_at(bytes, i, phrase.as_bytes())
                && text[i + len..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
            {
                return true;
            }
        }
    }
    false
}

/// Length of the match of `needle` at `at`, ignoring ASCII case and taking
/// a typographic apostrophe for `'`.
fn match_at(hay: &[u8], at: usize, needle: &[u8]) -> Option<usize> {
    const RIGHT_QUOTE: &[u8] = "\u{2019}".as_bytes();
    let mut h = at;
    for &n in needle {
        if n == b'\'' && hay[h..].starts_with(RIGHT_QUOTE) {
            h += RIGHT_QUOTE.len();
            continue;
        }
        if h >= hay.len() || !hay[h].eq_ignore_ascii_case(&n) {
            return None;
        }
        h += 1;
    }
    Some(h - at)
}

#[cfg(test)]
mod tests {
    use super::has_cancel_phrase;

    #[test]
    fn phrases_match_whole_words_in_any_case() {
        assert!(has_cancel_phrase("Actually, never mind."));
        assert!(has_cancel_phrase("Wait, don\u{2019}t do that"));
        assert!(has_cancel_phrase("SCRATCH THAT"));
        assert!(!has_cancel_phrase("I never minded it"));
        assert!(!has_cancel_phrase("the notes are fine"));
        assert!(!has_cancel_phrase("undisregarded"));
        assert!(has_cancel_phrase("café — never mind"));
    }

    #[test]
    fn every_phrase_starts_with_a_letter_the_scan_looks_for() {
        for phrase in super::CANCEL_PHRASES {
            assert!(b"nswoidc".contains(&phrase.as_bytes()[0]), "{phrase}");
            assert!(has_cancel_phrase(phrase), "{phrase}");
        }
    }
}
