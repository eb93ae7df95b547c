//! partner's durable state: one SQLite database per constellation, or a
//! PostgreSQL database shared by a team's daemons.
//!
//! - [`memory`]: the store itself (versioned blocks, archival entries,
//!   conversations, intentions, the outbox, agent state, vectors, learned
//!   phrasings, the schema and its migrations) and FTS5 search over it;
//! - [`postgres`]: the memory operations on PostgreSQL ([`postgres::PgStore`]),
//!   for a team's daemons sharing one database: the same
//!   [`memory::backend::Memory`] interface as the SQLite store;
//! - [`trace`]: the execution trace kept in the same database (written in
//!   the same transaction as the effect it records), and its JSON-lines
//!   export and import.
//!
//! It may import `partner-core` and `partner-dialect` (a trace record
//! names its action's verb) and nothing else of partner's: what runs
//! actions, decides them or shows them is above it.

pub mod memory;
pub mod postgres;
pub mod trace;
