//! The action grammar engine against TypeAgent's recorded behaviour
//! (`../shared/conformance/typeagent/golden-core.jsonl`): every record is
//! answered through the batch protocol and compared — match results
//! exactly (values, counts, order), completions with their groups compared
//! as sets, load errors by being detected. Prints the pass rate by kind;
//! the known divergences are listed in `crates/partner-grammar/src/DIVERGENCES.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use partner::grammar::batch::answer;
use serde_json::Value;

fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/typeagent");
    p.join("golden-core.jsonl").exists().then_some(p)
}

/// A completion result with its groups and properties as sorted sets.
pub(crate) fn normalized(result: &Value) -> Value {
    let mut r = result.clone();
    if let Some(groups) = r.get("groups").and_then(Value::as_array) {
        let mut gs: Vec<String> = groups
            .iter()
            .map(|g| {
                let mut words: Vec<String> = g["completions"]
                    .as_array()
                    .map(|a| a.iter().map(|w| w.to_string()).collect())
                    .unwrap_or_default();
                words.sort();
                format!("{}:{}", g["separatorMode"], words.join(","))
            })
            .collect();
        gs.sort();
        r["groups"] = serde_json::json!(gs);
    }
    if let Some(props) = r.get("properties").and_then(Value::as_array) {
        let mut ps: Vec<String> = props.iter().map(|p| canonical(p).to_string()).collect();
        ps.sort();
        r["properties"] = serde_json::json!(ps);
    }
    r
}

/// JSON with object keys sorted, for comparing by value.
pub(crate) fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, Value> =
                m.iter().map(|(k, v)| (k, canonical(v))).collect();
            serde_json::json!(sorted)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// True when a record's grammar imports its value types from a TypeScript
/// schema file (`import { T } from "schema.ts"`), which the record does not
/// carry.
fn needs_schema(record: &Value) -> bool {
    let g = record["grammar"].as_str().unwrap_or("");
    g.contains(".ts\"") || g.contains(".ts'")
}

/// The schema files TypeAgent's tests supplied through their schema
/// loaders (`tests/fixtures/typeagent_schemas.json`).
fn schemas() -> Value {
    let text = include_str!("../fixtures/typeagent_schemas.json");
    serde_json::from_str(text).expect("the schema fixture is JSON")
}

/// The record with the `schema.ts` its test supplied, when one is known:
/// the test's own, else its describe block's (longest prefix), else its
/// spec file's.
fn with_schema(record: &Value, schemas: &Value) -> Value {
    let test = record["test"].as_str().unwrap_or("");
    let file = record["file"].as_str().unwrap_or("");
    let by_describe = schemas["describes"].as_object().and_then(|d| {
        d.iter()
            .filter(|(prefix, _)| test.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, text)| text)
    });
    let schema = schemas["tests"]
        .get(test)
        .or(by_describe)
        .or_else(|| schemas["files"].get(file));
    let mut r = record.clone();
    if let Some(text) = schema
        && needs_schema(record)
    {
        r["files"] = serde_json::json!({ "schema.ts": text });
    }
    r
}

