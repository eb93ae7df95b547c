//! The reader: program text to data (`Datum`), with line and column in
//! every error. Code is data here — a closure's body is kept as the datum
//! it was read from, which is what serialization writes.

use std::sync::Arc;

use super::error::{LispError, LispResult};

/// Most levels of brackets one text may nest (deeper is refused, not a
/// stack overflow).
pub const MAX_NESTING: usize = 512;

/// Largest program text read, in bytes.
pub const MAX_SOURCE: usize = 4 << 20;

/// A datum as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// An integer.
    Int(i64),
    /// A decimal.
    Dec(f64),
    /// A string.
    Str(Arc<str>),
    /// `#t` or `#f`.
    Bool(bool),
    /// A name.
    Symbol(Arc<str>),
    /// `name:`.
    Keyword(Arc<str>),
    /// `( … )`.
    List(Vec<Datum>),
    /// `{k v …}`, in the order written.
    Map(Vec<(Datum, Datum)>),
    /// `#{ … }`.
    Set(Vec<Datum>),
    /// `'x`.
    Quote(Box<Datum>),
}

/// Where a datum starts (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    /// Line.
    pub line: usize,
    /// Column, in characters.
    pub column: usize,
}

struct Reader<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    column: usize,
    depth: usize,
}

/// Every top-level datum of `text`, with where each starts.
pub fn read_all(text: &str) -> LispResult<Vec<(Datum, Pos)>> {
    if text.len() > MAX_SOURCE {
        return Err(LispError::parse(format!(
            "program is {} bytes, more than the {} allowed",
            text.len(),
            MAX_SOURCE
        )));
    }
    let mut reader = Reader {
        chars: text.chars().peekable(),
        line: 1,
        column: 1,
        depth: 0,
    };
    let mut out = Vec::new();
    loop {
        reader.skip_space();
        if reader.chars.peek().is_none() {
            return Ok(out);
        }
        let pos = reader.pos();
        let datum = reader.datum()?;
        out.push((datum, pos));
    }
}

/// Exactly one datum.
pub fn read_one(text: &str) -> LispResult<Datum> {
    let mut all = read_all(text)?;
    match all.len() {
        1 => Ok(all.remove(0).0),
        0 => Err(LispError::parse(
            "1:1: expected an expression, found nothing",
        )),
        _ => Err(LispError::parse(format!(
            "{}: expected one expression, found {}",
            at(all[1].1),
            all.len()
        ))),
    }
}

fn at(p: Pos) -> String {
    format!("{}:{}", p.line, p.column)
}

fn delimiter(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '(' | ')' | '{' | '}' | '[' | ']' | '"' | ';' | '\'' | ','
        )
}

impl Reader<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn error(&self, pos: Pos, message: impl std::fmt::Display) -> LispError {
        LispError::parse(format!("{}: {message}", at(pos)))
    }

    fn next(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn skip_space(&mut self) {
        while let Some(&c) = self.chars.peek() {
            if c == ';' {
                while let Some(&c) = self.chars.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.next();
                }
            } else if c.is_whitespace() || c == ',' {
                self.next();
            } else {
                break;
            }
        }
    }

    fn datum(&mut self) -> LispResult<Datum> {
        let pos = self.pos();
        let Some(&c) = self.chars.peek() else {
            return Err(self.error(pos, "expected an expression, found the end"));
        };
        match c {
            '(' | '{' => {
                self.next();
                let close = if c == '(' { ')' } else { '}' };
                let items = self.sequence(pos, close)?;
                if c == '(' {
                    return Ok(Datum::List(items));
                }
                if items.len() % 2 == 1 {
                    return Err(self.error(
                        pos,
                        "a map needs a value for every key (odd number of forms)",
                    ));
                }
                let mut pairs = Vec::with_capacity(items.len() / 2);
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    pairs.push((k, v));
                }
                Ok(Datum::Map(pairs))
            }
            ')' | '}' | ']' => Err(self.error(pos, format!("unexpected `{c}`"))),
            '[' => Err(self.error(pos, "`[` is not Pattern Lisp syntax; lists use `( … )`")),
            '\'' => {
                self.next();
                self.skip_space();
                let inner = self.nested(pos)?;
                Ok(Datum::Quote(Box::new(inner)))
            }
            '"' => self.string(pos),
            '#' => {
                self.next();
                if self.chars.peek() == Some(&'{') {
                    self.next();
                    return Ok(Datum::Set(self.sequence(pos, '}')?));
                }
                let word = self.word();
                match word.as_str() {
                    "t" | "true" => Ok(Datum::Bool(true)),
                    "f" | "false" => Ok(Datum::Bool(false)),
                    _ => Err(self.error(pos, format!("unknown `#{word}` (expected #t, #f or #{{"))),
                }
            }
            _ => {
                let word = self.word();
                atom(&word).map_err(|m| self.error(pos, m))
            }
        }
    }

    fn nested(&mut self, pos: Pos) -> LispResult<Datum> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(pos, format!("nested deeper than {MAX_NESTING} levels")));
        }
        let d = self.datum();
        self.depth -= 1;
        d
    }

    fn sequence(&mut self, open: Pos, close: char) -> LispResult<Vec<Datum>> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.chars.peek() {
                None => {
                    return Err(self.error(open, format!("unclosed bracket: expected `{close}`")));
                }
                Some(&c) if c == close => {
                    self.next();
                    return Ok(items);
                }
                Some(&c) if matches!(c, ')' | '}' | ']') => {
                    let here = self.pos();
                    return Err(self.error(here, format!("expected `{close}`, found `{c}`")));
                }
                Some(_) => {
                    let d = self.nested(open)?;
                    items.push(d);
                }
            }
        }
    }

    fn word(&mut self) -> String {
        let mut w = String::new();
        while let Some(&c) = self.chars.peek() {
            if delimiter(c) {
                break;
            }
            w.push(c);
            self.next();
        }
        w
    }

    fn string(&mut self, pos: Pos) -> LispResult<Datum> {
        self.next();
        let mut s = String::new();
        loop {
            let here = self.pos();
            match self.next() {
                None => return Err(self.error(pos, "unclosed string: expected `\"`")),
                Some('"') => return Ok(Datum::Str(s.into())),
                Some('\\') => match self.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some('r') => s.push('\r'),
                    Some('0') => s.push('\0'),
                    Some('\\') => s.push('\\'),
                    Some('"') => s.push('"'),
                    Some('u') => s.push(self.unicode(here)?),
                    Some(c) => return Err(self.error(here, format!("unknown escape `\\{c}`"))),
                    None => return Err(self.error(pos, "unclosed string: expected `\"`")),
                },
                Some(c) => s.push(c),
            }
        }
    }

    /// `\u{1F600}` (the `\u` already read).
    fn unicode(&mut self, pos: Pos) -> LispResult<char> {
        if self.next() != Some('{') {
            return Err(self.error(pos, "expected `{` after `\\u`"));
        }
        let mut hex = String::new();
        loop {
            match self.next() {
                Some('}') => break,
                Some(c) if c.is_ascii_hexdigit() && hex.len() < 6 => hex.push(c),
                _ => return Err(self.error(pos, "expected 1 to 6 hex digits and `}` in `\\u{…}`")),
            }
        }
        u32::from_str_radix(&hex, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| self.error(pos, format!("`\\u{{{hex}}}` is not a character")))
    }
}

