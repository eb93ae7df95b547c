//! `partner run`: runs a constellation. `--headless` prints the event stream
//! as JSON lines (one object per event, with an `event` field); without it
//! (until the console exists) events are printed as readable lines.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::core::clock::TokioClock;
use crate::engine::exec::Executor;
use crate::error::{Error, Result};
use crate::runtime::{ConstellationConfig, demo_config};
use crate::store::memory::MemoryStore;
use crate::store::trace::TraceInput;
use crate::store::trace::store::legacy_file_for;

/// Options of `partner run` (also the top-level options of `partner`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RunOptions {
    /// Print the event stream as JSON lines instead of opening the console.
    #[arg(long)]
    pub headless: bool,
    /// The constellation config (default: ./partner.toml if present, else the demo).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Run the built-in demo constellation.
    #[arg(long, conflicts_with = "config")]
    pub demo: bool,
    /// The database (default: in the platform's data directory). Accepted
    /// before or after any subcommand.
    #[arg(long, value_name = "FILE", global = true)]
    pub db: Option<PathBuf>,
    /// The store: a database file, or a team's PostgreSQL database
    /// (`postgres://user@host:port/db`). Default: `PARTNER_STORE`, else
    /// as `--db`. Accepted before or after any subcommand.
    #[arg(long, value_name = "URL", global = true, conflicts_with = "db")]
    pub store: Option<String>,
    /// Stop after this long (`30s`, `5m`).
    #[arg(long = "for", value_name = "DURATION")]
    pub run_for: Option<String>,
    /// Approve, as the partner, every request that waits on the partner.
    #[arg(long, conflicts_with = "deny_all")]
    pub approve_all: bool,
    /// Deny, as the partner, every request that waits on the partner.
    #[arg(long)]
    pub deny_all: bool,
    /// Console theme: dark, light or high-contrast.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Console keymap: default, vim or emacs.
    #[arg(long, value_name = "NAME")]
    pub keymap: Option<String>,
    /// No terminal bell when a request arrives for the partner.
    #[arg(long)]
    pub no_bell: bool,
    /// Send AGENT a message from the partner as the run starts (repeatable):
    /// `--message ada="what is on today?"`.
    #[arg(long = "message", value_name = "AGENT=TEXT")]
    pub messages: Vec<String>,
}

impl RunOptions {
    /// The database file given: `--db`, or `--store` naming a file.
    pub fn db_file(&self) -> Option<PathBuf> {
        self.db.clone().or_else(|| {
            match partner_engine::store::StoreAt::parse(self.store.as_deref()?) {
                partner_engine::store::StoreAt::File(path) => Some(path),
                partner_engine::store::StoreAt::Postgres(_) => None,
            }
        })
    }
}

/// The `--message`s a run starts with. (An agent's `greeting` is the
/// runtime's to send, whoever runs it: `run`, `serve` or a team.)
fn opening_messages(
    options: &RunOptions,
    config: &ConstellationConfig,
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for m in &options.messages {
        let (agent, text) = m.split_once('=').ok_or_else(|| {
            Error::Usage(format!(
                "--message {m}: write AGENT=TEXT, as in ada=\"hello\""
            ))
        })?;
        let agent = agent.trim();
        if config.agent(agent).is_none() {
            return Err(Error::Usage(format!(
                "--message: {} has no agent {agent}",
                config.name
            )));
        }
        if text.trim().is_empty() {
            return Err(Error::Usage(format!(
                "--message {agent}=: the message is empty"
            )));
        }
        out.push((agent.to_string(), text.to_string()));
    }
    Ok(out)
}

/// partner's config directory (user themes and keymaps), if there is one.
pub fn config_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "partner").map(|d| d.config_dir().to_path_buf())
}

