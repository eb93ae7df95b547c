//! Pattern Lisp tools in a constellation: the shelf of `.plisp` files in
//! the tools folder (validated when loaded, loaded again when a file
//! changes, a broken one reported and left out), the state a tool is
//! given (its caller's blocks, the arguments and the time, as a Pattern
//! Subject), and what its output state asks to change in memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use pattern_core::{Pattern, Value as Prop};

use partner_lisp::codec::subject;

use partner_core::clock::Millis;
use partner_lisp::tool::{self, Tool};
use partner_lisp::value::PatternSubject;
use partner_store::memory::Block;

/// Largest tool file read, in bytes.
const MAX_TOOL_FILE: u64 = 256 * 1024;

/// Steps a tool may take in one run.
pub const TOOL_STEPS: u64 = 10_000_000;

/// The file extension of a tool.
pub const TOOL_EXTENSION: &str = "plisp";

#[derive(Debug, Clone)]
struct Loaded {
    modified: Option<SystemTime>,
    len: u64,
    tool: Result<Tool, String>,
}

/// The tools of a constellation.
#[derive(Debug, Default)]
pub struct ToolShelf {
    dir: Option<PathBuf>,
    loaded: Mutex<HashMap<String, Loaded>>,
    /// Sources a replay runs instead of the files (what the trace recorded).
    pinned: Mutex<HashMap<String, Result<Tool, String>>>,
    /// The problems last seen by [`ToolShelf::new_problems`] (`None`
    /// before its first look).
    seen: Mutex<Option<HashMap<String, String>>>,
}

/// A tool name that can also be a verb: lowercase letters, digits, `_`.
pub fn valid_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.len() <= 64
}

impl ToolShelf {
    /// The tools in `dir` (none when unset).
    pub fn new(dir: Option<PathBuf>) -> Self {
        ToolShelf {
            dir,
            ..ToolShelf::default()
        }
    }

