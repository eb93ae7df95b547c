//! Reading one word as far as it is known before the command runs:
//! quoting removed, the home directory however written, variables set
//! earlier in the line, and what `$(…)`, backticks and `<(…)` run.

use brush_parser::word::{self, WordPiece, WordPieceWithSource};

use super::{Arg, Scope, Walker, options};

impl Walker {
    /// Reads one word: its text as far as known, and the commands its
    /// substitutions run.
    pub(super) fn word(&mut self, raw: &str, scope: &Scope, depth: usize) -> Arg {
        let mut arg = Arg::plain("");
        match word::parse(raw, &options()) {
            Ok(pieces) => self.pieces(&pieces, scope, depth, &mut arg),
            Err(_) => {
                arg.text = raw.to_string();
                arg.dynamic = raw.contains(['$', '`']);
            }
        }
        arg
    }

    fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        scope: &Scope,
        depth: usize,
        arg: &mut Arg,
    ) {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => arg.text.push_str(t),
                WordPiece::AnsiCQuotedText(t) => arg.text.push_str(&ansi_c(t)),
                WordPiece::EscapeSequence(t) => {
                    arg.text.push_str(t.strip_prefix('\\').unwrap_or(t))
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, scope, depth, arg);
                }
                WordPiece::TildeExpansion(t) => match t {
                    word::TildeExpr::Home => arg.text.push('~'),
                    _ => {
                        arg.text.push_str("~?");
                        arg.dynamic = true;
                    }
                },
                WordPiece::ParameterExpansion(expr) => {
                    let name = parameter_name(expr);
                    match name.as_deref() {
                        Some("HOME") => arg.text.push('~'),
                        Some(n) if scope.vars.contains_key(n) => arg.text.push_str(&scope.vars[n]),
                        Some(n) => {
                            arg.text.push('$');
                            arg.text.push_str(n);
                            arg.dynamic = true;
                        }
                        None => {
                            arg.text.push_str("${…}");
                            arg.dynamic = true;
                        }
                    }
                }
                WordPiece::CommandSubstitution(text)
                | WordPiece::BackquotedCommandSubstitution(text) => {
                    let inner = self.substitution(text, scope, depth);
                    match self.printed(&inner) {
                        Some(printed) => arg.text.push_str(&printed),
                        None => {
                            arg.text.push_str("$(…)");
                            arg.dynamic = true;
                        }
                    }
                    arg.inner.extend(inner);
                }
                WordPiece::ArithmeticExpression(_) => {
                    arg.text.push_str("$((…))");
                    arg.dynamic = true;
                }
            }
        }
    }

    /// What a substitution prints when it is one `echo` or `printf` of
    /// known words (`$(echo rm)`).
    fn printed(&self, inner: &[usize]) -> Option<String> {
        let [one] = inner else { return None };
        let inv = &self.out[*one];
        if !matches!(inv.name(), "echo" | "printf") || inv.args().iter().any(|a| a.dynamic) {
            return None;
        }
        if inv.name() == "printf" && inv.args().first().is_some_and(|a| a.text.contains('%')) {
            return None;
        }
        Some(
            inv.args()
                .iter()
                .filter(|a| !matches!(a.text.as_str(), "-n" | "-e" | "-E"))
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        )
    }
}

/// The name a parameter expansion reads, when it is a plain `$NAME` or
/// `${NAME}` (every other form is only known when it runs).
fn parameter_name(expr: &word::ParameterExpr) -> Option<String> {
    match expr {
        word::ParameterExpr::Parameter {
            parameter: word::Parameter::Named(name),
            indirect: false,
        } => Some(name.clone()),
        _ => None,
    }
}

/// `$'…'` text with its common escapes decoded.
fn ansi_c(t: &str) -> String {
    let mut out = String::new();
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('x') => {
                let hex: String = chars
                    .clone()
                    .take(2)
                    .take_while(char::is_ascii_hexdigit)
                    .collect();
                for _ in 0..hex.len() {
                    chars.next();
                }
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    out.push(c);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}
