//! From `.agr` text to a [`Grammar`]: imports resolved through a
//! [`FileLoader`], rule references bound (one shared body per named rule),
//! words gathered into string parts, and the checks the reference makes —
//! undefined rules, variables and types, duplicate variables, a captured
//! rule that yields no value, and rules that can reach themselves without
//! reading anything (they would loop forever).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::parse::{
    Alternative, Definition, Import, Item, Spacing, line_col, parse_source, parse_source_with,
};

mod checks;
mod items;
mod typed;

use checks::refs;

use super::model::{Grammar, Part, Rule, RuleSet, compute_firsts};
/// Load options, as the reference names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// Allow operators, templates, member access and methods in values.
    pub enable_value_expressions: bool,
    /// Every start alternative must produce a value (the default).
    pub start_value_required: bool,
    /// How `'…'` and `"…"` read: a phrase of words (partner's way, the
    /// default) or a literal whose quotes are part of it (the reference's).
    pub quotes: Quotes,
}

/// How a grammar's quoted words read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Quotes {
    /// `'send an email'` and `"send an email"` are the words send, an,
    /// email — what a grammar's author means.
    #[default]
    Phrase,
    /// `'send'` is the literal `'send'` and `"can you"` the two words
    /// `"can` and `you"`, quotes included — TypeAgent's reading, for
    /// conformance with its answers.
    Literal,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            enable_value_expressions: false,
            start_value_required: true,
            quotes: Quotes::Phrase,
        }
    }
}

/// Reads imported files.
pub trait FileLoader {
    /// `path` as imported from `from` (a file name): the name it goes by,
    /// and its text.
    fn load(&self, path: &str, from: &str) -> Result<(String, String), String>;
}

/// A loader with no files: imports of `.agr` files fail.
#[derive(Debug, Default)]
pub struct NoFiles;

impl FileLoader for NoFiles {
    fn load(&self, path: &str, _from: &str) -> Result<(String, String), String> {
        Err(format!("cannot import '{path}' here"))
    }
}

/// A loader of files held in memory by name: for a grammar whose imports
/// are made at run time (the console's names, the learned phrasings).
#[derive(Debug, Default, Clone)]
pub struct InMemory(pub Vec<(String, String)>);

impl FileLoader for InMemory {
    fn load(&self, path: &str, _from: &str) -> Result<(String, String), String> {
        self.0
            .iter()
            .find(|(name, _)| name == path)
            .map(|(name, text)| (name.clone(), text.clone()))
            .ok_or_else(|| format!("cannot import '{path}' here"))
    }
}

/// partner's built-in rules (`grammars/builtin.agr`): a library, with no
/// `<Start>` of its own.
pub const BUILTIN_LIBRARY: &str = BUILTIN;

/// A grammar that did not load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// Each error, `file(line,col): error: message`.
    pub errors: Vec<String>,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.errors.join("\n"))
    }
}

/// Types every grammar knows: the basic ones and the built-in entities.
const BASIC_TYPES: &[&str] = &[
    "string",
    "wildcard",
    "word",
    "number",
    "Ordinal",
    "Cardinal",
    "Percentage",
    "CalendarDate",
    "CalendarTime",
    "CalendarDayRange",
    "CalendarTimeRange",
];

/// The built-in rules (entities and phrase sets), loaded when a grammar
/// refers to one it does not define.
const BUILTIN: &str = include_str!("../../../../grammars/builtin.agr");

/// Most files one grammar may import, directly or not.
const MAX_FILES: usize = 64;

