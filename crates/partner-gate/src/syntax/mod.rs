//! Reading a shell command without running it: bash's syntax (parsed by
//! `brush-parser`) flattened into the commands it would run — through
//! pipelines, lists, subshells, loops and functions, inside `$(…)`,
//! backticks and `<(…)`, the strings given to `bash -c`, `su -c` and `eval`,
//! after `xargs` and `find -exec` — each with its arguments as far as they
//! are known before it runs, its redirections, and whether it runs raised
//! (`sudo`). Wrappers (`sudo`, `env`, `nice`, `timeout`, …) are taken off
//! so that `/bin/rm`, `\rm`, `r''m` and `sudo env rm` all read as `rm`.

use loops::{backgrounds, endless};
use std::collections::HashMap;
use std::rc::Rc;

use brush_parser::ast;
use brush_parser::{ParserOptions, parse_tokens, tokenize_str};

use super::wrappers::{self, Unwrapped};

mod invocation;
mod io;
mod loops;
mod words;

pub use invocation::{Arg, Cwd, Invocation, Reading, Redirect, Via};

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
        let parsed = partner_core::isolate::contain(|| {
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
        floods: walker.floods,
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
    stdin: Option<String>,
}

/// What a walk knows at a place: variables set by plain assignments, the
/// directory a `cd` moved to, the functions defined so far and, inside a
/// function's body, the arguments it was called with.
#[derive(Debug, Clone, Default)]
struct Scope {
    vars: HashMap<String, String>,
    cwd: Cwd,
    elevated: bool,
    functions: HashMap<String, Rc<ast::FunctionDefinition>>,
    positional: Option<Rc<Vec<Arg>>>,
}

#[derive(Default)]
struct Walker {
    out: Vec<Invocation>,
    unreadable: Option<String>,
    /// A loop that never ends starts something in the background.
    floods: bool,
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
                    let (redirects, stdin) = self.redirects(&list.0, scope, depth);
                    for inv in &mut self.out[before..] {
                        inv.redirects.extend(redirects.iter().cloned());
                        if stdin.is_some() {
                            inv.stdin.clone_from(&stdin);
                        }
                    }
                }
            }
            ast::Command::Function(def) => {
                let name = def.fname.value.clone();
                scope.functions.insert(name.clone(), Rc::new(def.clone()));
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
                // The body once for each value known before it runs.
                let mut values = Vec::new();
                for w in f.values.iter().flatten() {
                    values.extend(self.words(&w.value, scope, depth));
                }
                let known: Vec<String> = values
                    .iter()
                    .filter(|a| !a.dynamic)
                    .flat_map(|a| expand_braces(&a.text))
                    .take(16)
                    .collect();
                for value in &known {
                    scope.vars.insert(f.variable_name.clone(), value.clone());
                    self.list(&f.body.list, scope, depth + 1);
                }
                if known.is_empty() || values.iter().any(|a| a.dynamic) {
                    scope.vars.remove(&f.variable_name);
                    self.list(&f.body.list, scope, depth + 1);
                }
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
                let until = matches!(compound, C::UntilClause(_));
                self.floods |=
                    endless(&w.0.to_string(), until) && backgrounds(&w.1.list.to_string());
                self.list(&w.0, scope, depth + 1);
                self.list(&w.1.list, scope, depth + 1);
            }
            C::Coprocess(c) => self.command(&c.body, scope, depth + 1, &[]),
            C::ArithmeticForClause(f) => {
                let forever = f.condition.as_ref().is_none_or(|c| {
                    let c = c.value.trim();
                    c.is_empty() || c == "1"
                });
                self.floods |= forever && loops::backgrounds(&f.body.list.to_string());
                self.list(&f.body.list, scope, depth + 1);
            }
            C::Arithmetic(_) => {}
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
            got.words.extend(self.words(&w.value, scope, depth));
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
            stdin,
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
        let mut inv = self.invocation(words, scope, upstream);
        inv.redirects = redirects;
        inv.stdin = stdin;
        inv.assigned = assigned;
        self.run(inv, scope, depth);
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
            stdin,
        } = got;
        match item {
            Item::Word(w) => words.extend(self.words(&w.value, scope, depth)),
            Item::IoRedirect(r) => {
                let (list, text) = self.redirects(std::slice::from_ref(r), scope, depth);
                redirects.extend(list);
                if text.is_some() {
                    *stdin = text;
                }
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
                    ..Arg::default()
                });
            }
        }
    }

    /// Records one command, after taking wrappers off and following what
    /// it runs in turn (`bash -c`, `xargs`, `find -exec`, `eval`, a shell
    /// function defined earlier in the line).
    fn run(&mut self, mut inv: Invocation, scope: &mut Scope, depth: usize) {
        if self.full() || depth > MAX_NESTING {
            self.fail("commands nest too deeply to read".into());
            return;
        }
        if let Some(first) = inv.argv.first_mut() {
            first.text = base_name(&first.text).to_string();
        }
        loop {
            if inv.argv.is_empty() {
                return;
            }
            match wrappers::unwrap(&inv.argv) {
                Unwrapped::Command { skip, raises } => {
                    inv.elevated |= raises;
                    // `env X=… cmd`: what it sets, it sets for the command.
                    if inv.name() == "env" {
                        for a in &inv.argv[1..skip] {
                            if let Some((k, v)) = a.text.split_once('=') {
                                let v = (!a.dynamic).then(|| v.to_string());
                                inv.assigned.push((k.to_string(), v));
                            }
                        }
                    }
                    inv.argv.drain(..skip);
                    if let Some(first) = inv.argv.first_mut() {
                        first.text = base_name(&first.text).to_string();
                    }
                }
                Unwrapped::Script { text, raises } => {
                    // `echo "rm -rf /" | sh`, `bash <<< …`, `source <(echo …)`:
                    // the script is what its input or argument prints.
                    let text = text
                        .or_else(|| inv.stdin.clone())
                        .or_else(|| self.substituted(&inv.argv))
                        .or_else(|| self.echoed(&inv.upstream).map(|w| w.join(" ")));
                    let elevated = inv.elevated || raises;
                    inv.elevated = elevated;
                    self.push(inv);
                    if let Some(text) = text {
                        self.script(&text, scope, elevated, depth + 1);
                    }
                    return;
                }
                Unwrapped::Xargs { skip } => return self.xargs(inv, skip, scope, depth),
                Unwrapped::Find { roots, execs } => {
                    return self.find_exec(inv, roots, execs, scope, depth);
                }
                Unwrapped::Done => break,
            }
        }
        if let Some(def) = scope
            .functions
            .get(inv.name())
            .filter(|_| !inv.argv[0].dynamic)
            .cloned()
        {
            return self.call(inv, &def, scope, depth);
        }
        self.moves(&inv, scope);
        self.push(inv);
    }

    /// `xargs`: the command it runs, with the items it reads when known
    /// (an `echo` before it, a here-string, what `find` or `ls` lists).
    fn xargs(&mut self, inv: Invocation, skip: usize, scope: &Scope, depth: usize) {
        let items = self
            .echoed(&inv.upstream)
            .or_else(|| self.found(&inv.upstream))
            .or_else(|| {
                inv.stdin
                    .as_ref()
                    .map(|s| s.split_whitespace().map(str::to_string).collect())
            });
        let rest: Vec<Arg> = inv.argv[skip..].to_vec();
        let rest = if rest.is_empty() {
            vec![Arg::plain("echo")]
        } else {
            rest
        };
        let mut inner = self.invocation(rest, scope, &[]);
        inner.elevated = inv.elevated;
        inner.via = Via::Xargs(items);
        self.push(inv);
        self.run(inner, &mut scope.clone(), depth + 1);
    }

    /// `find … -exec CMD {} \;`: each command, run on what it finds.
    fn find_exec(
        &mut self,
        inv: Invocation,
        roots: Vec<String>,
        execs: Vec<Vec<Arg>>,
        scope: &Scope,
        depth: usize,
    ) {
        let elevated = inv.elevated;
        self.push(inv);
        for exec in execs {
            let mut inner = self.invocation(exec, scope, &[]);
            inner.elevated = elevated;
            inner.via = Via::FindExec(roots.clone());
            self.run(inner, &mut scope.clone(), depth + 1);
        }
    }

    /// A call of a function defined earlier: the call, then its body read
    /// with the call's arguments as `$1`, `$@`.
    fn call(
        &mut self,
        mut inv: Invocation,
        def: &ast::FunctionDefinition,
        scope: &mut Scope,
        depth: usize,
    ) {
        inv.function = true;
        let mut inner = scope.clone();
        inner.positional = Some(Rc::new(inv.args().to_vec()));
        inner.elevated |= inv.elevated;
        self.push(inv);
        self.compound(&def.body.0, &mut inner, depth + 1, &[]);
    }

    /// Where `cd`, `pushd` and `popd` move the commands after them.
    fn moves(&self, inv: &Invocation, scope: &mut Scope) {
        let arg = inv.args().first();
        scope.cwd = match inv.name() {
            "cd" | "pushd" => match arg {
                None => Cwd::At("~".into()),
                Some(a) if a.dynamic || a.text == "-" || a.text.starts_with('-') => Cwd::Unknown,
                Some(a) if a.text.starts_with(['/', '~']) => Cwd::At(a.text.clone()),
                Some(a) => match &scope.cwd {
                    Cwd::Start => Cwd::At(a.text.clone()),
                    Cwd::At(p) => Cwd::At(format!("{}/{}", p.trim_end_matches('/'), a.text)),
                    Cwd::Unknown => Cwd::Unknown,
                },
            },
            "popd" => Cwd::Unknown,
            _ => return,
        };
    }

    fn invocation(&self, argv: Vec<Arg>, scope: &Scope, upstream: &[usize]) -> Invocation {
        Invocation {
            argv,
            redirects: Vec::new(),
            elevated: scope.elevated,
            upstream: upstream.to_vec(),
            via: Via::Direct,
            cwd: scope.cwd.clone(),
            stdin: None,
            assigned: Vec::new(),
            function: false,
            self_spawning: false,
        }
    }

    fn push(&mut self, inv: Invocation) {
        if !self.full() {
            self.out.push(inv);
        }
    }
}

/// A loop value's words after brace expansion (`for d in /{a,b}`).
fn expand_braces(text: &str) -> Vec<String> {
    super::expand::braces(text)
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
