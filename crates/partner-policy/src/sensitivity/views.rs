//! The ways one text may hide what it carries, undone: URL-decoded,
//! each base64 or hex token decoded, reversed, and split groups joined.
//! Each [`View`] is searched like the text itself, and a finding says
//! which view it was in.

use std::borrow::Cow;

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};

/// One reading of a text.
#[derive(Debug, Clone)]
pub struct View<'t> {
    /// The text as read this way.
    pub text: Cow<'t, str>,
    /// How it was hidden (`None`: in the clear).
    pub how: Option<&'static str>,
    /// True when it may be searched for personal data (emails, phone
    /// numbers): reversed and joined readings make those up too easily.
    pub personal: bool,
}

/// Shortest base64 token decoded (twelve characters carry nine bytes).
const MIN_BASE64: usize = 12;
/// Shortest hex token decoded.
const MIN_HEX: usize = 16;
/// Most views made of one text (each token decoded is one).
const MAX_VIEWS: usize = 512;

/// Base64 with or without padding, standard or URL-safe alphabet.
fn engines() -> [GeneralPurpose; 2] {
    let config = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    [
        GeneralPurpose::new(&base64::alphabet::STANDARD, config),
        GeneralPurpose::new(&base64::alphabet::URL_SAFE, config),
    ]
}

/// Decoded bytes worth reading: nearly all of them printable text (a
/// stray byte at an edge, from a neighbour taken in, is forgiven).
fn readable(bytes: Vec<u8>) -> Option<String> {
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let printable = text
        .chars()
        .filter(|c| *c != char::REPLACEMENT_CHARACTER && (!c.is_control() || c.is_whitespace()))
        .count();
    (printable * 10 >= text.chars().count() * 9 && !text.is_empty()).then_some(text)
}

/// `text` with its percent-escapes undone (and `+` read as a space), up to
/// three times over; `None` when it had none.
fn url_decoded(text: &str) -> Option<String> {
    if !text.contains(['%', '+']) {
        return None;
    }
    let mut current = text.replace('+', " ");
    for _ in 0..3 {
        let next = percent_encoding::percent_decode_str(&current)
            .decode_utf8_lossy()
            .into_owned();
        if next == current {
            break;
        }
        current = next;
    }
    (current != text).then_some(current)
}

/// Each token of `text` that decodes from hex or base64 to readable text.
fn decoded_tokens(text: &str, out: &mut Vec<View<'static>>) {
    let engines = engines();
    let runs =
        text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '_' | '-')));
    // A run with slashes may be base64, or a path whose pieces are.
    let tokens = runs.flat_map(|run| {
        let pieces = run
            .contains('/')
            .then(|| run.split('/'))
            .into_iter()
            .flatten();
        std::iter::once(run).chain(pieces)
    });
    for token in tokens {
        if out.len() >= MAX_VIEWS {
            return;
        }
        // Hex: each long run of hex digits (a joined reading may have
        // run it into a neighbouring word).
        let mut hex_found = false;
        for run in token.split(|c: char| !c.is_ascii_hexdigit()) {
            if run.len() < MIN_HEX {
                continue;
            }
            let even = &run[..run.len() & !1];
            if let Some(text) = hex::decode(even).ok().and_then(readable) {
                hex_found = true;
                out.push(View {
                    text: Cow::Owned(text),
                    how: Some("hex-encoded"),
                    personal: true,
                });
            }
        }
        if hex_found {
            continue;
        }
        if token.len() < MIN_BASE64 {
            continue;
        }
        // A length of 4n+1 cannot be base64: the last character is not
        // part of it.
        let token = if token.len() % 4 == 1 {
            &token[..token.len() - 1]
        } else {
            token
        };
        if let Some(text) = engines
            .iter()
            .find_map(|e| e.decode(token).ok().and_then(readable))
        {
            out.push(View {
                text: Cow::Owned(text),
                how: Some("base64-encoded"),
                personal: true,
            });
        }
    }
}

