//! Reading a shell command without running it: bash's syntax (parsed by
//! `brush-parser`) flattened into the commands it would run — through
//! pipelines, lists, subshells, loops and functions, inside `$(…)`,
//! backticks and `<(…)`, the strings given to `bash -c`, `su -c` and `eval`,
//! after `xargs` and `find -exec` — each with its arguments as far as they
//! are known before it runs, its redirections, and whether it runs raised
//! (`sudo`). Wrappers (`sudo`, `env`, `nice`, `timeout`, …) are taken off
//! so that `/bin/rm`, `\rm`, `r''m` and `sudo env rm` all read as `rm`.

use std::collections::HashMap;

use brush_parser::ast;
use brush_parser::{ParserOptions, parse_tokens, tokenize_str};

use super::wrappers::{self, Unwrapped};

mod invocation;
mod words;

pub use invocation::{Arg, Invocation, Reading, Redirect, Via};

/// Longest command read (longer ones are refused unread).
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;
/// Deepest nesting of brackets, substitutions and quoted scripts read.
pub const MAX_NESTING: usize = 24;
/// Most commands one command line may expand to before reading stops.
pub const MAX_INVOCATIONS: usize = 512;

/// Reads `command` as bash would parse it.
pub fn read(command: &str) -> Reading {
    let mut walker = Walker::default();
    if command.len() > MAX_COMMAND_BYTES {
        walker.unreadable = Some(format!(
            "the command is longer than {MAX_COMMAND_BYTES} bytes"
        ));
    } else if nesting(command) > MAX_NESTING {
        walker.unreadable = Some(format!(
            "the command nests more than {MAX_NESTING} levels deep"
        ));
    } else {
        let state = Scope::default();
        // The parser is a dependency: a panic in it is an unreadable command.
        let parsed = crate::isolate::contain(|| {
            walker.script(command, &state, false, 0);
            walker
        });
        walker = match parsed {
            Ok(w) => w,
            Err(panic) => Walker {
                unreadable: Some(format!("the shell parser failed: {panic}")),
                ..Walker::default()
            },
        };
    }
    Reading {
        invocations: walker.out,
        unreadable: walker.unreadable,
    }
}

/// How deeply brackets, braces and backticks nest (a cheap bound checked
/// before the recursive parser sees the text; scripts inside quoted
/// strings are bounded as they are read, by their own depth).
fn nesting(s: &str) -> usize {
    let (mut depth, mut deepest, mut in_ticks) = (0usize, 0usize, false);
    for c in s.chars() {
        let opens = match c {
            '(' | '{' | '[' => true,
            ')' | '}' | ']' => false,
            '`' => {
                in_ticks = !in_ticks;
                in_ticks
            }
            _ => continue,
        };
        if opens {
            depth += 1;
            deepest = deepest.max(depth);
        } else {
            depth = depth.saturating_sub(1);
        }
    }
    deepest
}

/// A simple command's words, redirections and assignments, as read.
#[derive(Default)]
struct Collected {
    words: Vec<Arg>,
    redirects: Vec<Redirect>,
    assigned: Vec<(String, Option<String>)>,
}

/// What a walk knows at a place: variables set by plain assignments and
/// the directory a `cd` moved to.
#[derive(Debug, Clone, Default)]
struct Scope {
    vars: HashMap<String, String>,
    cwd: Option<String>,
    elevated: bool,
}

#[derive(Default)]
struct Walker {
    out: Vec<Invocation>,
    unreadable: Option<String>,
}

/// A parser's options: bash, extended globs, tildes at word starts.
fn options() -> ParserOptions {
    ParserOptions::default()
}

impl Walker {
    fn full(&mut self) -> bool {
        if self.out.len() >= MAX_INVOCATIONS {
            self.unreadable.get_or_insert_with(|| {
                format!("the command runs more than {MAX_INVOCATIONS} commands")
            });
            return true;
        }
        false
    }

    fn fail(&mut self, why: String) {
        self.unreadable.get_or_insert(why);
    }

