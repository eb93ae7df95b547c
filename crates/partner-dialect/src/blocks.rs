//! The block labels the parser knows about, used to infer recall intent
//! and to resolve labels written loosely (`project notes` → `project_notes`).

/// A memory block the parser may see named in an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownBlock {
    /// The block's label.
    pub label: String,
    /// True for working-memory blocks (always in context: persona, human,
    /// scratch), which `remember` edits through `context`.
    pub working: bool,
}

/// How a written label matched the known blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelMatch {
    /// One block, by exact label after normalisation (case, spaces, dashes).
    Exact(String),
    /// No exact match; these labels contain what was written.
    Partial(Vec<String>),
    /// Nothing matched.
    Unknown,
}

/// The set of block labels that exist, as far as the parser is told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockRegistry {
    blocks: Vec<KnownBlock>,
    /// `normalize_label` of each block's label, computed once.
    normalized: Vec<String>,
}

/// Lowercases a label and turns whitespace and `-` into `_`.
pub fn normalize_label(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    let mut pending_sep = false;
    for c in label.trim().chars() {
        if c.is_whitespace() || c == '-' || c == '_' {
            pending_sep = true;
        } else {
            if pending_sep && !out.is_empty() {
                out.push('_');
            }
            pending_sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

impl BlockRegistry {
    /// An empty registry: no label is known, so recall arguments are searches.
    pub fn new() -> Self {
        BlockRegistry::default()
    }

    /// A registry of the given blocks.
    pub fn from_blocks(blocks: Vec<KnownBlock>) -> Self {
        let normalized = blocks.iter().map(|b| normalize_label(&b.label)).collect();
        BlockRegistry { blocks, normalized }
    }

    /// Adds a block.
    pub fn add(&mut self, label: impl Into<String>, working: bool) {
        let label = label.into();
        self.normalized.push(normalize_label(&label));
        self.blocks.push(KnownBlock { label, working });
    }

    /// True when no block is known.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The known blocks.
    pub fn blocks(&self) -> &[KnownBlock] {
        &self.blocks
    }

    /// True when `label` is exactly (after normalisation) a working block.
    pub fn is_working(&self, label: &str) -> bool {
        if !self.blocks.iter().any(|b| b.working) {
            return false;
        }
        let wanted = normalize_label(label);
        self.blocks
            .iter()
            .zip(&self.normalized)
            .any(|(b, have)| b.working && *have == wanted)
    }

    /// Resolves a written label; with `working_only`, only working blocks count.
    pub fn resolve(&self, written: &str, working_only: bool) -> LabelMatch {
        if self.blocks.is_empty() {
            return LabelMatch::Unknown;
        }
        let wanted = normalize_label(written);
        if wanted.is_empty() {
            return LabelMatch::Unknown;
        }
        let pool = self
            .blocks
            .iter()
            .zip(&self.normalized)
            .filter(|(b, _)| !working_only || b.working);
        let mut partial = Vec::new();
        for (block, have) in pool {
            if *have == wanted {
                return LabelMatch::Exact(block.label.clone());
            }
            let words_present = wanted.split('_').all(|w| have.split('_').any(|h| h == w));
            if have.contains(&wanted) || words_present {
                partial.push(block.label.clone());
            }
        }
        if partial.is_empty() {
            LabelMatch::Unknown
        } else {
            partial.sort();
            partial.dedup();
            LabelMatch::Partial(partial)
        }
    }
}
