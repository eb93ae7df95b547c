//! Whether a value a rule makes fits the type its schema declares: the
//! value's shape is inferred from its expression (string literals kept as
//! literals, objects with their properties, spreads merged in order) and
//! held to the declared type strictly — every value the expression can
//! make must be one the type allows, so `string` does not fit `"fast" |
//! "slow"` and `boolean` does not fit `true`.

use std::collections::HashMap;

use super::expr::{Expr, Field, Item, Piece};
use super::schema::{Prop, Schema, Shape};
use super::types::{Ty, method_type};
use super::value::Value;

/// The shape of a constant.
pub(super) fn value_shape(v: &Value) -> Shape {
    match v {
        Value::Undefined => Shape::Undefined,
        Value::Null => Shape::Null,
        Value::Bool(b) => Shape::Bool(*b),
        Value::Number(_) => Shape::Number,
        Value::String(s) => Shape::Literals(vec![s.to_string()]),
        Value::Array(items) => Shape::Array(Box::new(Shape::union(
            items.iter().map(value_shape).collect(),
        ))),
        Value::Object(fields) => Shape::Object(
            fields
                .iter()
                .map(|(k, v)| Prop {
                    name: k.to_string(),
                    shape: value_shape(v),
                    optional: false,
                })
                .collect(),
        ),
    }
}

/// The expression checker's type for a shape.
fn to_ty(s: &Shape) -> Ty {
    match s {
        Shape::Never | Shape::Any | Shape::Ref(_) => Ty::Any,
        Shape::Undefined => Ty::Undef,
        Shape::Null => Ty::Null,
        Shape::String => Ty::Str,
        Shape::Literals(_) => Ty::Literal,
        Shape::Number => Ty::Num,
        Shape::Boolean | Shape::Bool(_) => Ty::Bool,
        Shape::Array(t) => Ty::Arr(Box::new(to_ty(t))),
        Shape::Object(_) => Ty::Obj,
        Shape::Union(ms) => super::types::union(ms.iter().map(to_ty).collect()),
    }
}

/// The shape of a value of the expression checker's type.
fn from_ty(t: &Ty) -> Shape {
    match t {
        Ty::Str | Ty::Literal => Shape::String,
        Ty::Num => Shape::Number,
        Ty::Bool => Shape::Boolean,
        Ty::Undef => Shape::Undefined,
        Ty::Null => Shape::Null,
        Ty::Arr(t) => Shape::Array(Box::new(from_ty(t))),
        Ty::Union(ts) => Shape::union(ts.iter().map(from_ty).collect()),
        Ty::Obj | Ty::Any => Shape::Any,
    }
}

/// The shape of the values `e` makes, its variables having `vars`'
/// shapes; `warnings` gets the operators that are not needed (`??` on a
/// value never undefined, `?.` on one never undefined).
pub(super) fn infer(e: &Expr, vars: &HashMap<String, Shape>, warnings: &mut Vec<String>) -> Shape {
    macro_rules! go {
        ($e:expr) => {
            infer($e, vars, warnings)
        };
    }
    match e {
        Expr::Lit(v) => value_shape(v),
        Expr::Var(name) => vars.get(name).cloned().unwrap_or(Shape::Any),
        Expr::Object(fields) => infer_object(fields, vars, warnings),
        Expr::Array(items) => {
            let mut elems = Vec::new();
            for i in items {
                match i {
                    Item::One(e) => elems.push(go!(e)),
                    Item::Spread(e) => match go!(e) {
                        Shape::Array(t) => elems.push(*t),
                        _ => elems.push(Shape::Any),
                    },
                }
            }
            Shape::Array(Box::new(Shape::union(elems)))
        }
        Expr::Template(pieces) => {
            for p in pieces {
                if let Piece::Expr(e) = p {
                    go!(e);
                }
            }
            Shape::String
        }
        Expr::Unary(super::expr::Operator(op), e) => {
            go!(e);
            match *op {
                "!" => Shape::Boolean,
                "typeof" => Shape::String,
                _ => Shape::Number,
            }
        }
        Expr::Binary(super::expr::Operator(op), a, b) => infer_binary(op, a, b, vars, warnings),
        Expr::Cond(t, a, b) => {
            go!(t);
            let (a, b) = (go!(a), go!(b));
            Shape::union(vec![a, b])
        }
        Expr::Member(o, name, optional) => {
            let t = go!(o);
            let base = chained(&t, *optional, warnings);
            let got = match (&base, name.as_str()) {
                (Shape::String | Shape::Literals(_) | Shape::Array(_), "length") => Shape::Number,
                (Shape::Object(props), _) => props
                    .iter()
                    .find(|p| p.name == *name)
                    .map_or(Shape::Undefined, |p| p.shape.clone()),
                _ => Shape::Any,
            };
            maybe_undefined(got, &t, *optional)
        }
        Expr::Index(o, i, _) => {
            go!(o);
            go!(i);
            Shape::Any
        }
        Expr::Call(o, method, args, optional) => {
            let t = go!(o);
            let base = chained(&t, *optional, warnings);
            let arg_types: Vec<Ty> = args.iter().map(|a| to_ty(&go!(a))).collect();
            let got = from_ty(&method_type(
                &to_ty(&base),
                method,
                &arg_types,
                &mut Vec::new(),
            ));
            maybe_undefined(got, &t, *optional)
        }
    }
}

