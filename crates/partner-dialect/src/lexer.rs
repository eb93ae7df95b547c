//! Splits the argument text of one chain link into tokens: bare words,
//! `"…"` strings (with escapes), `"""…"""` blocks, code fences, and `> `
//! block-quote lines directly under the action. Stops at the end of the
//! action or at a `->` that starts the next chain link.

use std::borrow::Cow;

use memchr::memchr;

use super::error::{ParseError, ParseErrorKind};
use super::scan::slash_starts_action;
use super::span::Span;
use super::verbs::VerbTable;

/// What kind of token the lexer found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A run of non-whitespace.
    Word,
    /// `"…"` on one line (escapes processed).
    Quoted,
    /// `"""…"""`, possibly over several lines.
    Triple,
    /// A ``` or ~~~ code fence.
    Fence,
    /// Consecutive `> ` lines directly under the action line.
    BlockQuote,
}

impl TokenKind {
    /// True for every kind that is unambiguously content.
    pub fn is_quoted(self) -> bool {
        !matches!(self, TokenKind::Word)
    }
}

/// One token with its bytes in the turn.
#[derive(Debug, Clone)]
pub struct Token<'a> {
    /// What kind of token it is.
    pub kind: TokenKind,
    /// The raw bytes, quotes included.
    pub span: Span,
    /// The value: the word, or the unquoted, unescaped content.
    pub value: Cow<'a, str>,
}

impl Token<'_> {
    /// True when this is the bare word `w` (ASCII case-insensitive).
    pub fn is_word(&self, w: &str) -> bool {
        self.kind == TokenKind::Word && self.value.eq_ignore_ascii_case(w)
    }
}

/// Where the next chain link starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NextLink {
    /// The `->` arrow.
    pub arrow: Span,
    /// Offset of the next link's `/`.
    pub slash: usize,
    /// End of the line the next link is on (excluding any wrapper closer).
    pub line_limit: usize,
}

/// The tokens of one chain link.
#[derive(Debug, Clone)]
pub(crate) struct LinkTokens<'a> {
    pub tokens: Vec<Token<'a>>,
    /// The next chain link, if a `->` followed.
    pub next: Option<NextLink>,
}

/// End of the line containing `pos` (offset of its `\n`, or the text length).
pub(crate) fn line_end(src: &str, pos: usize) -> usize {
    memchr(b'\n', &src.as_bytes()[pos.min(src.len())..]).map_or(src.len(), |i| pos + i)
}

/// The last line end looked up, so that many lookups on one long line cost
/// one scan of it.
#[derive(Debug, Default)]
pub(crate) struct LineEnds {
    from: usize,
    end: usize,
    known: bool,
}

impl LineEnds {
    /// The end of the line containing `pos` (see [`line_end`]).
    pub(crate) fn of(&mut self, src: &str, pos: usize) -> usize {
        if self.known && self.from <= pos && pos <= self.end {
            return self.end;
        }
        self.end = line_end(src, pos);
        self.from = pos;
        self.known = true;
        self.end
    }
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\r'
}

fn skip_blanks(bytes: &[u8], mut pos: usize, limit: usize) -> usize {
    while pos < limit && is_blank(bytes[pos]) {
        pos += 1;
    }
    pos
}

/// What follows the end of a link's line that is still the link's.
enum AfterLine<'a> {
    /// A `->` starting the next line, then the next link.
    Next(NextLink),
    /// `> ` lines under it: a block quote, its content.
    Quote(Token<'a>),
    /// Nothing of the link's.
    Nothing,
}

/// What follows the line ending at `limit` (when `limit` is that line's
/// real end, not a wrapper's closer).
fn after_line<'a>(src: &'a str, limit: usize, verbs: &VerbTable) -> AfterLine<'a> {
    let bytes = src.as_bytes();
    let real_end = line_end(src, limit);
    if limit != real_end || real_end >= src.len() {
        return AfterLine::Nothing;
    }
    let next_start = real_end + 1;
    let next_end = line_end(src, next_start);
    let first = skip_blanks(bytes, next_start, next_end);
    let rest = &src[first..next_end];
    if let Some(after) = rest.strip_prefix("->") {
        let slash = first + 2 + (after.len() - after.trim_start().len());
        if slash_starts_action(src, slash, next_end, verbs) {
            return AfterLine::Next(NextLink {
                arrow: Span::new(first, first + 2),
                slash,
                line_limit: next_end,
            });
        }
    }
    if rest.starts_with('>') {
        return AfterLine::Quote(block_quote(src, next_start));
    }
    AfterLine::Nothing
}

