//! The ways one text may hide what it carries, undone: URL-decoded (up to
//! three times), HTML entities, look-alike and invisible characters
//! (fullwidth letters, zero-width spaces, soft hyphens) undone, each
//! base64 or hex token decoded (and what that says decoded again, up to
//! three layers), reversed, upper-cased, split groups joined (by `-`,
//! `.`, `:`, spaces, `_`, `/`, `,`, `|`, `;`), and a URL's pieces — path
//! and query values — joined. Each [`View`] is searched like the text
//! itself, and a finding says which view it was in.

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
    pub how: Option<Cow<'static, str>>,
    /// True when it may be searched for personal data (emails, phone
    /// numbers): reversed and joined readings make those up too easily.
    pub personal: bool,
    /// A reading with its separators taken out, where a token's own
    /// separator (`ghp_`) may be gone too.
    pub compact: bool,
}

impl View<'static> {
    fn derived(text: String, how: impl Into<Cow<'static, str>>, personal: bool) -> Self {
        View {
            text: Cow::Owned(text),
            how: Some(how.into()),
            personal,
            compact: false,
        }
    }
}

/// Shortest base64 token decoded (twelve characters carry nine bytes).
const MIN_BASE64: usize = 12;
/// Shortest hex token decoded.
const MIN_HEX: usize = 16;
/// Most views made of one text (each token decoded is one).
const MAX_VIEWS: usize = 512;
/// Most layers of encoding undone (base64 of hex of base64).
const MAX_LAYERS: usize = 3;

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
                out.push(View::derived(text, "hex-encoded", true));
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
            out.push(View::derived(text, "base64-encoded", true));
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

/// `text` with every separator taken out, a token's own among them
/// (`ghp_R8b2K_x7Qm4/…`), when it has any beyond [`joined`]'s.
fn compacted(text: &str) -> Option<String> {
    let out: String = text
        .chars()
        .filter(|c| !matches!(c, '-' | '.' | ' ' | ':' | '_' | '/' | ',' | '|' | ';' | '+'))
        .collect();
    (out.len() != text.len()).then_some(out)
}

/// A URL's path and query values joined, with the keys and separators
/// taken out (a token split across the path and the query).
fn url_pieces(text: &str) -> Option<String> {
    let rest = text.split_once("://")?.1;
    let (_, after_host) = rest.split_once(['/', '?'])?;
    let (path, query) = after_host.split_once('?').unwrap_or((after_host, ""));
    let mut out: String = path.chars().filter(|c| *c != '/').collect();
    for pair in query.split('&') {
        out.push_str(pair.split_once('=').map_or(pair, |(_, v)| v));
    }
    (!out.is_empty()).then_some(out)
}