    /// Reads a script (the command line, or a string given to a shell).
    fn script(&mut self, text: &str, scope: &Scope, elevated: bool, depth: usize) {
        if depth > MAX_NESTING {
            self.fail("scripts nest too deeply to read".into());
            return;
        }
        let tokens = match tokenize_str(text) {
            Ok(t) => t,
            Err(e) => return self.fail(format!("not valid shell syntax: {e}")),
        };
        let program = match parse_tokens(&tokens, &options()) {
            Ok(p) => p,
            Err(e) => return self.fail(format!("not valid shell syntax: {e}")),
        };
        let mut scope = scope.clone();
        scope.elevated |= elevated;
        for list in &program.complete_commands {
            self.list(list, &mut scope, depth);
        }
    }

    fn list(&mut self, list: &ast::CompoundList, scope: &mut Scope, depth: usize) {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first, scope, depth);
            for next in &and_or.additional {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                self.pipeline(p, scope, depth);
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, scope: &mut Scope, depth: usize) {
        let mut upstream: Vec<usize> = Vec::new();
        let alone = pipeline.seq.len() == 1;
        for command in &pipeline.seq {
            let before = self.out.len();
            // Only a command on its own changes the scope (a pipeline's
            // members run in subshells).
            let mut own = scope.clone();
            let target = if alone { &mut *scope } else { &mut own };
            self.command(command, target, depth, &upstream);
            // What this member ran at its top level feeds the next one.
            if let Some(last) = (before..self.out.len())
                .rev()
                .find(|&i| self.out[i].upstream == upstream)
            {
                upstream.push(last);
            }
        }
    }

