//! A rule's items compiled into parts: words joined into string parts, a
//! variable bound to its kind or rule, a rule reference or a group; and an
//! alternative's value checked against the variables its rule defines.

use std::sync::Arc;

use super::{BASIC_TYPES, Compiler, VarItem};
use crate::model::{Part, Rule, RuleSet};
use crate::parse::{Alternative, Item, Spacing};

impl Compiler {
    /// One item of `alt` added to `parts`: words join the words before
    /// them, a variable, a rule or a group becomes a part of its own.
    pub(super) fn compile_item(
        &mut self,
        item: &Item,
        parts: &mut Vec<Part>,
        spacing: Spacing,
        alt: &Alternative,
        def: &str,
        (file, src): (&str, &str),
    ) {
        match item {
            Item::Word(w) => match parts.last_mut() {
                Some(Part::Str(words)) => Arc::make_mut(words).push(w.clone()),
                _ => parts.push(Part::Str(Arc::new(vec![w.clone()]))),
            },
            Item::Words(ws) => match parts.last_mut() {
                Some(Part::Str(words)) => Arc::make_mut(words).extend(ws.iter().cloned()),
                _ => parts.push(Part::Str(Arc::new(ws.clone()))),
            },
            Item::Var {
                name,
                kind,
                rule,
                optional,
            } => {
                let var = VarItem {
                    name,
                    kind,
                    rule: rule.as_deref(),
                    optional: *optional,
                };
                if let Some(part) = self.compile_var(&var, spacing, alt, def, (file, src)) {
                    parts.push(part);
                }
            }
            Item::Rule(r) => match self.set(r) {
                Some(set) => parts.push(Part::Rules {
                    rules: set,
                    var: None,
                    optional: false,
                    repeat: false,
                }),
                None => self.error(
                    file,
                    src,
                    alt.pos,
                    format!("Missing rule definition for '<{r}>' in definition '<{def}>'"),
                ),
            },
            Item::Group { alts, quantifier } => {
                let rules: Vec<Rule> = alts
                    .iter()
                    .map(|a| self.compile_alt(a, spacing, def, file, src))
                    .collect();
                parts.push(Part::Rules {
                    rules: Arc::new(RuleSet::new(None, Some(rules))),
                    var: None,
                    optional: matches!(quantifier, Some('?' | '*')),
                    repeat: matches!(quantifier, Some('*' | '+')),
                });
            }
        }
    }

    /// A `$(name:kind)` or `$(name:<Rule>)` item as its part (none, with
    /// an error, when it names a rule or type that is not there).
    fn compile_var(
        &mut self,
        var: &VarItem<'_>,
        spacing: Spacing,
        alt: &Alternative,
        def: &str,
        (file, src): (&str, &str),
    ) -> Option<Part> {
        let VarItem {
            name,
            kind,
            rule,
            optional,
        } = *var;
        if let Some(r) = rule {
            let Some(set) = self.set(r) else {
                self.error(
                    file,
                    src,
                    alt.pos,
                    format!("Missing rule definition for '<{r}>' in definition '<{def}>'"),
                );
                return None;
            };
            if let Some((d, _, _)) = self.defs.get(r)
                && !d.alts.iter().all(|a| self.alt_has_value(a))
            {
                self.error(file, src, alt.pos, format!(
                    "Referenced rule '<{r}>' does not produce a value for variable '{name}' in definition '<{def}>'"
                ));
            }
            return Some(match self.lone_wildcard(r, spacing, optional) {
                // `<TrackName> = $(x:wildcard);` captured as
                // `$(track:<TrackName>)` is the wildcard itself: no rule to
                // enter.
                Some(kind) => {
                    Part::wildcard(Some(Arc::from(name)), Arc::from(kind.as_str()), false)
                }
                None => Part::Rules {
                    rules: set,
                    var: Some(Arc::from(name)),
                    optional,
                    repeat: false,
                },
            });
        }
        if kind == "number" {
            return Some(Part::Num {
                var: Some(Arc::from(name)),
                optional,
            });
        }
        if !BASIC_TYPES.contains(&kind) && !self.types.contains(kind) {
            self.error(
                file,
                src,
                alt.pos,
                format!("Undefined type '{kind}' in variable '{name}' in definition '<{def}>'"),
            );
        }
        Some(Part::wildcard(
            Some(Arc::from(name)),
            Arc::from(kind),
            optional,
        ))
    }

    /// An alternative's value: held to its types when the grammar declares
    /// what its rules produce (a typed rule), as the reference does; every
    /// variable it uses defined by the rule.
    pub(super) fn check_value(
        &mut self,
        alt: &Alternative,
        vars: &[String],
        def: &str,
        (file, src): (&str, &str),
    ) {
        let Some(value) = &alt.value else {
            return;
        };
        if self.typed {
            let types = self.var_types_of(alt, 0);
            let mut problems = Vec::new();
            crate::types::check(value, &types, &mut problems);
            for p in problems {
                self.error(file, src, alt.pos, format!("{p} in definition '<{def}>'"));
            }
        }
        let mut used = Vec::new();
        value.variables(&mut used);
        for v in used {
            if !vars.contains(&v) {
                self.error(
                    file,
                    src,
                    alt.pos,
                    format!("Variable '{v}' is referenced in the value but not defined in the rule in definition '<{def}>'"),
                );
            }
        }
    }
}