/// Compiles `text` (named `file` in errors).
pub fn load_grammar(
    file: &str,
    text: &str,
    options: &LoadOptions,
    loader: &dyn FileLoader,
) -> Result<Grammar, LoadError> {
    let mut c = Compiler {
        defs: HashMap::new(),
        entities: Vec::new(),
        types: HashSet::new(),
        errors: Vec::new(),
        files: 0,
        options: options.clone(),
        sets: HashMap::new(),
        imported: Vec::new(),
        typed: false,
        schemas: HashMap::new(),
        schema_warnings: Vec::new(),
    };
    c.read_file(file, text, loader, true);
    if !c.errors.is_empty() {
        return Err(LoadError { errors: c.errors });
    }
    c.add_builtins();
    c.typed = c.defs.values().any(|(d, _, _)| d.type_name.is_some());
    c.check_type_annotations();
    let Some(start) = c.set("Start") else {
        return Err(LoadError {
            errors: vec![format!(
                "{file}(1,1): error: Missing rule definition for '<Start>'"
            )],
        });
    };
    c.check_cycles();
    if !c.errors.is_empty() {
        return Err(LoadError { errors: c.errors });
    }
    let names: Vec<String> = c.defs.keys().cloned().collect();
    for name in names {
        c.compile_definition(&name);
    }
    c.check_declared_types();
    if c.options.start_value_required
        && let Some((def, file, src)) = c.defs.get("Start")
    {
        for alt in &def.alts {
            if !c.alt_has_value(alt) {
                let (l, col) = line_col(src, def.pos);
                c.errors.push(format!(
                    "{file}({l},{col}): error: Start rule '<Start>' does not produce a value. in definition '<Start>'"
                ));
                break;
            }
        }
    }
    if !c.errors.is_empty() {
        return Err(LoadError { errors: c.errors });
    }
    let mut visiting = HashSet::new();
    compute_firsts(&start, &mut visiting);
    for set in c.sets.values() {
        compute_firsts(set, &mut visiting);
    }
    let mut warnings = c.warnings(file, text);
    warnings.append(&mut c.schema_warnings);
    Ok(Grammar::new(start, c.entities, warnings))
}

/// A variable item of a rule, as `compile_var` reads it.
#[derive(Clone, Copy)]
struct VarItem<'a> {
    name: &'a str,
    kind: &'a str,
    rule: Option<&'a str>,
    optional: bool,
}

struct Compiler {
    /// Definitions by name: merged alternatives, the file and its text.
    defs: HashMap<String, (Definition, String, Arc<str>)>,
    entities: Vec<String>,
    types: HashSet<String>,
    errors: Vec<String>,
    files: usize,
    options: LoadOptions,
    sets: HashMap<String, Arc<RuleSet>>,
    /// Names imported by the main file: name, where, and whether it is a
    /// rule (an entity) rather than a type.
    imported: Vec<(String, usize, bool)>,
    /// Some rule declares the type of its value.
    typed: bool,
    /// The schema each imported type was read from (types whose file
    /// could not be read are not here, and not checked).
    schemas: HashMap<String, Arc<crate::schema::Schema>>,
    /// Warnings from checking values against their schema types.
    schema_warnings: Vec<String>,
}

impl Compiler {
    fn error(&mut self, file: &str, src: &str, pos: usize, message: String) {
        let (l, c) = line_col(src, pos);
        self.errors
            .push(format!("{file}({l},{c}): error: {message}"));
    }

    fn read_file(&mut self, file: &str, text: &str, loader: &dyn FileLoader, main: bool) {
        self.files += 1;
        if self.files > MAX_FILES {
            self.errors.push(format!(
                "{file}: error: more than {MAX_FILES} files imported"
            ));
            return;
        }
        let source = match parse_source_with(
            text,
            self.options.enable_value_expressions,
            self.options.quotes == Quotes::Literal,
        ) {
            Ok(s) => s,
            Err(e) => {
                let (l, c) = line_col(text, e.pos);
                let line = text.lines().nth(l - 1).unwrap_or("");
                self.errors.push(format!(
                    "{file}({l},{c}): error: {}\n\n  {line}\n  {}^",
                    e.message,
                    " ".repeat(c - 1)
                ));
                return;
            }
        };
        let src: Arc<str> = Arc::from(text);
        for (import, pos) in &source.imports {
            match import {
                Import::Entities(names) => {
                    if main {
                        self.imported
                            .extend(names.iter().map(|n| (n.clone(), *pos, true)));
                    }
                    for n in names {
                        if !self.entities.contains(n) {
                            self.entities.push(n.clone());
                        }
                        self.types.insert(n.clone());
                    }
                }
                Import::Named(names, from) if !from.ends_with(".agr") => {
                    // Types from a schema file.
                    if main {
                        self.imported
                            .extend(names.iter().map(|n| (n.clone(), *pos, false)));
                    }
                    for n in names {
                        self.types.insert(n.clone());
                    }
                    self.read_schema(names, from, file, text, *pos, loader);
                }
                Import::Named(_, from) | Import::All(from) => match loader.load(from, file) {
                    Ok((name, imported)) => self.read_file(&name, &imported, loader, false),
                    Err(e) => self.error(file, text, *pos, e),
                },
            }
        }
        for def in source.defs {
            match self.defs.get_mut(&def.name) {
                Some((existing, f, _)) if f == file || main => {
                    existing.alts.extend(def.alts);
                }
                Some(_) => {
                    let name = def.name.clone();
                    self.error(
                        file,
                        text,
                        def.pos,
                        format!("Rule '<{name}>' conflicts with an imported rule"),
                    );
                }
                None => {
                    self.defs
                        .insert(def.name.clone(), (def, file.to_string(), Arc::clone(&src)));
                }
            }
        }
    }

