//! The batch protocol: one JSON record in, one JSON line out, with the
//! fields and result shapes of the reference's recorded test cases
//! (`match`, `completion`, `loadError`, `loadWarning`), so the engine can
//! be checked against them record by record.

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use super::compile::{FileLoader, LoadOptions, NoFiles, load_grammar};
use super::complete::{Direction, complete};
use super::matcher::{MatchOptions, Policy, match_grammar};

/// Longest input line read.
pub const MAX_RECORD: usize = 8 << 20;

/// Files under a root directory, for `grammar_path` and imports.
#[derive(Debug)]
pub struct RootLoader {
    /// The directory imports may not leave.
    pub root: PathBuf,
}

impl FileLoader for RootLoader {
    fn load(&self, path: &str, from: &str) -> Result<(String, String), String> {
        let base = Path::new(from).parent().unwrap_or(Path::new(""));
        // A root given as a bare file's parent ("") is the current directory.
        let root_dir = if self.root.as_os_str().is_empty() {
            Path::new(".")
        } else {
            self.root.as_path()
        };
        let joined = root_dir.join(base).join(path);
        let real = joined
            .canonicalize()
            .map_err(|e| format!("cannot read '{path}': {e}"))?;
        let root = root_dir
            .canonicalize()
            .map_err(|e| format!("cannot read the root: {e}"))?;
        if !real.starts_with(&root) {
            return Err(format!("'{path}' is outside the grammar root"));
        }
        let meta = std::fs::metadata(&real).map_err(|e| e.to_string())?;
        if meta.len() > 4 << 20 {
            return Err(format!("'{path}' is larger than 4 MiB"));
        }
        let text = std::fs::read_to_string(&real).map_err(|e| e.to_string())?;
        let name = real
            .strip_prefix(&root)
            .map_or_else(|_| path.to_string(), |p| p.display().to_string());
        Ok((name, text))
    }
}

/// Files a record carries (`"files": {"schema.ts": "…"}`), then those
/// under the root.
struct RecordFiles<'a> {
    files: &'a serde_json::Map<String, Json>,
    then: &'a dyn FileLoader,
}

impl FileLoader for RecordFiles<'_> {
    fn load(&self, path: &str, from: &str) -> Result<(String, String), String> {
        let name = path.trim_start_matches("./");
        match self.files.get(name) {
            Some(Json::String(text)) => Ok((name.to_string(), text.clone())),
            _ => self.then.load(path, from),
        }
    }
}

fn load_options(record: &Json) -> LoadOptions {
    let o = &record["loadOptions"];
    LoadOptions {
        enable_value_expressions: o["enableValueExpressions"].as_bool().unwrap_or(false),
        start_value_required: o["startValueRequired"].as_bool().unwrap_or(true),
        // The batch protocol answers as the reference does: its quotes
        // are part of a literal.
        quotes: crate::Quotes::Literal,
    }
}

fn policy(value: &Json, first: &str, other: &str) -> Policy {
    match value.as_str() {
        Some(v) if v == first => Policy::First,
        Some(v) if v == other => Policy::Other,
        _ => Policy::Exhaustive,
    }
}

fn match_options(o: &Json) -> MatchOptions {
    MatchOptions {
        wildcard: policy(&o["wildcardPolicy"], "shortest", ""),
        optional: policy(&o["optionalPolicy"], "preferTake", "preferSkip"),
        repeat: policy(&o["repeatPolicy"], "greedy", "nonGreedy"),
    }
}

/// Answers one record (a line of JSON).
pub fn answer(line: &str, root: Option<&Path>) -> Json {
    if line.len() > MAX_RECORD {
        return json!({ "error": "the record is longer than 8 MiB" });
    }
    let record: Json = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => return json!({ "error": format!("not a JSON record: {e}") }),
    };
    let kind = record["kind"].as_str().unwrap_or("");
    let file = record["fileName"].as_str().unwrap_or("grammar.agr");
    let (name, text) = match (&record["grammar"], &record["grammar_path"], root) {
        (Json::String(g), _, _) => (file.to_string(), g.clone()),
        (_, Json::String(p), Some(root)) => {
            let loader = RootLoader {
                root: root.to_path_buf(),
            };
            match loader.load(p, "") {
                Ok(loaded) => loaded,
                Err(e) => return json!({ "error": e }),
            }
        }
        (_, Json::String(_), None) => {
            return json!({ "error": "grammar_path needs --root" });
        }
        _ => return json!({ "error": "the record has no grammar" }),
    };
    let options = load_options(&record);
    let root_loader = root.map(|r| RootLoader {
        root: r.to_path_buf(),
    });
    let root_or_none: &dyn FileLoader = match &root_loader {
        Some(l) => l,
        None => &NoFiles,
    };
    let empty = serde_json::Map::new();
    let loader = RecordFiles {
        files: record["files"].as_object().unwrap_or(&empty),
        then: root_or_none,
    };
    let grammar = match load_grammar(&name, &text, &options, &loader) {
        Ok(g) => g,
        Err(e) => return json!({ "error": e.to_string() }),
    };
    match kind {
        "match" => {
            let input = record["input"].as_str().unwrap_or("");
            let results: Vec<Json> =
                match_grammar(&grammar, input, &match_options(&record["matchOptions"]))
                    .into_iter()
                    .map(|r| {
                        json!({
                            "match": r.value.to_json(),
                            "matchedValueCount": r.matched_value_count,
                            "wildcardCharCount": r.wildcard_char_count,
                            "entityWildcardPropertyNames": r.entity_wildcard_property_names,
                        })
                    })
                    .collect();
            json!({ "result": results })
        }
        "completion" => {
            let input = record["input"].as_str().unwrap_or("");
            let direction = match record["direction"].as_str() {
                Some("backward") => Direction::Backward,
                _ => Direction::Forward,
            };
            let min = record["minPrefixLength"].as_u64().map(|n| n as usize);
            let options = match_options(&record["completionOptions"]);
            json!({ "result": complete(&grammar, input, direction, min, &options).to_json() })
        }
        "loadWarning" => json!({ "warnings": grammar.warnings }),
        _ => json!({ "result": null }),
    }
}
