//! Typed rules (`<Start> : PlayAction = …`) held to their schema: the
//! types a grammar imports from a `.ts` file are read from it (through the
//! file loader; when it cannot be read, nothing is checked, as the
//! reference does without a schema loader), and every value the rule can
//! produce — its own alternatives' and, through pass-through references
//! and groups, those of the rules it stands for — must fit the type.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::Compiler;
use crate::conform::{conform, infer};
use crate::parse::{Alternative, Item};
use crate::schema::{Schema, Shape, parse_schema};

/// The inferred shapes of named rules' values, worked out once each.
#[derive(Default)]
struct Shapes {
    done: HashMap<String, Shape>,
    visiting: HashSet<String>,
}

/// One typed rule being checked: its name, the types it declares (each
/// with the schema it was read from), and the rules already followed.
struct Typed {
    rule: String,
    declared: Vec<(Arc<Schema>, String)>,
    seen: HashSet<String>,
}

impl Typed {
    /// How a value of `shape` fails the declared type: the reasons, for
    /// one type; for a union of types, that it fits none. `top` names the
    /// value in messages.
    fn problems(&self, shape: &Shape, top: &str) -> Vec<String> {
        let against = |(schema, name): &(Arc<Schema>, String)| {
            let mut problems = Vec::new();
            conform(
                shape,
                &Shape::Ref(name.clone()),
                schema,
                "",
                top,
                &mut problems,
            );
            problems
        };
        match self.declared.as_slice() {
            [one] => against(one),
            all if all.iter().any(|d| against(d).is_empty()) => Vec::new(),
            _ => vec!["Value does not match any union type member".into()],
        }
    }
}

/// Deepest chain of rules followed when inferring or validating.
const MAX_DEPTH: usize = 64;

impl Compiler {
    /// Reads the schema file types are imported from; errors for types it
    /// does not declare or does not export.
    pub(super) fn read_schema(
        &mut self,
        names: &[String],
        from: &str,
        file: &str,
        text: &str,
        pos: usize,
        loader: &dyn super::FileLoader,
    ) {
        let Ok((_, source)) = loader.load(from, file) else {
            return;
        };
        let schema = Arc::new(parse_schema(&source));
        for n in names {
            match schema.types.get(n) {
                None => self.error(
                    file,
                    text,
                    pos,
                    format!("Cannot resolve type '{n}' from '{from}'"),
                ),
                Some(def) if !def.exported => self.error(
                    file,
                    text,
                    pos,
                    format!("Type '{n}' is not exported from '{from}'"),
                ),
                Some(_) => {
                    self.schemas.insert(n.clone(), Arc::clone(&schema));
                }
            }
        }
    }

    /// Checks every typed rule whose types were read against them.
    pub(super) fn check_declared_types(&mut self) {
        let mut typed: Vec<(String, Vec<String>)> = self
            .defs
            .values()
            .filter_map(|(d, _, _)| {
                let t = d.type_name.as_ref()?;
                Some((d.name.clone(), t.split(" | ").map(str::to_string).collect()))
            })
            .collect();
        typed.sort();
        let mut shapes = Shapes::default();
        for (rule, types) in typed {
            let Some(declared) = types
                .iter()
                .map(|t| self.schemas.get(t).map(|s| (Arc::clone(s), t.clone())))
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let mut t = Typed {
                rule: rule.clone(),
                declared,
                seen: HashSet::new(),
            };
            self.check_rule_values(&rule, &mut t, &mut shapes, 0);
        }
    }

    /// Checks the values rule `name` produces.
    fn check_rule_values(&mut self, name: &str, t: &mut Typed, shapes: &mut Shapes, depth: usize) {
        if depth > MAX_DEPTH || !t.seen.insert(name.to_string()) {
            return;
        }
        let Some((def, file, src)) = self.defs.get(name).cloned() else {
            return;
        };
        for alt in &def.alts {
            self.check_alt_value(alt, t, shapes, depth, (&file, &src));
        }
    }