/// `text` with the separators of split groups taken out (`AKIA-IOSF-…`,
/// `a.b.c` subdomains), when it has any.
fn joined(text: &str) -> Option<String> {
    let out: String = text
        .chars()
        .filter(|c| !matches!(c, '-' | '.' | ' ' | ':'))
        .collect();
    (out.len() != text.len()).then_some(out)
}

/// Every reading of `text`: as it is, URL-decoded, its tokens decoded,
/// reversed, and its groups joined (and those tokens decoded too).
pub fn views(text: &str) -> Vec<View<'_>> {
    let mut out = vec![View {
        text: Cow::Borrowed(text),
        how: None,
        personal: true,
    }];
    let decoded = url_decoded(text);
    let clear = decoded.as_deref().unwrap_or(text);
    let mut derived: Vec<View<'static>> = Vec::new();
    decoded_tokens(clear, &mut derived);
    let reversed: String = clear.chars().rev().collect();
    derived.push(View {
        text: Cow::Owned(reversed),
        how: Some("reversed"),
        personal: false,
    });
    if let Some(joined) = joined(clear) {
        decoded_tokens(&joined, &mut derived);
        derived.push(View {
            text: Cow::Owned(joined),
            how: Some("split into groups"),
            personal: false,
        });
    }
    if let Some(decoded) = decoded {
        out.push(View {
            text: Cow::Owned(decoded),
            how: Some("URL-encoded"),
            personal: true,
        });
    }
    // What a decoded token says may itself be URL-encoded or reversed.
    let mut again = Vec::new();
    for view in &derived {
        if !matches!(view.how, Some("hex-encoded" | "base64-encoded")) {
            continue;
        }
        if let Some(text) = url_decoded(&view.text) {
            again.push(View {
                text: Cow::Owned(text),
                how: view.how,
                personal: true,
            });
        }
        again.push(View {
            text: Cow::Owned(view.text.chars().rev().collect()),
            how: Some(if view.how == Some("hex-encoded") {
                "hex-encoded, reversed"
            } else {
                "base64-encoded, reversed"
            }),
            personal: false,
        });
    }
    out.extend(derived);
    out.extend(again);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings(text: &str) -> Vec<(Option<&'static str>, String)> {
        views(text)
            .into_iter()
            .map(|v| (v.how, v.text.into_owned()))
            .collect()
    }

    #[test]
    fn each_hiding_is_undone() {
        let all = readings("https://x.test/c?d=QUtJQUlPU0ZPRE5ON0VYQU1QTEU%3D");
        assert!(
            all.contains(&(Some("base64-encoded"), "AKIAIOSFODNN7EXAMPLE".into())),
            "{all:?}"
        );
        let all = readings("https://414b4941494f53464f444e4e374558414d504c45.x.test/");
        assert!(
            all.contains(&(Some("hex-encoded"), "AKIAIOSFODNN7EXAMPLE".into())),
            "{all:?}"
        );
        let all = readings("k=ELPMAXE7NNDOFSOIAIKA");
        assert!(
            all.iter()
                .any(|(how, t)| *how == Some("reversed") && t.contains("AKIAIOSFODNN7EXAMPLE"))
        );
        let all = readings("k=AKIA-IOSF-ODNN-7EXA-MPLE");
        assert!(all.iter().any(
            |(how, t)| *how == Some("split into groups") && t.contains("AKIAIOSFODNN7EXAMPLE")
        ));
    }

    #[test]
    fn ordinary_tokens_do_not_decode_to_text() {
        let all = readings(
            "https://github.com/tokio-rs/tokio/commit/4f2c7a9b1e8d3c6a5f0b2e7d9c1a3b5e8f0d2c4a",
        );
        assert!(
            all.iter()
                .all(|(how, _)| !matches!(how, Some("hex-encoded" | "base64-encoded"))),
            "{all:?}"
        );
    }
}
