//! [`Executor`]: runs agents' actions against one constellation's database.
//! The work is split by responsibility: `submit` (turns, chains, batches,
//! the permission check), `commit` (the one-transaction commit protocol),
//! `decide` (decisions and timeouts), `authority` (the authority verbs),
//! `partner` (the partner's own edits) and `replay` (redoing a trace).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use partner_dialect::ParsedAction;
use partner_store::memory::roster::Roster;

use super::config::ExecConfig;
use super::handlers::{CalcState, FetchPages};
use super::registry::{Registry, RegistryError};
use super::tools::ToolShelf;
use crate::embed::{Found, Recall};
use crate::store::{Store, StoreAt};
use partner_core::clock::{Millis, SharedClock, system_clock};
use partner_dialect::{BlockRegistry, DialectParser, VerbTable};
use partner_policy::{PermissionEngine, Policy};
use partner_store::memory::{MemoryError, MemoryResult, MemoryStore, SearchQuery};
use partner_store::trace::{TraceRecord, TraceWarning, store as trace_store};

/// Something the executor could not do for the partner (as opposed to an
/// agent's action failing, which is reported to the agent).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The database failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// No request with that id.
    #[error("there is no request {0}")]
    NoRequest(String),
    /// The request was already decided.
    #[error("request {id} is already {status}")]
    NotWaiting {
        /// The request.
        id: String,
        /// Its status.
        status: String,
    },
    /// Someone other than the authority it waits on tried to decide it.
    #[error("request {id} waits on {waiting_on}, not {by}")]
    NotYours {
        /// The request.
        id: String,
        /// Who tried.
        by: String,
        /// Who it waits on.
        waiting_on: String,
    },
    /// A partner tried to decide a request the policy gives to others (or
    /// to several partners, each under their own name).
    #[error("{by} may not decide {id}: {why}")]
    NotDecider {
        /// The request.
        id: String,
        /// Who tried.
        by: String,
        /// Who may, in words.
        why: String,
    },
    /// An agent tried to decide a request it made, or one made on its behalf.
    #[error("{by} may not decide {id}: it made the request or it was made on its behalf")]
    OwnRequest {
        /// The request.
        id: String,
        /// Who tried.
        by: String,
    },
    /// partner or the machine failed (a busy database, a bug); a decision
    /// that met it was not recorded.
    #[error("partner could not do this because of a problem on its side: {0}")]
    System(String),
    /// Escalation past the last authority.
    #[error("request {0} already waits on its last authority")]
    LastAuthority(String),
    /// A partner edit was refused (over the limit, no such block…).
    #[error("{0}")]
    Refused(String),
}

impl From<rusqlite::Error> for ExecError {
    fn from(e: rusqlite::Error) -> Self {
        ExecError::Memory(e.into())
    }
}

/// Runs actions against one constellation's database.
#[derive(Debug)]
pub struct Executor {
    pub(super) store: Arc<Store>,
    pub(super) engine: PermissionEngine,
    pub(super) clock: SharedClock,
    pub(super) config: ExecConfig,
    pub(super) registry: Registry,
    pub(super) pages: FetchPages,
    pub(super) calc: CalcState,
    pub(super) tools: ToolShelf,
    pub(super) recall: Option<Arc<Recall>>,
    /// The constellation's MCP servers, when this process runs them.
    pub(super) mcp: Option<Arc<partner_mcp::McpHub>>,
    /// Whether what it does is appended to its store's trace (replay's
    /// scratch executor compares each result with its record and keeps
    /// none).
    pub(super) keeps_trace: bool,
}

impl Executor {
    /// Opens the database at `db` with a policy (a trace file an older
    /// partner kept beside it is imported into the database first).
    pub fn open(db: &Path, policy: Policy, config: ExecConfig) -> Result<Self, ExecError> {
        let store = open_store(db)?;
        Self::with_parts(Arc::new(store.into()), policy, config, system_clock())
    }

    /// Opens the store at `at` (a SQLite file or a PostgreSQL database)
    /// with a policy.
    pub fn open_at(at: &StoreAt, policy: Policy, config: ExecConfig) -> Result<Self, ExecError> {
        let store = Store::open(at)?;
        Self::with_parts(Arc::new(store), policy, config, system_clock())
    }