    /// Checks the value one alternative produces: its own, its one
    /// variable's, or (passing through) those of the rule or group it is.
    fn check_alt_value(
        &mut self,
        alt: &Alternative,
        t: &mut Typed,
        shapes: &mut Shapes,
        depth: usize,
        (file, src): (&str, &Arc<str>),
    ) {
        let (shape, top) = match (&alt.value, alt.items.as_slice()) {
            (Some(e), _) => {
                let vars = self.var_shapes(alt, shapes, depth);
                let mut used = Vec::new();
                e.variables(&mut used);
                if used.iter().any(|v| !vars.contains_key(v)) {
                    // Already an error (a variable the rule does not
                    // define): its shape is not known, so nothing more is
                    // said about it.
                    return;
                }
                let mut warnings = Vec::new();
                let shape = infer(e, &vars, &mut warnings);
                for w in warnings {
                    let (l, c) = crate::parse::line_col(src, alt.value_pos);
                    self.schema_warnings.push(format!(
                        "{file}({l},{c}): warning: {w} in definition '<{}>'",
                        t.rule
                    ));
                }
                (shape, "Value".to_string())
            }
            (None, [Item::Var { name, .. }]) => {
                let vars = self.var_shapes(alt, shapes, depth);
                let shape = vars.get(name).cloned().unwrap_or(Shape::Any);
                (shape, format!("Variable '${name}'"))
            }
            (None, [Item::Rule(r)]) => {
                let r = r.clone();
                self.check_rule_values(&r, t, shapes, depth + 1);
                return;
            }
            (
                None,
                [
                    Item::Group {
                        alts,
                        quantifier: None,
                    },
                ],
            ) => {
                for a in alts {
                    self.check_alt_value(a, t, shapes, depth + 1, (file, src));
                }
                return;
            }
            // Words alone (the matched text) or several parts: nothing
            // the reference checks.
            _ => return,
        };
        for p in t.problems(&shape, &top) {
            self.error(
                file,
                src,
                alt.value_pos,
                format!("{p} in definition '<{}>'", t.rule),
            );
        }
    }

    /// The shapes of an alternative's variables.
    fn var_shapes(
        &self,
        alt: &Alternative,
        shapes: &mut Shapes,
        depth: usize,
    ) -> HashMap<String, Shape> {
        alt.variables()
            .map(|v| {
                let s = match (v.rule, v.kind) {
                    (Some(r), _) => self.rule_shape(r, shapes, depth + 1),
                    (None, "number") => Shape::Number,
                    (None, "string" | "wildcard" | "word") => Shape::String,
                    _ => Shape::Any,
                };
                let s = if v.optional {
                    Shape::union(vec![s, Shape::Undefined])
                } else {
                    s
                };
                (v.name.to_string(), s)
            })
            .collect()
    }

    /// The shape of the values rule `name` makes. A rule reached again
    /// while it is being worked out adds nothing (its other alternatives
    /// give its type), so recursive rules settle on their base cases.
    fn rule_shape(&self, name: &str, shapes: &mut Shapes, depth: usize) -> Shape {
        if let Some(s) = shapes.done.get(name) {
            return s.clone();
        }
        if depth > MAX_DEPTH {
            return Shape::Any;
        }
        if !shapes.visiting.insert(name.to_string()) {
            return Shape::Never;
        }
        let shape = match self.defs.get(name) {
            Some((def, _, _)) => Shape::union(
                def.alts
                    .iter()
                    .map(|a| self.alt_shape(a, shapes, depth))
                    .collect(),
            ),
            None => Shape::Any,
        };
        shapes.visiting.remove(name);
        // Kept even when worked out inside a recursion: a shape missing
        // what the recursion would add can only miss an error, never make
        // one, and keeping it bounds the work on any grammar.
        shapes.done.insert(name.to_string(), shape.clone());
        shape
    }

    fn alt_shape(&self, alt: &Alternative, shapes: &mut Shapes, depth: usize) -> Shape {
        if let Some(e) = &alt.value {
            let vars = self.var_shapes(alt, shapes, depth);
            return infer(e, &vars, &mut Vec::new());
        }
        let vars: Vec<&str> = alt.variables().map(|v| v.name).collect();
        if let [one] = vars.as_slice() {
            return self
                .var_shapes(alt, shapes, depth)
                .remove(*one)
                .unwrap_or(Shape::Any);
        }
        if !vars.is_empty() {
            return Shape::Any;
        }
        match alt.items.as_slice() {
            [Item::Rule(r)] => self.rule_shape(r, shapes, depth + 1),
            [
                Item::Group {
                    alts,
                    quantifier: None,
                },
            ] => Shape::union(
                alts.iter()
                    .map(|a| self.alt_shape(a, shapes, depth + 1))
                    .collect(),
            ),
            items => {
                let mut words = Vec::new();
                for i in items {
                    match i {
                        Item::Word(w) => words.push(w.clone()),
                        Item::Words(ws) => words.extend(ws.iter().cloned()),
                        _ => return Shape::Any,
                    }
                }
                if words.is_empty() {
                    return Shape::Any;
                }
                Shape::Literals(vec![words.join(" ")])
            }
        }
    }
}
