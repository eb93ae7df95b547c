//! The verb registry: what each verb of the dialect *means*, in one place
//! per verb. The dialect's table says how a verb is written (names,
//! aliases, strictness, summary, argument signature); the registry binds
//! each of those verbs to a [`VerbHandler`] that says everything else —
//! where its work happens, what the permission engine must know about it,
//! what a memory write would look like, and how it runs. The parser, the
//! permission checks, the executor, the prompt builder and the console all
//! read it; none of them matches on verbs.
//!
//! A built-in verb is one [`VerbHandler`] in a family file under
//! `handlers/`, its arm in `handlers::of_builtin` (an exhaustive match, so
//! a verb without a handler does not compile) and its row in the
//! dialect's table, which names its argument shape. A verb defined in
//! code elsewhere is one [`Registry::add_verb`] call with its table entry
//! and handler. A verb added from a TOML verb file binds to a handler by
//! its `action` kind (`tell` an agent, `append` to a block).

use std::collections::HashMap;
use std::sync::Arc;

use super::context::TurnContext;
use super::executor::Executor;
use super::handlers;
use partner_core::clock::Millis;
use partner_dialect::{ParsedAction, Verb, VerbSpec, VerbTable};
use partner_policy::VerbTraits;
use partner_policy::rate::Buckets;
use partner_policy::requests::Requests;
use partner_store::memory::inbox::Inbox;
use partner_store::memory::roster::Roster;
use partner_store::memory::vectors::Searchable;
use partner_store::memory::{Block, MemoryChange, MemoryError};
use partner_store::trace::backend::Trace;

/// The key in an outcome's data that says this one outcome depended on
/// something the trace does not hold (a deadline, the machine's speed):
/// replay takes it from the record instead of redoing it.
pub const RECORDED_ONLY: &str = "recorded_only";

/// Where an action's work happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Inside the action's transaction: memory, messages, intentions.
    Store,
    /// Before the transaction, local and deterministic (calculations):
    /// redone on replay.
    Compute,
    /// Before the transaction, reaching outside partner (the web, data
    /// files): its result is recorded and replay reuses it.
    External,
    /// Deciding other requests: the executor's own work, recorded, and its
    /// result reused on replay.
    Authority,
    /// Not run itself: a `/batch` runs its members.
    Structure,
}

/// What a handler did.
#[derive(Debug, Clone, Default)]
pub struct Effect {
    /// For the model.
    pub text: String,
    /// For the console.
    pub data: serde_json::Value,
    /// The block changed, if any.
    pub memory: Option<MemoryChange>,
    /// The model should see this before going on.
    pub needs_continuation: bool,
}

impl Effect {
    /// An effect that is only text for the model.
    pub fn text(text: impl Into<String>) -> Self {
        Effect {
            text: text.into(),
            ..Effect::default()
        }
    }

    /// With structured data for the console.
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = data;
        self
    }

    /// The model should see it before going on.
    pub fn continued(mut self) -> Self {
        self.needs_continuation = true;
        self
    }
}

/// Why an action did not run, and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionError {
    /// The agent's mistake, or a refusal of what it asked: told to the
    /// model, traced as a failure, the same again on replay.
    Agent(String),
    /// The agent's, with data the trace keeps beside the message (what a
    /// replay needs to redo it: the tool that failed).
    AgentWith(String, serde_json::Value),
    /// partner's or the machine's trouble (a busy database, a full disk, a
    /// bug): not the model's mistake. The action may be retried, a decision
    /// stays pending, and the partner sees it.
    System(String),
}

impl ActionError {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            ActionError::Agent(m) | ActionError::AgentWith(m, _) | ActionError::System(m) => m,
        }
    }
}

impl From<String> for ActionError {
    fn from(message: String) -> Self {
        ActionError::Agent(message)
    }
}

impl From<&str> for ActionError {
    fn from(message: &str) -> Self {
        ActionError::Agent(message.to_string())
    }
}

impl From<MemoryError> for ActionError {
    /// A database failure is partner's; anything the store refused
    /// (a missing block, a block over its limit) is the agent's.
    fn from(e: MemoryError) -> Self {
        match e {
            MemoryError::Sqlite(_) | MemoryError::BadSchema(_) | MemoryError::Corrupt { .. } => {
                ActionError::System(e.to_string())
            }
            other => ActionError::Agent(other.to_string()),
        }
    }
}