/// A `->` at `pos` followed on the same line by an action: the next link.
fn arrow_at(src: &str, pos: usize, limit: usize, verbs: &VerbTable) -> Option<NextLink> {
    let after = src[pos..limit].strip_prefix("->")?;
    let slash = pos + 2 + (after.len() - after.trim_start_matches([' ', '\t']).len());
    (slash < limit && slash_starts_action(src, slash, limit, verbs)).then(|| NextLink {
        arrow: Span::new(pos, pos + 2),
        slash,
        line_limit: limit,
    })
}

/// Lexes one link's arguments, from `start` (just after the verb) with the
/// current line ending at `line_limit`. Nothing at or after `hard_end` is
/// read (a legacy command ends at its `]]`; other actions pass the text
/// length).
pub(crate) fn lex_link<'a>(
    src: &'a str,
    start: usize,
    line_limit: usize,
    hard_end: usize,
    verbs: &VerbTable,
) -> Result<LinkTokens<'a>, ParseError> {
    let src = &src[..hard_end.min(src.len())];
    let bytes = src.as_bytes();
    // Room for a usual action's tokens, so that they are not regrown.
    let mut tokens: Vec<Token<'_>> = Vec::with_capacity(8);
    let mut pos = start;
    let mut limit = line_limit;
    // The line end past which a `"…"` (and a `“…”`) is known not to close:
    // once one quote on a line is unclosed, no later one on it can close, so
    // each line is searched once, not once per quote.
    let mut unclosed_straight = usize::MAX;
    let mut unclosed_curly = usize::MAX;
    let mut ends = LineEnds::default();
    loop {
        pos = skip_blanks(bytes, pos, limit);
        if pos >= limit {
            match after_line(src, limit, verbs) {
                AfterLine::Next(next) => {
                    return Ok(LinkTokens {
                        tokens,
                        next: Some(next),
                    });
                }
                AfterLine::Quote(quote) => tokens.push(quote),
                AfterLine::Nothing => {}
            }
            break;
        }
        let rest = &src[pos..limit];
        let rest_all = &src[pos..];
        if rest_all.starts_with("\"\"\"") {
            let (token, new_pos) = triple(src, pos)?;
            tokens.push(token);
            pos = new_pos;
            // A block that ended on a later line moves the line on; one that
            // closed on this line leaves it (looked up once, not per token).
            if pos > limit {
                limit = ends.of(src, pos);
            }
            continue;
        }
        if rest.starts_with("```") || rest.starts_with("~~~") {
            let (token, new_pos) = fence(src, pos, &mut ends)?;
            tokens.push(token);
            pos = new_pos;
            if pos > limit {
                limit = ends.of(src, pos);
            }
            continue;
        }
        let straight = rest.starts_with('"');
        if straight || rest.starts_with('\u{201C}') {
            let known_unclosed = if straight {
                &mut unclosed_straight
            } else {
                &mut unclosed_curly
            };
            if *known_unclosed != limit {
                match quoted(src, pos, limit) {
                    Some((token, new_pos)) => {
                        tokens.push(token);
                        pos = new_pos;
                        continue;
                    }
                    None => *known_unclosed = limit,
                }
            }
        }
        if let Some(next) = arrow_at(src, pos, limit, verbs) {
            return Ok(LinkTokens {
                tokens,
                next: Some(next),
            });
        }
        let mut end = pos;
        while end < limit && !is_blank(bytes[end]) {
            end += 1;
        }
        tokens.push(Token {
            kind: TokenKind::Word,
            span: Span::new(pos, end),
            value: Cow::Borrowed(&src[pos..end]),
        });
        pos = end;
    }
    Ok(LinkTokens { tokens, next: None })
}

