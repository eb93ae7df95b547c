//! [`DialectParser`]: the entry point that turns agent text into actions.

use super::blocks::BlockRegistry;
use super::link::LinkParser;
use super::scan::scan_turn;
use super::turn::ParsedTurn;
use super::verbs::VerbTable;

/// Parses agent turns into actions, knowing the verb table and the block
/// labels that exist (for recall/context inference).
#[derive(Debug, Clone, Default)]
pub struct DialectParser {
    table: VerbTable,
    blocks: BlockRegistry,
}

impl DialectParser {
    /// A parser with the built-in verbs and no known blocks.
    pub fn new() -> Self {
        DialectParser::default()
    }

    /// Replaces the known blocks.
    pub fn with_blocks(mut self, blocks: BlockRegistry) -> Self {
        self.blocks = blocks;
        self
    }

    /// Replaces the verb table.
    pub fn with_table(mut self, table: VerbTable) -> Self {
        self.table = table;
        self
    }

    /// The verb table in use.
    pub fn table(&self) -> &VerbTable {
        &self.table
    }

    /// The known blocks.
    pub fn blocks(&self) -> &BlockRegistry {
        &self.blocks
    }

    /// Mutable access to the known blocks (they change as agents write).
    pub fn blocks_mut(&mut self) -> &mut BlockRegistry {
        &mut self.blocks
    }

    /// Parses one agent turn. Never panics; every byte of `turn` ends up in
    /// an action, an invalid action or prose.
    pub fn parse(&self, turn: &str) -> ParsedTurn {
        let parser = LinkParser {
            table: &self.table,
            blocks: &self.blocks,
        };
        scan_turn(&parser, turn)
    }
}