/// The shape of an object literal: its properties in order, a later one
/// (or a spread object's) replacing an earlier one of the same name.
fn infer_object(
    fields: &super::expr::Fields,
    vars: &HashMap<String, Shape>,
    warnings: &mut Vec<String>,
) -> Shape {
    let mut props: Vec<Prop> = Vec::new();
    let set = |props: &mut Vec<Prop>, name: &str, shape: Shape| {
        if let Some(p) = props.iter_mut().find(|p| p.name == name) {
            p.shape = shape;
        } else {
            props.push(Prop {
                name: name.to_string(),
                shape,
                optional: false,
            });
        }
    };
    for f in fields.iter() {
        match f {
            Field::Pair(k, Some(e)) => {
                let s = infer(e, vars, warnings);
                set(&mut props, k, s);
            }
            Field::Pair(k, None) => {
                set(&mut props, k, vars.get(&**k).cloned().unwrap_or(Shape::Any));
            }
            Field::Spread(e) => {
                // Only an object whose properties are known adds them;
                // anything else cannot be counted on.
                if let Shape::Object(more) = infer(e, vars, warnings) {
                    for p in more {
                        set(&mut props, &p.name, p.shape);
                    }
                }
            }
        }
    }
    Shape::Object(props)
}

/// The shape of a binary operation (`??` warned about when its left side
/// is never undefined).
fn infer_binary(
    op: &str,
    a: &Expr,
    b: &Expr,
    vars: &HashMap<String, Shape>,
    warnings: &mut Vec<String>,
) -> Shape {
    let left = infer(a, vars, warnings);
    if op == "??" {
        if !left.has_undefined() && !matches!(left, Shape::Any | Shape::Never) {
            warnings.push(format!(
                "Operator '??' is unnecessary — left operand '{}' is never undefined.",
                left.name()
            ));
        }
        let right = infer(b, vars, warnings);
        return Shape::union(vec![left.without_undefined(), right]);
    }
    let right = infer(b, vars, warnings);
    let stringy = |s: &Shape| matches!(s, Shape::String | Shape::Literals(_));
    match op {
        "+" if stringy(&left) || stringy(&right) => Shape::String,
        "+" | "-" | "*" | "/" | "%" => Shape::Number,
        _ => Shape::Boolean,
    }
}

/// What `?.` reads from: the operand without `undefined` (warning when it
/// never was).
fn chained(t: &Shape, optional: bool, warnings: &mut Vec<String>) -> Shape {
    if !optional {
        return t.clone();
    }
    if !t.has_undefined() && !matches!(t, Shape::Any | Shape::Never) {
        warnings.push(format!(
            "Optional chaining '?.' is unnecessary — operand '{}' is never undefined. Use '.' instead.",
            t.name()
        ));
    }
    t.without_undefined()
}

fn maybe_undefined(got: Shape, operand: &Shape, optional: bool) -> Shape {
    if optional && operand.has_undefined() {
        Shape::union(vec![got, Shape::Undefined])
    } else {
        got
    }
}

/// What a mismatch is about: a field (`parameters.mode`, `items[]`) or,
/// at the top, the value or the variable that makes it.
fn subject(path: &str, top: &str) -> String {
    if path.is_empty() {
        top.to_string()
    } else {
        format!("Field '{path}'")
    }
}