    fn command(
        &mut self,
        command: &ast::Command,
        scope: &mut Scope,
        depth: usize,
        upstream: &[usize],
    ) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, scope, depth, upstream),
            ast::Command::Compound(compound, redirects) => {
                let before = self.out.len();
                self.compound(compound, scope, depth, upstream);
                if let Some(list) = redirects {
                    let redirects = self.redirects(&list.0, scope, depth);
                    for inv in &mut self.out[before..] {
                        inv.redirects.extend(redirects.iter().cloned());
                    }
                }
            }
            ast::Command::Function(def) => {
                let name = def.fname.value.clone();
                let before = self.out.len();
                let mut inner = scope.clone();
                self.compound(&def.body.0, &mut inner, depth, &[]);
                let spawns = self.out[before..].iter().any(|inv| {
                    inv.name() == name && (!inv.upstream.is_empty() || spawns_itself(def))
                });
                if spawns {
                    let mut inv = self.invocation(vec![Arg::plain(&name)], scope, upstream);
                    inv.self_spawning = true;
                    self.push(inv);
                }
            }
            ast::Command::ExtendedTest(_, _) => {}
        }
    }

    fn compound(
        &mut self,
        compound: &ast::CompoundCommand,
        scope: &mut Scope,
        depth: usize,
        upstream: &[usize],
    ) {
        use ast::CompoundCommand as C;
        let _ = upstream;
        match compound {
            C::BraceGroup(g) => self.list(&g.list, scope, depth + 1),
            C::Subshell(s) => self.list(&s.list, &mut scope.clone(), depth + 1),
            C::ForClause(f) => {
                if let Some(values) = &f.values {
                    for w in values {
                        self.word(&w.value, scope, depth);
                    }
                }
                self.list(&f.body.list, scope, depth + 1);
            }
            C::CaseClause(c) => {
                self.word(&c.value.value, scope, depth);
                for item in &c.cases {
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd, scope, depth + 1);
                    }
                }
            }
            C::IfClause(i) => {
                self.list(&i.condition, scope, depth + 1);
                self.list(&i.then, scope, depth + 1);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, scope, depth + 1);
                    }
                    self.list(&e.body, scope, depth + 1);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0, scope, depth + 1);
                self.list(&w.1.list, scope, depth + 1);
            }
            C::Coprocess(c) => self.command(&c.body, scope, depth + 1, &[]),
            C::Arithmetic(_) | C::ArithmeticForClause(_) => {}
        }
    }

    fn simple(
        &mut self,
        simple: &ast::SimpleCommand,
        scope: &mut Scope,
        depth: usize,
        upstream: &[usize],
    ) {
        let mut got = Collected::default();
        for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
            self.item(item, scope, depth, &mut got);
        }
        if let Some(w) = &simple.word_or_name {
            got.words.push(self.word(&w.value, scope, depth));
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            // After the name, `of=/dev/sda` is an argument, not an assignment.
            if let ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) = item {
                got.words.push(self.word(&w.value, scope, depth));
                continue;
            }
            self.item(item, scope, depth, &mut got);
        }
        let Collected {
            words,
            redirects,
            assigned,
        } = got;
        if words.is_empty() {
            // `X=/` alone sets a variable for what follows.
            for (name, value) in assigned {
                match value {
                    Some(v) => scope.vars.insert(name, v),
                    None => scope.vars.remove(&name),
                };
            }
            if !redirects.is_empty() {
                let mut inv = self.invocation(vec![Arg::plain("")], scope, upstream);
                inv.redirects = redirects;
                self.push(inv);
            }
            return;
        }
        self.run(words, redirects, scope, depth, upstream, Via::Direct);
    }

    /// One word, redirection, assignment or process substitution of a
    /// simple command.
    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        scope: &Scope,
        depth: usize,
        got: &mut Collected,
    ) {
        use ast::CommandPrefixOrSuffixItem as Item;
        let Collected {
            words,
            redirects,
            assigned,
        } = got;
        match item {
            Item::Word(w) => words.push(self.word(&w.value, scope, depth)),
            Item::IoRedirect(r) => {
                redirects.extend(self.redirects(std::slice::from_ref(r), scope, depth));
            }
            Item::AssignmentWord(a, _) => {
                let value = match &a.value {
                    ast::AssignmentValue::Scalar(w) => {
                        let arg = self.word(&w.value, scope, depth);
                        (!arg.dynamic).then_some(arg.text)
                    }
                    ast::AssignmentValue::Array(_) => None,
                };
                if let ast::AssignmentName::VariableName(n) = &a.name {
                    assigned.push((n.clone(), value));
                }
            }
            Item::ProcessSubstitution(_, sub) => {
                let inner = self.substitution_list(&sub.list, scope, depth);
                words.push(Arg {
                    text: "<(…)".into(),
                    dynamic: true,
                    inner,
                });
            }
        }
    }

    /// Records one command, after taking wrappers off and following what
    /// it runs in turn (`bash -c`, `xargs`, `find -exec`, `eval`).
    fn run(
        &mut self,
        mut words: Vec<Arg>,
        redirects: Vec<Redirect>,
        scope: &mut Scope,
        depth: usize,
        upstream: &[usize],
        via: Via,
    ) {
        if self.full() || depth > MAX_NESTING {
            self.fail("commands nest too deeply to read".into());
            return;
        }
        if let Some(first) = words.first_mut() {
            first.text = base_name(&first.text).to_string();
        }
        let mut elevated = scope.elevated;
        loop {
            match wrappers::unwrap(&words) {
                Unwrapped::Command { skip, raises } => {
                    elevated |= raises;
                    words.drain(..skip);
                    if let Some(first) = words.first_mut() {
                        first.text = base_name(&first.text).to_string();
                    }
                    if words.is_empty() {
                        break;
                    }
                }
                Unwrapped::Script { text, raises } => {
                    // `echo "rm -rf /" | sh`: the script is what was echoed.
                    let text = text.or_else(|| self.echoed(upstream).map(|w| w.join(" ")));
                    let mut inv = self.invocation(words.clone(), scope, upstream);
                    inv.elevated = elevated || raises;
                    inv.redirects = redirects;
                    inv.via = via;
                    self.push(inv);
                    if let Some(text) = text {
                        self.script(&text, scope, elevated || raises, depth + 1);
                    }
                    return;
                }
                Unwrapped::Xargs { skip } => {
                    let items = self.echoed(upstream);
                    let mut inv = self.invocation(words.clone(), scope, upstream);
                    inv.elevated = elevated;
                    inv.redirects = redirects;
                    self.push(inv);
                    let rest: Vec<Arg> = words[skip..].to_vec();
                    let rest = if rest.is_empty() {
                        vec![Arg::plain("echo")]
                    } else {
                        rest
                    };
                    let mut inner = scope.clone();
                    inner.elevated = elevated;
                    self.run(
                        rest,
                        Vec::new(),
                        &mut inner,
                        depth + 1,
                        &[],
                        Via::Xargs(items),
                    );
                    return;
                }
                Unwrapped::Find { roots, execs } => {
                    let mut inv = self.invocation(words.clone(), scope, upstream);
                    inv.elevated = elevated;
                    inv.redirects = redirects;
                    inv.via = via;
                    self.push(inv);
                    for exec in execs {
                        let mut inner = scope.clone();
                        inner.elevated = elevated;
                        self.run(
                            exec,
                            Vec::new(),
                            &mut inner,
                            depth + 1,
                            &[],
                            Via::FindExec(roots.clone()),
                        );
                    }
                    return;
                }
                Unwrapped::Done => break,
            }
        }
        if words.is_empty() {
            return;
        }
        if words[0].text == "cd" {
            scope.cwd = words.get(1).filter(|a| !a.dynamic).map(|a| a.text.clone());
            if words.len() == 1 {
                scope.cwd = Some("~".into());
            }
        }
        let mut inv = self.invocation(words, scope, upstream);
        inv.elevated = elevated;
        inv.redirects = redirects;
        inv.via = via;
        self.push(inv);
    }

    /// The words an `echo` or `printf` with known arguments just before
    /// in the pipeline prints (what `xargs` will read).
    fn echoed(&self, upstream: &[usize]) -> Option<Vec<String>> {
        let last = self.out.get(*upstream.last()?)?;
        if !matches!(last.name(), "echo" | "printf") || last.args().iter().any(|a| a.dynamic) {
            return None;
        }
        Some(
            last.args()
                .iter()
                .filter(|a| !a.text.starts_with('-'))
                .flat_map(|a| {
                    a.text
                        .split_whitespace()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .collect(),
        )
    }

    fn invocation(&self, argv: Vec<Arg>, scope: &Scope, upstream: &[usize]) -> Invocation {
        Invocation {
            argv,
            redirects: Vec::new(),
            elevated: scope.elevated,
            upstream: upstream.to_vec(),
            via: Via::Direct,
            cwd: scope.cwd.clone(),
            self_spawning: false,
        }
    }

    fn push(&mut self, inv: Invocation) {
        if !self.full() {
            self.out.push(inv);
        }
    }

    fn redirects(
        &mut self,
        list: &[ast::IoRedirect],
        scope: &Scope,
        depth: usize,
    ) -> Vec<Redirect> {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        let mut out = Vec::new();
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
                    self.word(&w.value, scope, depth);
                }
                R::HereDocument(_, _) => {}
            }
        }
        out
    }

    fn substitution_list(
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

    fn substitution(&mut self, text: &str, scope: &Scope, depth: usize) -> Vec<usize> {
        let before = self.out.len();
        self.script(text, scope, false, depth + 1);
        (before..self.out.len()).collect()
    }
}

/// True when a function's body runs something in the background (`&`).
fn spawns_itself(def: &ast::FunctionDefinition) -> bool {
    def.body.0.to_string().contains('&')
}

/// A command's base name: `/usr/bin/rm` → `rm`.
pub fn base_name(name: &str) -> &str {
    if name.contains('/') && !name.ends_with('/') {
        name.rsplit('/').next().unwrap_or(name)
    } else {
        name
    }
}
