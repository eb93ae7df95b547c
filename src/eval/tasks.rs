//! The task set: messages and the actions each calls for.

use serde::Deserialize;

use crate::dialect::ParsedAction;
use crate::store::memory::Block;

/// One action a task calls for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The verb (canonical name).
    pub verb: String,
    /// The operation, when it matters (`insert`, `search`, `read`).
    pub op: Option<String>,
    /// Words the canonical action must contain (any letter case), each.
    #[serde(default)]
    pub has: Vec<String>,
}

impl Expect {
    /// True when `action` is what this expects.
    pub fn accepts(&self, action: &ParsedAction) -> bool {
        if action.verb.name() != self.verb {
            return false;
        }
        if let Some(op) = &self.op
            && action.op.map(|o| o.as_str()) != Some(op.as_str())
        {
            return false;
        }
        let canonical = action.canonical().to_lowercase();
        self.has
            .iter()
            .all(|word| canonical.contains(&word.to_lowercase()))
    }
}

/// One task: what the partner says and what should follow.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// A short name.
    pub id: String,
    /// The message.
    pub say: String,
    /// The actions it calls for (none: the right answer is words only).
    #[serde(default)]
    pub expect: Vec<Expect>,
}

impl Task {
    /// Whether `actions` do what the task asks (each expectation met by its
    /// own action), and how many actions nobody asked for.
    pub fn score(&self, actions: &[&ParsedAction]) -> (bool, usize) {
        let mut used = vec![false; actions.len()];
        let mut all = true;
        for expect in &self.expect {
            match (0..actions.len()).find(|&i| !used[i] && expect.accepts(actions[i])) {
                Some(i) => used[i] = true,
                None => all = false,
            }
        }
        let accidental = used.iter().filter(|u| !**u).count();
        (all && accidental == 0, accidental)
    }
}

/// A block every task's agent has.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockFixture {
    /// Its label.
    pub label: String,
    /// Its text.
    #[serde(default)]
    pub value: String,
}

/// A task file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSet {
    /// Blocks the agent has in every task.
    #[serde(default)]
    pub blocks: Vec<BlockFixture>,
    /// The tasks.
    pub tasks: Vec<Task>,
}

/// Most tasks in one file.
const MAX_TASKS: usize = 1000;

impl TaskSet {
    /// Reads a task file.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let set: TaskSet = toml::from_str(text).map_err(|e| e.to_string())?;
        if set.tasks.is_empty() {
            return Err("the task file has no [[tasks]]".into());
        }
        if set.tasks.len() > MAX_TASKS {
            return Err(format!("at most {MAX_TASKS} tasks in one file"));
        }
        Ok(set)
    }

    /// The task set shipped with partner (`eval/tasks.toml`).
    pub fn builtin() -> Result<Self, String> {
        Self::from_toml(include_str!("../../eval/tasks.toml"))
            .map_err(|e| format!("eval/tasks.toml: {e}"))
    }

    /// The fixture blocks as `agent`'s.
    pub fn blocks(&self, agent: &str) -> Vec<Block> {
        self.blocks
            .iter()
            .map(|b| super::block(agent, &b.label, &b.value))
            .collect()
    }
}