    /// An executor from its parts (tests use a manual clock; replay an
    /// in-memory store). The constellation's own verbs, kept in the
    /// database by whoever set them, are loaded.
    pub fn with_parts(
        store: Arc<Store>,
        policy: Policy,
        config: ExecConfig,
        clock: SharedClock,
    ) -> Result<Self, ExecError> {
        // The constellation's roster lives in the database, for every process.
        store.transaction(|tx| -> MemoryResult<()> {
            for agent in &config.agents {
                tx.ensure_agent(agent, clock.now_ms())?;
            }
            Ok(())
        })?;
        let registry = match store.read(|tx| tx.meta(VERBS_KEY))? {
            Some(toml) if !toml.is_empty() => {
                let mut table = VerbTable::builtin();
                table
                    .extend_from_toml(&toml)
                    .map_err(|e| ExecError::Refused(format!("the database's verbs: {e}")))?;
                Registry::new(table)
                    .map_err(|e| ExecError::Refused(format!("the database's verbs: {e}")))?
            }
            _ => Registry::builtin(),
        };
        Ok(Executor {
            store,
            engine: PermissionEngine::new(policy),
            clock,
            config: config.clone(),
            registry,
            pages: FetchPages::default(),
            calc: CalcState::default(),
            tools: ToolShelf::new(config.tools.clone()),
            recall: Recall::new(&config.embeddings).map(Arc::new),
            mcp: None,
            keeps_trace: true,
        })
    }

    /// Uses a verb table with extensions (verbs and aliases from a verb
    /// file): every verb is bound to its handler, and parsing, checking,
    /// running, deciding and replaying all use it.
    /// They are kept in the database, so every other process on it (a
    /// `partner pending approve` from another shell, a replay) knows them.
    pub fn set_verbs(&mut self, table: VerbTable) -> Result<(), ExecError> {
        let extensions = table.extensions_toml();
        self.use_verbs(table)?;
        self.store
            .transaction(|tx| tx.set_meta(VERBS_KEY, Some(&extensions)))?;
        Ok(())
    }

    /// Uses a verb table for this executor only (not kept in the database).
    pub fn use_verbs(&mut self, table: VerbTable) -> Result<(), ExecError> {
        self.registry =
            Registry::new(table).map_err(|e: RegistryError| ExecError::Refused(e.to_string()))?;
        Ok(())
    }

    /// Adds a verb defined in code, with its argument shape and handler,
    /// for this executor (see [`Registry::add_verb`]).
    pub fn add_verb(
        &mut self,
        spec: partner_dialect::VerbSpec,
        handler: Arc<dyn super::registry::VerbHandler>,
    ) -> Result<(), ExecError> {
        self.registry
            .add_verb(spec, handler)
            .map_err(|e| ExecError::Refused(e.to_string()))
    }

    /// Takes `hub`'s tools as verbs (`server.tool`, kept with the other
    /// verbs in the database so that every process reads them) and calls
    /// them through it. Says which tools could not be verbs, and why.
    pub fn attach_mcp(&mut self, hub: Arc<partner_mcp::McpHub>) -> Result<Vec<String>, ExecError> {
        let mut table = VerbTable::clone(self.registry.table());
        let mut skipped = Vec::new();
        let mut added = Vec::new();
        for tool in hub.tools() {
            let spec = partner_dialect::VerbSpec {
                verb: partner_dialect::Verb::Custom(tool.verb.clone()),
                strictness: partner_dialect::Strictness::Strict,
                everyday: true,
                aliases: Vec::new(),
                summary: tool.summary(160),
                shape: partner_dialect::Shape(&partner_dialect::args::TEXT),
                action: Some(partner_dialect::CustomAction::Mcp {
                    server: tool.server.clone(),
                    tool: tool.name.clone(),
                }),
            };
            match table.add(spec) {
                Ok(()) => added.push(tool),
                Err(e) => skipped.push(format!("{}: {e}", tool.verb)),
            }
        }
        self.set_verbs(table)?;
        for tool in added {
            self.registry
                .set_handler(&tool.verb.clone(), super::handlers::mcp_tool(tool));
        }
        self.mcp = Some(hub);
        Ok(skipped)
    }

    /// The MCP servers this process runs, if any.
    pub fn mcp(&self) -> Option<&Arc<partner_mcp::McpHub>> {
        self.mcp.as_ref()
    }

    /// What every verb means.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The store the constellation runs on.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, shared.
    pub fn shared_store(&self) -> Arc<Store> {
        Arc::clone(&self.store)
    }

    /// The permission engine.
    pub fn engine(&self) -> &PermissionEngine {
        &self.engine
    }

    /// The configuration.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    /// Every trace record, oldest first, and those that could not be read.
    pub fn trace(&self) -> Result<(Vec<TraceRecord>, Vec<TraceWarning>), ExecError> {
        match &*self.store {
            Store::Sqlite(store) => Ok(trace_store::all(&store.read())?),
            Store::Postgres(_) => Ok((self.store.read(|tx| tx.all_records())?, Vec::new())),
        }
    }

    /// The constellation's Pattern Lisp tools.
    pub fn tools(&self) -> &ToolShelf {
        &self.tools
    }

    /// Search by meaning, when an embedder is configured.
    pub fn recall(&self) -> Option<&Arc<Recall>> {
        self.recall.as_ref()
    }

    /// Uses `recall` for memory search (tests and benchmarks give an
    /// embedder they made).
    pub fn set_recall(&mut self, recall: Recall) {
        self.recall = Some(Arc::new(recall));
    }

