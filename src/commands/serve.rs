//! `partner serve` (a constellation with no terminal, for a service
//! manager), `partner status` (whether a daemon runs a database, and what
//! its agents do) and `partner msg` (a message to an agent, through the
//! daemon).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::common::{line, write_json};
use super::run::{RunOptions, database_path, load_constellation, open_constellation};
use crate::error::{Error, Result};
use crate::host::{Holder, Listen, lock};
use crate::protocol::client::{Client, ClientError};
use crate::protocol::{Op, socket_for};
use crate::runtime::ConstellationConfig;
use partner_engine::store::StoreAt;

/// Options of `partner serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeOptions {
    /// The constellation config (default: ./partner.toml if present, else the demo).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Serve the built-in demo constellation.
    #[arg(long, conflicts_with = "config")]
    pub demo: bool,
    /// The database (default: the constellation's in the platform's data directory).
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
    /// A PostgreSQL store (`postgres://user@host:port/db`) shared with
    /// other daemons, instead of a database file (default:
    /// `PARTNER_STORE` when set and `--db` is not given).
    #[arg(long, value_name = "URL", conflicts_with = "db")]
    pub store: Option<String>,
    /// This daemon's name in a team (with `--store postgres://…`): it runs
    /// the agents whose lease it holds, takes over those of a daemon that
    /// stops, and is shown beside them. Default: the machine's host name.
    #[arg(long, value_name = "NAME")]
    pub host_name: Option<String>,
    /// The Unix socket to listen on (default: the database's path plus `.sock`).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Also listen on TCP (`127.0.0.1:7070`); clients need a partner's token
    /// (`partner partners add NAME`).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// Let `--listen` bind an address that is not loopback.
    #[arg(long)]
    pub public: bool,
}

/// Options of `partner status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusOptions {
    /// The database (default: the one `partner` runs on here).
    #[command(flatten)]
    pub db: super::common::DbArg,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Options of `partner msg`.
#[derive(Debug, Clone, clap::Args)]
pub struct MsgOptions {
    /// The database (default: the one `partner` runs on here).
    #[command(flatten)]
    pub db: super::common::DbArg,
    /// The agent.
    pub agent: String,
    /// The message: the rest of the line (`partner msg ada what is on
    /// today?`), no quotes needed.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

impl MsgOptions {
    /// The message, its words joined by spaces.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }
}

/// Logs to stderr what `RUST_LOG` asks for (`partner=debug` adds a span
/// per turn and per action), `info` when it is unset; a `RUST_LOG` that
/// cannot be read is said so and the default kept.
fn init_logging() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    let asked = std::env::var("RUST_LOG").ok();
    let parsed = asked.as_deref().map(str::parse::<Targets>);
    let filter = match &parsed {
        Some(Ok(targets)) => targets.clone(),
        _ => Targets::new().with_default(tracing::Level::INFO),
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    let _ = tracing_subscriber::registry()
        .with(layer.with_filter(filter))
        .try_init();
    if let Some(Err(e)) = parsed {
        tracing::warn!("RUST_LOG could not be read ({e}); logging at info");
    }
}

/// The PostgreSQL store `partner serve` was given (`--store`, or
/// `PARTNER_STORE` without `--db`), if any.
fn team_store(options: &ServeOptions, config: &ConstellationConfig) -> Result<Option<String>> {
    let given = options.store.clone().or_else(|| {
        options
            .db
            .is_none()
            .then(|| std::env::var(super::common::STORE_ENV).ok())
            .flatten()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| config.store.clone())
    });
    match given.map(|s| StoreAt::parse(&s)) {
        None => Ok(None),
        Some(StoreAt::Postgres(url)) => Ok(Some(url)),
        Some(StoreAt::File(_)) => Err(Error::Usage(
            "--store for `partner serve` is a postgres:// URL; a database file is --db".into(),
        )),
    }
}

/// Runs `partner serve`.
pub fn run_serve(options: &ServeOptions) -> Result<i32> {
    init_logging();
    let run = RunOptions {
        config: options.config.clone(),
        demo: options.demo,
        ..RunOptions::default()
    };
    let (config, demo) = load_constellation(&run)?;
    if let Some(url) = team_store(options, &config)? {
        return super::team::run_team_daemon(options, config, &url);
    }
    if options.host_name.is_some() {
        return Err(Error::Usage(
            "--host-name names a daemon of a team: it needs --store postgres://…".into(),
        ));
    }
    // Absolute, so clients anywhere (`partner attach --socket`) find it.
    let given = super::run::file_of(options.db.as_deref(), &config);
    let db =
        std::path::absolute(database_path(given.as_deref(), &config.name)?).map_err(|source| {
            Error::Read {
                path: PathBuf::from("."),
                source,
            }
        })?;
    check_listen(options)?;
    let socket = match &options.socket {
        Some(socket) => std::path::absolute(socket).unwrap_or_else(|_| socket.clone()),
        None => socket_for(&db),
    };
    let lock = lock::acquire(
        &db,
        &Holder {
            pid: std::process::id(),
            socket: Some(socket.display().to_string()),
            started_at: crate::core::clock::SystemClock.now_ms_public(),
        },
    )
    .map_err(Error::Usage)?;
    if demo && options.db.is_none() {
        super::run::start_demo_fresh(&db);
    }
    if options.listen.is_some() {
        use crate::policy::partners::Partners;
        let store = crate::store::memory::MemoryStore::open(&db)?;
        if !store.partners()?.iter().any(|p| p.active()) {
            tracing::warn!(
                "no partners yet: TCP clients are refused until `partner partners add NAME` makes one"
            );
        }
    }
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let executor = open_constellation(&config, &db)?;
        crate::host::run(
            &config,
            executor,
            &db,
            Listen {
                socket: Some(socket),
                tcp: options.listen,
            },
            lock,
            None,
        )
        .await
        .map_err(Error::Runtime)
    })?;
    Ok(0)
}

