//! Team mode: `partner serve --store postgres://… --host-name NAME` (one
//! of several daemons sharing a constellation on PostgreSQL, each running
//! the agents whose lease it holds) and `partner status` of such a
//! constellation (its hosts and which agents each runs, read from the
//! leases in the store, with no daemon asked).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::common::{line, write_json};
use super::run::data_dir;
use super::serve::ServeOptions;
use crate::core::clock::TokioClock;
use crate::engine::exec::Executor;
use crate::error::{Error, Result};
use crate::host::{Holder, Listen, lock};
use crate::store::postgres::PgStore;
use partner_engine::store::StoreAt;

/// Longest daemon name.
const MAX_HOST_NAME: usize = 64;

/// This daemon's name: `--host-name`, else the machine's; letters,
/// digits, `.`, `-` and `_` only (it is shown and kept in the store).
fn host_name(given: Option<&str>) -> Result<String> {
    let name = match given {
        Some(name) => name.to_string(),
        None => std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .map_err(|_| {
                Error::Usage("cannot read this machine's name: pass --host-name".into())
            })?,
    };
    let fine = !name.is_empty()
        && name.len() <= MAX_HOST_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if fine {
        Ok(name)
    } else {
        Err(Error::Usage(format!(
            "a host name is 1 to {MAX_HOST_NAME} letters, digits, '.', '-' or '_', not {name:?}"
        )))
    }
}

/// The socket of the team daemon `partner serve --host-name HOST` makes
/// by default for a constellation named `name`.
fn default_socket(name: &str, host: &str) -> Result<PathBuf> {
    Ok(data_dir()?.join(format!("{name}.{host}.sock")))
}

/// The socket of this machine's team daemon for ./partner.toml's
/// constellation (named after the machine, as `partner serve` names it).
pub fn socket_here() -> Result<PathBuf> {
    let (config, _) = super::run::load_constellation(&super::run::RunOptions::default())?;
    default_socket(&config.name, &host_name(None)?)
}

/// Runs one daemon of a team on the PostgreSQL store `url`.
pub fn run_team_daemon(
    options: &ServeOptions,
    config: crate::runtime::ConstellationConfig,
    url: &str,
) -> Result<i32> {
    let host = host_name(options.host_name.as_deref())?;
    super::serve::check_listen(options)?;
    let socket = match &options.socket {
        Some(socket) => std::path::absolute(socket).unwrap_or_else(|_| socket.clone()),
        None => default_socket(&config.name, &host)?,
    };
    // One daemon of this name on this machine: the lock beside its socket.
    let lock = lock::acquire(
        &socket,
        &Holder {
            pid: std::process::id(),
            socket: Some(socket.display().to_string()),
            started_at: crate::core::clock::SystemClock.now_ms_public(),
        },
    )
    .map_err(Error::Usage)?;
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    // The store is opened here, before the async runtime: its driver
    // blocks on a runtime of its own.
    let (executor, leasing) = team_executor(&config, url, host)?;
    if options.listen.is_some() {
        warn_without_partners(&leasing.store);
    }
    let shown = PathBuf::from(leasing.store.location());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        crate::host::run(
            &config,
            Arc::new(executor),
            &shown,
            Listen {
                socket: Some(socket),
                tcp: options.listen,
            },
            lock,
            Some(leasing),
        )
        .await
        .map_err(Error::Runtime)
    })?;
    Ok(0)
}

/// The PostgreSQL store `partner run` runs on, when the constellation is
/// kept there (`PARTNER_STORE`, or `[store] url`; `--db` wins).
pub fn team_url_of(
    options: &super::run::RunOptions,
    config: &crate::runtime::ConstellationConfig,
) -> Option<String> {
    if let Some(named) = &options.store {
        return match partner_engine::store::StoreAt::parse(named) {
            partner_engine::store::StoreAt::Postgres(url) => Some(url),
            partner_engine::store::StoreAt::File(_) => None,
        };
    }
    if options.db.is_some() {
        return None;
    }
    let named = std::env::var(super::common::STORE_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| config.store.clone())?;
    match partner_engine::store::StoreAt::parse(&named) {
        partner_engine::store::StoreAt::Postgres(url) => Some(url),
        partner_engine::store::StoreAt::File(_) => None,
    }
}

/// A constellation opened to run here: its executor, the messages it
/// opens with, its lease keeping when it is one of a team's, and where it
/// is (for titles).
pub struct Opened {
    /// The executor.
    pub executor: Arc<Executor>,
    /// The opening messages (agent, text).
    pub opening: Vec<(String, String)>,
    /// Team mode: this process's part.
    pub leasing: Option<crate::runtime::Leasing>,
    /// The database file, or the server and database.
    pub shown: PathBuf,
}

