//! Loops that never end and start something in the background each time
//! round (`while true; do sleep 1 & done`): processes without end, read
//! from the loop's condition and body as written.

/// True when a loop's condition (as written) never ends it.
pub(super) fn endless(condition: &str, until: bool) -> bool {
    let c = condition.trim().trim_end_matches([';', '&']).trim();
    let always = [
        "true",
        ":",
        "/bin/true",
        "/usr/bin/true",
        "[ 1 ]",
        "((1))",
        "! false",
    ];
    let never = ["false", "/bin/false", "/usr/bin/false", "! true", "! :"];
    if until {
        never.contains(&c)
    } else {
        always.contains(&c)
    }
}

/// True when a loop body (as written) starts something in the
/// background: a lone `&`, not `&&`, `&>` or `>&`.
pub(super) fn backgrounds(body: &str) -> bool {
    let bytes = body.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| {
        *b == b'&'
            && !matches!(bytes.get(i + 1), Some(b'&' | b'>'))
            && !matches!(i.checked_sub(1).map(|j| bytes[j]), Some(b'&' | b'>' | b'<'))
    })
}