/// `"…"` or `“…”` closed on the same line; `None` when it is never closed
/// (the quote is then an ordinary character of a word).
fn quoted(src: &str, pos: usize, limit: usize) -> Option<(Token<'_>, usize)> {
    let (open_len, close) = if src[pos..].starts_with('"') {
        (1, '"')
    } else {
        ('\u{201C}'.len_utf8(), '\u{201D}')
    };
    let body_start = pos + open_len;
    let body = &src[body_start..limit];
    let mut close_buf = [0u8; 4];
    let close_bytes = close.encode_utf8(&mut close_buf).as_bytes();
    let bytes = body.as_bytes();
    let mut has_escape = false;
    let mut from = 0;
    // Only a backslash or the closer's first byte can matter: both are
    // where a character starts, so the search jumps between them.
    while let Some(offset) = memchr::memchr2(b'\\', close_bytes[0], &bytes[from..]) {
        let i = from + offset;
        if bytes[i] == b'\\' {
            // The character after a backslash is taken as it is.
            has_escape = true;
            let next = i + 1;
            from = next + body[next..].chars().next().map_or(0, char::len_utf8);
            continue;
        }
        if !bytes[i..].starts_with(close_bytes) {
            from = i + 1;
            continue;
        }
        let raw = &body[..i];
        let value = if has_escape {
            Cow::Owned(unescape(raw))
        } else {
            Cow::Borrowed(raw)
        };
        let end = body_start + i + close_bytes.len();
        return Some((
            Token {
                kind: TokenKind::Quoted,
                span: Span::new(pos, end),
                value,
            },
            end,
        ));
    }
    None
}

/// Processes `\"`, `\\`, `\n`, `\t` and `\r`; any other backslash stays.
pub(crate) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('\u{201D}') => out.push('\u{201D}'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn triple(src: &str, pos: usize) -> Result<(Token<'_>, usize), ParseError> {
    let body_start = pos + 3;
    let Some(close) = src[body_start..].find("\"\"\"").map(|i| body_start + i) else {
        return Err(ParseError::new(
            ParseErrorKind::Unclosed {
                what: "\"\"\" content block".into(),
                closer: "\"\"\" on a line of its own".into(),
            },
            Span::new(pos, body_start),
        ));
    };
    let mut body = &src[body_start..close];
    if let Some(b) = body
        .strip_prefix("\r\n")
        .or_else(|| body.strip_prefix('\n'))
    {
        body = b;
    }
    let trimmed_tail = body.trim_end_matches([' ', '\t']);
    if let Some(b) = trimmed_tail
        .strip_suffix("\r\n")
        .or_else(|| trimmed_tail.strip_suffix('\n'))
    {
        body = b;
    }
    let end = close + 3;
    Ok((
        Token {
            kind: TokenKind::Triple,
            span: Span::new(pos, end),
            value: Cow::Borrowed(body),
        },
        end,
    ))
}

fn fence<'a>(
    src: &'a str,
    pos: usize,
    ends: &mut LineEnds,
) -> Result<(Token<'a>, usize), ParseError> {
    let bytes = src.as_bytes();
    let fence_char = bytes[pos];
    let mut run = 0;
    while pos + run < bytes.len() && bytes[pos + run] == fence_char {
        run += 1;
    }
    let opener_end = ends.of(src, pos);
    let unclosed = || {
        ParseError::new(
            ParseErrorKind::Unclosed {
                what: "code fence".into(),
                closer: format!("a line of {}", (fence_char as char).to_string().repeat(run)),
            },
            Span::new(pos, pos + run),
        )
    };
    // A fence closed on its own line: ```text```.
    if let Some(i) = src[pos + run..opener_end].find(&src[pos..pos + run]) {
        let body_start = pos + run;
        let end = body_start + i + run;
        return Ok((
            Token {
                kind: TokenKind::Fence,
                span: Span::new(pos, end),
                value: Cow::Borrowed(&src[body_start..body_start + i]),
            },
            end,
        ));
    }
    if opener_end >= src.len() {
        return Err(unclosed());
    }
    let body_start = opener_end + 1;
    let mut line_start = body_start;
    while line_start <= src.len() {
        let le = line_end(src, line_start);
        let first = skip_blanks(bytes, line_start, le);
        let mut n = 0;
        while first + n < le && bytes[first + n] == fence_char {
            n += 1;
        }
        let after = src[first + n..le].trim();
        if n >= run && (after.is_empty() || is_marker_word(after)) {
            let body_end = if line_start > body_start {
                line_start - 1
            } else {
                body_start
            };
            let mut body = &src[body_start..body_end.max(body_start)];
            if let Some(b) = body.strip_suffix('\r') {
                body = b;
            }
            let end = first + n;
            return Ok((
                Token {
                    kind: TokenKind::Fence,
                    span: Span::new(pos, end),
                    value: Cow::Borrowed(body),
                },
                end,
            ));
        }
        if le >= src.len() {
            break;
        }
        line_start = le + 1;
    }
    Err(unclosed())
}