/// A word: number, keyword or symbol.
fn atom(word: &str) -> Result<Datum, String> {
    let body = word.strip_prefix(['+', '-']).unwrap_or(word);
    if body.starts_with(|c: char| c.is_ascii_digit()) {
        if body.bytes().all(|b| b.is_ascii_digit()) {
            return word
                .parse::<i64>()
                .map(Datum::Int)
                .map_err(|_| format!("integer `{word}` does not fit in 64 bits"));
        }
        let decimal = body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        return match word.parse::<f64>() {
            Ok(x) if decimal && x.is_finite() => Ok(Datum::Dec(x)),
            _ => Err(format!("`{word}` is not a number")),
        };
    }
    if let Some(name) = word.strip_suffix(':')
        && !name.is_empty()
        && !name.contains(':')
    {
        return Ok(Datum::Keyword(name.into()));
    }
    Ok(Datum::Symbol(word.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_form() {
        let all =
            read_all("1 -2 2.5 \"a\\n\\u{e9}\" #t #f x name: '(a b) {a: 1} #{1 2} ; note\n()")
                .unwrap();
        let data: Vec<Datum> = all.into_iter().map(|(d, _)| d).collect();
        assert_eq!(data[0], Datum::Int(1));
        assert_eq!(data[1], Datum::Int(-2));
        assert_eq!(data[2], Datum::Dec(2.5));
        assert_eq!(data[3], Datum::Str("a\né".into()));
        assert_eq!(data[4], Datum::Bool(true));
        assert_eq!(data[6], Datum::Symbol("x".into()));
        assert_eq!(data[7], Datum::Keyword("name".into()));
        assert!(matches!(data[8], Datum::Quote(_)));
        assert!(matches!(&data[9], Datum::Map(p) if p.len() == 1));
        assert!(matches!(&data[10], Datum::Set(s) if s.len() == 2));
        assert_eq!(data[11], Datum::List(vec![]));
        assert_eq!(data.len(), 12);
    }

    #[test]
    fn errors_say_where() {
        let e = read_all("(+ 1\n  (* 2 3)").unwrap_err();
        assert_eq!(e.message, "1:1: unclosed bracket: expected `)`");
        let e = read_all("\n  \"abc").unwrap_err();
        assert!(e.message.starts_with("2:3: unclosed string"), "{e}");
        let e = read_all("(a))").unwrap_err();
        assert!(e.message.starts_with("1:4: unexpected `)`"), "{e}");
        let e = read_all("{a: 1 b:}").unwrap_err();
        assert!(e.message.contains("odd number"), "{e}");
        let deep = "(".repeat(100_000);
        assert!(read_all(&deep).unwrap_err().message.contains("deeper"));
    }
}
