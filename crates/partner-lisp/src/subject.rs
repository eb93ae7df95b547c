//! Subjects as decorations: what `pattern` puts on a pattern (an atom as
//! the codec writes it, a map as a Subject whose properties are its
//! entries, a list of plain data as `(:List {items: […]})`), what
//! `pattern-value` reads back (any other Subject: its properties as a
//! map), and property values both ways.

use std::collections::{BTreeMap, HashMap};

use pattern_core::{Pattern, Subject, Value as Prop};

use super::codec::{Writer, kind, read_value, subject};
use super::error::{LispError, LispResult};
use super::value::{Key, PatternSubject, Value};

/// A value as one Subject, a pattern's decoration (`who` names the
/// primitive for errors).
pub fn decoration(v: &Value, who: &str) -> LispResult<Subject> {
    let atomic = |p: PatternSubject| p.value;
    Ok(match v {
        Value::Map(t) => {
            let mut props = Vec::new();
            for (k, v) in &t.entries {
                let name = match k.value() {
                    Value::Str(s) | Value::Keyword(s) => s,
                    _ => {
                        return Err(LispError::expected(
                            who,
                            1,
                            "a map with string or keyword keys",
                            v,
                        ));
                    }
                };
                props.push((name, property(v, who)?));
            }
            let mut s = subject(&["Map"], vec![]);
            s.properties = props.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            s
        }
        Value::List(_) => subject(&["List"], vec![("items", property(v, who)?)]),
        Value::Pattern(_) | Value::Closure(_) | Value::Set(_) => {
            return Err(LispError::expected(
                who,
                1,
                "an atom, a list or a map (put patterns and closures in the elements)",
                v,
            ));
        }
        other => atomic(Writer::new(&HashMap::new()).value(other)?),
    })
}

/// A value as a Subject property value: numbers, strings, booleans,
/// keywords (as strings) and lists of those.
pub fn property(v: &Value, who: &str) -> LispResult<Prop> {
    Ok(match v {
        Value::Int(i) => Prop::VInteger(*i),
        Value::Dec(d) => Prop::VDecimal(*d),
        Value::Str(s) | Value::Keyword(s) => Prop::VString(s.to_string()),
        Value::Bool(b) => Prop::VBoolean(*b),
        Value::List(s) => Prop::VArray(
            s.items
                .iter()
                .map(|x| property(x, who))
                .collect::<LispResult<_>>()?,
        ),
        other => {
            return Err(LispError::expected(
                who,
                1,
                "a number, string, boolean or list of those as a property",
                other,
            ));
        }
    })
}

/// A Subject property value as a Lisp value.
pub fn from_property(p: &Prop) -> LispResult<Value> {
    Ok(match p {
        Prop::VInteger(i) => Value::Int(*i),
        Prop::VDecimal(d) => Value::Dec(*d),
        Prop::VBoolean(b) => Value::Bool(*b),
        Prop::VString(s) | Prop::VSymbol(s) => Value::str(s.as_str()),
        Prop::VTaggedString { content, .. } => Value::str(content.as_str()),
        Prop::VArray(items) => {
            Value::list(items.iter().map(from_property).collect::<LispResult<_>>()?)?
        }
        Prop::VMap(m) => {
            let mut out = BTreeMap::new();
            for (k, v) in m {
                out.insert(Key::Keyword(k.as_str().into()), from_property(v)?);
            }
            Value::map(out)?
        }
        Prop::VRange(r) => {
            let mut out = BTreeMap::new();
            for (k, v) in [("lower", r.lower), ("upper", r.upper)] {
                if let Some(x) = v {
                    out.insert(Key::Keyword(k.into()), Value::Dec(x));
                }
            }
            Value::map(out)?
        }
        Prop::VMeasurement { unit, value } => {
            let mut out = BTreeMap::new();
            out.insert(Key::Keyword("unit".into()), Value::str(unit.as_str()));
            out.insert(Key::Keyword("value".into()), Value::Dec(*value));
            Value::map(out)?
        }
    })
}

/// A decoration read back: what `decoration` wrote, or for any other
/// Subject, its properties as a map.
pub fn decoration_value(s: &Subject) -> LispResult<Value> {
    let p = Pattern {
        value: s.clone(),
        elements: vec![],
    };
    match kind(&p) {
        "Number" | "String" | "Bool" | "Keyword" | "Primitive" => read_value(&p, 0),
        "List" if s.properties.contains_key("items") => from_property(&s.properties["items"]),
        _ => {
            let mut out = BTreeMap::new();
            for (k, v) in &s.properties {
                out.insert(Key::Keyword(k.as_str().into()), from_property(v)?);
            }
            Value::map(out)
        }
    }
}
