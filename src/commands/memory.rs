//! `partner memory`: list, show, set, history, undo and search memory blocks.

use std::io::{Read, Write};

use serde::Serialize;

use super::common::{DbArg, embeddings, line, open_executor, text_arg, write_json};
use crate::error::{Error, Result};
use crate::protocol::Op;
use crate::store::memory::search::SearchQuery;
use crate::store::memory::{Block, BlockKind, BlockPermission, DEFAULT_CHAR_LIMIT};
use crate::store::trace::BlockSpec;
use partner_engine::store::StoreAt;

/// Options of `partner memory`.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryOptions {
    #[command(flatten)]
    /// The database.
    pub db: DbArg,
    /// Print JSON (listings print one array of objects).
    #[arg(long, global = true)]
    pub json: bool,
    /// The constellation config whose `[embeddings]` search and reindex
    /// use (default: ./partner.toml if present; without one, search is by
    /// keyword).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
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
    /// Search blocks, archival memory and conversations: by keyword, and by
    /// meaning when `[embeddings]` names an embedder. Each hit says which
    /// side found it (`fts`, `vector`, `both`) and its fused score.
    Search {
        /// What to look for.
        query: String,
        /// Only this agent's memory.
        #[arg(long)]
        agent: Option<String>,
    },
    /// Recall@k of a relevance set (memories, and questions with the
    /// memories that answer them) by keyword, and by keyword and meaning
    /// with the configured embedder.
    Relevance {
        /// The set (default: the one partner comes with,
        /// `data/relevance.json`).
        #[arg(long, value_name = "FILE")]
        set: Option<std::path::PathBuf>,
        /// How many hits count.
        #[arg(long, default_value_t = 5)]
        k: usize,
    },
    /// Embed everything that has no vector from the configured embedder
    /// yet (what a running constellation does in the background), showing
    /// progress.
    Reindex {
        /// Forget this embedder's vectors first and embed everything again
        /// (a model replaced under the same name).
        #[arg(long)]
        all: bool,
    },
}

/// A block as listed for scripts.
#[derive(Serialize)]
pub(super) struct BlockRow<'a> {
    agent: &'a str,
    label: &'a str,
    kind: BlockKind,
    permission: BlockPermission,
    chars: usize,
    limit: usize,
    version: i64,
    value: &'a str,
}

pub(super) fn row(block: &Block) -> BlockRow<'_> {
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
    // The relevance set has a database of its own, in memory.
    if let MemoryCommand::Relevance { set, k } = &options.command {
        return relevance(options, set.as_deref(), *k, out);
    }
    // Setting a block may start a database; everything else reads one.
    let db = if matches!(options.command, MemoryCommand::Set { .. }) {
        options.db.store_at()?
    } else {
        options.db.existing_at()?
    };
    let mut executor = open_executor(&db, None, &[])?;
    if matches!(
        options.command,
        MemoryCommand::Search { .. } | MemoryCommand::Reindex { .. }
    ) && let Some(recall) =
        crate::engine::embed::Recall::new(&embeddings(options.config.as_deref())?)
    {
        executor.set_recall(recall);
    }
    let ex = &executor;
    match &options.command {
        MemoryCommand::List { agent } => {
            let list = ex.store().read(|tx| tx.blocks(agent.as_deref()))?;
            super::memory_print::list(out, &list, options.json)?;
        }
        MemoryCommand::Show { agent, label } => {
            let block = ex
                .store()
                .read(|tx| tx.block(agent, label))?
                .ok_or_else(|| Error::Runtime(format!("no block '{label}' for agent {agent}")))?;
            super::memory_print::show(out, &block, options.json)?;
        }
        MemoryCommand::Set { .. } => return set(options, &db, ex, stdin, out),
        MemoryCommand::History { agent, label } => {
            let history = ex.store().read(|tx| tx.history(agent, label))?;
            super::memory_print::history(out, label, &history, options.json)?;
        }
        MemoryCommand::Undo { agent, label } => {
            let undo = Op::UndoBlock {
                agent: agent.clone(),
                label: label.clone(),
            };
            if let Some(message) = through_daemon(&db, undo)? {
                return said(out, options.json, &message);
            }
            let report = ex.partner_undo(agent, label, &crate::policy::Authority::Partner)?;
            line(out, &report.text)?;
        }
        MemoryCommand::Search { query, agent } => {
            embed_what_waits(ex);
            let found = ex.search_memory(&SearchQuery::new(query, agent.as_deref()))?;
            if let Some(note) = &found.note {
                eprintln!("note: {note}");
            }
            super::memory_print::found(out, query, &found.hits, options.json)?;
        }
        // Measured above, before any database is opened.
        MemoryCommand::Relevance { .. } => {}
        MemoryCommand::Reindex { all } => {
            return reindex(ex, *all, options.json, out);
        }
    }
    Ok(0)
}

