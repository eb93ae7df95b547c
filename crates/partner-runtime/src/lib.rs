//! Agents that run: the constellation config, model providers, the prompt
//! builder, the two-pass turn, the runtime with its pulse scheduler, the
//! event stream, and the built-in demo.
//!
//! ```text
//! partner.toml ─► ConstellationConfig ─► runtime::start ─► RuntimeHandle
//!                                         │   (one tokio task)
//!   message / pulse / decision ─► Trigger ─► turn::run_turn
//!        prompt ─► Provider::stream ─► tokens ─► reply ─► dialect ─► Executor
//!        └── continuation passes with [Action Results] while results matter
//!   everything ─► Event (broadcast) ─► console, headless JSON lines
//! ```
//!
//! This crate names the crates below it (core, dialect, store, policy,
//! engine) and the protocol, whose `Event` and `RunState` it sends; nothing
//! above it: the daemon and the console watch the runtime through its
//! handle and events.

pub mod config;
pub mod demo;
pub mod mcp;
/// The event stream's type, which the protocol defines.
pub use partner_protocol::event as events;
pub mod prompt;
pub mod proposals;
pub mod provider;
pub mod runtime;
pub mod settings;
pub mod tools;
pub mod turn;

pub use config::{AgentConfig, AgentRole, ConfigError, ConsoleConfig, ConstellationConfig};
pub use demo::{DEMO_OPENING, demo_config};
pub use events::Event;
pub use runtime::{
    AgentStatus, LEASE_RENEW, LEASE_TTL, Leasing, Receipt, RunState, RuntimeHandle,
    approval_request_message, start, start_leased, start_watched,
};
pub use settings::ModelSettings;
pub use turn::{AgentInfo, Trigger, TurnEnv, TurnOutcome};
