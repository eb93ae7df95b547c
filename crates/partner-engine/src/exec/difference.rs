//! Where two versions of a recorded value first differ, as a field path
//! and the two values there — for replay divergences, so the partner
//! reads `check State.now: was 1795640271347, now 1795640271349` rather
//! than two whole states. Texts show a window around the first
//! difference; JSON and Gram are walked field by field.

use std::collections::BTreeSet;

use serde_json::Value;

use partner_lisp::PatternSubject;

/// The first difference: the path to it and the two values there, each
/// short enough to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Where (`result`, `memory.version_after`, `check State[2].value`).
    pub path: String,
    /// What the record held there.
    pub was: String,
    /// What redoing it gave.
    pub now: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: was {}, now {}", self.path, self.was, self.now)
    }
}

/// Longest a value is shown, in characters.
const SHOWN: usize = 80;

/// Two texts that differ, each quoted and shown around their first
/// difference.
pub fn texts(path: &str, was: &str, now: &str) -> Difference {
    shown(path, was, now, true)
}

/// Two values already written out (numbers, Gram values), shown as they
/// are around their first difference.
fn written(path: &str, was: &str, now: &str) -> Difference {
    shown(path, was, now, false)
}

fn shown(path: &str, was: &str, now: &str, quote: bool) -> Difference {
    let at = was
        .char_indices()
        .zip(now.chars())
        .find(|((_, a), b)| a != b)
        .map_or_else(|| was.len().min(now.len()), |((i, _), _)| i);
    let window = |s: &str| -> String {
        let start = s.floor_char_boundary(at.saturating_sub(SHOWN / 2));
        let piece: String = s[start..].chars().take(SHOWN).collect();
        let more = s.len() > start + piece.len();
        let piece = if quote { format!("{piece:?}") } else { piece };
        format!(
            "{}{piece}{}",
            if start > 0 { "…" } else { "" },
            if more { "…" } else { "" }
        )
    };
    let long = was.len().max(now.len()) > SHOWN;
    let path = if long {
        format!("{path} (from byte {at})")
    } else {
        path.to_string()
    };
    Difference {
        path,
        was: window(was),
        now: window(now),
    }
}

/// Where two JSON values first differ (`None` when they are equal).
pub fn json(path: &str, was: &Value, now: &Value) -> Option<Difference> {
    if was == now {
        return None;
    }
    match (was, now) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|k| {
                json(
                    &format!("{path}.{k}"),
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                )
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| json(&format!("{path}[{i}]"), x, y)),
        (Value::String(a), Value::String(b)) => Some(texts(path, a, b)),
        _ => Some(written(path, &was.to_string(), &now.to_string())),
    }
}

/// Where two Gram texts first differ, walking the patterns they hold;
/// as texts when either does not read.
pub fn gram(path: &str, was: &str, now: &str) -> Difference {
    let read = partner_lisp::codec::parse_patterns;
    match (read(was), read(now)) {
        (Ok(a), Ok(b)) if a.len() == b.len() => a
            .iter()
            .zip(&b)
            .enumerate()
            .find_map(|(i, (x, y))| {
                let here = if a.len() == 1 {
                    path.to_string()
                } else {
                    format!("{path}[{i}]")
                };
                pattern(&here, x, y)
            })
            .unwrap_or_else(|| texts(path, was, now)),
        _ => texts(path, was, now),
    }
}

/// Where two patterns first differ.
fn pattern(path: &str, was: &PatternSubject, now: &PatternSubject) -> Option<Difference> {
    let labels = |p: &PatternSubject| {
        let mut l: Vec<&str> = p.value.labels.iter().map(String::as_str).collect();
        l.sort_unstable();
        l.join(":")
    };
    let (la, lb) = (labels(was), labels(now));
    let here = if la.is_empty() {
        path.to_string()
    } else {
        format!("{path} {la}")
    };
    if la != lb {
        return Some(written(&format!("{path} labels"), &la, &lb));
    }
    if was.value.identity != now.value.identity {
        return Some(written(
            &format!("{here} identity"),
            &was.value.identity.to_string(),
            &now.value.identity.to_string(),
        ));
    }
    let keys: BTreeSet<&String> = was
        .value
        .properties
        .keys()
        .chain(now.value.properties.keys())
        .collect();
    for k in keys {
        let a = was.value.properties.get(k).map(ToString::to_string);
        let b = now.value.properties.get(k).map(ToString::to_string);
        if a != b {
            let none = || "(none)".to_string();
            return Some(written(
                &format!("{here}.{k}"),
                &a.unwrap_or_else(none),
                &b.unwrap_or_else(none),
            ));
        }
    }
    if was.elements.len() != now.elements.len() {
        return Some(Difference {
            path: format!("{here} elements"),
            was: was.elements.len().to_string(),
            now: now.elements.len().to_string(),
        });
    }
    was.elements
        .iter()
        .zip(&now.elements)
        .enumerate()
        .find_map(|(i, (a, b))| pattern(&format!("{here}[{i}]"), a, b))
}

/// For a recorded MCP call: where the arguments the call was recorded
/// with (`data.mcp.arguments`) differ from those its action line says,
/// when they do. Replay never calls the server again, so this is how a
/// trace whose call and action disagree is found.
pub(super) fn mcp_arguments(record: &partner_store::trace::TraceRecord) -> Option<String> {
    let recorded = record.data.get("mcp")?.get("arguments")?;
    let written = record
        .canonical
        .split_once(' ')
        .map(|(_, rest)| rest)
        .and_then(|rest| {
            // The line's text is the arguments' JSON, quoted; a marker may
            // follow it.
            let parsed = partner_dialect::DialectParser::new().parse(&format!("/tool {rest}"));
            parsed.actions.into_iter().next()?.content
        })
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .unwrap_or(Value::Null);
    (written != *recorded).then(|| {
        json("arguments", recorded, &written).map_or_else(
            || "arguments: the call's differ from its action's".to_string(),
            |d| d.to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_differing_in_one_field_names_it_and_both_values() {
        let was = "[:State {agent: \"sage\", now: 1795640271347} | (:Block {label: \"human\", value: \"a\"})]";
        let now = "[:State {agent: \"sage\", now: 1795640271349} | (:Block {label: \"human\", value: \"a\"})]";
        let d = gram("check", was, now);
        assert_eq!(
            d.to_string(),
            "check State.now: was 1795640271347, now 1795640271349"
        );
        let deeper = now.replace("value: \"a\"", "value: \"b\"");
        let d = gram("check", now, &deeper);
        assert_eq!(d.path, "check State[0] Block.value");
    }

    #[test]
    fn long_texts_show_a_window_around_the_difference() {
        let was = format!("{}x{}", "a".repeat(5_000), "b".repeat(5_000));
        let now = format!("{}y{}", "a".repeat(5_000), "b".repeat(5_000));
        let d = texts("result", &was, &now);
        assert!(d.to_string().len() < 300, "{d}");
        assert!(d.was.contains("ax") && d.now.contains("ay"), "{d}");
    }

    #[test]
    fn json_differences_name_the_field() {
        let was = serde_json::json!({"label": "notes", "version_after": 3});
        let now = serde_json::json!({"label": "notes", "version_after": 4});
        let d = json("memory", &was, &now).unwrap();
        assert_eq!(d.to_string(), "memory.version_after: was 3, now 4");
    }
}
