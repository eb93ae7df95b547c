//! A tool call's arguments as an agent writes them after the verb, read
//! into the JSON object the tool takes and checked against its schema
//! before anything is sent:
//!
//! - `path="notes.md" count=3 recursive=true`: `name=value` pairs, a value
//!   quoted (`"…"`, with `\"`, `\\`, `\n`) or one word; a word is read as
//!   the schema's type for that name says (number, integer, boolean, or
//!   JSON for an array or object), else as text;
//! - `{"path": "notes.md"}`: the object itself, as JSON;
//! - plain text, for a tool with one required text argument: that
//!   argument (`/fs.read_file notes.md`).

use serde_json::{Map, Value};

/// Longest argument text read.
pub const MAX_ARGUMENTS: usize = 256 * 1024;

/// Why arguments were refused, said to the agent.
pub type ArgumentError = String;

/// The arguments `text` gives a tool whose input schema is `schema`,
/// checked against it.
pub fn read_arguments(
    verb: &str,
    text: &str,
    schema: &Value,
) -> Result<Map<String, Value>, ArgumentError> {
    let text = text.trim();
    if text.len() > MAX_ARGUMENTS {
        return Err(format!(
            "/{verb}: the arguments are {} bytes (at most {MAX_ARGUMENTS})",
            text.len()
        ));
    }
    let args = if text.starts_with('{') {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(format!("/{verb}: the arguments are not a JSON object")),
            Err(e) => return Err(format!("/{verb}: the arguments are not JSON: {e}")),
        }
    } else {
        pairs(verb, text, schema)?
    };
    check(verb, &args, schema)?;
    Ok(args)
}

/// The one required argument of a tool that takes text, when it has
/// exactly one.
fn lone_text_argument(schema: &Value) -> Option<&str> {
    let required = schema["required"].as_array()?;
    let [one] = required.as_slice() else {
        return None;
    };
    let name = one.as_str()?;
    (schema["properties"][name]["type"].as_str() == Some("string")).then_some(name)
}

/// `name=value` pairs (or a lone text argument) read as the schema types
/// them.
fn pairs(verb: &str, text: &str, schema: &Value) -> Result<Map<String, Value>, ArgumentError> {
    let mut map = Map::new();
    if text.is_empty() {
        return Ok(map);
    }
    let words = split(verb, text)?;
    let looks_paired = words.first().is_some_and(|(w, q)| !q && w.contains('='));
    if !looks_paired {
        if let Some(name) = lone_text_argument(schema) {
            let value = match words.as_slice() {
                [(one, true)] => one.clone(),
                _ => text.to_string(),
            };
            map.insert(name.to_string(), Value::String(value));
            return Ok(map);
        }
        return Err(format!(
            "/{verb}: write its arguments as name=value pairs ({}) or as a JSON object",
            names(schema)
        ));
    }
    let mut i = 0;
    while i < words.len() {
        let (word, quoted) = &words[i];
        let Some((name, rest)) = word.split_once('=').filter(|_| !quoted) else {
            return Err(format!("/{verb}: {word:?} is not name=value"));
        };
        let (raw, was_quoted) = if rest.is_empty() && words.get(i + 1).is_some_and(|(_, q)| *q) {
            i += 1;
            (words[i].0.clone(), true)
        } else {
            (rest.to_string(), false)
        };
        let kind = schema["properties"][name]["type"].as_str();
        let value = if was_quoted && kind.is_none_or(|k| k == "string") {
            Value::String(raw)
        } else {
            typed(verb, name, &raw, kind)?
        };
        if map.insert(name.to_string(), value).is_some() {
            return Err(format!("/{verb}: argument '{name}' is given twice"));
        }
        i += 1;
    }
    Ok(map)
}

