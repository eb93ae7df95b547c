//! The executor: gives parsed actions real effects. Every action is
//! resolved against its context, checked by the permission engine, then
//! run, refused or queued as a durable pending request; every final outcome
//! leaves one trace record.

mod again;
mod authority;
mod claim;
mod commit;
mod config;
mod context;
mod decide;
pub mod difference;
mod executor;
mod handlers;
mod own_command;
mod partner;
mod quorum;
pub mod registry;
pub mod replay;
mod settled;

mod submit;
pub mod tools;
pub mod when;

pub use config::{ExecConfig, FetchConfig, ShellConfig, WebConfig};
pub use context::{TurnContext, fenced, resolve};
pub use decide::DecidedRequest;
pub use executor::{ExecError, Executor, TIMEOUT_SWEEP, open_store};
pub use own_command::PARTNER;
pub use partner_protocol::report::{ActionInfo, ActionReport, ActionStatus, TurnReport};