/// True for a permission marker word (`.`, `?`, `!`, `?ask`, `?word`), which
/// may follow a closing fence on its line.
fn is_marker_word(word: &str) -> bool {
    matches!(word, "." | "?" | "!" | "!!")
        || word.strip_prefix('?').is_some_and(|w| {
            w.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// Consecutive lines starting with `>` from `line_start` on.
fn block_quote(src: &str, line_start: usize) -> Token<'_> {
    let bytes = src.as_bytes();
    let mut lines: Vec<&str> = Vec::new();
    let mut start = None;
    let mut end = line_start;
    let mut at = line_start;
    loop {
        let le = line_end(src, at);
        let first = skip_blanks(bytes, at, le);
        if first >= le || bytes[first] != b'>' {
            break;
        }
        start.get_or_insert(first);
        let text = &src[first + 1..le];
        let text = text.strip_prefix(' ').unwrap_or(text);
        lines.push(text.strip_suffix('\r').unwrap_or(text));
        end = le;
        if le >= src.len() {
            break;
        }
        at = le + 1;
    }
    Token {
        kind: TokenKind::BlockQuote,
        span: Span::new(start.unwrap_or(line_start), end),
        value: Cow::Owned(lines.join("\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        let lex =
            lex_link(src, 0, line_end(src, 0), src.len(), &VerbTable::builtin()).expect("lexes");
        lex.tokens
            .into_iter()
            .map(|t| (t.kind, t.value.into_owned()))
            .collect()
    }

    #[test]
    fn words_and_quotes() {
        assert_eq!(
            kinds(r#"bluesky "say \"hi\"" ?public"#),
            vec![
                (TokenKind::Word, "bluesky".into()),
                (TokenKind::Quoted, "say \"hi\"".into()),
                (TokenKind::Word, "?public".into()),
            ]
        );
    }

    /// The closer search jumps between backslashes and the closer's first
    /// byte: an escaped closer, an escaped backslash before the closer, a
    /// character sharing the curly closer's first byte, and a backslash
    /// with nothing after it are each read as before.
    #[test]
    fn quotes_close_where_they_should() {
        let quoted = |src: &str| {
            kinds(src)
                .into_iter()
                .find(|(k, _)| *k == TokenKind::Quoted)
                .map(|(_, v)| v)
        };
        assert_eq!(quoted(r#"a "x \"y\" z" b"#).as_deref(), Some(r#"x "y" z"#));
        assert_eq!(quoted(r#"a "x\\" b"#).as_deref(), Some(r"x\"));
        assert_eq!(quoted("a “one — two” b").as_deref(), Some("one — two"));
        assert_eq!(quoted("a “é \\” still” b").as_deref(), Some("é ” still"));
        assert_eq!(quoted(r#"a "never closed \"#), None);
        assert_eq!(quoted("a “never closed — at all"), None);
    }

    #[test]
    fn triple_quotes_span_lines() {
        let src = "bluesky \"\"\"\nline one\nline two\n\"\"\" ?";
        assert_eq!(
            kinds(src),
            vec![
                (TokenKind::Word, "bluesky".into()),
                (TokenKind::Triple, "line one\nline two".into()),
                (TokenKind::Word, "?".into()),
            ]
        );
    }

    #[test]
    fn unclosed_triple_is_an_error() {
        assert!(lex_link("x \"\"\"\nnever closed", 0, 13, 25, &VerbTable::builtin()).is_err());
    }

    #[test]
    fn arrow_before_slash_ends_the_link() {
        let src = "meeting notes -> /summarize";
        let lex = lex_link(src, 0, src.len(), src.len(), &VerbTable::builtin()).unwrap();
        assert_eq!(lex.tokens.len(), 2);
        assert_eq!(lex.next.unwrap().slash, 17);
    }

    #[test]
    fn arrow_between_quotes_is_a_word() {
        let src = r#"persona "old" -> "new""#;
        let lex = lex_link(src, 0, src.len(), src.len(), &VerbTable::builtin()).unwrap();
        assert!(lex.next.is_none());
        assert_eq!(lex.tokens.len(), 4);
    }
}
