//! The reader of TypeScript schema files: the declarations action schemas
//! are written with, everything else skipped or read as any type.

use super::{Prop, Schema, Shape, TypeDef};

/// Longest schema text read, and deepest type nesting.
const MAX_TEXT: usize = 4 << 20;
const MAX_DEPTH: usize = 64;

/// A token of TypeScript, as far as the reader cares.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    Str(String),
    Num,
    Punct(char),
}

fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '/' if text[i..].starts_with("//") => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if text[i..].starts_with("/*") => {
                chars.next();
                let mut last = ' ';
                for (_, c) in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' | '\'' | '`' => {
                let mut s = String::new();
                while let Some((_, d)) = chars.next() {
                    if d == c {
                        break;
                    }
                    if d == '\\' {
                        if let Some((_, e)) = chars.next() {
                            s.push(match e {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                        continue;
                    }
                    s.push(d);
                }
                out.push(Token::Str(s));
            }
            c if c.is_alphabetic() || c == '_' || c == '$' => {
                let mut s = String::from(c);
                while let Some(&(_, d)) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' || d == '$' {
                        s.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Token::Name(s));
            }
            c if c.is_ascii_digit() => {
                while let Some(&(_, d)) = chars.peek() {
                    if d.is_ascii_alphanumeric() || d == '.' || d == '_' {
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Token::Num);
            }
            other => out.push(Token::Punct(other)),
        }
    }
    out
}

/// Reads the types a TypeScript schema declares. What it does not
/// understand it skips, or reads as `Any`.
pub fn parse_schema(text: &str) -> Schema {
    let mut schema = Schema::default();
    if text.len() > MAX_TEXT {
        return schema;
    }
    let mut r = Reader {
        toks: tokens(text),
        at: 0,
    };
    let mut extends: Vec<(String, Vec<String>)> = Vec::new();
    while r.at < r.toks.len() {
        let exported = r.eat_name("export");
        if r.eat_name("interface") {
            let Some(name) = r.name() else { continue };
            r.skip_generics();
            let mut bases = Vec::new();
            if r.eat_name("extends") {
                while let Some(base) = r.name() {
                    r.skip_generics();
                    bases.push(base);
                    if !r.eat(',') {
                        break;
                    }
                }
            }
            let shape = if r.eat('{') { r.members(0) } else { Shape::Any };
            if !bases.is_empty() {
                extends.push((name.clone(), bases));
            }
            schema.types.insert(name, TypeDef { shape, exported });
        } else if r.eat_name("type") {
            let Some(name) = r.name() else { continue };
            r.skip_generics();
            if !r.eat('=') {
                r.skip_statement();
                continue;
            }
            let shape = r.ty(0);
            r.eat(';');
            schema.types.insert(name, TypeDef { shape, exported });
        } else {
            r.skip_statement();
        }
    }
    // An interface's bases give it their properties (its own win).
    for (name, bases) in extends {
        let mut inherited: Vec<Prop> = Vec::new();
        for base in &bases {
            if let Shape::Object(props) = schema.resolve(&Shape::Ref(base.clone())) {
                inherited.extend(props.iter().cloned());
            } else {
                inherited.push(Prop {
                    name: String::new(),
                    shape: Shape::Any,
                    optional: true,
                });
            }
        }
        if let Some(TypeDef {
            shape: Shape::Object(own),
            ..
        }) = schema.types.get_mut(&name)
        {
            if inherited.iter().any(|p| p.name.is_empty()) {
                // A base it cannot read: the whole type is not known.
                if let Some(def) = schema.types.get_mut(&name) {
                    def.shape = Shape::Any;
                }
                continue;
            }
            for p in inherited.into_iter().rev() {
                if !own.iter().any(|o| o.name == p.name) {
                    own.insert(0, p);
                }
            }
        }
    }
    schema
}

struct Reader {
    toks: Vec<Token>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Token::Punct(c)) {
            self.at += 1;
            return true;
        }
        false
    }

    fn eat_name(&mut self, n: &str) -> bool {
        if matches!(self.peek(), Some(Token::Name(m)) if m == n) {
            self.at += 1;
            return true;
        }
        false
    }

    fn name(&mut self) -> Option<String> {
        if let Some(Token::Name(n)) = self.peek() {
            let n = n.clone();
            self.at += 1;
            return Some(n);
        }
        None
    }

    /// Skips `<…>` (generic parameters or arguments).
    fn skip_generics(&mut self) {
        if !self.eat('<') {
            return;
        }
        let mut depth = 1;
        while let Some(t) = self.peek().cloned() {
            self.at += 1;
            match t {
                Token::Punct('<') => depth += 1,
                Token::Punct('>') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Skips a statement: to its `;` or the end of its outermost block.
    fn skip_statement(&mut self) {
        let mut depth = 0usize;
        while let Some(t) = self.peek().cloned() {
            self.at += 1;
            match t {
                Token::Punct('{' | '(' | '[') => depth += 1,
                Token::Punct('}' | ')' | ']') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && t == Token::Punct('}') {
                        return;
                    }
                }
                Token::Punct(';') if depth == 0 => return,
                _ => {}
            }
        }
    }

    /// The members of an object type, after its `{`, through its `}`.
    fn members(&mut self, depth: usize) -> Shape {
        let mut props = Vec::new();
        let mut open = false;
        loop {
            while self.eat(';') || self.eat(',') {}
            let name = match self.peek().cloned() {
                None => break,
                Some(Token::Punct('}')) => {
                    self.at += 1;
                    break;
                }
                Some(Token::Name(n) | Token::Str(n)) => {
                    self.at += 1;
                    n
                }
                Some(_) => {
                    // An index signature or something else not read:
                    // properties not listed may be there.
                    open = true;
                    self.skip_member();
                    continue;
                }
            };
            let optional = self.eat('?');
            if !self.eat(':') {
                // A method or something else: not a property.
                open = true;
                self.skip_member();
                continue;
            }
            let shape = self.ty(depth + 1);
            props.push(Prop {
                name,
                shape,
                optional,
            });
        }
        if open {
            Shape::Any
        } else {
            Shape::Object(props)
        }
    }

    /// Skips one member to its `;`/`,`, or the `}` that ends the object.
    fn skip_member(&mut self) {
        let mut depth = 0usize;
        while let Some(t) = self.peek().cloned() {
            match t {
                Token::Punct('{' | '(' | '[' | '<') => depth += 1,
                Token::Punct('}') if depth == 0 => return,
                Token::Punct('}' | ')' | ']' | '>') => depth = depth.saturating_sub(1),
                Token::Punct(';' | ',') if depth == 0 => {
                    self.at += 1;
                    return;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// A type: members of a union, each an intersection of postfix types.
    fn ty(&mut self, depth: usize) -> Shape {
        if depth > MAX_DEPTH {
            self.at = self.toks.len();
            return Shape::Any;
        }
        self.eat('|');
        let mut members = vec![self.intersection(depth)];
        while self.eat('|') {
            members.push(self.intersection(depth));
        }
        Shape::union(members)
    }

    fn intersection(&mut self, depth: usize) -> Shape {
        let first = self.postfix(depth);
        if self.peek() != Some(&Token::Punct('&')) {
            return first;
        }
        let mut props = match first {
            Shape::Object(p) => Some(p),
            _ => None,
        };
        while self.eat('&') {
            match (self.postfix(depth), props.as_mut()) {
                (Shape::Object(more), Some(p)) => p.extend(more),
                _ => props = None,
            }
        }
        props.map_or(Shape::Any, Shape::Object)
    }

    fn postfix(&mut self, depth: usize) -> Shape {
        let mut t = self.primary(depth);
        while self.peek() == Some(&Token::Punct('['))
            && self.toks.get(self.at + 1) == Some(&Token::Punct(']'))
        {
            self.at += 2;
            t = Shape::Array(Box::new(t));
        }
        t
    }

    fn primary(&mut self, depth: usize) -> Shape {
        let Some(tok) = self.peek().cloned() else {
            return Shape::Any;
        };
        self.at += 1;
        match tok {
            Token::Str(s) => Shape::Literals(vec![s]),
            Token::Num => Shape::Number,
            Token::Punct('{') => self.members(depth + 1),
            Token::Punct('(') => {
                let t = self.ty(depth + 1);
                self.eat(')');
                t
            }
            Token::Punct('[') => {
                // A tuple: an array of its element types.
                let mut elems = Vec::new();
                while !self.eat(']') && self.peek().is_some() {
                    elems.push(self.ty(depth + 1));
                    self.eat(',');
                }
                Shape::Array(Box::new(Shape::union(elems)))
            }
            Token::Name(n) => match n.as_str() {
                "string" => Shape::String,
                "number" | "bigint" => Shape::Number,
                "boolean" => Shape::Boolean,
                "true" => Shape::Bool(true),
                "false" => Shape::Bool(false),
                "undefined" | "void" => Shape::Undefined,
                "null" => Shape::Null,
                "Array" | "ReadonlyArray" if self.peek() == Some(&Token::Punct('<')) => {
                    self.at += 1;
                    let t = self.ty(depth + 1);
                    self.eat('>');
                    Shape::Array(Box::new(t))
                }
                _ => {
                    if self.peek() == Some(&Token::Punct('<')) {
                        // A generic type: not read.
                        self.skip_generics();
                        return Shape::Any;
                    }
                    if matches!(n.as_str(), "any" | "unknown" | "object" | "Object") {
                        return Shape::Any;
                    }
                    Shape::Ref(n)
                }
            },
            Token::Punct(_) => Shape::Any,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_schema;
    use crate::schema::{Prop, Shape};

    fn prop(name: &str, shape: Shape, optional: bool) -> Prop {
        Prop {
            name: name.into(),
            shape,
            optional,
        }
    }

    #[test]
    fn action_schemas_are_read() {
        let s = parse_schema(
            r#"
            // The player's actions.
            export type PlayerActions = PlayAction | PauseAction;
            export interface PlayAction {
                actionName: "play";
                parameters: {
                    trackName: string; /* the title */
                    artists?: string[];
                    mode: 'fast' | "slow";
                    count: Array<number>;
                };
            }
            interface PauseAction { actionName: "pause", flag: true }
            export interface Loud extends PauseAction { level: number }
            "#,
        );
        let play = &s.types["PlayAction"];
        assert!(play.exported);
        assert_eq!(
            play.shape,
            Shape::Object(vec![
                prop("actionName", Shape::Literals(vec!["play".into()]), false),
                prop(
                    "parameters",
                    Shape::Object(vec![
                        prop("trackName", Shape::String, false),
                        prop("artists", Shape::Array(Box::new(Shape::String)), true),
                        prop(
                            "mode",
                            Shape::Literals(vec!["fast".into(), "slow".into()]),
                            false
                        ),
                        prop("count", Shape::Array(Box::new(Shape::Number)), false),
                    ]),
                    false
                ),
            ])
        );
        assert!(!s.types["PauseAction"].exported);
        assert_eq!(
            s.types["PlayerActions"].shape,
            Shape::Union(vec![
                Shape::Ref("PlayAction".into()),
                Shape::Ref("PauseAction".into())
            ])
        );
        let Shape::Object(loud) = &s.types["Loud"].shape else {
            panic!("an interface with a base is an object");
        };
        let names: Vec<&str> = loud.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["actionName", "flag", "level"]);
    }

    #[test]
    fn what_is_not_understood_is_any_or_skipped() {
        let s = parse_schema(
            "import { X } from './x';\nexport type G = Map<string, number>;\nexport interface M { run(): void; [k: string]: any }\nexport type R = X;",
        );
        assert_eq!(s.types["G"].shape, Shape::Any);
        assert_eq!(
            s.types["M"].shape,
            Shape::Any,
            "an open object is not checked"
        );
        assert_eq!(s.resolve(&s.types["R"].shape), &Shape::Any);
        // Hostile text: unbalanced, deep, unterminated.
        let deep = format!(
            "export type D = {}string{};",
            "(".repeat(500),
            ")".repeat(500)
        );
        assert_eq!(parse_schema(&deep).types["D"].shape, Shape::Any);
        let _ = parse_schema("export interface { ; type = | & [ \"unterminated");
    }
}
