//! The executor: gives parsed actions real effects. Every action is
//! resolved against its context, checked by the permission engine, then
//! run, refused or queued as a durable pending request; every final outcome
//! leaves one trace record.

mod config;
mod context;
mod executor;
mod handlers;
pub mod replay;
mod report;
pub mod when;

pub use config::{ExecConfig, FetchConfig, WebConfig};
pub use context::{TurnContext, resolve};
pub use executor::{DecidedRequest, ExecError, Executor, TIMEOUT_SWEEP, open_store};
pub use report::{ActionReport, ActionStatus, TurnReport};
