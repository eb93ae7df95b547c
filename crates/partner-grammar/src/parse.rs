//! The `.agr` reader: imports, rule definitions with their alternatives,
//! spacing annotations, typed start rules, literals, variables, rule
//! references, groups with `?` `*` `+`, comments and escapes, and the value
//! expressions after `->`. Errors say where (line and column, from 1) and
//! what was expected.

use super::expr::parse_expr;

pub use super::source::{
    Alternative, Definition, Import, Item, SourceFile, Spacing, SyntaxError, line_col,
};

/// Longest `.agr` text read, and deepest group nesting.
const MAX_SOURCE: usize = 4 << 20;
const MAX_NESTING: usize = 64;

/// Reads an `.agr` file. `expressions` allows operators in values.
pub fn parse_source(src: &str, expressions: bool) -> Result<SourceFile, SyntaxError> {
    parse_source_with(src, expressions, false)
}

/// [`parse_source`], with `'…'` and `"…"` read as literals whose quotes
/// are part of them when `literal_quotes` (TypeAgent's reading) instead of
/// as phrases.
pub fn parse_source_with(
    src: &str,
    expressions: bool,
    literal_quotes: bool,
) -> Result<SourceFile, SyntaxError> {
    if src.len() > MAX_SOURCE {
        return Err(SyntaxError {
            pos: 0,
            message: "the grammar is larger than 4 MiB".into(),
        });
    }
    let mut p = Reader {
        src,
        pos: 0,
        expressions,
        literal_quotes,
        depth: 0,
    };
    let mut file = SourceFile::default();
    loop {
        p.skip();
        if p.pos >= src.len() {
            return Ok(file);
        }
        if p.keyword("import") {
            let at = p.pos - 6;
            file.imports.push((p.import()?, at));
        } else {
            let exported = p.keyword("export");
            p.skip();
            if !p.rest().starts_with('<') {
                return p.fail("'<' (a rule definition) or 'import'");
            }
            let mut def = p.definition()?;
            def.exported = exported;
            file.defs.push(def);
        }
    }
}