    /// Searches memory as the constellation is configured to: by meaning
    /// and keyword with an embedder, by keyword without. Reads beside the
    /// writer, so a search never holds the write lock while a query is
    /// embedded.
    pub fn search_memory(&self, query: &SearchQuery) -> Result<Found, MemoryError> {
        crate::embed::recall::search(&self.store, self.recall.as_deref(), query)
    }

    /// Embeds what memory gains, on a thread of its own, for as long as
    /// the executor lives (one thread however often it is asked). Nothing
    /// to do without an embedder.
    pub fn index_in_background(self: &Arc<Self>) {
        let Some(recall) = &self.recall else {
            return;
        };
        if recall.start_indexing() {
            let exec = Arc::downgrade(self);
            let spawned = std::thread::Builder::new()
                .name("partner-index".into())
                .spawn(move || background_index(exec));
            if spawned.is_err() {
                recall.stop_indexing();
            }
        }
    }

    pub(crate) fn fetch_pages(&self) -> &FetchPages {
        &self.pages
    }

    pub(crate) fn calc_state(&self) -> &CalcState {
        &self.calc
    }

    /// The executor's clock, now (what its records and the rows written
    /// beside them are stamped with).
    pub fn now(&self) -> Millis {
        self.clock.now_ms()
    }

    /// Every agent of the constellation: configured ones and those the
    /// database knows, sorted.
    pub fn agents(&self, store: &dyn Roster) -> Vec<String> {
        let mut agents = self.config.agents.clone();
        agents.extend(store.agent_names().unwrap_or_default());
        agents.sort();
        agents.dedup();
        agents
    }

    /// A parser that knows `agent`'s block labels (core and working blocks
    /// count as working memory).
    pub fn parser_for(&self, agent: &str) -> DialectParser {
        let mut registry = BlockRegistry::new();
        match self.store.read(|tx| tx.labels(agent)) {
            Ok(labels) => {
                for (label, working) in labels {
                    registry.add(label, working);
                }
            }
            // The parser then knows none of the agent's block names: said,
            // so an action it misreads is not a mystery.
            Err(e) => tracing::warn!(%agent, error = %e, "could not read the agent's block labels"),
        }
        DialectParser::with_shared_table(self.registry.shared_table()).with_blocks(registry)
    }

    /// A waiting request's action, parsed again from its canonical form
    /// as its agent's parser reads it.
    pub fn request_action(&self, request: &partner_policy::PendingRequest) -> Option<ParsedAction> {
        self.parser_for(&request.agent)
            .parse(&request.canonical)
            .actions
            .into_iter()
            .next()
    }

    /// What a waiting request asks, field by field, when its handler
    /// says more than the action line (a tool call, a question).
    pub fn request_fields(
        &self,
        request: &partner_policy::PendingRequest,
    ) -> Vec<(String, String)> {
        self.request_action(request)
            .and_then(|action| Some(self.registry.handler(&action.verb)?.fields(self, &action)))
            .unwrap_or_default()
    }

    /// The command line a waiting request would run, when its verb runs
    /// one (its handler says).
    pub fn request_command(&self, request: &partner_policy::PendingRequest) -> Option<String> {
        let action = self.request_action(request)?;
        let handler = self.registry.handler(&action.verb)?;
        handler.command(&action).map(str::to_string)
    }
}

/// Opens a constellation's database, importing the trace file an older
/// partner kept beside it (once).
pub fn open_store(db: &Path) -> MemoryResult<MemoryStore> {
    let store = MemoryStore::open(db)?;
    trace_store::import_legacy(&mut store.conn(), db)?;
    Ok(store)
}

/// Embeds in batches while items wait, checks again every second when
/// none do, and waits longer (up to a minute) while the embedder fails.
fn background_index(exec: std::sync::Weak<Executor>) {
    let mut backoff = Duration::from_secs(1);
    loop {
        let pause = {
            let Some(exec) = exec.upgrade() else {
                return;
            };
            let Some(recall) = exec.recall() else {
                return;
            };
            match recall.catch_up(&exec.store, crate::embed::MAX_BATCH) {
                Ok(0) => Duration::from_secs(1),
                Ok(_) => {
                    backoff = Duration::from_secs(1);
                    Duration::ZERO
                }
                Err(_) => {
                    backoff = (backoff * 2).min(Duration::from_secs(60));
                    backoff
                }
            }
        };
        // Sleep in short steps, so a dropped executor ends the thread soon.
        let until = std::time::Instant::now() + pause;
        while std::time::Instant::now() < until {
            if exec.strong_count() == 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(100).min(pause));
        }
    }
}

/// The `meta` key under which the constellation's own verbs are kept.
const VERBS_KEY: &str = "verbs";

/// How long to wait between timeout sweeps, for runtimes that poll.
pub const TIMEOUT_SWEEP: Duration = Duration::from_secs(30);
