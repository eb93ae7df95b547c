//! What an `.agr` file says, as the reader gives it to the compiler:
//! imports, rule definitions, their alternatives and items, and where each
//! starts, for errors with line and column.

use super::expr::Expr;

/// How the words of a rule are separated in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Spacing {
    /// A separator between two letters of word-spaced scripts (Latin,
    /// Cyrillic…); none needed next to CJK, digits or punctuation.
    Auto,
    /// Always at least one separator.
    Required,
    /// Separators allowed, never needed.
    Optional,
    /// No separators at all.
    None,
}

/// An `import` statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Import {
    /// `import { A, B };`: entity types registered at run time.
    Entities(Vec<String>),
    /// `import { A, B } from "file";`: rules (or, from a `.ts` file, types).
    Named(Vec<String>, String),
    /// `import * from "file";`.
    All(String),
}

/// One thing in an alternative's sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A literal word (case-insensitive).
    Word(String),
    /// A quoted phrase: its words.
    Words(Vec<String>),
    /// `$(name:type)`, optional with `?`.
    Var {
        /// The variable.
        name: String,
        /// `string`, `wildcard`, `word`, `number`, an entity type.
        kind: String,
        /// `$(name:<Rule>)`: the rule it captures through.
        rule: Option<String>,
        /// Followed by `?`.
        optional: bool,
    },
    /// `<Rule>`.
    Rule(String),
    /// `( alternatives )` with an optional quantifier.
    Group {
        /// The alternatives.
        alts: Vec<Alternative>,
        /// `?`, `*`, `+` or none.
        quantifier: Option<char>,
    },
}

/// One alternative of a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    /// Its own spacing annotation.
    pub spacing: Option<Spacing>,
    /// The sequence.
    pub items: Vec<Item>,
    /// The value after `->`.
    pub value: Option<Expr>,
    /// Where the value starts (byte), for errors about it.
    pub value_pos: usize,
    /// Where it starts (byte).
    pub pos: usize,
}

/// A variable an alternative names: what it is called, its type, the
/// rule it captures through, and whether it may be skipped.
#[derive(Debug, Clone, Copy)]
pub struct Variable<'a> {
    /// Its name.
    pub name: &'a str,
    /// `string`, `wildcard`, `word`, `number` or an entity type.
    pub kind: &'a str,
    /// `$(name:<Rule>)`: the rule.
    pub rule: Option<&'a str>,
    /// Followed by `?`.
    pub optional: bool,
}

impl Alternative {
    /// The variables its own items name (not those inside its groups).
    pub fn variables(&self) -> impl Iterator<Item = Variable<'_>> {
        self.items.iter().filter_map(|i| match i {
            Item::Var {
                name,
                kind,
                rule,
                optional,
            } => Some(Variable {
                name,
                kind,
                rule: rule.as_deref(),
                optional: *optional,
            }),
            _ => None,
        })
    }
}

/// A rule definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// The rule's name.
    pub name: String,
    /// `export`ed.
    pub exported: bool,
    /// `[spacing=…]` on the definition.
    pub spacing: Option<Spacing>,
    /// `: Type` (typed start rules).
    pub type_name: Option<String>,
    /// The alternatives.
    pub alts: Vec<Alternative>,
    /// Where it starts (byte).
    pub pos: usize,
}

/// A whole `.agr` file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceFile {
    /// Imports, in order.
    pub imports: Vec<(Import, usize)>,
    /// Definitions, in order.
    pub defs: Vec<Definition>,
}

/// A load error: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset.
    pub pos: usize,
    /// What was wrong, as a sentence.
    pub message: String,
}

/// Line and column (from 1) of byte `pos` in `src`.
pub fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(src.len());
    let before = &src[..pos];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.chars().count(), |i| before[i + 1..].chars().count())
        + 1;
    (line, col)
}
