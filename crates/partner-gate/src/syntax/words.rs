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
                    word::TildeExpr::UserHome(user) => {
                        arg.text.push('~');
                        arg.text.push_str(user);
                    }
                    word::TildeExpr::WorkingDir => arg.text.push_str("~+"),
                    word::TildeExpr::OldWorkingDir => arg.text.push_str("~-"),
                    _ => {
                        arg.text.push_str("~?");
                        arg.dynamic = true;
                    }
                },
                WordPiece::ParameterExpansion(expr) => parameter(expr, scope, arg),
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

    /// A word as the arguments it becomes: `"$@"` inside a function's
    /// body is one argument per argument of the call.
    pub(super) fn words(&mut self, raw: &str, scope: &Scope, depth: usize) -> Vec<Arg> {
        let bare = raw.trim_matches('"');
        if matches!(bare, "$@" | "${@}" | "$*" | "${*}")
            && let Some(args) = &scope.positional
        {
            return args.to_vec();
        }
        let arg = self.word(raw, scope, depth);
        // An unquoted variable is split at `IFS` (`c='rm -rf /'; $c`).
        let unquoted_var = raw.starts_with('$') && !raw.contains(['"', '\'', '(']);
        if unquoted_var && !arg.dynamic {
            let ifs = scope.vars.get("IFS").map_or(" \t\n", String::as_str);
            let parts: Vec<&str> = arg
                .text
                .split(|c: char| ifs.contains(c) || c.is_whitespace())
                .filter(|p| !p.is_empty())
                .collect();
            return parts
                .into_iter()
                .map(|p| Arg {
                    text: p.to_string(),
                    split: true,
                    ..Arg::default()
                })
                .collect();
        }
        if unquoted_var && arg.dynamic {
            return vec![Arg { split: true, ..arg }];
        }
        vec![arg]
    }

    /// What a substitution prints when it is one `echo` or `printf` of
    /// known words (`$(echo rm)`).
    pub(super) fn printed(&self, inner: &[usize]) -> Option<String> {
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

/// A parameter expansion as far as it is known: `$HOME` (in any form) is
/// `~`; a variable set earlier in the line is its value; a function's
/// `$1` and `$@` are the call's arguments; an unset variable with a
/// default (`${X:-/}`) may be the default; anything else is `$NAME` or
/// `${…}`, only known when it runs.
fn parameter(expr: &word::ParameterExpr, scope: &Scope, arg: &mut Arg) {
    use word::{Parameter as P, ParameterExpr as E, SpecialParameter as S};
    let (parameter, default) = match expr {
        E::Parameter {
            parameter,
            indirect: false,
        } => (parameter, None),
        E::UseDefaultValues {
            parameter,
            indirect: false,
            default_value,
            ..
        }
        | E::AssignDefaultValues {
            parameter,
            indirect: false,
            default_value,
            ..
        } => (parameter, default_value.as_deref()),
        _ => {
            arg.text.push_str("${…}");
            arg.dynamic = true;
            return;
        }
    };
    let positional = scope.positional.as_deref();
    let known: Option<String> = match parameter {
        P::Named(n) if n == "HOME" => Some("~".into()),
        P::Named(n) => scope.vars.get(n).cloned(),
        P::Positional(i) => positional
            .and_then(|p| p.get((*i as usize).checked_sub(1)?))
            .filter(|a| !a.dynamic)
            .map(|a| a.text.clone()),
        P::Special(S::AllPositionalParameters { .. }) => positional
            .filter(|p| p.iter().all(|a| !a.dynamic))
            .map(|p| {
                p.iter()
                    .map(|a| a.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
        _ => None,
    };
    match (known, default) {
        (Some(v), _) => arg.text.push_str(&v),
        (None, Some(d)) => {
            arg.text.push_str(d);
            arg.dynamic = true;
        }
        (None, None) => {
            match parameter {
                P::Named(n) => {
                    arg.text.push('$');
                    arg.text.push_str(n);
                }
                _ => arg.text.push_str("${…}"),
            }
            arg.dynamic = true;
        }
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
