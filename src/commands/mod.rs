//! The subcommands of the `partner` binary, as library functions so they
//! can be tested without a process. Their option structs derive
//! `clap::Args`; `main.rs` only assembles them into the command line.

mod attach;
mod common;
mod eval;
mod exec;
mod gate;
mod grammar;
mod lisp;
mod mcp;
mod mcp_serve;
mod memory;
mod memory_print;
mod models;
mod parse;
mod partners;
mod pending;
mod run;
mod serve;
mod store;
mod team;
mod trace;
mod unattended;

pub use attach::{AttachOptions, partner_token, run_attach};
pub use common::{DbArg, load_policy, open_executor};
pub use eval::{EvalOptions, run_eval};
pub use exec::{ExecOptions, run_exec};
pub use gate::{GateCommand, GateOptions, run_gate};
pub use grammar::{GrammarCommand, GrammarOptions, run_grammar};
pub use lisp::{LispCommand, LispOptions, run_lisp};
pub use mcp::{McpCommand, McpOptions, run_mcp};
pub use mcp_serve::{McpServeOptions, run_mcp_serve};
pub use memory::{KindArg, MemoryCommand, MemoryOptions, PermissionArg, run_memory};
pub use models::{ModelsCommand, ModelsOptions, run_models};
pub use parse::{ParseOptions, parser_for, run_parse};
pub use partners::{PartnersCommand, PartnersOptions, run_partners};
pub use pending::{PendingCommand, PendingOptions, run_pending};
pub use run::{
    RunOptions, data_dir, database_for, load_constellation, open_constellation, run_run,
};
pub use serve::{
    MsgOptions, ServeOptions, StatusOptions, daemon_for, run_msg, run_serve, run_status,
};
pub use store::{StoreCommand, StoreOptions, run_store};
pub use trace::{
    ReplayOptions, TraceExportOptions, TraceShowOptions, TraceSourceArgs, run_replay,
    run_trace_export, run_trace_show,
};
pub use unattended::describe;