/// A value read as the schema's `kind` for it.
fn typed(verb: &str, name: &str, raw: &str, kind: Option<&str>) -> Result<Value, ArgumentError> {
    let bad = |what: &str| format!("/{verb}: argument '{name}' must be {what}, not {raw:?}");
    Ok(match kind {
        Some("integer") => Value::from(raw.parse::<i64>().map_err(|_| bad("a whole number"))?),
        Some("number") => {
            let n: f64 = raw.parse().map_err(|_| bad("a number"))?;
            serde_json::Number::from_f64(n)
                .map(Value::Number)
                .ok_or_else(|| bad("a number"))?
        }
        Some("boolean") => match raw {
            "true" | "yes" => Value::Bool(true),
            "false" | "no" => Value::Bool(false),
            _ => return Err(bad("true or false")),
        },
        Some("array" | "object") => serde_json::from_str(raw).map_err(|_| bad("JSON"))?,
        _ => Value::String(raw.to_string()),
    })
}

/// The words of `text`, each with whether it was quoted; `name="a b"` is
/// one word (`name=` and the quoted text joined).
fn split(verb: &str, text: &str) -> Result<Vec<(String, bool)>, ArgumentError> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut word = String::new();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut quoted = String::new();
                loop {
                    match chars.next() {
                        None => return Err(format!("/{verb}: a quote is not closed")),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('n') => quoted.push('\n'),
                            Some('t') => quoted.push('\t'),
                            Some(other) => quoted.push(other),
                            None => return Err(format!("/{verb}: a quote is not closed")),
                        },
                        Some(other) => quoted.push(other),
                    }
                }
                if in_word {
                    // `name="…"`: the word and its quoted value.
                    out.push((std::mem::take(&mut word), false));
                    in_word = false;
                }
                out.push((quoted, true));
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push((std::mem::take(&mut word), false));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push((word, false));
    }
    Ok(out)
}

/// The schema's argument names, required ones first, for a message.
fn names(schema: &Value) -> String {
    let Some(props) = schema["properties"].as_object() else {
        return "it takes none".into();
    };
    let list: Vec<&str> = props.keys().map(String::as_str).collect();
    if list.is_empty() {
        "it takes none".into()
    } else {
        list.join(", ")
    }
}

/// Checks `args` against `schema`; the first error names the field.
fn check(verb: &str, args: &Map<String, Value>, schema: &Value) -> Result<(), ArgumentError> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| format!("/{verb}: the tool's schema cannot be used: {e}"))?;
    let instance = Value::Object(args.clone());
    if let Some(error) = validator.iter_errors(&instance).next() {
        let path = error.instance_path().to_string();
        let field = path.trim_start_matches('/');
        return Err(if field.is_empty() {
            format!("/{verb}: {error}")
        } else {
            format!("/{verb}: argument '{field}': {error}")
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::read_arguments;
    use serde_json::json;

    fn schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "head": {"type": "integer"},
                "dry": {"type": "boolean"},
                "edits": {"type": "array"}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn pairs_are_read_as_the_schema_types_them() {
        let args = read_arguments(
            "fs.x",
            r#"path="my notes.md" head=3 dry=true edits=[1]"#,
            &schema(),
        )
        .unwrap();
        assert_eq!(
            serde_json::Value::Object(args),
            json!({"path": "my notes.md", "head": 3, "dry": true, "edits": [1]})
        );
        let args = read_arguments("fs.x", "notes.md", &schema()).unwrap();
        assert_eq!(args["path"], "notes.md");
        let args = read_arguments("fs.x", r#"{"path": "a"}"#, &schema()).unwrap();
        assert_eq!(args["path"], "a");
    }

    #[test]
    fn a_bad_argument_is_named() {
        let e = read_arguments("fs.x", "path=a head=three", &schema()).unwrap_err();
        assert!(e.contains("'head'") && e.contains("whole number"), "{e}");
        let e = read_arguments("fs.x", r#"{"path": 3}"#, &schema()).unwrap_err();
        assert!(e.contains("'path'"), "{e}");
        let e = read_arguments("fs.x", "head=3", &schema()).unwrap_err();
        assert!(e.contains("path"), "{e}");
        let e = read_arguments("fs.x", "path=a color=red", &schema()).unwrap_err();
        assert!(e.contains("color"), "{e}");
        let e = read_arguments("fs.x", r#"path="open"#, &schema()).unwrap_err();
        assert!(e.contains("not closed"), "{e}");
    }
}
