//! Permission markers on a link (`.` `?` `?ask` `!` `?word`): taken off
//! the end of its tokens, and a batch's marker given to its members.

use super::action::{Marker, ParsedAction};
use super::lexer::{Token, TokenKind};
use super::span::Span;

/// Takes the permission marker off the end of a link's tokens.
pub(crate) fn take_marker(tokens: &mut Vec<Token<'_>>) -> Option<(Marker, Option<String>, Span)> {
    let idx = match tokens.as_slice() {
        [.., before, last]
            if last.kind == TokenKind::BlockQuote && before.kind == TokenKind::Word =>
        {
            tokens.len() - 2
        }
        [.., last] if last.kind == TokenKind::Word => tokens.len() - 1,
        _ => return None,
    };
    let word = tokens[idx].value.as_ref();
    let (marker, note) = match word {
        "." => (Marker::Routine, None),
        "?" => (Marker::Check, None),
        "!" | "!!" => (Marker::Serious, None),
        _ if word.eq_ignore_ascii_case("?ask") => (Marker::Ask, None),
        _ => {
            let note = word.strip_prefix('?')?;
            let valid = note.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && note
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return None;
            }
            (Marker::Check, Some(note.to_ascii_lowercase()))
        }
    };
    let span = tokens.remove(idx).span;
    Some((marker, note, span))
}

/// Gives every member of a batch (and each link of a member's chain) the
/// batch's marker where it is stricter than the member's own: `/batch { … } !`
/// asks for each member.
pub(crate) fn mark_members(batch: &mut ParsedAction) {
    let (marker, note) = (batch.marker, batch.marker_note.clone());
    let apply = |link: &mut ParsedAction| {
        if Marker::rank(marker) > Marker::rank(link.marker) {
            link.marker = marker;
            link.marker_note = note.clone();
        }
    };
    for member in batch.batch.iter_mut() {
        apply(member);
        member.chain.iter_mut().for_each(apply);
    }
}
