//! A server's tools as partner sees them: the verb each becomes
//! (`server.tool`), what it says it does, the schema of its arguments, and
//! what its annotations say about its effects — read with every size
//! bounded, whatever the server sent.

use serde::Serialize;
use serde_json::Value;

/// Most tools one server may offer (the rest are left out, and said so).
pub const MAX_TOOLS: usize = 128;

/// Longest description kept of a tool (cut, with `…`).
pub const MAX_DESCRIPTION: usize = 1_024;

/// Largest input schema kept, as JSON (a tool with a larger one is left
/// out).
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// One tool of one server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInfo {
    /// The server's name.
    pub server: String,
    /// The tool's name as the server knows it.
    pub name: String,
    /// The verb agents write for it (`fs.read_file`).
    pub verb: String,
    /// What it says it does (cut to [`MAX_DESCRIPTION`]).
    pub description: String,
    /// The JSON schema of its arguments.
    pub schema: Value,
    /// It says it changes nothing (`readOnlyHint`).
    pub read_only: bool,
    /// It may destroy or overwrite (`destructiveHint`; the protocol's
    /// default is yes).
    pub destructive: bool,
    /// It reaches beyond the machine (`openWorldHint`; default yes).
    pub open_world: bool,
}

/// The verb for `tool` of `server`: the tool's name in lowercase, every
/// character but letters, digits and `_` made `_` (`printEnv` →
/// `printenv`, `read-file` → `read_file`), after the server's name and a
/// dot. `None` when nothing of the name is left.
pub fn verb_of(server: &str, tool: &str) -> Option<String> {
    let mut name: String = tool
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.trim_matches('_').is_empty() {
        return None;
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert(0, 't');
    }
    Some(format!("{server}.{name}"))
}

/// `text` cut to `max` characters, `…` marking a cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

impl ToolInfo {
    /// A tool as `server` listed it; why it is left out otherwise.
    pub fn of(server: &str, tool: &rmcp::model::Tool) -> Result<ToolInfo, String> {
        let verb = verb_of(server, &tool.name)
            .ok_or_else(|| format!("tool {:?} has no usable name", cut(&tool.name, 40)))?;
        let schema = Value::Object((*tool.input_schema).clone());
        let size = serde_json::to_vec(&schema).map_or(usize::MAX, |b| b.len());
        if size > MAX_SCHEMA_BYTES {
            return Err(format!(
                "tool {}: its argument schema is {size} bytes (at most {MAX_SCHEMA_BYTES})",
                tool.name
            ));
        }
        let hints = tool.annotations.as_ref();
        let read_only = hints.and_then(|h| h.read_only_hint).unwrap_or(false);
        Ok(ToolInfo {
            server: server.to_string(),
            name: tool.name.to_string(),
            verb,
            description: cut(
                tool.description.as_deref().unwrap_or("").trim(),
                MAX_DESCRIPTION,
            ),
            schema,
            read_only,
            destructive: !read_only && hints.and_then(|h| h.destructive_hint).unwrap_or(true),
            open_world: hints.and_then(|h| h.open_world_hint).unwrap_or(true),
        })
    }

    /// Why a call of it is asked about whatever the policy's default says
    /// (a rule naming the verb still decides): it may destroy or overwrite,
    /// or reach beyond the machine. `None` for a tool that says it only
    /// reads and stays on the machine.
    pub fn asks_because(&self) -> Option<String> {
        match (self.destructive, self.open_world) {
            (true, true) => Some(format!(
                "{} may change or delete things, and reach beyond this machine",
                self.verb
            )),
            (true, false) => Some(format!("{} may change or delete things", self.verb)),
            (false, true) => Some(format!("{} may reach beyond this machine", self.verb)),
            (false, false) => None,
        }
    }

    /// The line the prompt's verb list shows: the verb, its arguments'
    /// names (required ones first) and what it does, cut to `max` chars.
    pub fn summary(&self, max: usize) -> String {
        let required: Vec<&str> = self.schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut names: Vec<String> = required.iter().map(|r| format!("{r}=…")).collect();
        if let Some(props) = self.schema["properties"].as_object() {
            names.extend(
                props
                    .keys()
                    .filter(|k| !required.contains(&k.as_str()))
                    .map(|k| format!("[{k}=…]")),
            );
        }
        let first_line = self.description.lines().next().unwrap_or("");
        cut(&format!("{} — {first_line}", names.join(" ")), max)
    }
}

#[cfg(test)]
mod tests {
    use super::verb_of;

    #[test]
    fn tool_names_become_verbs_a_dialect_word_can_hold() {
        assert_eq!(verb_of("fs", "read_file").as_deref(), Some("fs.read_file"));
        assert_eq!(verb_of("ev", "printEnv").as_deref(), Some("ev.printenv"));
        assert_eq!(verb_of("ev", "get-sum").as_deref(), Some("ev.get_sum"));
        assert_eq!(verb_of("ev", "9lives").as_deref(), Some("ev.t9lives"));
        assert_eq!(verb_of("ev", "--"), None);
        assert_eq!(verb_of("ev", "").as_deref(), None);
    }
}