/// `memory set`: the block written through the daemon when one runs the
/// database, else here.
fn set(
    options: &MemoryOptions,
    db: &StoreAt,
    executor: &crate::engine::exec::Executor,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
) -> Result<i32> {
    let MemoryCommand::Set {
        agent,
        label,
        value,
        kind: k,
        permission: p,
        limit,
        description,
        shared,
    } = &options.command
    else {
        return Ok(0);
    };
    let value = text_arg(value, stdin)?;
    let block = BlockSpec {
        agent: agent.clone(),
        label: label.clone(),
        kind: kind(*k),
        permission: permission(*p),
        char_limit: *limit,
        description: description.clone(),
        value,
        shared: *shared,
    };
    if let Some(message) = through_daemon(
        db,
        Op::SetBlock {
            block: block.clone(),
        },
    )? {
        return said(out, options.json, &message);
    }
    let report = executor.partner_set_block(block, &crate::policy::Authority::Partner)?;
    if options.json {
        write_json(out, &report)?;
    } else {
        line(out, &report.text)?;
    }
    Ok(0)
}

/// Does `op` through the daemon running `db`, when one does: what it
/// said (`None`: no daemon; do it here).
fn through_daemon(db: &StoreAt, op: Op) -> Result<Option<String>> {
    match super::serve::daemon_for_store(db)? {
        Some(mut daemon) => daemon
            .request(op)
            .map(|(message, _)| Some(message))
            .map_err(|e| Error::Runtime(e.to_string())),
        None => Ok(None),
    }
}

/// Prints what the daemon said.
fn said(out: &mut dyn Write, json: bool, message: &str) -> Result<i32> {
    if json {
        write_json(
            out,
            &serde_json::json!({"by": "daemon", "message": message}),
        )?;
    } else {
        line(out, message)?;
    }
    Ok(0)
}

/// Largest relevance set file read.
const MAX_SET_BYTES: u64 = 64 << 20;

/// `partner memory relevance`.
fn relevance(
    options: &MemoryOptions,
    set: Option<&std::path::Path>,
    k: usize,
    out: &mut dyn Write,
) -> Result<i32> {
    use crate::engine::embed::relevance::{BUILTIN_SET, RelevanceSet, evaluate};
    let text = match set {
        Some(path) => {
            let read = |source| Error::Read {
                path: path.to_path_buf(),
                source,
            };
            let len = std::fs::metadata(path).map_err(read)?.len();
            if len > MAX_SET_BYTES {
                return Err(Error::Usage(format!(
                    "{}: {len} bytes; a relevance set is at most {MAX_SET_BYTES}",
                    path.display()
                )));
            }
            std::fs::read_to_string(path).map_err(read)?
        }
        None => BUILTIN_SET.to_string(),
    };
    let set = RelevanceSet::parse(&text).map_err(Error::Usage)?;
    let embedder = crate::engine::embed::open(&embeddings(options.config.as_deref())?)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let report = evaluate(&set, embedder, k).map_err(|e| Error::Usage(e.to_string()))?;
    if options.json {
        write_json(out, &report)?;
        return Ok(0);
    }
    line(
        out,
        format!(
            "{} questions over {} memories: recall@1, recall@{}",
            report.questions.len(),
            report.memories,
            report.k
        ),
    )?;
    let figure = |x: Option<f64>| x.map_or("-    ".to_string(), |x| format!("{x:.3}"));
    line(
        out,
        format!(
            "  keyword (FTS5)      {}  {:.3}",
            figure(report.at1[0]),
            report.keyword
        ),
    )?;
    match &report.hybrid {
        Some((id, recall)) => {
            line(
                out,
                format!(
                    "  hybrid              {}  {recall:.3}  ({id})",
                    figure(report.at1[1])
                ),
            )?;
            line(
                out,
                format!(
                    "  meaning alone       {}  {}",
                    figure(report.at1[2]),
                    figure(report.vector)
                ),
            )?;
        }
        None => line(
            out,
            "  hybrid              -      -      (no [embeddings] configured)",
        )?,
    }
    Ok(0)
}

