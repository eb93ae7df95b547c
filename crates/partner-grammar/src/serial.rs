//! Compiled grammars as JSON, to cache or send them: every rule body
//! once (a named rule referred to from many places is one entry, by
//! index), read back into the same shared structure. A file read back is
//! untrusted: sizes are bounded and every reference checked.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::expr::Expr;
use super::model::{Grammar, Part, Rule, RuleSet, compute_firsts};
use super::parse::Spacing;

/// The format's version.
const VERSION: u32 = 1;
/// Most rule bodies and parts one file may hold.
const MAX_SETS: usize = 100_000;
const MAX_PARTS: usize = 1_000_000;

#[derive(Serialize, Deserialize)]
struct File {
    version: u32,
    start: usize,
    entities: Vec<String>,
    sets: Vec<SetJson>,
}

#[derive(Serialize, Deserialize)]
struct SetJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    rules: Vec<RuleJson>,
}

#[derive(Serialize, Deserialize)]
struct RuleJson {
    spacing: Spacing,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<Expr>,
    parts: Vec<PartJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum PartJson {
    String {
        value: Vec<String>,
    },
    Wildcard {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variable: Option<String>,
        #[serde(rename = "typeName")]
        type_name: String,
        optional: bool,
    },
    Number {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variable: Option<String>,
        optional: bool,
    },
    Rules {
        rules: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variable: Option<String>,
        optional: bool,
        repeat: bool,
    },
}

/// Numbers every rule body reachable from `set`, depth first.
fn number(set: &Arc<RuleSet>, index: &mut HashMap<usize, usize>, order: &mut Vec<Arc<RuleSet>>) {
    let key = Arc::as_ptr(set) as usize;
    if index.contains_key(&key) {
        return;
    }
    index.insert(key, order.len());
    order.push(Arc::clone(set));
    for rule in set.rules() {
        for part in &rule.parts {
            if let Part::Rules { rules, .. } = part {
                number(rules, index, order);
            }
        }
    }
}

/// The grammar as JSON.
pub fn to_json(grammar: &Grammar) -> serde_json::Value {
    let mut index = HashMap::new();
    let mut order = Vec::new();
    number(&grammar.rules, &mut index, &mut order);
    let sets = order
        .iter()
        .map(|set| SetJson {
            name: set.name.clone(),
            rules: set
                .rules()
                .iter()
                .map(|r| RuleJson {
                    spacing: r.spacing,
                    value: r.value.as_deref().cloned(),
                    parts: r
                        .parts
                        .iter()
                        .map(|p| match p {
                            Part::Str(words) => PartJson::String {
                                value: words.to_vec(),
                            },
                            Part::Wild {
                                var,
                                type_name,
                                optional,
                                ..
                            } => PartJson::Wildcard {
                                variable: var.as_deref().map(str::to_string),
                                type_name: type_name.to_string(),
                                optional: *optional,
                            },
                            Part::Num { var, optional } => PartJson::Number {
                                variable: var.as_deref().map(str::to_string),
                                optional: *optional,
                            },
                            Part::Rules {
                                rules,
                                var,
                                optional,
                                repeat,
                            } => PartJson::Rules {
                                rules: index[&(Arc::as_ptr(rules) as usize)],
                                variable: var.as_deref().map(str::to_string),
                                optional: *optional,
                                repeat: *repeat,
                            },
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    serde_json::to_value(File {
        version: VERSION,
        start: 0,
        entities: grammar.entities.clone(),
        sets,
    })
    .unwrap_or(serde_json::Value::Null)
}

/// A grammar read back from [`to_json`]'s form.
pub fn from_json(json: &str) -> Result<Grammar, String> {
    let file: File =
        serde_json::from_str(json).map_err(|e| format!("not a compiled grammar: {e}"))?;
    if file.version != VERSION {
        return Err(format!(
            "compiled grammar version {} (this partner reads {VERSION})",
            file.version
        ));
    }
    if file.sets.len() > MAX_SETS || file.start >= file.sets.len() {
        return Err("the compiled grammar's rule list is empty, too long or has no start".into());
    }
    let parts: usize = file
        .sets
        .iter()
        .flat_map(|s| &s.rules)
        .map(|r| r.parts.len())
        .sum();
    if parts > MAX_PARTS {
        return Err("the compiled grammar has too many parts".into());
    }
    let sets: Vec<Arc<RuleSet>> = file
        .sets
        .iter()
        .map(|s| Arc::new(RuleSet::new(s.name.clone(), None)))
        .collect();
    for (set, json) in sets.iter().zip(&file.sets) {
        let mut rules = Vec::new();
        for r in &json.rules {
            let mut parts = Vec::new();
            for p in &r.parts {
                parts.push(match p {
                    PartJson::String { value } => {
                        if value.is_empty() || value.iter().any(String::is_empty) {
                            return Err("a string part without words".into());
                        }
                        Part::Str(Arc::new(value.clone()))
                    }
                    PartJson::Wildcard {
                        variable,
                        type_name,
                        optional,
                    } => Part::wildcard(
                        variable.as_deref().map(Arc::from),
                        Arc::from(type_name.as_str()),
                        *optional,
                    ),
                    PartJson::Number { variable, optional } => Part::Num {
                        var: variable.as_deref().map(Arc::from),
                        optional: *optional,
                    },
                    PartJson::Rules {
                        rules,
                        variable,
                        optional,
                        repeat,
                    } => Part::Rules {
                        rules: Arc::clone(sets.get(*rules).ok_or_else(|| {
                            format!("a reference to rule body {rules}, which is not there")
                        })?),
                        var: variable.as_deref().map(Arc::from),
                        optional: *optional,
                        repeat: *repeat,
                    },
                });
            }
            rules.push(Rule {
                parts,
                value: r.value.clone().map(Arc::new),
                spacing: r.spacing,
            });
        }
        set.bind(rules);
    }
    let start = Arc::clone(&sets[file.start]);
    let mut visiting = HashSet::new();
    for set in &sets {
        compute_firsts(set, &mut visiting);
    }
    Ok(Grammar::new(start, file.entities, Vec::new()))
}
