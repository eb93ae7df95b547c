//! Syntax highlighting of dialect actions with syntect, from the dialect's
//! syntax definition shipped in `syntaxes/dialect.sublime-syntax`. The
//! parser says where actions are; syntect's scopes say how each piece is
//! coloured, mapped to the theme's `dialect.*` roles.

use std::ops::Range;

use syntect::parsing::{
    ParseState, ScopeStack, SyntaxDefinition, SyntaxReference, SyntaxSet, SyntaxSetBuilder,
};

/// The dialect's syntax definition.
pub const DIALECT_SYNTAX: &str = include_str!("../../../syntaxes/dialect.sublime-syntax");

/// Highlights dialect text.
#[derive(Debug)]
pub struct DialectHighlighter {
    set: SyntaxSet,
}

/// The theme role for a scope stack (innermost scope that maps wins).
fn role_of(stack: &ScopeStack) -> Option<&'static str> {
    for scope in stack.as_slice().iter().rev() {
        let name = scope.build_string();
        let role =
            if name.starts_with("keyword.other.verb") || name.starts_with("keyword.control.do") {
                "dialect.verb"
            } else if name.starts_with("keyword.other.subcommand") {
                "dialect.keyword"
            } else if name.starts_with("keyword.operator.marker") {
                "dialect.marker"
            } else if name.starts_with("keyword.operator.chain") {
                "dialect.chain"
            } else if name.starts_with("variable.other.reference") {
                "dialect.reference"
            } else if name.starts_with("entity.name") {
                "dialect.argument"
            } else if name.starts_with("string") || name.starts_with("markup") {
                "dialect.content"
            } else if name.starts_with("punctuation") || name.starts_with("constant.character") {
                "dialect.punctuation"
            } else {
                continue;
            };
        return Some(role);
    }
    None
}

impl Default for DialectHighlighter {
    fn default() -> Self {
        Self::new()
    }
}

impl DialectHighlighter {
    /// Loads the dialect syntax.
    pub fn new() -> Self {
        let definition = SyntaxDefinition::load_from_str(DIALECT_SYNTAX, false, Some("dialect"))
            .expect("the dialect syntax definition parses");
        let mut builder = SyntaxSetBuilder::new();
        builder.add(definition);
        DialectHighlighter {
            set: builder.build(),
        }
    }

    fn syntax(&self) -> &SyntaxReference {
        self.set
            .find_syntax_by_extension("dialect")
            .expect("the dialect syntax is loaded")
    }

    /// Byte ranges of `text` (one action) with the theme role of each.
    pub fn roles(&self, text: &str) -> Vec<(Range<usize>, &'static str)> {
        let mut state = ParseState::new(self.syntax());
        let mut stack = ScopeStack::new();
        let mut out: Vec<(Range<usize>, &'static str)> = Vec::new();
        let mut line_start = 0;
        for line in text.split_inclusive('\n') {
            let Ok(ops) = state.parse_line(line, &self.set) else {
                break;
            };
            let mut at = 0;
            for (pos, op) in ops {
                if pos > at
                    && let Some(role) = role_of(&stack)
                {
                    out.push((line_start + at..line_start + pos, role));
                }
                at = pos.max(at);
                let _ = stack.apply(&op);
            }
            if line.len() > at
                && let Some(role) = role_of(&stack)
            {
                out.push((
                    line_start + at..line_start + line.trim_end_matches('\n').len().max(at),
                    role,
                ));
            }
            line_start += line.len();
        }
        out.retain(|(r, _)| !r.is_empty());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles_of(text: &str) -> Vec<(&str, &'static str)> {
        DialectHighlighter::new()
            .roles(text)
            .into_iter()
            .map(|(r, role)| (&text[r], role))
            .collect()
    }

    #[test]
    fn actions_get_roles() {
        let got = roles_of("/post bluesky \"hi there\" ?public -> /tell @anchor that");
        assert!(got.contains(&("/post", "dialect.verb")), "{got:?}");
        assert!(
            got.iter()
                .any(|(t, r)| t.contains("hi there") && *r == "dialect.content"),
            "{got:?}"
        );
        assert!(got.contains(&("->", "dialect.chain")), "{got:?}");
        assert!(got.contains(&("/tell", "dialect.verb")), "{got:?}");
        assert!(got.contains(&("@anchor", "dialect.argument")), "{got:?}");
        let got = roles_of("/recall append notes \"x\" ?");
        assert!(
            got.contains(&("append", "dialect.keyword")) && got.contains(&("?", "dialect.marker")),
            "{got:?}"
        );
        let got = roles_of("/reply @last.output !");
        assert!(
            got.contains(&("@last.output", "dialect.reference"))
                && got.contains(&("!", "dialect.marker")),
            "{got:?}"
        );
    }

    #[test]
    fn multi_line_content_stays_content() {
        let got = roles_of("/post bluesky \"\"\"\nline one ?\n\"\"\" ?public");
        assert!(
            got.iter()
                .any(|(t, r)| t.contains("line one ?") && *r == "dialect.content"),
            "{got:?}"
        );
        assert!(got.contains(&("?public", "dialect.marker")), "{got:?}");
    }
}
