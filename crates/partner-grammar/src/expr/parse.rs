//! Reading value expressions: JavaScript's grammar for the subset
//! grammars may use, with a depth limit.

use crate::value::Text;

use super::{Expr, Field, Item, Operator, Piece};
use crate::value::Value;

/// Reads a value expression from `src` at byte `pos`; returns it and the
/// byte after it. `full` allows operators (`enableValueExpressions`).
pub fn parse_expr(src: &str, pos: usize, full: bool) -> Result<(Expr, usize), (usize, String)> {
    let mut p = ExprParser {
        src,
        pos,
        full,
        depth: 0,
    };
    let e = p.expr()?;
    Ok((e, p.pos))
}

/// Deepest nesting of an expression.
const MAX_DEPTH: usize = 64;

struct ExprParser<'a> {
    src: &'a str,
    pos: usize,
    full: bool,
    depth: usize,
}

type PResult<T> = Result<T, (usize, String)>;

impl ExprParser<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn skip(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if self.rest().starts_with("//") {
                let end = self.rest().find('\n').unwrap_or(self.rest().len());
                self.pos += end;
            } else if self.rest().starts_with("/*") {
                let end = self.rest().find("*/").map_or(self.rest().len(), |e| e + 2);
                self.pos += end;
            } else {
                return;
            }
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn peek(&mut self, token: &str) -> bool {
        self.skip();
        self.rest().starts_with(token)
    }

    fn fail<T>(&self, what: &str) -> PResult<T> {
        let found = self.rest().chars().next().map_or_else(
            || "end of input".to_string(),
            |c| format!("character '{c}'"),
        );
        Err((self.pos, format!("Unexpected {found}. {what} expected.")))
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err((self.pos, "Expression nested too deeply.".into()));
        }
        let e = if self.full {
            self.cond()
        } else {
            self.primary()
        };
        self.depth -= 1;
        e
    }

    fn cond(&mut self) -> PResult<Expr> {
        let test = self.binary(0)?;
        if self.peek("?") && !self.peek("??") && !self.peek("?.") {
            self.eat("?");
            let a = self.expr()?;
            if !self.eat(":") {
                return self.fail("':'");
            }
            let b = self.expr()?;
            return Ok(Expr::Cond(Box::new(test), Box::new(a), Box::new(b)));
        }
        Ok(test)
    }

    fn binary(&mut self, level: usize) -> PResult<Expr> {
        const LEVELS: &[&[&str]] = &[
            &["??"],
            &["||"],
            &["&&"],
            &["===", "!==", "==", "!="],
            &["<=", ">=", "<", ">"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level >= LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        'outer: loop {
            self.skip();
            for op in LEVELS[level] {
                if self.rest().starts_with(op)
                    && !(*op == "<" && self.rest().starts_with("<="))
                    && !(*op == ">" && self.rest().starts_with(">="))
                    && !(*op == "=="
                        && (self.rest().starts_with("===") || self.rest().starts_with("!==")))
                {
                    self.pos += op.len();
                    let right = self.binary(level + 1)?;
                    left = Expr::Binary(Operator(op), Box::new(left), Box::new(right));
                    continue 'outer;
                }
            }
            return Ok(left);
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.skip();
        for op in ["!", "-", "+"] {
            if self.rest().starts_with(op) && !self.rest().starts_with("!=") {
                self.pos += op.len();
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err((self.pos, "Expression nested too deeply.".into()));
                }
                let e = self.unary()?;
                self.depth -= 1;
                return Ok(Expr::Unary(Operator(op), Box::new(e)));
            }
        }
        if self.rest().starts_with("typeof")
            && !self.rest()[6..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            self.pos += 6;
            let e = self.unary()?;
            return Ok(Expr::Unary(Operator("typeof"), Box::new(e)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            let optional = self.peek("?.");
            if optional {
                self.eat("?.");
                if self.peek("[") {
                    self.eat("[");
                    let i = self.expr()?;
                    if !self.eat("]") {
                        return self.fail("']'");
                    }
                    e = Expr::Index(Box::new(e), Box::new(i), true);
                    continue;
                }
            } else if self.peek(".") && !self.peek("...") {
                self.eat(".");
            } else if self.peek("[") {
                self.eat("[");
                let i = self.expr()?;
                if !self.eat("]") {
                    return self.fail("']'");
                }
                e = Expr::Index(Box::new(e), Box::new(i), false);
                continue;
            } else {
                return Ok(e);
            }
            let name = self
                .ident()
                .ok_or_else(|| (self.pos, "Property name expected.".into()))?;
            if self.peek("(") {
                self.eat("(");
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(")") {
                            break;
                        }
                        if !self.eat(",") {
                            return self.fail("',' or ')'");
                        }
                    }
                }
                e = Expr::Call(Box::new(e), name, args, optional);
            } else {
                e = Expr::Member(Box::new(e), name, optional);
            }
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip();
        let rest = self.rest();
        let mut chars = rest.char_indices();
        let (_, first) = chars.next()?;
        if !(first.is_alphabetic() || first == '_' || first == '$') {
            return None;
        }
        let end = chars
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
            .map_or(rest.len(), |(i, _)| i);
        let name = rest[..end].to_string();
        self.pos += end;
        Some(name)
    }

    fn primary(&mut self) -> PResult<Expr> {
        self.skip();
        let rest = self.rest();
        let Some(c) = rest.chars().next() else {
            return self.fail("A value");
        };
        match c {
            '"' | '\'' => Ok(Expr::Lit(Value::String(Text::from(self.string(c)?)))),
            '`' if self.full => self.template(),
            '{' => self.object(),
            '[' => self.array(),
            '(' if self.full => {
                self.eat("(");
                let e = self.expr()?;
                if !self.eat(")") {
                    return self.fail("')'");
                }
                Ok(e)
            }
            '0'..='9' | '.' => self.number(),
            '-' if !self.full && rest[1..].starts_with(|c: char| c.is_ascii_digit()) => {
                self.pos += 1;
                match self.number()? {
                    Expr::Lit(Value::Number(n)) => Ok(Expr::Lit(Value::Number(-n))),
                    other => Ok(other),
                }
            }
            _ => match self.ident() {
                Some(name) => Ok(match name.as_str() {
                    "true" => Expr::Lit(Value::Bool(true)),
                    "false" => Expr::Lit(Value::Bool(false)),
                    "null" => Expr::Lit(Value::Null),
                    "undefined" => Expr::Lit(Value::Undefined),
                    _ => Expr::Var(name),
                }),
                None => self.fail("A value"),
            },
        }
    }

    fn number(&mut self) -> PResult<Expr> {
        let rest = self.rest();
        let lower = rest.to_ascii_lowercase();
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
            if lower.starts_with(prefix) {
                let digits: String = rest[2..]
                    .chars()
                    .take_while(|c| c.is_digit(radix))
                    .collect();
                let n = u64::from_str_radix(&digits, radix)
                    .map_err(|_| (self.pos, "Invalid number.".to_string()))?;
                self.pos += 2 + digits.len();
                return Ok(Expr::Lit(Value::Number(n as f64)));
            }
        }
        let bytes = rest.as_bytes();
        let mut end = 0;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end < bytes.len() && bytes[end] == b'.' {
            end += 1;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
        if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
            let mut e = end + 1;
            if e < bytes.len() && (bytes[e] == b'+' || bytes[e] == b'-') {
                e += 1;
            }
            if e < bytes.len() && bytes[e].is_ascii_digit() {
                while e < bytes.len() && bytes[e].is_ascii_digit() {
                    e += 1;
                }
                end = e;
            }
        }
        let n: f64 = rest[..end]
            .parse()
            .map_err(|_| (self.pos, "Invalid number.".to_string()))?;
        self.pos += end;
        Ok(Expr::Lit(Value::Number(n)))
    }

    fn string(&mut self, quote: char) -> PResult<String> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.rest().chars().next() else {
                return Err((start, "Unterminated string literal.".into()));
            };
            self.pos += c.len_utf8();
            if c == quote {
                return Ok(out);
            }
            if c == '\n' {
                return Err((start, "Unterminated string literal.".into()));
            }
            if c == '\\' {
                out.push(self.escape()?);
            } else {
                out.push(c);
            }
        }
    }

    fn escape(&mut self) -> PResult<char> {
        let Some(c) = self.rest().chars().next() else {
            return Err((self.pos, "Unterminated escape.".into()));
        };
        self.pos += c.len_utf8();
        Ok(match c {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'v' => '\u{b}',
            '0' => '\0',
            'u' => {
                let rest = self.rest();
                let (hex, skip) = if let Some(inner) = rest.strip_prefix('{') {
                    let end = inner
                        .find('}')
                        .ok_or((self.pos, "Invalid Unicode escape.".to_string()))?;
                    (&inner[..end], end + 2)
                } else {
                    (rest.get(..4).unwrap_or(""), 4)
                };
                let code = u32::from_str_radix(hex, 16)
                    .map_err(|_| (self.pos, "Invalid Unicode escape.".to_string()))?;
                self.pos += skip;
                char::from_u32(code).unwrap_or('\u{fffd}')
            }
            'x' => {
                let hex = self.rest().get(..2).unwrap_or("");
                let code = u32::from_str_radix(hex, 16)
                    .map_err(|_| (self.pos, "Invalid hexadecimal escape.".to_string()))?;
                self.pos += 2;
                char::from_u32(code).unwrap_or('\u{fffd}')
            }
            other => other,
        })
    }

    fn template(&mut self) -> PResult<Expr> {
        let start = self.pos;
        self.pos += 1;
        let mut pieces = Vec::new();
        let mut text = String::new();
        loop {
            let Some(c) = self.rest().chars().next() else {
                return Err((start, "Unterminated template literal.".into()));
            };
            if c == '`' {
                self.pos += 1;
                break;
            }
            if self.rest().starts_with("${") {
                self.pos += 2;
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                let e = self.expr()?;
                if !self.eat("}") {
                    return self.fail("'}'");
                }
                pieces.push(Piece::Expr(e));
                continue;
            }
            self.pos += c.len_utf8();
            if c == '\\' {
                text.push(self.escape()?);
            } else {
                text.push(c);
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Expr::Template(pieces))
    }

    fn object(&mut self) -> PResult<Expr> {
        self.eat("{");
        let mut fields = Vec::new();
        loop {
            if self.eat("}") {
                return Ok(Expr::Object(fields.into()));
            }
            if self.eat("...") {
                fields.push(Field::Spread(self.expr()?));
            } else {
                self.skip();
                let key = match self.rest().chars().next() {
                    Some(q @ ('"' | '\'')) => self.string(q)?,
                    _ => self
                        .ident()
                        .ok_or_else(|| (self.pos, "Property name expected.".to_string()))?,
                };
                if self.eat(":") {
                    fields.push(Field::Pair(key.into(), Some(self.expr()?)));
                } else {
                    fields.push(Field::Pair(key.into(), None));
                }
            }
            if self.eat("}") {
                return Ok(Expr::Object(fields.into()));
            }
            if !self.eat(",") {
                return self.fail("',' or '}'");
            }
        }
    }

    fn array(&mut self) -> PResult<Expr> {
        self.eat("[");
        let mut items = Vec::new();
        loop {
            if self.eat("]") {
                return Ok(Expr::Array(items));
            }
            if self.eat("...") {
                items.push(Item::Spread(self.expr()?));
            } else {
                items.push(Item::One(self.expr()?));
            }
            if self.eat("]") {
                return Ok(Expr::Array(items));
            }
            if !self.eat(",") {
                return self.fail("',' or ']'");
            }
        }
    }
}
