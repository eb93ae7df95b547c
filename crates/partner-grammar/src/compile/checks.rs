//! The checks a grammar passes when it loads, besides the reader's:
//! unused rules and imports, rules that make no value, value types never
//! imported, static types of values, and rules that reach themselves
//! without reading anything.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::Compiler;
use crate::parse::{Alternative, Definition, Item, line_col};
use crate::types::{Ty, union};

impl Compiler {
    /// Warnings about the main file: rules nothing reaches, imports nothing
    /// uses, alternatives whose several variables make no value.
    pub(super) fn warnings(&self, file: &str, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let at = |pos: usize| {
            let (l, c) = line_col(text, pos);
            format!("{file}({l},{c}): warning:")
        };
        // Reachable from <Start>.
        let mut reached: HashSet<String> = HashSet::new();
        let mut stack = vec!["Start".to_string()];
        let mut used_types: HashSet<String> = HashSet::new();
        while let Some(n) = stack.pop() {
            if !reached.insert(n.clone()) {
                continue;
            }
            if let Some((def, _, _)) = self.defs.get(&n) {
                if let Some(t) = &def.type_name {
                    for part in t.split(" | ") {
                        used_types.insert(part.to_string());
                    }
                }
                for alt in &def.alts {
                    let mut r = Vec::new();
                    refs(&alt.items, &mut r);
                    stack.extend(r);
                    var_types(&alt.items, &mut used_types);
                }
            }
        }
        let mut defs: Vec<&(Definition, String, Arc<str>)> =
            self.defs.values().filter(|(_, f, _)| f == file).collect();
        defs.sort_by_key(|(d, _, _)| d.pos);
        for (def, _, _) in defs {
            if !reached.contains(&def.name) && !def.exported {
                out.push(format!(
                    "{} Rule '<{}>' is defined but never used.",
                    at(def.pos),
                    def.name
                ));
            }
            for alt in &def.alts {
                let vars = alt
                    .items
                    .iter()
                    .filter(|i| matches!(i, Item::Var { .. }))
                    .count();
                if vars > 1 && alt.value.is_none() {
                    out.push(format!(
                        "{} Rule with multiple variables and no explicit value expression doesn't have an implicit value. Add an explicit value expression or remove unused variables. in definition '<{}>'",
                        at(def.pos),
                        def.name
                    ));
                }
            }
        }
        for (name, pos, rule) in &self.imported {
            let used = if *rule {
                reached.contains(name) || used_types.contains(name)
            } else {
                used_types.contains(name)
            };
            if !used {
                out.push(if *rule {
                    format!(
                        "{} Imported rule '<{name}>' is declared but never used.",
                        at(*pos)
                    )
                } else {
                    format!(
                        "{} Imported type '{name}' is declared but never used.",
                        at(*pos)
                    )
                });
            }
        }
        out
    }

    /// Errors for value types named by rules but never imported.
    pub(super) fn check_type_annotations(&mut self) {
        let mut found = Vec::new();
        for (def, file, src) in self.defs.values() {
            if let Some(t) = &def.type_name {
                for name in t.split(" | ") {
                    if !self.types.contains(name) {
                        found.push((
                            file.clone(),
                            Arc::clone(src),
                            def.pos,
                            name.to_string(),
                            def.name.clone(),
                        ));
                    }
                }
            }
        }
        found.sort_by_key(|f| f.2);
        for (file, src, pos, name, def) in found {
            self.error(
                &file,
                &src,
                pos,
                format!(
                    "Type '{name}' in value type annotation is not imported in definition '<{def}>'"
                ),
            );
        }
    }

    /// The static types of an alternative's variables.
    pub(super) fn var_types_of(&self, alt: &Alternative, depth: usize) -> HashMap<String, Ty> {
        alt.variables()
            .map(|v| {
                let t = match (v.rule, v.kind) {
                    (Some(r), _) => self.rule_type(r, depth + 1),
                    (None, "number") => Ty::Num,
                    (None, "string" | "wildcard" | "word") => Ty::Str,
                    _ => Ty::Any,
                };
                let t = if v.optional {
                    union(vec![t, Ty::Undef])
                } else {
                    t
                };
                (v.name.to_string(), t)
            })
            .collect()
    }

    /// The type of the value a named rule makes (any, when not known).
    pub(super) fn rule_type(&self, name: &str, depth: usize) -> Ty {
        let Some((def, _, _)) = self.defs.get(name) else {
            return Ty::Any;
        };
        if depth > 8 {
            return Ty::Any;
        }
        let mut types = Vec::new();
        for alt in &def.alts {
            let t = match &alt.value {
                Some(v) => crate::types::check(v, &self.var_types_of(alt, depth), &mut Vec::new()),
                None => match alt.items.as_slice() {
                    [Item::Var { .. }] => self
                        .var_types_of(alt, depth)
                        .into_values()
                        .next()
                        .unwrap_or(Ty::Any),
                    items
                        if items
                            .iter()
                            .all(|i| matches!(i, Item::Word(_) | Item::Words(_))) =>
                    {
                        Ty::Literal
                    }
                    [Item::Rule(r)] => self.rule_type(r, depth + 1),
                    _ => Ty::Any,
                },
            };
            types.push(t);
        }
        union(types)
    }