/// `text` with HTML character references undone (`&#103;`, `&#x67;`,
/// `&lowbar;`…), when it has any.
fn entities_undone(text: &str) -> Option<String> {
    if !text.contains("&") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let end = tail.find(';').filter(|e| *e <= 10);
        let decoded = end.and_then(|e| {
            let name = &tail[..e];
            let code = if let Some(hex) = name.strip_prefix("#x").or(name.strip_prefix("#X")) {
                u32::from_str_radix(hex, 16).ok()
            } else if let Some(dec) = name.strip_prefix('#') {
                dec.parse().ok()
            } else {
                named_entity(name).map(u32::from)
            };
            code.and_then(char::from_u32).map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &tail[e + 1..];
            }
            None => {
                out.push('&');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    (out != text).then_some(out)
}

/// The few named references that stand for a token's own characters.
fn named_entity(name: &str) -> Option<u8> {
    Some(match name {
        "amp" => b'&',
        "lt" => b'<',
        "gt" => b'>',
        "quot" => b'"',
        "apos" => b'\'',
        "lowbar" | "UnderBar" => b'_',
        "period" => b'.',
        "hyphen" | "dash" => b'-',
        "sol" => b'/',
        "colon" => b':',
        "equals" => b'=',
        _ => return None,
    })
}

/// `text` with look-alikes made plain (fullwidth and other compatibility
/// forms, by NFKC) and invisible characters taken out (zero-width spaces
/// and joiners, soft hyphens, word joiners, byte-order marks), when that
/// changes it.
fn look_alikes_undone(text: &str) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    if text.is_ascii() {
        return None;
    }
    let out: String = text
        .nfkc()
        .filter(|c| {
            !matches!(
                *c,
                '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}'
            )
        })
        .collect();
    (out != text).then_some(out)
}

/// Every reading of `text`: as it is, URL-decoded, with entities and
/// look-alikes undone, its tokens decoded (again and again), reversed,
/// upper-cased, its groups joined and its URL's pieces joined.
pub fn views(text: &str) -> Vec<View<'_>> {
    let mut out = vec![View {
        text: Cow::Borrowed(text),
        how: None,
        personal: true,
        compact: false,
    }];
    let decoded = url_decoded(text);
    let mut clear = decoded.clone().unwrap_or_else(|| text.to_string());
    if let Some(decoded) = decoded {
        out.push(View::derived(decoded, "URL-encoded", true));
    }
    let mut derived: Vec<View<'static>> = Vec::new();
    if let Some(plain) = entities_undone(&clear) {
        derived.push(View::derived(plain.clone(), "as HTML entities", true));
        clear = plain;
    }
    if let Some(plain) = look_alikes_undone(&clear) {
        derived.push(View::derived(
            plain.clone(),
            "with look-alike or invisible characters",
            true,
        ));
        clear = plain;
    }
    layers(&clear, &mut derived);
    let reversed: String = clear.chars().rev().collect();
    // An encoding written backwards: its tokens read forwards again.
    let mut backwards = Vec::new();
    decoded_tokens(&reversed, &mut backwards);
    for view in backwards {
        let how = format!("reversed, {}", view.how.as_deref().unwrap_or_default());
        derived.push(View::derived(view.text.into_owned(), how, true));
    }
    derived.push(View::derived(reversed, "reversed", false));
    derived.push(View::derived(clear.to_uppercase(), "case changed", false));
    if let Some(joined) = joined(&clear) {
        decoded_tokens(&joined, &mut derived);
        derived.push(View::derived(joined, "split into groups", false));
    }
    for (pieces, how) in [
        (compacted(&clear), "split into groups"),
        (url_pieces(&clear), "split across a URL's pieces"),
    ] {
        if let Some(pieces) = pieces {
            decoded_tokens(&pieces, &mut derived);
            let mut view = View::derived(pieces, how, false);
            view.compact = true;
            derived.push(view);
        }
    }
    // What a decoded token says may itself be URL-encoded or reversed.
    let mut again = Vec::new();
    for view in &derived {
        let Some(how) = view.how.as_deref().filter(|h| h.ends_with("-encoded")) else {
            continue;
        };
        let how = how.to_string();
        if let Some(text) = url_decoded(&view.text) {
            again.push(View::derived(text, how.clone(), true));
        }
        again.push(View::derived(
            view.text.chars().rev().collect(),
            format!("{how}, reversed"),
            false,
        ));
    }
    out.extend(derived);
    out.extend(again);
    out.truncate(MAX_VIEWS);
    out
}

/// The tokens of `text` decoded, and the tokens of what they say decoded
/// again, up to [`MAX_LAYERS`] deep (`base64-encoded hex-encoded`).
fn layers(text: &str, out: &mut Vec<View<'static>>) {
    let mut current = vec![(text.to_string(), String::new())];
    for _ in 0..MAX_LAYERS {
        let mut next = Vec::new();
        for (text, outer) in &current {
            let mut found = Vec::new();
            decoded_tokens(text, &mut found);
            for view in found {
                let how = view.how.as_deref().unwrap_or_default();
                let how = if outer.is_empty() {
                    how.to_string()
                } else {
                    format!("{how} inside {outer}")
                };
                next.push((view.text.into_owned(), how));
            }
        }
        for (text, how) in &next {
            if out.len() < MAX_VIEWS {
                out.push(View::derived(text.clone(), how.clone(), true));
            }
        }
        if next.is_empty() || out.len() >= MAX_VIEWS {
            break;
        }
        current = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings(text: &str) -> Vec<(Option<&'static str>, String)> {
        views(text)
            .into_iter()
            .map(|v| {
                let how: Option<&'static str> =
                    v.how.map(|h| &*Box::leak(h.into_owned().into_boxed_str()));
                (how, v.text.into_owned())
            })
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