impl From<rusqlite::Error> for ActionError {
    fn from(e: rusqlite::Error) -> Self {
        ActionError::System(MemoryError::from(e).to_string())
    }
}

/// A handler's result.
pub type Outcome = Result<Effect, ActionError>;

/// What an action's transaction offers its handler and the commit, on
/// either back end: memory, the runtime's records of its agents and
/// their inboxes, the trace, the queue and rate buckets, all on one
/// transaction.
pub trait ActionTx: Searchable + Roster + Inbox + Trace + Requests + Buckets {}

impl<T: Searchable + Roster + Inbox + Trace + Requests + Buckets + ?Sized> ActionTx for T {}

/// What a handler runs with.
pub struct Cx<'a> {
    /// The executor (configuration, services, the constellation's agents).
    pub exec: &'a Executor,
    /// The acting agent's situation.
    pub ctx: &'a TurnContext,
    /// The action's transaction, for [`Stage::Store`] handlers.
    pub tx: Option<&'a dyn ActionTx>,
    /// The time the action runs at.
    pub now: Millis,
    /// Set when the work should stop (the agent was halted): external
    /// effects watch it.
    pub cancel: Option<&'a Cancel>,
}

pub use crate::net::Cancel;

impl<'a> Cx<'a> {
    /// The action's transaction.
    pub fn tx(&self) -> Result<&'a dyn ActionTx, ActionError> {
        self.tx
            .ok_or_else(|| ActionError::System("this verb ran outside its transaction".into()))
    }
}

/// What one verb means.
pub trait VerbHandler: Send + Sync {
    /// Where the action's work happens.
    fn stage(&self, action: &ParsedAction) -> Stage;

    /// True when only agents with an authority role may use the verb.
    fn needs_role(&self) -> bool {
        false
    }

    /// True when a chain link without content of its own takes the
    /// previous link's output as its content.
    fn needs_content(&self) -> bool {
        false
    }

    /// What the permission engine must know about this action.
    fn traits(&self, action: &ParsedAction) -> VerbTraits;

    /// True when replay can redo the action and expect the same result;
    /// false when it must reuse the recorded one (the result depends on
    /// things the trace does not hold). A single outcome that depended on
    /// such things (a deadline) says so with [`RECORDED_ONLY`] in its data.
    fn reproducible(&self, action: &ParsedAction) -> bool {
        matches!(self.stage(action), Stage::Store | Stage::Compute)
    }

    /// The value a memory write would leave in `block` (for the console's
    /// diff preview), when the action writes one.
    fn preview(&self, _action: &ParsedAction, _block: &Block) -> Option<String> {
        None
    }

    /// Turns what the agent wrote into the action the partner will be
    /// asked about, before any check (a shell request in words becomes
    /// the command proposed for it). An error is told to the agent and
    /// nothing is asked.
    fn prepare(&self, _cx: &Executor, _action: &mut ParsedAction) -> Result<(), String> {
        Ok(())
    }

    /// Whether a pending request for `action` may be approved: an error
    /// says why not (a blocked shell command), and the request stays
    /// waiting.
    fn approvable(&self, _action: &ParsedAction) -> Result<(), String> {
        Ok(())
    }

    /// Does the work.
    fn run(&self, cx: &Cx<'_>, action: &ParsedAction) -> Outcome;

    /// Actions this one asks for once it has run, from its result's data
    /// (a tool's memory writes). Each is submitted as the same agent's own
    /// action: checked, and queued when it needs approval.
    fn follow_ups(&self, _action: &ParsedAction, _data: &serde_json::Value) -> Vec<ParsedAction> {
        Vec::new()
    }

    /// What the action asks, field by field (a label and its text,
    /// arguments pretty-printed), for the queue: a tool call's server,
    /// tool and arguments; a question's title, options and arguments.
    fn fields(&self, _exec: &Executor, _action: &ParsedAction) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The command line the action would run on this machine, when it
    /// runs one (`/shell`): the queue judges and sandboxes it.
    fn command<'a>(&self, _action: &'a ParsedAction) -> Option<&'a str> {
        None
    }

    /// True when a run of the verb is a flag the partner should see in
    /// the notifications (`/uncertain`).
    fn flags_for_review(&self) -> bool {
        false
    }

    /// Whether agents are taught the verb, given the table (`/tool` only
    /// when there are tools).
    fn taught(&self, _table: &VerbTable) -> bool {
        true
    }
}

