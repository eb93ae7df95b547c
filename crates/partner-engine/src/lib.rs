//! The engine that carries out what was decided:
//!
//! - [`exec`]: the executor — the verb registry and one handler per verb
//!   (each owning its state), the commit of an action with its trace
//!   record, the partner's own commands, tools, replay verification;
//! - [`embed`]: embedders (a local Model2Vec model, an OpenAI-compatible
//!   server) and search by meaning over a constellation's memory;
//! - [`store`]: the store a constellation runs on, SQLite or PostgreSQL;
//! - [`net`]: HTTP — shared clients, bounded bodies, retry waits, fetches
//!   that reach only public addresses.
//!
//! It may import `partner-core`, `partner-dialect`, `partner-store`,
//! `partner-policy`, `partner-gate`, `partner-lisp` and the protocol
//! (whose `ActionReport` and `Event` it makes), and nothing above it:
//! agents, the daemon and the console use the engine, never the reverse.

pub mod embed;
pub mod exec;
pub mod net;
pub mod store;