    /// The folder tools are read from.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Every tool file's name and whether it loads (the error when not),
    /// sorted by name.
    pub fn scan(&self) -> Vec<(String, Result<Tool, String>)> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let path = e.path();
                (path.extension().and_then(|x| x.to_str()) == Some(TOOL_EXTENSION))
                    .then(|| path.file_stem()?.to_str().map(str::to_string))
                    .flatten()
            })
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|n| {
                let t = self.get(&n);
                (n, t)
            })
            .collect()
    }

    /// The tool called `name`, loaded again when its file changed.
    pub fn get(&self, name: &str) -> Result<Tool, String> {
        if let Some(t) = self.pinned.lock().ok().and_then(|p| p.get(name).cloned()) {
            return t;
        }
        if !valid_name(name) {
            return Err(format!(
                "`{name}` is not a tool name (lowercase letters, digits and _)"
            ));
        }
        let Some(dir) = &self.dir else {
            return Err("this constellation has no tools folder ([tools] dir)".into());
        };
        let path = dir.join(format!("{name}.{TOOL_EXTENSION}"));
        let meta = std::fs::metadata(&path).map_err(|_| self.missing(name))?;
        let (modified, len) = (meta.modified().ok(), meta.len());
        let mut loaded = self
            .loaded
            .lock()
            .map_err(|_| "the tool shelf is unusable")?;
        if let Some(l) = loaded.get(name)
            && l.modified == modified
            && l.len == len
            && modified.is_some()
        {
            return l.tool.clone();
        }
        let tool = if len > MAX_TOOL_FILE {
            Err(format!(
                "{} is {len} bytes, more than the {MAX_TOOL_FILE} a tool may be",
                path.display()
            ))
        } else {
            match std::fs::read_to_string(&path) {
                Ok(source) => {
                    tool::validate(name, &source).map_err(|e| format!("{}: {e}", path.display()))
                }
                Err(e) => Err(format!("cannot read {}: {e}", path.display())),
            }
        };
        loaded.insert(
            name.to_string(),
            Loaded {
                modified,
                len,
                tool: tool.clone(),
            },
        );
        tool
    }

    /// Tools that stopped loading since the last look, in words (the first
    /// look only notes what it finds: a constellation reports those when it
    /// starts).
    pub fn new_problems(&self) -> Vec<String> {
        let now: HashMap<String, String> = self
            .scan()
            .into_iter()
            .filter_map(|(n, t)| t.err().map(|e| (n, e)))
            .collect();
        let Ok(mut seen) = self.seen.lock() else {
            return Vec::new();
        };
        let out = match seen.as_ref() {
            None => Vec::new(),
            Some(before) => {
                let mut out: Vec<String> = now
                    .iter()
                    .filter(|(n, e)| before.get(*n) != Some(*e))
                    .map(|(n, e)| format!("tool {n} is not loaded: {e}"))
                    .collect();
                out.sort();
                out
            }
        };
        *seen = Some(now);
        out
    }

    fn missing(&self, name: &str) -> String {
        let names: Vec<String> = self
            .scan()
            .into_iter()
            .filter(|(_, t)| t.is_ok())
            .map(|(n, _)| n)
            .collect();
        if names.is_empty() {
            format!("there is no tool `{name}` (no tools are loaded)")
        } else {
            format!(
                "there is no tool `{name}`; the tools are {}",
                names.join(", ")
            )
        }
    }

    /// Runs `source` whenever `name` is asked for (replay runs the tool a
    /// trace recorded, not today's file).
    pub fn pin(&self, name: &str, source: &str) -> Result<(), String> {
        let t = tool::validate(name, source).map_err(|e| e.to_string())?;
        if let Ok(mut pinned) = self.pinned.lock() {
            pinned.insert(name.to_string(), Ok(t));
        }
        Ok(())
    }

    /// Answers `why` whenever `name` is asked for (replay of a run that
    /// found the tool missing or broken).
    pub fn pin_unavailable(&self, name: &str, why: &str) {
        if let Ok(mut pinned) = self.pinned.lock() {
            pinned.insert(name.to_string(), Err(why.to_string()));
        }
    }
}

/// The state a tool gets: `[:State {agent, args, time, now} | (:Block
/// {label, kind, value, permission, limit}) …]`, blocks in label order.
pub fn state_of(agent: &str, args: &str, now: Millis, blocks: &[Block]) -> PatternSubject {
    let time = partner_core::clock::format_time(now);
    let mut sorted: Vec<&Block> = blocks.iter().collect();
    sorted.sort_by(|a, b| a.label.cmp(&b.label));
    let elements = sorted
        .into_iter()
        .map(|b| {
            Pattern::point(subject(
                &["Block"],
                vec![
                    ("label", Prop::VString(b.label.clone())),
                    ("kind", Prop::VString(b.kind.to_string())),
                    ("value", Prop::VString(b.value.clone())),
                    ("permission", Prop::VString(b.permission.to_string())),
                    ("limit", Prop::VInteger(b.char_limit as i64)),
                ],
            ))
        })
        .collect();
    Pattern::pattern(
        subject(
            &["State"],
            vec![
                ("agent", Prop::VString(agent.to_string())),
                ("args", Prop::VString(args.to_string())),
                ("time", Prop::VString(time)),
                ("now", Prop::VInteger(now)),
            ],
        ),
        elements,
    )
}

/// What an output state asks of memory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum StateChange {
    /// A block's value changed.
    Write {
        /// The block.
        label: String,
        /// Its value before.
        old: String,
        /// Its value after.
        new: String,
    },
    /// A block the agent does not have (stored as an archival block).
    Create {
        /// The new block's label.
        label: String,
        /// Its value.
        value: String,
    },
}

fn text_prop(p: &PatternSubject, key: &str) -> Option<String> {
    match p.value.properties.get(key)? {
        Prop::VString(s) => Some(s.clone()),
        _ => None,
    }
}

