//! Cancellation phrases: prose after an action that takes it back.

/// Phrases that cancel the nearest action before them (lowercase, with a
/// plain apostrophe; the typographic one is folded to it before matching).
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

/// True when `text` contains a cancellation phrase as whole words.
pub fn has_cancel_phrase(text: &str) -> bool {
    let lower = text.to_lowercase().replace('\u{2019}', "'");
    CANCEL_PHRASES.iter().any(|phrase| {
        lower.match_indices(phrase).any(|(i, m)| {
            let before_ok = lower[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let after_ok = lower[i + m.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric());
            before_ok && after_ok
        })
    })
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
    }
}
