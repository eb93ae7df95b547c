//! `partner memory`: list, show, set, history, undo and search memory blocks.

use std::io::{Read, Write};

use serde::Serialize;

use super::common::{DbArg, line, open_executor, text_arg, write_json};
use crate::clock::format_time;
use crate::error::{Error, Result};
use crate::memory::search::{SearchQuery, search};
use crate::memory::{Block, BlockKind, BlockPermission, DEFAULT_CHAR_LIMIT, blocks};
use crate::trace::BlockSpec;

/// Options of `partner memory`.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryOptions {
    #[command(flatten)]
    /// The database.
    pub db: DbArg,
    /// Print JSON (listings print one array of objects).
    #[arg(long, global = true)]
    pub json: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: MemoryCommand,
}

/// Block kinds on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum KindArg {
    /// Always in the prompt.
    Core,
    /// Working memory.
    Working,
    /// Long-term memory.
    Archival,
}

/// Block permissions on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum PermissionArg {
    /// Nobody writes it.
    ReadOnly,
    /// Writes need the partner.
    Partner,
    /// Writes need the human.
    Human,
    /// Appends only.
    Append,
    /// Reads and writes.
    ReadWrite,
    /// Everything.
    Admin,
}

/// `partner memory` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum MemoryCommand {
    /// List blocks (of one agent, or all).
    List {
        /// Only this agent's blocks.
        #[arg(long)]
        agent: Option<String>,
    },
    /// Show one block.
    Show {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
    },
    /// Create a block, or write a new version of it (as the partner).
    Set {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
        /// The value, or `-` for standard input.
        value: String,
        /// Kind of a new block.
        #[arg(long, value_enum, default_value = "working")]
        kind: KindArg,
        /// Permission of a new block.
        #[arg(long, value_enum, default_value = "read-write")]
        permission: PermissionArg,
        /// Character limit of a new block.
        #[arg(long, default_value_t = DEFAULT_CHAR_LIMIT)]
        limit: usize,
        /// Description of a new block.
        #[arg(long, default_value = "")]
        description: String,
        /// Let other agents read the new block (constellation search, where
        /// the policy allows shared blocks).
        #[arg(long)]
        shared: bool,
    },
    /// Show a block's versions, with a diff between each.
    History {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
    },
    /// Go back to a block's previous version.
    Undo {
        /// The agent.
        agent: String,
        /// The label.
        label: String,
    },
    /// Full-text search over blocks, archival memory and conversations.
    Search {
        /// What to look for.
        query: String,
        /// Only this agent's memory.
        #[arg(long)]
        agent: Option<String>,
    },
}

/// A block as listed for scripts.
#[derive(Serialize)]
struct BlockRow<'a> {
    agent: &'a str,
    label: &'a str,
    kind: BlockKind,
    permission: BlockPermission,
    chars: usize,
    limit: usize,
    version: i64,
    value: &'a str,
}

fn row(block: &Block) -> BlockRow<'_> {
    BlockRow {
        agent: &block.agent,
        label: &block.label,
        kind: block.kind,
        permission: block.permission,
        chars: block.chars(),
        limit: block.char_limit,
        version: block.version,
        value: &block.value,
    }
}

fn kind(k: KindArg) -> BlockKind {
    match k {
        KindArg::Core => BlockKind::Core,
        KindArg::Working => BlockKind::Working,
        KindArg::Archival => BlockKind::Archival,
    }
}

fn permission(p: PermissionArg) -> BlockPermission {
    match p {
        PermissionArg::ReadOnly => BlockPermission::ReadOnly,
        PermissionArg::Partner => BlockPermission::Partner,
        PermissionArg::Human => BlockPermission::Human,
        PermissionArg::Append => BlockPermission::Append,
        PermissionArg::ReadWrite => BlockPermission::ReadWrite,
        PermissionArg::Admin => BlockPermission::Admin,
    }
}

/// Runs `partner memory`.
pub fn run_memory(
    options: &MemoryOptions,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
) -> Result<i32> {
    let executor = open_executor(&options.db.path()?, None, &[])?;
    let conn_blocks = |agent: Option<&str>| -> Result<Vec<Block>> {
        Ok(blocks::list(&executor.store().conn(), agent)?)
    };
    match &options.command {
        MemoryCommand::List { agent } => {
            let list = conn_blocks(agent.as_deref())?;
            if options.json {
                write_json(out, &list.iter().map(row).collect::<Vec<_>>())?;
            } else {
                for b in &list {
                    line(
                        out,
                        format!(
                            "{}/{}  {}  {}  {}/{} chars  v{}",
                            b.agent,
                            b.label,
                            b.kind,
                            b.permission,
                            b.chars(),
                            b.char_limit,
                            b.version
                        ),
                    )?;
                }
            }
        }
        MemoryCommand::Show { agent, label } => {
            let block = blocks::get(&executor.store().conn(), agent, label)?
                .ok_or_else(|| Error::Runtime(format!("no block '{label}' for agent {agent}")))?;
            if options.json {
                write_json(out, &row(&block))?;
            } else {
                line(
                    out,
                    format!(
                        "{}/{} ({}, {}, v{}, {}/{} chars)",
                        block.agent,
                        block.label,
                        block.kind,
                        block.permission,
                        block.version,
                        block.chars(),
                        block.char_limit
                    ),
                )?;
                line(out, &block.value)?;
            }
        }
        MemoryCommand::Set {
            agent,
            label,
            value,
            kind: k,
            permission: p,
            limit,
            description,
            shared,
        } => {
            let value = text_arg(value, stdin)?;
            let report = executor.partner_set_block(BlockSpec {
                agent: agent.clone(),
                label: label.clone(),
                kind: kind(*k),
                permission: permission(*p),
                char_limit: *limit,
                description: description.clone(),
                value,
                shared: *shared,
            })?;
            if options.json {
                write_json(out, &report)?;
            } else {
                line(out, &report.text)?;
            }
        }
        MemoryCommand::History { agent, label } => {
            let history = blocks::history(&executor.store().conn(), agent, label)?;
            if options.json {
                write_json(out, &history)?;
            } else {
                let mut previous: Option<&crate::memory::BlockVersion> = None;
                for v in &history {
                    let what = if v.deleted { " (deleted)" } else { "" };
                    line(
                        out,
                        format!(
                            "v{} {} by {}{what}",
                            v.version,
                            format_time(v.changed_at),
                            v.changed_by
                        ),
                    )?;
                    if let Some(p) = previous {
                        let diff = blocks::diff(label, &p.value, &v.value, p.version, v.version);
                        for l in diff.lines().skip(2) {
                            line(out, format!("    {l}"))?;
                        }
                    }
                    previous = Some(v);
                }
            }
        }
        MemoryCommand::Undo { agent, label } => {
            let report = executor.partner_undo(agent, label)?;
            line(out, &report.text)?;
        }
        MemoryCommand::Search { query, agent } => {
            let hits = search(
                &executor.store().conn(),
                &SearchQuery::new(query, agent.as_deref()),
            )?;
            if options.json {
                write_json(out, &hits)?;
            } else if hits.is_empty() {
                line(out, format!("nothing found for \"{query}\""))?;
            } else {
                for h in &hits {
                    let place = h.label.clone().unwrap_or_else(|| format!("#{}", h.id));
                    let domain = format!("{:?}", h.domain).to_lowercase();
                    line(out, format!("{domain}  {}/{place}  {}", h.agent, h.snippet))?;
                }
            }
        }
    }
    Ok(0)
}