    /// Adds the built-in rules the grammar refers to without defining,
    /// with the helpers they use.
    fn add_builtins(&mut self) {
        let mut wanted: Vec<String> = Vec::new();
        for (def, _, _) in self.defs.values() {
            for alt in &def.alts {
                refs(&alt.items, &mut wanted);
            }
        }
        if wanted.iter().all(|w| self.defs.contains_key(w)) {
            return;
        }
        let Ok(builtin) = parse_source(BUILTIN, true) else {
            return;
        };
        let src: Arc<str> = Arc::from(BUILTIN);
        let mut stack: Vec<String> = wanted
            .into_iter()
            .filter(|w| !self.defs.contains_key(w))
            .collect();
        while let Some(name) = stack.pop() {
            if self.defs.contains_key(&name) {
                continue;
            }
            if let Some(def) = builtin.defs.iter().find(|d| d.name == name) {
                let mut inner = Vec::new();
                for alt in &def.alts {
                    refs(&alt.items, &mut inner);
                }
                self.defs.insert(
                    name.clone(),
                    (def.clone(), "builtin.agr".into(), Arc::clone(&src)),
                );
                stack.extend(inner);
            }
        }
    }

    fn set(&mut self, name: &str) -> Option<Arc<RuleSet>> {
        if !self.defs.contains_key(name) {
            return None;
        }
        Some(Arc::clone(
            self.sets
                .entry(name.to_string())
                .or_insert_with(|| Arc::new(RuleSet::new(Some(name.to_string()), None))),
        ))
    }

    fn compile_definition(&mut self, name: &str) {
        let Some((def, file, src)) = self.defs.get(name).cloned() else {
            return;
        };
        let Some(set) = self.set(name) else { return };
        let default = Spacing::Auto;
        let mut rules = Vec::new();
        for alt in &def.alts {
            rules.push(self.compile_alt(alt, default, &def.name, &file, &src));
        }
        set.bind(rules);
    }

    /// The wildcard type of a rule that is one wildcard capture and
    /// nothing else (one alternative, no value, the default spacing), when
    /// a required capture of it in `spacing` can be that wildcard itself:
    /// the same text, value and statistics, one rule fewer to enter.
    fn lone_wildcard(&self, rule: &str, spacing: Spacing, optional: bool) -> Option<String> {
        let (def, _, _) = self.defs.get(rule)?;
        let [alt] = def.alts.as_slice() else {
            return None;
        };
        if optional
            || spacing != Spacing::Auto
            || def.spacing.is_some()
            || alt.spacing.is_some()
            || alt.value.is_some()
        {
            return None;
        }
        match alt.items.as_slice() {
            [
                Item::Var {
                    kind,
                    rule: None,
                    optional: false,
                    ..
                },
            ] if kind != "number"
                && (BASIC_TYPES.contains(&kind.as_str()) || self.types.contains(kind)) =>
            {
                Some(kind.clone())
            }
            _ => None,
        }
    }

    fn compile_alt(
        &mut self,
        alt: &Alternative,
        inherited: Spacing,
        def: &str,
        file: &str,
        src: &str,
    ) -> Rule {
        let spacing = alt.spacing.unwrap_or(inherited);
        let mut parts: Vec<Part> = Vec::new();
        let mut vars: Vec<String> = Vec::new();
        for item in &alt.items {
            if let Item::Var { name, .. } = item {
                if vars.contains(name) {
                    self.error(
                        file,
                        src,
                        alt.pos,
                        format!(
                            "Variable '{name}' is already defined in this rule in definition '<{def}>'"
                        ),
                    );
                }
                vars.push(name.clone());
            }
            self.compile_item(item, &mut parts, spacing, alt, def, (file, src));
        }
        self.check_value(alt, &vars, def, (file, src));
        Rule {
            parts,
            value: alt.value.clone().map(Arc::new),
            spacing,
        }
    }
}
