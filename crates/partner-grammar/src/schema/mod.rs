//! Action schemas: the TypeScript types a typed rule names
//! (`<Start> : PlayAction = …`), read from the `.ts` file the grammar
//! imports them from, so the compiler can hold every value the rule
//! produces to its declared type.
//!
//! The reader knows the part of TypeScript action schemas are written in:
//! `interface` (with `extends`) and `type` declarations of objects with
//! optional properties, strings and string literal unions, numbers,
//! booleans and `true`/`false`, arrays (`T[]`, `Array<T>`), unions,
//! `undefined` and `null`. Anything else it reads as "any type", so a
//! schema it only partly understands can miss an error but never invent
//! one.

use std::collections::HashMap;

mod typescript;

pub use typescript::parse_schema;

/// A type: declared by a schema, or inferred for a value a rule makes.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// No value at all (a recursion not yet known): fits anything.
    Never,
    /// Not known: fits anything, accepts anything.
    Any,
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// Any string.
    String,
    /// One of these strings (a string literal union, `"fast" | "slow"`).
    Literals(Vec<String>),
    /// A number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// Exactly `true` or exactly `false`.
    Bool(bool),
    /// An array of the element type.
    Array(Box<Shape>),
    /// An object with these properties, in order.
    Object(Vec<Prop>),
    /// One of several.
    Union(Vec<Shape>),
    /// A type declared elsewhere in the schema, by name.
    Ref(String),
}

/// A property of an object type.
#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    /// Its name.
    pub name: String,
    /// Its type.
    pub shape: Shape,
    /// Declared with `?:` (it may be left out).
    pub optional: bool,
}

/// A type the schema declares.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeDef {
    /// What it is.
    pub shape: Shape,
    /// Declared with `export` (a grammar may import it).
    pub exported: bool,
}

/// The types one schema file declares, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// Declared types.
    pub types: HashMap<String, TypeDef>,
}

/// Most types resolved through references in one check.
pub(crate) const MAX_REFS: usize = 64;

impl Shape {
    /// The union of shapes, flattened, with string literals merged and
    /// duplicates dropped (one shape when they are the same).
    pub fn union(shapes: Vec<Shape>) -> Shape {
        fn add(s: Shape, flat: &mut Vec<Shape>, literals: &mut Vec<String>) {
            match s {
                Shape::Union(inner) => {
                    for m in inner {
                        add(m, flat, literals);
                    }
                }
                Shape::Never => {}
                Shape::Literals(ls) => {
                    for l in ls {
                        if !literals.contains(&l) {
                            literals.push(l);
                        }
                    }
                }
                other => {
                    if !flat.contains(&other) {
                        flat.push(other);
                    }
                }
            }
        }
        let mut flat: Vec<Shape> = Vec::new();
        let mut literals: Vec<String> = Vec::new();
        for s in shapes {
            add(s, &mut flat, &mut literals);
        }
        if flat.contains(&Shape::Any) {
            return Shape::Any;
        }
        if !literals.is_empty() && !flat.contains(&Shape::String) {
            flat.insert(0, Shape::Literals(literals));
        }
        if flat.contains(&Shape::Boolean) {
            flat.retain(|s| !matches!(s, Shape::Bool(_)));
        }
        match flat.len() {
            0 => Shape::Never,
            1 => flat.pop().unwrap_or(Shape::Never),
            _ => Shape::Union(flat),
        }
    }

    /// True when the value may be `undefined`.
    pub fn has_undefined(&self) -> bool {
        match self {
            Shape::Undefined => true,
            Shape::Union(ms) => ms.iter().any(Shape::has_undefined),
            _ => false,
        }
    }

    /// The shape without `undefined`.
    pub fn without_undefined(&self) -> Shape {
        match self {
            Shape::Union(ms) => Shape::union(
                ms.iter()
                    .filter(|m| **m != Shape::Undefined)
                    .cloned()
                    .collect(),
            ),
            Shape::Undefined => Shape::Never,
            other => other.clone(),
        }
    }

    /// How errors name a value of this shape.
    pub fn name(&self) -> String {
        match self {
            Shape::Never => "never".into(),
            Shape::Any => "any".into(),
            Shape::Undefined => "undefined".into(),
            Shape::Null => "null".into(),
            Shape::String | Shape::Literals(_) => "string".into(),
            Shape::Number => "number".into(),
            Shape::Boolean => "boolean".into(),
            Shape::Bool(b) => b.to_string(),
            Shape::Array(t) => format!("{}[]", t.name()),
            Shape::Object(_) => "object".into(),
            Shape::Union(ms) => ms.iter().map(Shape::name).collect::<Vec<_>>().join(" | "),
            Shape::Ref(n) => n.clone(),
        }
    }

    /// How errors name an expected type of this shape.
    pub fn expected_name(&self) -> String {
        match self {
            Shape::Literals(_) => "string-union".into(),
            Shape::Array(t) => format!("{}[]", t.expected_name()),
            Shape::Union(ms) => ms
                .iter()
                .map(Shape::expected_name)
                .collect::<Vec<_>>()
                .join(" | "),
            other => other.name(),
        }
    }
}

impl Schema {
    /// The shape `name` stands for, references followed (`Any` when it
    /// is not declared, or references go round too long).
    pub fn resolve<'a>(&'a self, shape: &'a Shape) -> &'a Shape {
        let mut s = shape;
        for _ in 0..MAX_REFS {
            match s {
                Shape::Ref(n) => match self.types.get(n) {
                    Some(def) => s = &def.shape,
                    None => return &Shape::Any,
                },
                other => return other,
            }
        }
        &Shape::Any
    }
}