/// A problem building the registry from a verb table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A verb from a verb file without an action.
    #[error(
        "verb '{0}' has no action; give it one: action = {{ kind = \"tell\", agent = \"NAME\" }}, action = {{ kind = \"append\", block = \"LABEL\" }} or action = {{ kind = \"tool\", tool = \"NAME\" }}"
    )]
    NoAction(String),
    /// A built-in verb without a handler (a bug in partner).
    #[error("verb '{0}' has no handler")]
    NoHandler(String),
    /// A verb the table refused (its name or an alias is taken).
    #[error("{0}")]
    Table(String),
}

/// Every verb's handler, with the table the parser reads.
#[derive(Clone)]
pub struct Registry {
    /// Shared with every parser made from it (a turn's parser does not
    /// copy the table).
    table: Arc<VerbTable>,
    handlers: HashMap<String, Arc<dyn VerbHandler>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("verbs", &self.handlers.len())
            .finish()
    }
}

impl Registry {
    /// The built-in verbs.
    pub fn builtin() -> Self {
        Registry::new(VerbTable::builtin()).expect("every built-in verb has a handler")
    }

    /// Binds every verb of `table` to its handler: built-in verbs to
    /// theirs, verbs from a verb file to the handler of their action.
    pub fn new(table: VerbTable) -> Result<Self, RegistryError> {
        let mut handlers = HashMap::new();
        for spec in table.specs() {
            let name = spec.verb.name().to_string();
            let handler = match (&spec.verb, &spec.action) {
                (Verb::Custom(_), Some(action)) => handlers::custom(action),
                (Verb::Custom(_), None) => return Err(RegistryError::NoAction(name)),
                (verb, _) => handlers::of_builtin(verb)
                    .ok_or_else(|| RegistryError::NoHandler(name.clone()))?,
            };
            handlers.insert(name, handler);
        }
        Ok(Registry {
            table: Arc::new(table),
            handlers,
        })
    }

    /// Binds verb `name`, already in the table, to `handler` (an MCP
    /// tool's, with what its server said of it).
    pub(crate) fn set_handler(&mut self, name: &str, handler: Arc<dyn VerbHandler>) {
        if self.handlers.contains_key(name) {
            self.handlers.insert(name.to_string(), handler);
        }
    }

    /// Adds a verb defined in code: its table entry (name, aliases,
    /// strictness, summary, argument shape) and its handler. A verb of
    /// the same name or alias is refused.
    pub fn add_verb(
        &mut self,
        spec: VerbSpec,
        handler: Arc<dyn VerbHandler>,
    ) -> Result<(), RegistryError> {
        let name = spec.verb.name().to_string();
        let mut table = VerbTable::clone(&self.table);
        table
            .add(spec)
            .map_err(|e| RegistryError::Table(e.to_string()))?;
        self.table = Arc::new(table);
        self.handlers.insert(name, handler);
        Ok(())
    }

    /// The table the parser reads.
    pub fn table(&self) -> &VerbTable {
        &self.table
    }

    /// The same table, shared: for a parser made per turn.
    pub fn shared_table(&self) -> Arc<VerbTable> {
        Arc::clone(&self.table)
    }

    /// The handler of `verb`.
    pub fn handler(&self, verb: &Verb) -> Option<&dyn VerbHandler> {
        self.handlers.get(verb.name()).map(|h| h.as_ref())
    }

    /// True when `action` is not run itself but runs the actions it holds
    /// (its handler's stage is [`Stage::Structure`]: a `/batch`).
    pub fn holds_actions(&self, action: &ParsedAction) -> bool {
        self.handler(&action.verb)
            .is_some_and(|h| h.stage(action) == Stage::Structure)
    }

    /// The verbs an agent may use (all but the authority verbs unless it
    /// has an authority role), in table order, for its prompt.
    pub fn verbs_for(&self, authority: bool) -> Vec<&VerbSpec> {
        self.table
            .specs()
            .iter()
            .filter(|s| {
                self.handler(&s.verb).is_some_and(|handler| {
                    (authority || !handler.needs_role()) && handler.taught(&self.table)
                })
            })
            .collect()
    }
}