/// A constellation on the PostgreSQL store `url` opened to run in this
/// process as one member of its team (`partner run`): named after the
/// machine and the process, so it never mistakes another daemon's
/// leases for its own.
pub fn open_member(config: &crate::runtime::ConstellationConfig, url: &str) -> Result<Opened> {
    let host = format!("{}.{}", host_name(None)?, std::process::id());
    let (executor, leasing) = team_executor(config, url, host)?;
    let shown = PathBuf::from(leasing.store.location());
    Ok(Opened {
        executor: Arc::new(executor),
        opening: Vec::new(),
        leasing: Some(leasing),
        shown,
    })
}

/// The executor of a constellation on the PostgreSQL store `url`, with
/// its connections opened, and the lease keeping of member `host`.
fn team_executor(
    config: &crate::runtime::ConstellationConfig,
    url: &str,
    host: String,
) -> Result<(Executor, crate::runtime::Leasing)> {
    let at = StoreAt::Postgres(url.to_string());
    let mut executor = Executor::with_parts(
        Arc::new(partner_engine::store::Store::open(&at)?),
        config.policy.clone(),
        config.exec.clone(),
        Arc::new(TokioClock::now()),
    )?;
    executor.set_verbs(config.verbs.clone())?;
    crate::runtime::mcp::attach(&mut executor, config).map_err(Error::Runtime)?;
    let Some(pg) = executor.store().postgres() else {
        return Err(Error::Runtime("the store is not PostgreSQL".into()));
    };
    pg.warm()?;
    let leasing = crate::runtime::Leasing {
        host,
        store: Arc::new(pg.connect_again()?),
    };
    Ok((executor, leasing))
}

/// Says so when no partner may connect over TCP yet.
fn warn_without_partners(store: &PgStore) {
    use crate::policy::partners::Partners;
    if !store
        .partners()
        .is_ok_and(|partners| partners.iter().any(|p| p.active()))
    {
        tracing::warn!(
            "no partners yet: TCP clients are refused until `partner partners add NAME` makes one"
        );
    }
}

/// One agent's place in a team, as `partner status --json` gives it.
#[derive(Debug, Serialize)]
struct Placed {
    agent: String,
    /// The daemon holding its lease (even a lapsed one); none when no
    /// daemon has ever run it.
    host: Option<String>,
    /// The lease is in force: that daemon runs it now.
    running: bool,
}

/// `partner status` of a constellation on PostgreSQL: every agent's daemon
/// from the leases (server time), and the hosts that run any. Exit 0 when
/// some daemon runs an agent, 1 when none does.
pub fn run_team_status(url: &str, json: bool, out: &mut dyn Write) -> Result<i32> {
    let store = PgStore::connect(url)?;
    let mut placed: Vec<Placed> = store
        .leases()?
        .into_iter()
        .map(|(lease, live)| Placed {
            agent: lease.agent,
            host: Some(lease.host),
            running: live,
        })
        .collect();
    // Agents on the roster that no daemon has taken: not running, said.
    use crate::store::memory::roster::Roster;
    for agent in store.transaction(|tx| tx.agent_names())? {
        if !placed.iter().any(|p| p.agent == agent) {
            placed.push(Placed {
                agent,
                host: None,
                running: false,
            });
        }
    }
    placed.sort_by(|a, b| a.agent.cmp(&b.agent));
    // Every daemon up — one that runs no agent (it takes those of a
    // daemon that stops) as much as the others.
    let members = store.members()?;
    let mut hosts: Vec<&str> = placed
        .iter()
        .filter(|p| p.running)
        .filter_map(|p| p.host.as_deref())
        .chain(members.iter().map(String::as_str))
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    let running = placed.iter().any(|p| p.running);
    if json {
        write_json(
            out,
            &serde_json::json!({
                "store": store.location(),
                "running": running,
                "hosts": hosts,
                "agents": placed,
            }),
        )?;
        return Ok(if running { 0 } else { 1 });
    }
    match (running, hosts.len()) {
        (false, 0) => line(out, format!("no daemon runs {}", store.location()))?,
        (false, _) => line(
            out,
            format!(
                "{} daemon(s) up ({}), running no agent of {}",
                hosts.len(),
                hosts.join(", "),
                store.location()
            ),
        )?,
        (true, _) => line(
            out,
            format!(
                "{} is run by {} daemon(s): {}",
                store.location(),
                hosts.len(),
                hosts.join(", ")
            ),
        )?,
    }
    for host in &hosts {
        if !placed
            .iter()
            .any(|p| p.running && p.host.as_deref() == Some(*host))
        {
            line(
                out,
                format!("  {host}  up, runs no agent: it takes those of a daemon that stops"),
            )?;
        }
    }
    for p in &placed {
        let how = match (&p.host, p.running) {
            (Some(host), true) => format!("runs on {host}"),
            (Some(host), false) => format!("not running (last on {host}; its lease lapsed)"),
            (None, _) => "not running (no daemon has run it)".to_string(),
        };
        line(out, format!("  {}  {how}", p.agent))?;
    }
    Ok(if running { 0 } else { 1 })
}