    /// True when an alternative yields a value: an explicit one, its one
    /// variable, or its single word or passed-through rule.
    pub(super) fn alt_has_value(&self, alt: &Alternative) -> bool {
        if alt.value.is_some() {
            return true;
        }
        let vars = alt
            .items
            .iter()
            .filter(|i| matches!(i, Item::Var { .. }))
            .count();
        if vars == 1 {
            return true;
        }
        if vars > 1 {
            return false;
        }
        let words = alt
            .items
            .iter()
            .all(|i| matches!(i, Item::Word(_) | Item::Words(_)));
        if words {
            return true;
        }
        match alt.items.as_slice() {
            [Item::Rule(r)] => self
                .defs
                .get(r)
                .is_some_and(|(d, _, _)| d.alts.iter().all(|a| self.alt_has_value(a))),
            [Item::Group { alts, .. }] => alts.iter().all(|a| self.alt_has_value(a)),
            _ => false,
        }
    }

    /// Errors for rules that reach themselves before reading anything.
    pub(super) fn check_cycles(&mut self) {
        let names: Vec<String> = self.defs.keys().cloned().collect();
        let mut nullable: HashMap<String, bool> = HashMap::new();
        // Fixed point: which rules can match nothing.
        loop {
            let mut changed = false;
            for n in &names {
                if nullable.get(n) == Some(&true) {
                    continue;
                }
                let (def, _, _) = &self.defs[n];
                if def.alts.iter().any(|a| alt_nullable(&a.items, &nullable)) {
                    nullable.insert(n.clone(), true);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut edges: HashMap<String, Vec<String>> = HashMap::new();
        for n in &names {
            let (def, _, _) = &self.defs[n];
            let mut out = Vec::new();
            for a in &def.alts {
                leading_refs(&a.items, &nullable, &mut out);
            }
            edges.insert(n.clone(), out);
        }
        let mut sorted = names.clone();
        sorted.sort();
        for n in sorted {
            // Can n reach itself?
            let mut stack = edges[&n].clone();
            let mut seen = HashSet::new();
            let mut cycle = false;
            while let Some(m) = stack.pop() {
                if m == n {
                    cycle = true;
                    break;
                }
                if seen.insert(m.clone())
                    && let Some(next) = edges.get(&m)
                {
                    stack.extend(next.iter().cloned());
                }
            }
            if cycle {
                let (def, file, src) = self.defs[&n].clone();
                self.error(&file, &src, def.pos, format!(
                    "Rule '<{n}>' creates an epsilon-reachable cycle that would cause an infinite loop at match time in definition '<{n}>'"
                ));
            }
        }
    }
}

/// The types variables name (`$(x:Type)`), groups included.
fn var_types(items: &[Item], out: &mut HashSet<String>) {
    for item in items {
        match item {
            Item::Var { kind, rule, .. } => {
                out.insert(kind.clone());
                if let Some(r) = rule {
                    out.insert(r.clone());
                }
            }
            Item::Group { alts, .. } => {
                for a in alts {
                    var_types(&a.items, out);
                }
            }
            _ => {}
        }
    }
}

/// The rule names items refer to.
pub(super) fn refs(items: &[Item], out: &mut Vec<String>) {
    for item in items {
        match item {
            Item::Rule(r) | Item::Var { rule: Some(r), .. } => out.push(r.clone()),
            Item::Group { alts, .. } => {
                for a in alts {
                    refs(&a.items, out);
                }
            }
            _ => {}
        }
    }
}

fn item_nullable(item: &Item, nullable: &HashMap<String, bool>) -> bool {
    match item {
        Item::Word(_) | Item::Words(_) => false,
        Item::Var { optional, rule, .. } => {
            *optional
                || rule
                    .as_ref()
                    .is_some_and(|r| nullable.get(r) == Some(&true))
        }
        Item::Rule(r) => nullable.get(r) == Some(&true),
        Item::Group { alts, quantifier } => {
            matches!(quantifier, Some('?' | '*'))
                || alts.iter().any(|a| alt_nullable(&a.items, nullable))
        }
    }
}

fn alt_nullable(items: &[Item], nullable: &HashMap<String, bool>) -> bool {
    items.iter().all(|i| item_nullable(i, nullable))
}

/// The rules an alternative can enter before reading anything.
fn leading_refs(items: &[Item], nullable: &HashMap<String, bool>, out: &mut Vec<String>) {
    for item in items {
        match item {
            Item::Rule(r) | Item::Var { rule: Some(r), .. } => out.push(r.clone()),
            Item::Group { alts, .. } => {
                for a in alts {
                    leading_refs(&a.items, nullable, out);
                }
            }
            _ => {}
        }
        if !item_nullable(item, nullable) {
            return;
        }
    }
}
