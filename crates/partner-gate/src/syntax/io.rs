//! What flows into a command: its redirections, the text a here-string or
//! here-document gives its input, what an `echo` before it in the pipeline
//! or a process substitution prints, and the commands substitutions run.

use brush_parser::ast;

use super::{Arg, Redirect, Scope, Walker};

impl Walker {
    /// The words an `echo` or `printf` with known arguments just before
    /// in the pipeline prints (what `xargs` or a shell will read).
    pub(super) fn echoed(&self, upstream: &[usize]) -> Option<Vec<String>> {
        let last = self.out.get(*upstream.last()?)?;
        if !matches!(last.name(), "echo" | "printf") || last.args().iter().any(|a| a.dynamic) {
            return None;
        }
        // Only echo's own leading options are not printed.
        let skip = last
            .args()
            .iter()
            .take_while(|a| matches!(a.text.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
            .count();
        Some(
            last.args()[skip..]
                .iter()
                .flat_map(|a| {
                    a.text
                        .replace("\\n", " ")
                        .replace("\\t", " ")
                        .split_whitespace()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .collect(),
        )
    }

    /// What a `find` before it in the pipeline lists: each of its roots
    /// and anything under them.
    pub(super) fn found(&self, upstream: &[usize]) -> Option<Vec<String>> {
        let last = self.out.get(*upstream.last()?)?;
        // `ls DIR | xargs …`: the names in DIR.
        if last.name() == "ls" {
            let dirs: Vec<String> = last
                .args()
                .iter()
                .filter(|a| !a.text.starts_with('-') && !a.dynamic)
                .map(|a| format!("{}/*", a.text.trim_end_matches('/')))
                .collect();
            return Some(if dirs.is_empty() {
                vec!["*".into()]
            } else {
                dirs
            });
        }
        if last.name() != "find" {
            return None;
        }
        match super::wrappers::unwrap(&last.argv) {
            super::wrappers::Unwrapped::Find { roots, .. } => Some(
                roots
                    .iter()
                    .flat_map(|r| [r.clone(), format!("{}/*", r.trim_end_matches('/'))])
                    .collect(),
            ),
            _ => None,
        }
    }

    /// What a process substitution among `argv` prints, when it is one
    /// `echo` or `printf` of known words (`source <(echo rm -rf /)`).
    pub(super) fn substituted(&self, argv: &[Arg]) -> Option<String> {
        argv.iter()
            .skip(1)
            .filter(|a| a.text == "<(…)")
            .find_map(|a| self.printed(&a.inner))
    }

    /// A command's redirections, and the text a here-string or
    /// here-document among them gives its input.
    pub(super) fn redirects(
        &mut self,
        list: &[ast::IoRedirect],
        scope: &Scope,
        depth: usize,
    ) -> (Vec<Redirect>, Option<String>) {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        let mut out = Vec::new();
        let mut stdin = None;
        for r in list {
            match r {
                R::File(_, kind, target) => {
                    let writes =
                        matches!(kind, K::Write | K::Append | K::ReadAndWrite | K::Clobber);
                    let target = match target {
                        T::Filename(w) | T::Duplicate(w) => self.word(&w.value, scope, depth),
                        T::Fd(_) => continue,
                        T::ProcessSubstitution(_, sub) => {
                            let inner = self.substitution_list(&sub.list, scope, depth);
                            Arg {
                                text: "<(…)".into(),
                                dynamic: true,
                                inner,
                                ..Arg::default()
                            }
                        }
                    };
                    out.push(Redirect { writes, target });
                }
                R::OutputAndError(w, _) => out.push(Redirect {
                    writes: true,
                    target: self.word(&w.value, scope, depth),
                }),
                R::HereString(_, w) => {
                    let arg = self.word(&w.value, scope, depth);
                    if arg.dynamic {
                        // What its substitutions run feeds the input.
                        out.push(Redirect {
                            writes: false,
                            target: arg,
                        });
                    } else {
                        stdin = Some(arg.text);
                    }
                }
                R::HereDocument(_, doc) => stdin = Some(doc.doc.value.clone()),
            }
        }
        (out, stdin)
    }

    pub(super) fn substitution_list(
        &mut self,
        list: &ast::CompoundList,
        scope: &Scope,
        depth: usize,
    ) -> Vec<usize> {
        let before = self.out.len();
        let mut inner = scope.clone();
        self.list(list, &mut inner, depth + 1);
        (before..self.out.len()).collect()
    }

    pub(super) fn substitution(&mut self, text: &str, scope: &Scope, depth: usize) -> Vec<usize> {
        let before = self.out.len();
        self.script(text, scope, false, depth + 1);
        (before..self.out.len()).collect()
    }
}