/// The platform's data directory for partner, created if needed.
pub fn data_dir() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "partner").ok_or_else(|| {
        Error::Usage("cannot find a home directory for partner's data; pass --db".into())
    })?;
    let dir = dirs.data_dir().to_path_buf();
    crate::core::files::create_private_dir(&dir).map_err(|source| Error::Read {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// Loads the constellation the options name, and whether it is the demo.
pub fn load_constellation(options: &RunOptions) -> Result<(ConstellationConfig, bool)> {
    let local = Path::new("partner.toml");
    let path = options
        .config
        .clone()
        .or_else(|| (!options.demo && local.exists()).then(|| local.to_path_buf()));
    match path {
        Some(path) => Ok((
            ConstellationConfig::load(&path).map_err(|e| Error::Usage(e.to_string()))?,
            false,
        )),
        None => Ok((
            demo_config().map_err(|e| Error::Usage(e.to_string()))?,
            true,
        )),
    }
}

/// The database file given (`--db`), else the one `[store] url` names.
pub fn file_of(db: Option<&Path>, config: &ConstellationConfig) -> Option<PathBuf> {
    db.map(Path::to_path_buf).or_else(|| {
        match partner_engine::store::StoreAt::parse(config.store.as_deref()?) {
            partner_engine::store::StoreAt::File(path) => Some(path),
            partner_engine::store::StoreAt::Postgres(_) => None,
        }
    })
}

/// Opens the executor for a constellation over `db`, with a clock that
/// follows tokio's.
pub fn open_constellation(config: &ConstellationConfig, db: &Path) -> Result<Arc<Executor>> {
    let store = crate::engine::exec::open_store(db)?;
    let mut executor = Executor::with_parts(
        Arc::new(store.into()),
        config.policy.clone(),
        config.exec.clone(),
        Arc::new(TokioClock::now()),
    )?;
    executor.set_verbs(config.verbs.clone())?;
    crate::runtime::mcp::attach(&mut executor, config).map_err(Error::Runtime)?;
    Ok(Arc::new(executor))
}

/// The database a constellation named `name` uses: `db` when given, else
/// `NAME.db` in partner's data directory.
pub fn database_path(db: Option<&Path>, name: &str) -> Result<PathBuf> {
    match db {
        Some(db) => Ok(db.to_path_buf()),
        None => Ok(data_dir()?.join(format!("{name}.db"))),
    }
}

/// The database to use (`--db`, or the data directory; the demo starts
/// fresh each time there) and its runtime lock: one runtime per database,
/// so a daemon or another console running it is an error that names it.
/// The demo's old files are removed only once the lock is held.
pub fn database_for(
    options: &RunOptions,
    config: &ConstellationConfig,
    demo: bool,
) -> Result<(PathBuf, crate::host::RuntimeLock)> {
    let db = database_path(
        file_of(options.db_file().as_deref(), config).as_deref(),
        &config.name,
    )?;
    let lock = crate::host::lock::acquire(
        &db,
        &crate::host::Holder {
            pid: std::process::id(),
            socket: None,
            started_at: crate::core::clock::SystemClock.now_ms_public(),
        },
    )
    .map_err(Error::Usage)?;
    if demo && options.db_file().is_none() {
        start_demo_fresh(&db);
    }
    Ok((db, lock))
}

/// Removes what an earlier demo left in its database in the data
/// directory, so the demo starts fresh each time (`run` and `serve` alike).
/// The caller holds the database's runtime lock.
pub fn start_demo_fresh(db: &Path) {
    for path in [
        db.to_path_buf(),
        legacy_file_for(db),
        db.with_extension("db-wal"),
        db.with_extension("db-shm"),
    ] {
        let _ = std::fs::remove_file(path);
    }
}

/// Runs `partner run` (and `partner` with no subcommand).
pub fn run_run(options: &RunOptions, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let duration = options
        .run_for
        .as_deref()
        .map(|d| {
            crate::dialect::interval(d).map_err(|e| {
                Error::Usage(format!("--for {d}: {e} (write a duration like 30s or 5m)"))
            })
        })
        .transpose()?;
    let (config, demo) = load_constellation(options)?;
    // A theme or keymap that does not exist is an error whether or not a
    // console starts: the same command must not fail only in a terminal.
    let dir = config_dir();
    crate::tui::driver::load_theme(options.theme.as_deref(), dir.as_deref())
        .map_err(Error::Usage)?;
    crate::tui::driver::load_keymap(options.keymap.as_deref(), dir.as_deref())
        .map_err(Error::Usage)?;
    let console = !options.headless && std::io::IsTerminal::is_terminal(&std::io::stdout());
    if console
        && duration.is_none()
        && options.messages.is_empty()
        && let Some(code) = attach_if_served(options, &config)?
    {
        return Ok(code);
    }
    // Opened before the async runtime: a PostgreSQL store's driver blocks
    // on a runtime of its own.
    let (opened, _lock) = match super::team::team_url_of(options, &config) {
        Some(url) => (super::team::open_member(&config, &url)?, None),
        None => {
            let (db, lock) = database_for(options, &config, demo)?;
            let executor = open_constellation(&config, &db)?;
            let opened = super::team::Opened {
                executor,
                opening: Vec::new(),
                leasing: None,
                shown: db,
            };
            (opened, Some(lock))
        }
    };
    let opening = opening_messages(options, &config)?;
    let opened = super::team::Opened { opening, ..opened };
    let db = opened.shown.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    if console {
        return runtime.block_on(run_embedded(options, &config, opened));
    }
    for warning in config.warnings() {
        writeln!(err, "partner: warning: {warning}").map_err(Error::Write)?;
    }
    if !options.headless {
        writeln!(
            err,
            "partner: running {} ({} agents) on {}; Ctrl-C stops it",
            config.name,
            config.agents.len(),
            db.display()
        )
        .map_err(Error::Write)?;
    }
    let run = super::unattended::Unattended {
        options,
        duration,
        out,
        err,
    };
    runtime.block_on(run.run(&config, opened))?;
    Ok(0)
}

/// When a daemon already runs the database, the console attaches to it:
/// its exit code; `None` when no daemon runs it.
fn attach_if_served(options: &RunOptions, config: &ConstellationConfig) -> Result<Option<i32>> {
    let db = database_path(
        file_of(options.db_file().as_deref(), config).as_deref(),
        &config.name,
    )?;
    let Some(crate::host::Holder {
        socket: Some(socket),
        ..
    }) = crate::host::lock::holder(&db)
    else {
        return Ok(None);
    };
    super::attach::run_attach(&super::attach::AttachOptions {
        db: Some(db),
        socket: Some(PathBuf::from(socket)),
        connect: None,
        theme: options.theme.clone(),
        keymap: options.keymap.clone(),
        no_bell: options.no_bell,
        // The environment's `PARTNER_TOKEN`, if any, names the partner.
        token_file: None,
    })
    .map(Some)
}

/// The console over the constellation, run in this process (embedded):
/// quitting the console stops the agents.
async fn run_embedded(
    options: &RunOptions,
    config: &ConstellationConfig,
    opened: super::team::Opened,
) -> Result<i32> {
    let dir = config_dir();
    // The command line wins over `[console]` in the constellation's file.
    let theme_name = options
        .theme
        .clone()
        .or_else(|| config.console.theme.clone());
    let keymap_name = options
        .keymap
        .clone()
        .or_else(|| config.console.keymap.clone());
    let theme = crate::tui::driver::load_theme(theme_name.as_deref(), dir.as_deref())
        .map_err(Error::Usage)?;
    let keymap = crate::tui::driver::load_keymap(keymap_name.as_deref(), dir.as_deref())
        .map_err(Error::Usage)?;
    let super::team::Opened {
        executor,
        opening,
        leasing,
        shown: db,
    } = opened;
    let title = match &leasing {
        Some(l) => format!("{} · as {} in the team", config.name, l.host),
        None => format!("{} · embedded", config.name),
    };
    let started =
        crate::runtime::start_watched(config, executor, Arc::new(TokioClock::now()), leasing);
    let handle = started.0.clone();
    let mut app = crate::tui::app::App::new(&title, &db.display().to_string(), theme, keymap);
    app.verb_words = crate::tui::completion::verb_words(&config.verbs);
    let now = crate::core::clock::SystemClock.now_ms_public();
    for warning in config.warnings() {
        app.model.notify(
            now,
            None,
            crate::tui::model::NoticeKind::Error,
            warning.clone(),
        );
        app.warn(warning);
    }
    for (agent, text) in &opening {
        handle.send_message(agent, text);
    }
    let settings = crate::tui::driver::ConsoleSettings {
        theme: theme_name,
        keymap: keymap_name,
        bell: !options.no_bell && config.console.bell,
        replay: None,
        history: data_dir().ok().map(|d| d.join("console_history")),
    };
    console_in_process(started, config, &db, app, settings).await
}

/// A runtime started in this process, with a subscription to its events
/// made before it did anything.
type Started = (
    crate::runtime::RuntimeHandle,
    tokio::task::JoinHandle<()>,
    tokio::sync::broadcast::Receiver<crate::runtime::Event>,
);

/// Runs the console over a runtime started in this process (its host
/// `InProcess`), then stops the runtime.
async fn console_in_process(
    started: Started,
    config: &ConstellationConfig,
    db: &Path,
    app: crate::tui::app::App,
    settings: crate::tui::driver::ConsoleSettings,
) -> Result<i32> {
    let (handle, task, first) = started;
    // The console sees every event from the runtime's first on.
    let host = Arc::new(crate::host::InProcess::watched(
        handle.clone(),
        config,
        db,
        first,
    ));
    let verbs = Arc::new(handle.executor().registry().table().clone());
    let result = crate::console::run(host, verbs, app, settings).await;
    handle.shutdown();
    let _ = task.await;
    result.map_err(|e| Error::Runtime(format!("the console failed: {e}")))?;
    Ok(0)
}

/// Opens the console on a trace file for replay: a scratch in-memory
/// constellation with no agents, the trace in the replay and trace panes.
pub fn run_replay_console(
    trace: &TraceInput,
    theme: Option<&str>,
    keymap: Option<&str>,
) -> Result<i32> {
    let dir = config_dir();
    let theme = crate::tui::driver::load_theme(theme, dir.as_deref()).map_err(Error::Usage)?;
    let keymap = crate::tui::driver::load_keymap(keymap, dir.as_deref()).map_err(Error::Usage)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let config = ConstellationConfig::empty("replay");
        let executor = Executor::with_parts(
            Arc::new(MemoryStore::open_in_memory()?.into()),
            config.policy.clone(),
            config.exec.clone(),
            Arc::new(TokioClock::now()),
        )?;
        let started = crate::runtime::start_watched(
            &config,
            Arc::new(executor),
            Arc::new(TokioClock::now()),
            None,
        );
        let mut app =
            crate::tui::app::App::new("replay", &trace.path().display().to_string(), theme, keymap);
        app.trace_only = true;
        let settings = crate::tui::driver::ConsoleSettings {
            theme: None,
            keymap: None,
            bell: false,
            replay: Some(trace.path().to_path_buf()),
            history: data_dir().ok().map(|d| d.join("console_history")),
        };
        console_in_process(started, &config, trace.path(), app, settings).await
    })
}