#[test]
fn the_engine_answers_as_typeagent_recorded() {
    let Some(dir) = shared() else {
        eprintln!(
            "SKIPPED: ../shared/conformance/typeagent/golden-core.jsonl is not present beside the project; the conformance figures cannot be measured here"
        );
        return;
    };
    let text = std::fs::read_to_string(dir.join("golden-core.jsonl")).unwrap();
    let mut total: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut schema_errors = (0, 0);
    let mut failures: Vec<String> = Vec::new();
    let schemas = schemas();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).unwrap();
        let got = answer(&with_schema(&record, &schemas).to_string(), None);
        let kind = record["kind"].as_str().unwrap_or("");
        let ok = match kind {
            "match" => canonical(&got["result"]) == canonical(&record["result"]),
            "completion" => {
                got.get("result").is_some()
                    && normalized(&canonical(&got["result"]))
                        == normalized(&canonical(&record["result"]))
            }
            "loadError" => got.get("error").is_some(),
            "loadWarning" => {
                got["warnings"].as_array().map(Vec::len)
                    == record["warnings"].as_array().map(Vec::len)
            }
            _ => false,
        };
        if kind == "loadError" && needs_schema(&record) {
            schema_errors.1 += 1;
            if ok {
                schema_errors.0 += 1;
            }
        }
        let entry = total.entry(match kind {
            "match" => "match",
            "completion" => "completion",
            "loadError" => "loadError",
            _ => "loadWarning",
        });
        let e = entry.or_insert((0, 0));
        e.1 += 1;
        if ok {
            e.0 += 1;
        } else if failures.len() < 2000 {
            failures.push(format!("{kind}: {}", record["test"].as_str().unwrap_or("")));
        }
    }
    let rate = |k: &str| {
        let (ok, n) = total.get(k).copied().unwrap_or((0, 0));
        println!(
            "{k}: {ok}/{n} ({:.1}%)",
            100.0 * ok as f64 / n.max(1) as f64
        );
        ok as f64 / n.max(1) as f64
    };
    let matched = rate("match");
    let completed = rate("completion");
    let errors = rate("loadError");
    rate("loadWarning");
    println!(
        "of which with a schema from tests/fixtures/typeagent_schemas.json: {}/{} detected",
        schema_errors.0, schema_errors.1
    );
    assert!(
        matched >= 0.99,
        "match records: {:.3}\n{}",
        matched,
        failures.join("\n")
    );
    assert!(
        completed >= 1.0,
        "completion records: {:.3}\n{}",
        completed,
        failures.join("\n")
    );
    assert!(
        errors >= 1.0,
        "every load error is detected\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_grammar_typeagent_ships_loads_here() {
    let Some(dir) = shared() else {
        eprintln!("SKIPPED: ../shared/conformance/typeagent/grammars is not present");
        return;
    };
    let mut stack = vec![dir.join("grammars")];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "agr") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 50, "{} grammars", files.len());
    let mut failed = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let root = f.parent().unwrap().to_path_buf();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let options = partner::grammar::LoadOptions {
            enable_value_expressions: true,
            start_value_required: true,
            // TypeAgent's reading: its quotes are part of a literal.
            quotes: partner::grammar::Quotes::Literal,
        };
        if let Err(e) = partner::grammar::load_grammar(
            &name,
            &text,
            &options,
            &partner::grammar::batch::RootLoader { root },
        ) {
            failed.push(format!("{}: {e}", f.display()));
        }
    }
    // Modules meant to be imported have no <Start> (the reference refuses
    // them alone too); two test fixtures read variables their rules never
    // define, which the reference also rejects; the language sample imports
    // files that are not shipped.
    let expected: Vec<&str> = failed
        .iter()
        .map(String::as_str)
        .filter(|f| {
            !(f.contains("Missing rule definition for '<Start>'")
                || f.contains("is referenced in the value but not defined")
                || f.contains("cannot read './"))
        })
        .collect();
    assert!(expected.is_empty(), "{}", expected.join("\n"));
    println!(
        "{} of {} grammars load",
        files.len() - failed.len(),
        files.len()
    );
}

#[test]
fn compiled_grammars_round_trip_through_json() {
    use partner::grammar::{
        LoadOptions, MatchOptions, NoFiles, load_grammar, match_grammar, serial,
    };
    let Some(dir) = shared() else {
        eprintln!("SKIPPED: ../shared/conformance/typeagent is not present");
        return;
    };
    let text = std::fs::read_to_string(dir.join("golden-core.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        if record["kind"] != "match" {
            continue;
        }
        let options = LoadOptions {
            enable_value_expressions: record["loadOptions"]["enableValueExpressions"]
                .as_bool()
                .unwrap_or(false),
            start_value_required: record["loadOptions"]["startValueRequired"]
                .as_bool()
                .unwrap_or(true),
            quotes: partner::grammar::Quotes::Literal,
        };
        let Ok(grammar) = load_grammar(
            "g.agr",
            record["grammar"].as_str().unwrap(),
            &options,
            &NoFiles,
        ) else {
            continue;
        };
        let json = serial::to_json(&grammar).to_string();
        let back = serial::from_json(&json).unwrap();
        let input = record["input"].as_str().unwrap();
        assert_eq!(
            match_grammar(&back, input, &MatchOptions::default()),
            match_grammar(&grammar, input, &MatchOptions::default()),
            "{}",
            record["test"]
        );
        checked += 1;
    }
    assert!(checked > 1500, "{checked}");
    // A file that is not one, or refers to rules it does not hold, is refused.
    assert!(serial::from_json("{}").is_err());
    assert!(
        serial::from_json(r#"{"version":1,"start":0,"entities":[],"sets":[{"rules":[{"spacing":"auto","parts":[{"type":"rules","rules":7,"optional":false,"repeat":false}]}]}]}"#)
            .unwrap_err()
            .contains("not there")
    );
}