struct Reader<'a> {
    src: &'a str,
    pos: usize,
    expressions: bool,
    literal_quotes: bool,
    depth: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn skip(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if self.rest().starts_with("//") {
                self.pos += self.rest().find('\n').unwrap_or(self.rest().len());
            } else if self.rest().starts_with("/*") {
                self.pos += self.rest().find("*/").map_or(self.rest().len(), |e| e + 2);
            } else {
                return;
            }
        }
    }

    fn fail<T>(&self, expected: &str) -> Result<T, SyntaxError> {
        let found = self
            .rest()
            .chars()
            .next()
            .map_or_else(|| "end of file".to_string(), |c| format!("character '{c}'"));
        Err(SyntaxError {
            pos: self.pos,
            message: format!("Unexpected {found}. {expected} expected."),
        })
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

    fn keyword(&mut self, word: &str) -> bool {
        self.skip();
        let rest = self.rest();
        if rest.starts_with(word)
            && !rest[word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn name(&mut self) -> Result<String, SyntaxError> {
        self.skip();
        let rest = self.rest();
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
            .unwrap_or(rest.len());
        if end == 0 {
            return self.fail("A name");
        }
        let name = rest[..end].to_string();
        self.pos += end;
        Ok(name)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.skip();
        let quote = match self.rest().chars().next() {
            Some(q @ ('"' | '\'')) => q,
            _ => return self.fail("A quoted file name"),
        };
        let start = self.pos + 1;
        let end = self.src[start..].find(quote).ok_or(SyntaxError {
            pos: self.pos,
            message: "Unterminated string.".into(),
        })?;
        self.pos = start + end + 1;
        Ok(self.src[start..start + end].to_string())
    }

    fn import(&mut self) -> Result<Import, SyntaxError> {
        let import = if self.eat("*") {
            if !self.keyword("from") {
                return self.fail("'from'");
            }
            Import::All(self.string()?)
        } else {
            if !self.eat("{") {
                return self.fail("'{' or '*'");
            }
            let mut names = Vec::new();
            loop {
                if self.eat("}") {
                    break;
                }
                names.push(self.name()?);
                if self.eat("}") {
                    break;
                }
                if !self.eat(",") {
                    return self.fail("',' or '}'");
                }
            }
            if self.keyword("from") {
                Import::Named(names, self.string()?)
            } else {
                Import::Entities(names)
            }
        };
        if !self.eat(";") {
            return self.fail("';'");
        }
        Ok(import)
    }

    fn annotation(&mut self) -> Result<Option<Spacing>, SyntaxError> {
        self.skip();
        if !self.rest().starts_with('[') {
            return Ok(None);
        }
        let at = self.pos;
        self.pos += 1;
        let key = self.name()?;
        if key != "spacing" {
            return Err(SyntaxError {
                pos: at + 1,
                message: format!("Unknown rule annotation '{key}'. Expected 'spacing'."),
            });
        }
        if !self.eat("=") {
            return self.fail("'='");
        }
        let value_at = self.pos;
        let value = self.name()?;
        let spacing = match value.as_str() {
            "auto" => Spacing::Auto,
            "required" => Spacing::Required,
            "optional" => Spacing::Optional,
            "none" => Spacing::None,
            _ => {
                return Err(SyntaxError {
                    pos: value_at,
                    message: format!(
                        "Invalid value '{value}' for spacing annotation. Expected 'required', 'optional', 'none', or 'auto'."
                    ),
                });
            }
        };
        if !self.eat("]") {
            return self.fail("']'");
        }
        Ok(Some(spacing))
    }

    fn definition(&mut self) -> Result<Definition, SyntaxError> {
        let pos = self.pos;
        self.eat("<");
        let name = self.name()?;
        if !self.eat(">") {
            return self.fail("'>'");
        }
        let spacing = self.annotation()?;
        let type_name = if self.eat(":") {
            let mut names = vec![self.name()?];
            while self.eat("|") {
                names.push(self.name()?);
            }
            Some(names.join(" | "))
        } else {
            None
        };
        if !self.eat("=") {
            return self.fail("'='");
        }
        let mut alts = self.alternatives(true)?;
        if !self.eat(";") {
            return self.fail("';' at end of rule definition");
        }
        // Each alternative keeps its definition's spacing, so definitions of
        // the same rule with different annotations merge correctly.
        for alt in &mut alts {
            alt.spacing = alt.spacing.or(spacing);
        }
        Ok(Definition {
            name,
            exported: false,
            spacing,
            type_name,
            alts,
            pos,
        })
    }

    fn alternatives(&mut self, top: bool) -> Result<Vec<Alternative>, SyntaxError> {
        let mut alts = Vec::new();
        loop {
            alts.push(self.alternative(top)?);
            if !self.eat("|") {
                return Ok(alts);
            }
        }
    }

    fn alternative(&mut self, top: bool) -> Result<Alternative, SyntaxError> {
        self.skip();
        let pos = self.pos;
        let spacing = self.annotation()?;
        let mut items = Vec::new();
        loop {
            self.skip();
            let rest = self.rest();
            if rest.is_empty() || rest.starts_with(['|', ';', ')']) || rest.starts_with("->") {
                break;
            }
            items.push(self.item()?);
        }
        if items.is_empty() {
            return self.fail("A word, variable, rule or group");
        }
        let mut value_pos = pos;
        let value = if self.eat("->") {
            self.skip();
            value_pos = self.pos;
            let (expr, end) = parse_expr(self.src, self.pos, self.expressions)
                .map_err(|(pos, message)| SyntaxError { pos, message })?;
            self.pos = end;
            Some(expr)
        } else {
            None
        };
        self.skip();
        let rest = self.rest();
        let ok = rest.starts_with('|')
            || (top && rest.starts_with(';'))
            || (!top && rest.starts_with(')'));
        if !ok {
            let expected = if top {
                "';' expected at end of rule definition"
            } else {
                "')'"
            };
            let found = rest
                .chars()
                .next()
                .map_or_else(|| "end of file".into(), |c| format!("character '{c}'"));
            return Err(SyntaxError {
                pos: self.pos,
                message: if top {
                    format!("Unexpected {found}. {expected}.")
                } else {
                    format!("Unexpected {found}. {expected} expected.")
                },
            });
        }
        Ok(Alternative {
            spacing,
            items,
            value,
            value_pos,
            pos,
        })
    }

    fn item(&mut self) -> Result<Item, SyntaxError> {
        let rest = self.rest();
        if rest.starts_with("$(") {
            self.pos += 2;
            return self.variable();
        }
        if rest.starts_with('<') {
            self.pos += 1;
            return self.rule_reference();
        }
        let line_end = rest.find('\n').unwrap_or(rest.len());
        if let Some(q @ ('\'' | '"')) = rest.chars().next()
            && !self.literal_quotes
            && rest[1..line_end].contains(q)
        {
            return self.phrase(q);
        }
        if rest.starts_with('(') {
            self.pos += 1;
            return self.group();
        }
        self.word()
    }

    /// `$(name)`, `$(name:kind)` or `$(name:<Rule>)`, optionally `?`, its
    /// `$(` already read.
    fn variable(&mut self) -> Result<Item, SyntaxError> {
        let name = self.name()?;
        let (kind, rule) = if self.eat(":") {
            self.skip();
            if self.eat("<") {
                let r = self.name()?;
                if !self.eat(">") {
                    return self.fail("'>'");
                }
                ("rule".to_string(), Some(r))
            } else {
                (self.name()?, None)
            }
        } else {
            ("string".to_string(), None)
        };
        if !self.eat(")") {
            return self.fail("')'");
        }
        let optional = self.rest().starts_with('?');
        if optional {
            self.pos += 1;
        }
        Ok(Item::Var {
            name,
            kind,
            rule,
            optional,
        })
    }

    /// `<Rule>`, or `<Rule>?`, `<Rule>*`, `<Rule>+` (a group of one), its
    /// `<` already read.
    fn rule_reference(&mut self) -> Result<Item, SyntaxError> {
        let name = self.name()?;
        if !self.eat(">") {
            return self.fail("'>'");
        }
        if let Some(q @ ('?' | '*' | '+')) = self.rest().chars().next() {
            self.pos += 1;
            return Ok(Item::Group {
                alts: vec![Alternative {
                    spacing: None,
                    items: vec![Item::Rule(name)],
                    value: None,
                    value_pos: self.pos,
                    pos: self.pos,
                }],
                quantifier: Some(q),
            });
        }
        Ok(Item::Rule(name))
    }

    /// A phrase quoted with `q` (closed on its line): its words, literally.
    fn phrase(&mut self, q: char) -> Result<Item, SyntaxError> {
        let start = self.pos;
        let body = &self.rest()[1..];
        let end = body.find(q).ok_or(SyntaxError {
            pos: start,
            message: "Unterminated string.".into(),
        })?;
        let words: Vec<String> = body[..end].split_whitespace().map(str::to_string).collect();
        self.pos += end + 2;
        if words.is_empty() {
            return Err(SyntaxError {
                pos: start,
                message: "An empty phrase matches nothing.".into(),
            });
        }
        Ok(Item::Words(words))
    }

    /// `( … | … )` with its quantifier, its `(` already read; nested at
    /// most `MAX_NESTING` deep.
    fn group(&mut self) -> Result<Item, SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(SyntaxError {
                pos: self.pos,
                message: "Groups nested too deeply.".into(),
            });
        }
        let alts = self.alternatives(false)?;
        self.depth -= 1;
        if !self.eat(")") {
            return self.fail("')'");
        }
        let quantifier = match self.rest().chars().next() {
            Some(q @ ('?' | '*' | '+')) => {
                self.pos += 1;
                Some(q)
            }
            _ => None,
        };
        Ok(Item::Group { alts, quantifier })
    }

    /// The character of a `\u` escape (`\u0041` or `\u{1F600}`), the
    /// `\u` already read.
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let rest = self.rest();
        let (hex, len) = if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').ok_or(SyntaxError {
                pos: self.pos,
                message: "Invalid Unicode escape: '}' expected.".into(),
            })?;
            (&inner[..end], end + 2)
        } else {
            (rest.get(..4).unwrap_or(""), 4)
        };
        let c = u32::from_str_radix(hex, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or(SyntaxError {
                pos: self.pos,
                message: "Invalid Unicode escape.".into(),
            })?;
        self.pos += len;
        Ok(c)
    }

    fn word(&mut self) -> Result<Item, SyntaxError> {
        let mut out = String::new();
        loop {
            let rest = self.rest();
            let Some(c) = rest.chars().next() else { break };
            if c == '\\' {
                let Some(next) = rest[1..].chars().next() else {
                    return self.fail("A character after '\\'");
                };
                self.pos += 1 + next.len_utf8();
                out.push(match next {
                    't' => '\t',
                    'n' => '\n',
                    'r' => '\r',
                    'v' => '\u{b}',
                    'f' => '\u{c}',
                    '0' => '\0',
                    'u' => self.unicode_escape()?,
                    other => other,
                });
                continue;
            }
            if c.is_whitespace()
                || matches!(c, '(' | ')' | '|' | ';' | '<')
                || rest.starts_with("$(")
                || rest.starts_with("->")
                || rest.starts_with("//")
                || rest.starts_with("/*")
            {
                break;
            }
            out.push(c);
            self.pos += c.len_utf8();
        }
        if out.is_empty() {
            return self.fail("A word");
        }
        Ok(Item::Word(out))
    }
}