/// Refuses `--listen` on an address that is not loopback without
/// `--public`.
pub fn check_listen(options: &ServeOptions) -> Result<()> {
    match options.listen {
        Some(addr) if !addr.ip().is_loopback() && !options.public => Err(Error::Usage(format!(
            "--listen {addr} is not a loopback address; add --public to listen there"
        ))),
        _ => Ok(()),
    }
}

/// Seconds (as a daemon reports them) in milliseconds, without overflow.
fn secs_ms(secs: u64) -> i64 {
    i64::try_from(secs).unwrap_or(i64::MAX).saturating_mul(1000)
}

/// A connection to the daemon running `db`: `None` when nothing listens
/// on its socket, an error when a daemon listens but would not talk (it
/// refused the connection, or did not answer in time) — never "no daemon"
/// for a daemon that is there.
pub fn daemon_for(db: &Path) -> Result<Option<Client>> {
    match Client::connect(&lock::socket_of(db), "cli") {
        Ok(client) => Ok(Some(client)),
        Err(ClientError::NoDaemon(_)) => Ok(None),
        Err(e) => Err(Error::Runtime(format!(
            "a daemon runs {} but did not let partner in: {e}",
            db.display()
        ))),
    }
}

/// [`daemon_for`] the store `at`: a daemon on a PostgreSQL store hears
/// of what changed from the database itself, so none is sought.
pub fn daemon_for_store(at: &StoreAt) -> Result<Option<Client>> {
    match at {
        StoreAt::File(db) => daemon_for(db),
        StoreAt::Postgres(_) => Ok(None),
    }
}

/// Runs `partner status`: exit 0 when a daemon runs the database, 1 when
/// none does.
pub fn run_status(options: &StatusOptions, out: &mut dyn Write) -> Result<i32> {
    if let StoreAt::Postgres(url) = options.db.store_at()? {
        return super::team::run_team_status(&url, options.json, out);
    }
    let db = options.db.path()?;
    let Some(mut client) = daemon_for(&db)? else {
        let holder = lock::holder(&db);
        if options.json {
            write_json(
                out,
                &serde_json::json!({"running": false, "db": db.display().to_string(),
                                    "embedded_pid": holder.map(|h| h.pid)}),
            )?;
        } else {
            match holder {
                Some(h) if h.socket.is_some() => line(
                    out,
                    format!(
                        "a daemon (pid {}) holds {} but nothing answers on its socket",
                        h.pid,
                        db.display()
                    ),
                )?,
                Some(h) => line(
                    out,
                    format!(
                        "no daemon runs {}; a console (pid {}) runs it",
                        db.display(),
                        h.pid
                    ),
                )?,
                None => line(out, format!("no daemon runs {}", db.display()))?,
            }
        }
        return Ok(1);
    };
    let (_, data) = client.request(Op::Status).map_err(client_error)?;
    let crate::protocol::Returned::Status(status) = data else {
        return Err(Error::Runtime("the daemon sent no status".into()));
    };
    // The daemon counted this command's own connection among its clients.
    let others = status.clients.saturating_sub(1);
    if options.json {
        let mut value = serde_json::to_value(&status).map_err(|e| Error::Write(e.into()))?;
        value["running"] = serde_json::Value::Bool(true);
        value["other_clients"] = serde_json::Value::from(others);
        write_json(out, &value)?;
        return Ok(0);
    }
    let clients = match others {
        0 => "no other client".to_string(),
        1 => "1 other client".to_string(),
        n => format!("{n} other clients"),
    };
    line(
        out,
        format!(
            "{} is served by pid {} on {}, up {}; {} pending, {clients}",
            status.name,
            status.pid,
            status.socket,
            crate::tui::panes::human_duration(secs_ms(status.uptime_secs)),
            status.pending,
        ),
    )?;
    for a in &status.agents {
        let pulse = a
            .next_pulse_secs
            .map(|s| {
                format!(
                    ", next pulse in {}",
                    crate::tui::panes::human_duration(secs_ms(s))
                )
            })
            .unwrap_or_default();
        line(out, format!("  {}  {}{pulse}", a.name, a.state.as_str()))?;
    }
    Ok(0)
}

fn client_error(e: ClientError) -> Error {
    Error::Runtime(e.to_string())
}

/// Runs `partner msg`: through the daemon (the agent hears it at once).
pub fn run_msg(options: &MsgOptions, out: &mut dyn Write) -> Result<i32> {
    let mut client = match options.db.store_at()? {
        StoreAt::File(db) => daemon_for(&db)?.ok_or_else(|| {
            Error::Usage(format!(
                "no daemon runs {}: start one with partner serve (or message the agent from the console)",
                db.display()
            ))
        })?,
        // On PostgreSQL: this machine's team daemon, which hands the
        // message to the daemon running the agent.
        StoreAt::Postgres(_) => {
            let socket = super::team::socket_here()?;
            match Client::connect(&socket, "cli") {
                Ok(client) => client,
                Err(ClientError::NoDaemon(_)) => {
                    return Err(Error::Usage(format!(
                        "no daemon of the team runs on this machine (nothing at {}): start one with partner serve --host-name NAME",
                        socket.display()
                    )));
                }
                Err(e) => return Err(Error::Runtime(e.to_string())),
            }
        }
    };
    let (message, _) = client
        .request(Op::Message {
            agent: options.agent.clone(),
            text: options.text(),
        })
        .map_err(client_error)?;
    line(out, message)?;
    Ok(0)
}