/// The differences between the state given and the state returned, as
/// memory changes (a block is an element with a `label` property), and what was ignored (a tool cannot delete blocks or
/// change their kind or permission).
pub fn changes(input: &PatternSubject, output: &PatternSubject) -> (Vec<StateChange>, Vec<String>) {
    let blocks_in = |s: &PatternSubject| -> Vec<(String, String, PatternSubject)> {
        s.elements
            .iter()
            .filter_map(|e| {
                Some((
                    text_prop(e, "label")?,
                    text_prop(e, "value").unwrap_or_default(),
                    e.clone(),
                ))
            })
            .collect()
    };
    let before = blocks_in(input);
    let after = blocks_in(output);
    let mut out = Vec::new();
    let mut ignored = Vec::new();
    for (label, value, node) in &after {
        match before.iter().find(|(l, _, _)| l == label) {
            Some((_, old, old_node)) => {
                if old != value {
                    out.push(StateChange::Write {
                        label: label.clone(),
                        old: old.clone(),
                        new: value.clone(),
                    });
                }
                for key in ["kind", "permission", "limit"] {
                    if old_node.value.properties.get(key) != node.value.properties.get(key) {
                        ignored.push(format!("{label}: a tool cannot change a block's {key}"));
                    }
                }
            }
            None => {
                if !out
                    .iter()
                    .any(|c| matches!(c, StateChange::Create { label: l, .. } if l == label))
                {
                    out.push(StateChange::Create {
                        label: label.clone(),
                        value: value.clone(),
                    });
                }
            }
        }
    }
    for (label, _, _) in &before {
        if !after.iter().any(|(l, _, _)| l == label) {
            ignored.push(format!("{label}: a tool cannot delete a block"));
        }
    }
    (out, ignored)
}

/// Longest summary a tool's doc comment gives its verb.
const MAX_SUMMARY: usize = 160;

/// Adds a verb for each tool on `shelf` that loads and whose name is free
/// (`/checklist …` runs `tools/checklist.plisp`); what could not be
/// added, in words (broken tools, taken names).
pub fn add_tool_verbs(shelf: &ToolShelf, table: &mut partner_dialect::VerbTable) -> Vec<String> {
    let mut warnings = Vec::new();
    for (name, loaded) in shelf.scan() {
        let tool = match loaded {
            Ok(t) => t,
            Err(e) => {
                warnings.push(format!("tool {name} is not loaded: {e}"));
                continue;
            }
        };
        if !valid_name(&name) {
            warnings.push(format!(
                "tool file {name}.{TOOL_EXTENSION}: the name must be lowercase letters, digits and _ to be a verb"
            ));
            continue;
        }
        let mut summary: String = if tool.doc.is_empty() {
            format!("run the tool {name}")
        } else {
            tool.doc.clone()
        };
        if summary.chars().count() > MAX_SUMMARY {
            summary = summary.chars().take(MAX_SUMMARY - 1).collect::<String>() + "…";
        }
        let mut action = toml::Table::new();
        action.insert("kind".into(), "tool".into());
        action.insert("tool".into(), name.clone().into());
        let mut entry = toml::Table::new();
        entry.insert("summary".into(), summary.into());
        entry.insert("action".into(), toml::Value::Table(action));
        let mut verbs = toml::Table::new();
        verbs.insert(name.clone(), toml::Value::Table(entry));
        let mut file = toml::Table::new();
        file.insert("verbs".into(), toml::Value::Table(verbs));
        let taken = table.specs().iter().any(|s| s.verb.name() == name);
        let added = !taken
            && toml::to_string(&file)
                .map_err(|e| e.to_string())
                .and_then(|text| table.extend_from_toml(&text).map_err(|e| e.to_string()))
                .is_ok();
        if !added {
            warnings.push(format!(
                "tool {name} has no verb of its own (the name is taken); call it with /tool {name}"
            ));
        }
    }
    warnings
}