fn quoted(ls: &[String]) -> String {
    ls.iter()
        .map(|l| format!("'{l}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a value of shape `value` against the declared `expected` type;
/// each way it does not fit is added to `errors`. `top` names the value
/// itself in messages ("Value", "Variable '$x'").
pub(super) fn conform(
    value: &Shape,
    expected: &Shape,
    schema: &Schema,
    path: &str,
    top: &str,
    errors: &mut Vec<String>,
) {
    conform_at(value, expected, schema, path, top, errors, 0);
}

fn conform_at(
    value: &Shape,
    expected: &Shape,
    schema: &Schema,
    path: &str,
    top: &str,
    errors: &mut Vec<String>,
    depth: usize,
) {
    if depth > super::schema::MAX_REFS {
        return;
    }
    let expected = schema.resolve(expected);
    let mismatch = |errors: &mut Vec<String>| {
        errors.push(format!(
            "{} expected {}, got {}",
            subject(path, top),
            expected.expected_name(),
            value.name()
        ));
    };
    match (value, expected) {
        (Shape::Any | Shape::Never, _) | (_, Shape::Any) => {}
        (Shape::Union(members), _) => {
            // Every value it may be must fit: the first that does not is
            // the error.
            for m in members {
                let mut mine = Vec::new();
                conform_at(m, expected, schema, path, top, &mut mine, depth + 1);
                if !mine.is_empty() {
                    errors.extend(mine);
                    return;
                }
            }
        }
        (_, Shape::Union(options)) => {
            if options.iter().any(|o| {
                let mut none = Vec::new();
                conform_at(value, o, schema, path, top, &mut none, depth + 1);
                none.is_empty()
            }) {
                return;
            }
            let defined: Vec<&Shape> = options
                .iter()
                .filter(|o| !matches!(o, Shape::Undefined | Shape::Null))
                .collect();
            if let [only] = defined.as_slice() {
                conform_at(value, only, schema, path, top, errors, depth + 1);
            } else if path.is_empty() {
                errors.push("Value does not match any union type member".into());
            } else {
                mismatch(errors);
            }
        }
        (Shape::String | Shape::Literals(_), Shape::String)
        | (Shape::Number, Shape::Number)
        | (Shape::Boolean | Shape::Bool(_), Shape::Boolean)
        | (Shape::Undefined, Shape::Undefined)
        | (Shape::Null, Shape::Null) => {}
        (Shape::Literals(got), Shape::Literals(allowed)) => {
            if let Some(wrong) = got.iter().find(|l| !allowed.contains(l)) {
                let want = if let [one] = allowed.as_slice() {
                    format!("'{one}'")
                } else {
                    format!("one of {}", quoted(allowed))
                };
                errors.push(format!(
                    "{} expected {want}, got '{wrong}'",
                    subject(path, top)
                ));
            }
        }
        (Shape::Bool(a), Shape::Bool(b)) if a == b => {}
        (Shape::Array(v), Shape::Array(e)) => {
            conform_at(v, e, schema, &format!("{path}[]"), top, errors, depth + 1);
        }
        (Shape::Object(got), Shape::Object(want)) => {
            conform_object(got, want, schema, path, top, errors, depth);
        }
        _ => mismatch(errors),
    }
}

/// An object's properties against the expected ones: every required one
/// there, each fitting its shape (an optional one may be undefined), none
/// extra.
fn conform_object(
    got: &[Prop],
    want: &[Prop],
    schema: &Schema,
    path: &str,
    top: &str,
    errors: &mut Vec<String>,
    depth: usize,
) {
    for w in want {
        match got.iter().find(|p| p.name == w.name) {
            None if !w.optional => {
                errors.push(format!("Missing required property '{}'", w.name));
            }
            None => {}
            Some(p) => {
                let field = if path.is_empty() {
                    w.name.clone()
                } else {
                    format!("{path}.{}", w.name)
                };
                let want = if w.optional {
                    Shape::union(vec![w.shape.clone(), Shape::Undefined])
                } else {
                    w.shape.clone()
                };
                conform_at(&p.shape, &want, schema, &field, top, errors, depth + 1);
            }
        }
    }
    for p in got {
        if !want.iter().any(|w| w.name == p.name) {
            errors.push(format!("Extraneous property '{}'", p.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{Shape, conform, infer};
    use crate::expr::parse_expr;
    use crate::schema::parse_schema;

    fn errors_for(schema: &str, ty: &str, expr: &str, vars: &[(&str, Shape)]) -> Vec<String> {
        let schema = parse_schema(schema);
        let (e, _) = parse_expr(expr, 0, true).expect("the expression parses");
        let vars: HashMap<String, Shape> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let shape = infer(&e, &vars, &mut Vec::new());
        let mut errors = Vec::new();
        conform(
            &shape,
            &Shape::Ref(ty.into()),
            &schema,
            "",
            "Value",
            &mut errors,
        );
        errors
    }

    const MODE: &str = r#"export interface ModeAction { actionName: "setMode"; mode: "fast" | "slow"; label?: string; flag: true; items: number[] }"#;

    #[test]
    fn values_are_held_to_their_declared_types_strictly() {
        let ok = r#"{ actionName: "setMode", mode: "fast", flag: true, items: [1, n] }"#;
        assert_eq!(
            errors_for(MODE, "ModeAction", ok, &[("n", Shape::Number)]),
            Vec::<String>::new()
        );
        let cases = [
            (
                r#"{ actionName: "setMode", mode: "turbo", flag: true, items: [] }"#,
                "Field 'mode' expected one of 'fast', 'slow', got 'turbo'",
            ),
            (
                r#"{ actionName: "stop", mode: "fast", flag: true, items: [] }"#,
                "Field 'actionName' expected 'setMode', got 'stop'",
            ),
            (
                r#"{ actionName: "setMode", mode: s, flag: true, items: [] }"#,
                "Field 'mode' expected string-union, got string",
            ),
            (
                r#"{ actionName: "setMode", mode: "fast", flag: false, items: [] }"#,
                "Field 'flag' expected true, got false",
            ),
            (
                r#"{ actionName: "setMode", mode: "fast", flag: true, items: s.split(",") }"#,
                "Field 'items[]' expected number, got string",
            ),
            (
                r#"{ actionName: "setMode", mode: "fast", flag: true, items: [], label: o }"#,
                "",
            ),
            (
                r#"{ actionName: "setMode", flag: true, items: [] }"#,
                "Missing required property 'mode'",
            ),
            (
                r#"{ actionName: "setMode", mode: "fast", flag: true, items: [], extra: 1 }"#,
                "Extraneous property 'extra'",
            ),
        ];
        let vars = [
            ("s", Shape::String),
            ("o", Shape::union(vec![Shape::String, Shape::Undefined])),
        ];
        for (expr, want) in cases {
            let got = errors_for(MODE, "ModeAction", expr, &vars);
            if want.is_empty() {
                assert!(got.is_empty(), "{expr}: {got:?}");
            } else {
                assert_eq!(got, vec![want.to_string()], "{expr}");
            }
        }
    }

    #[test]
    fn spreads_merge_in_order_and_unneeded_operators_warn() {
        let schema = r#"export type P = { actionName: "play"; trackName: string }"#;
        let base = Shape::Object(vec![super::Prop {
            name: "actionName".into(),
            shape: Shape::Literals(vec!["wrong".into()]),
            optional: false,
        }]);
        let got = errors_for(
            schema,
            "P",
            r#"{ actionName: "play", trackName: "x", ...b }"#,
            &[("b", base.clone())],
        );
        assert_eq!(got, ["Field 'actionName' expected 'play', got 'wrong'"]);
        assert!(
            errors_for(
                schema,
                "P",
                r#"{ ...b, actionName: "play", trackName: "x" }"#,
                &[("b", base)]
            )
            .is_empty()
        );
        let mut warnings = Vec::new();
        let vars = HashMap::from([("name".to_string(), Shape::String)]);
        let (e, _) = parse_expr("name?.length ?? 0", 0, true).expect("parses");
        assert_eq!(infer(&e, &vars, &mut warnings), Shape::Number);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("'?.'") && warnings[1].contains("'??'"));
    }

    #[test]
    fn a_value_fitting_no_member_of_a_union_says_so() {
        let schema = r#"export type A = { actionName: "a" }; export type B = { actionName: "b" };"#;
        let s = parse_schema(schema);
        let value = Shape::Object(vec![super::Prop {
            name: "actionName".into(),
            shape: Shape::Literals(vec!["c".into()]),
            optional: false,
        }]);
        let mut errors = Vec::new();
        let declared = Shape::union(vec![Shape::Ref("A".into()), Shape::Ref("B".into())]);
        conform(&value, &declared, &s, "", "Value", &mut errors);
        assert_eq!(errors, ["Value does not match any union type member"]);
    }
}
