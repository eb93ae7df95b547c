//! The memory store: one SQLite database per constellation holding memory
//! blocks (versioned), archival entries, conversations, intentions, the
//! outbox and agent state, with FTS5 search over all of it.
//!
//! The functions in [`blocks`], [`records`] and [`search`] take a
//! `rusqlite::Connection` (or a transaction, which derefs to one) so the
//! executor can group several changes in one durable commit; open the
//! database with [`MemoryStore`].

pub mod backend;
pub mod blocks;
mod deferred;
mod error;
mod group;
pub mod inbox;
pub mod keywords;
pub mod learned;
pub mod records;
pub mod roster;
pub mod schema;
pub mod search;
mod store;
pub mod vectors;

pub use blocks::{
    Block, BlockKind, BlockPermission, BlockVersion, DEFAULT_CHAR_LIMIT, MemoryChange, NewBlock,
};
pub use error::{MemoryError, MemoryResult};
pub use records::{AgentState, Intention, IntentionStatus, Message, OutboxItem};
pub use schema::current_version as schema_version;
pub use search::{MAX_QUERY_WORDS, Reach, SearchDomain, SearchHit, SearchQuery};
pub use store::{MemoryStore, Reader};
