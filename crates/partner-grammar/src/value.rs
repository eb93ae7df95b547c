//! The values a grammar produces: JavaScript's, since the grammars come
//! from TypeAgent — `undefined` apart from `null`, numbers as doubles —
//! and their JSON form (`undefined` written `{"$undefined": true}`).

use serde_json::{Map, Number, Value as Json};

/// A string value: up to 24 bytes are held without an allocation, so
/// building a parse's value rarely allocates for its captures.
pub type Text = compact_str::CompactString;

/// A value an action grammar produces.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// JavaScript's `undefined`: an optional capture that was skipped.
    Undefined,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (a double, as in JavaScript).
    Number(f64),
    /// A string (short ones, as most captures are, held inline).
    String(Text),
    /// An array.
    Array(Vec<Value>),
    /// An object, its keys in insertion order.
    Object(Vec<(Text, Value)>),
}

impl Value {
    /// The value as JSON, `undefined` as `{"$undefined": true}` (inside an
    /// object, a property whose value is undefined is written the same way).
    pub fn to_json(&self) -> Json {
        match self {
            Value::Undefined => {
                let mut m = Map::new();
                m.insert("$undefined".into(), Json::Bool(true));
                Json::Object(m)
            }
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => number_json(*n),
            Value::String(s) => Json::String(s.to_string()),
            Value::Array(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Object(fields) => {
                let mut m = Map::new();
                for (k, v) in fields {
                    m.insert(k.to_string(), v.to_json());
                }
                Json::Object(m)
            }
        }
    }

    /// The value read back from its JSON form.
    pub fn from_json(json: &Json) -> Value {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
            Json::String(s) => Value::String(Text::from(s.as_str())),
            Json::Array(items) => Value::Array(items.iter().map(Value::from_json).collect()),
            Json::Object(m) if m.len() == 1 && m.get("$undefined") == Some(&Json::Bool(true)) => {
                Value::Undefined
            }
            Json::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.as_str().into(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// JavaScript's `typeof`.
    pub fn type_of(&self) -> &'static str {
        match self {
            Value::Undefined => "undefined",
            Value::Null | Value::Array(_) | Value::Object(_) => "object",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
        }
    }

    /// JavaScript's truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Undefined | Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) => true,
        }
    }

    /// The value as JavaScript's `String(x)` writes it.
    pub fn to_js_string(&self) -> String {
        match self {
            Value::Undefined => "undefined".into(),
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => js_number(*n),
            Value::String(s) => s.to_string(),
            Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    Value::Undefined | Value::Null => String::new(),
                    other => other.to_js_string(),
                })
                .collect::<Vec<_>>()
                .join(","),
            Value::Object(_) => "[object Object]".into(),
        }
    }

    /// A property of an object (or `length` of a string or array).
    pub fn get(&self, key: &str) -> Value {
        match self {
            Value::Object(fields) => fields
                .iter()
                .rev()
                .find(|(k, _)| **k == *key)
                .map_or(Value::Undefined, |(_, v)| v.clone()),
            Value::String(s) if key == "length" => Value::Number(utf16_len(s) as f64),
            Value::String(s) => key
                .parse::<usize>()
                .ok()
                .and_then(|i| {
                    let units: Vec<u16> = s.encode_utf16().collect();
                    units
                        .get(i)
                        .map(|u| Value::String(Text::from(String::from_utf16_lossy(&[*u]))))
                })
                .unwrap_or(Value::Undefined),
            Value::Array(items) if key == "length" => Value::Number(items.len() as f64),
            Value::Array(items) => key
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i).cloned())
                .unwrap_or(Value::Undefined),
            _ => Value::Undefined,
        }
    }

    /// Strict equality (`===`); objects and arrays compare by content here,
    /// as values made by a grammar are never the same object anyway.
    pub fn strict_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Number(a), Value::Number(b)) => a == b,
            (a, b) => a == b,
        }
    }
}

/// The length of a string as JavaScript counts it (UTF-16 units).
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.chars().map(char::len_utf16).sum()
}

/// A number as JSON: an integer when it is one.
fn number_json(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        Json::Number(Number::from(n as i64))
    } else {
        Number::from_f64(n).map_or(Json::Null, Json::Number)
    }
}

/// A number as JavaScript writes it.
pub fn js_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i128)
    } else {
        let s = format!("{n}");
        s
    }
}