/// A reindex's progress line: what is done of all, the rate since it
/// started and the time left at that rate.
fn progress(
    embedded: usize,
    elapsed: std::time::Duration,
    status: &crate::engine::embed::IndexStatus,
) -> String {
    let rate = embedded as f64 / elapsed.as_secs_f64().max(0.001);
    let left = if rate > 0.0 {
        let secs = (status.waiting as f64 / rate).ceil() as u64;
        format!(
            "about {} left",
            humantime::format_duration(std::time::Duration::from_secs(secs))
        )
    } else {
        "time left unknown".into()
    };
    format!(
        "embedded {embedded}: {}/{} items, {rate:.0} items/s, {left}",
        status.done,
        status.done + status.waiting
    )
}

/// Longest a search from the command line spends embedding what has no
/// vector yet before it searches (what is left is found by keyword only,
/// and the search says so).
const EMBED_BEFORE_SEARCH: std::time::Duration = std::time::Duration::from_secs(30);

/// Embeds what waits for a vector from the configured embedder, within
/// [`EMBED_BEFORE_SEARCH`], saying so on standard error when there is any.
fn embed_what_waits(executor: &crate::engine::exec::Executor) {
    let Some(recall) = executor.recall() else {
        return;
    };
    let store = executor.store();
    let started = std::time::Instant::now();
    let mut embedded = 0usize;
    while started.elapsed() < EMBED_BEFORE_SEARCH {
        match recall.catch_up(store, crate::engine::embed::MAX_BATCH) {
            Ok(0) | Err(_) => break,
            Ok(n) => embedded += n,
        }
    }
    if embedded > 0 {
        eprintln!("embedded {embedded} item(s) that had no vector yet");
    }
}

/// `partner memory reindex`: embeds in batches until nothing waits,
/// telling progress about once a second.
fn reindex(
    executor: &crate::engine::exec::Executor,
    all: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32> {
    let Some(recall) = executor.recall() else {
        return Err(Error::Usage(
            "no embedder is configured: `partner models fetch` gets the default model, or set [embeddings] in partner.toml (kind = \"transformer\", \"model2vec\" or \"provider\")".into(),
        ));
    };
    let store = executor.store();
    if all {
        let forgotten = recall
            .forget(store)
            .map_err(|e| Error::Usage(e.to_string()))?;
        if !json {
            line(out, format!("forgot {forgotten} vectors"))?;
        }
    }
    let started = std::time::Instant::now();
    let mut told = started;
    let mut embedded = 0usize;
    loop {
        match recall.catch_up(store, crate::engine::embed::MAX_BATCH) {
            Ok(0) => break,
            Ok(n) => embedded += n,
            Err(e) => {
                let status = recall.status();
                line(
                    out,
                    format!(
                        "error: {e}; {} items have a vector, {} wait (run again when the embedder is back)",
                        status.done, status.waiting
                    ),
                )?;
                return Ok(1);
            }
        }
        if !json && told.elapsed() >= std::time::Duration::from_secs(1) {
            told = std::time::Instant::now();
            line(out, progress(embedded, started.elapsed(), &recall.status()))?;
        }
    }
    let status = recall.status();
    let seconds = started.elapsed().as_secs_f64();
    if json {
        write_json(
            out,
            &serde_json::json!({
                "embedder": status.embedder,
                "embedded": embedded,
                "done": status.done,
                "waiting": status.waiting,
                "seconds": seconds,
            }),
        )?;
    } else {
        line(
            out,
            format!(
                "embedded {embedded} items in {seconds:.1}s with {}; {} of {} items have a vector",
                status.embedder,
                status.done,
                status.done + status.waiting
            ),
        )?;
    }
    Ok(0)
}
