//! `partner serve`: a constellation that keeps running with no terminal.
//! It holds the database's runtime lock (one runtime per database),
//! listens on a Unix socket beside the database (mode 0600) and, when
//! asked, on loopback TCP with a token; every client speaks the one
//! protocol (`partner_protocol`). SIGTERM or SIGINT stops it cleanly: turns
//! in flight are cancelled, the socket removed, the lock released.
//!
//! The same operations are served to a console in the constellation's own
//! process by [`InProcess`], and a daemon is reached over its socket by
//! [`remote::RemoteHost`]: both are `partner_protocol::Host`s, so a console
//! runs one code path whether it runs the constellation or attaches.
//!
//! This crate may import the runtime and what is below it, never the
//! console or the commands: clients reach it only through the protocol.

mod budget;
mod conn;
mod hub;
mod in_process;
pub mod lock;
mod ops;
mod own_command;
mod reads;
pub mod remote;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use budget::{Budget, Entrance};
use partner_core::doorman::Peer;
use std::time::Instant;

pub use hub::Hub;
pub use in_process::InProcess;
pub use lock::{Holder, RuntimeLock};
use partner_engine::exec::Executor;
use partner_runtime::{ConstellationConfig, RuntimeHandle};

/// A constellation as its clients see it: what every operation of the
/// protocol is carried out against, by a daemon or in process.
pub struct Served {
    handle: RuntimeHandle,
    hub: Hub,
    name: String,
    db: PathBuf,
    /// The socket clients connect to (none in process).
    socket: Option<PathBuf>,
    started: Instant,
    agents: Vec<String>,
    /// Clients past hello.
    clients: AtomicUsize,
    /// The partner's own commands running now.
    running: own_command::Running,
    /// The cookie a client of the Unix socket shows to be the partner
    /// (none in process).
    cookie: Option<String>,
}

impl Served {
    /// The constellation `config` describes, running behind `handle` over
    /// the database `db`; events are numbered into `hub`.
    fn new(
        handle: RuntimeHandle,
        config: &ConstellationConfig,
        db: &Path,
        socket: Option<PathBuf>,
        hub: Hub,
    ) -> Self {
        Served {
            handle,
            hub,
            name: config.name.clone(),
            db: db.to_path_buf(),
            socket,
            started: Instant::now(),
            agents: config.agents.iter().map(|a| a.name.clone()).collect(),
            clients: AtomicUsize::new(0),
            running: own_command::Running::default(),
            cookie: None,
        }
    }
}

/// A running daemon, shared by its connections.
pub struct Daemon {
    served: Served,
    /// Who may hold a connection open.
    budget: Arc<Budget>,
}

/// How `partner serve` listens.
#[derive(Debug, Clone, Default)]
pub struct Listen {
    /// The Unix socket (default: `FILE.sock` beside the database).
    pub socket: Option<PathBuf>,
    /// A TCP address too (clients need a partner's token).
    pub tcp: Option<std::net::SocketAddr>,
}

/// Numbers every event of the runtime once, for every client.
fn publish(handle: &RuntimeHandle, hub: Hub) -> tokio::task::JoinHandle<()> {
    let mut events = handle.subscribe();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(event) => hub.publish(event),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(dropped = n, "the daemon fell behind the runtime's events");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    })
}

/// Serves an owner's connection when the Unix budget has room; the
/// kernel says which process it is.
fn admit_unix(daemon: &Arc<Daemon>, stream: tokio::net::UnixStream) {
    let peer = stream.peer_cred().ok().map(|c| Peer {
        pid: c.pid().unwrap_or(0),
        uid: c.uid(),
    });
    let peer = peer.unwrap_or(Peer { pid: 0, uid: 0 });
    match daemon.budget.admit(Entrance::Unix) {
        Ok(slot) => {
            let came = conn::Came::Unix(peer);
            tokio::spawn(conn::serve(Arc::clone(daemon), stream, slot, came));
        }
        Err(why) => {
            tracing::warn!("refused a connection: {why}");
            let _ = stream.try_write(refusal(why).as_bytes());
        }
    }
}

/// Serves a TCP connection when its budget, and its peer's, have room.
fn admit_tcp(daemon: &Arc<Daemon>, stream: tokio::net::TcpStream, peer: std::net::SocketAddr) {
    match daemon.budget.admit(Entrance::Tcp(peer.ip())) {
        Ok(slot) => {
            tracing::info!(%peer, "TCP client");
            let _ = stream.set_nodelay(true);
            let came = conn::Came::Tcp(peer);
            tokio::spawn(conn::serve(Arc::clone(daemon), stream, slot, came));
        }
        Err(why) => {
            tracing::debug!(%peer, "refused a TCP connection: {why}");
            let _ = stream.try_write(refusal(why).as_bytes());
        }
    }
}

/// The line a refused connection is sent, without waiting for it.
fn refusal(message: String) -> String {
    partner_protocol::line(&partner_protocol::ServerMsg::Error { message })
}

/// Binds the Unix socket at `path`: a socket file left by a daemon that
/// died is replaced (the caller holds the runtime lock, so no live daemon
/// owns it), and only the owner may connect.
fn bind(path: &Path) -> Result<tokio::net::UnixListener, String> {
    use std::os::unix::fs::PermissionsExt;
    if path.exists() {
        std::fs::remove_file(path)
            .map_err(|e| format!("cannot remove the old socket {}: {e}", path.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restrict {}: {e}", path.display()))?;
    Ok(listener)
}

/// Admits clients until SIGTERM or SIGINT (`None`) or until the runtime
/// ends (why, in words: a daemon whose runtime is gone would answer for
/// agents that do not run, so it stops instead).
async fn serve_until_stopped(
    daemon: &Arc<Daemon>,
    unix: &tokio::net::UnixListener,
    tcp: Option<&tokio::net::TcpListener>,
    task: &mut tokio::task::JoinHandle<()>,
) -> Result<Option<String>, String> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot watch for SIGTERM: {e}"))?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| format!("cannot watch for SIGINT: {e}"))?;
    loop {
        tokio::select! {
            ended = &mut *task => {
                let why = match ended {
                    Ok(()) => "the runtime ended".to_string(),
                    Err(e) => format!("the runtime stopped on an internal error: {e}"),
                };
                tracing::error!("{why}; stopping");
                return Ok(Some(why));
            }
            _ = term.recv() => { tracing::info!("SIGTERM: stopping"); return Ok(None); }
            _ = int.recv() => { tracing::info!("SIGINT: stopping"); return Ok(None); }
            accepted = unix.accept() => match accepted {
                Ok((stream, _)) => admit_unix(daemon, stream),
                Err(e) => tracing::warn!(error = %e, "accepting a client failed"),
            },
            accepted = async {
                match tcp {
                    Some(l) => l.accept().await,
                    None => std::future::pending().await,
                }
            } => match accepted {
                Ok((stream, peer)) => admit_tcp(daemon, stream, peer),
                Err(e) => tracing::warn!(error = %e, "accepting a TCP client failed"),
            },
        }
    }
}

/// Runs the constellation until SIGTERM or SIGINT: the runtime, its events
/// numbered for clients, and the listeners. `lock` is the database's
/// runtime lock, held until it returns. With `leasing` (team mode) only
/// the agents whose lease it holds run here.
pub async fn run(
    config: &ConstellationConfig,
    executor: Arc<Executor>,
    db: &Path,
    listen: Listen,
    lock: RuntimeLock,
    leasing: Option<partner_runtime::Leasing>,
) -> Result<(), String> {
    let socket = listen
        .socket
        .clone()
        .unwrap_or_else(|| partner_protocol::socket_for(db));
    let unix = bind(&socket)?;
    let cookie = partner_core::doorman::make_cookie(&socket)
        .map_err(|e| format!("cannot keep the socket's cookie: {e}"))?;
    let tcp = match listen.tcp {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?,
        ),
        None => None,
    };
    let host = leasing.as_ref().map(|l| l.host.clone());
    let (handle, mut task) = partner_runtime::start_leased(
        config,
        executor,
        Arc::new(partner_core::clock::TokioClock::now()),
        leasing,
    );
    let hub = Hub::new();
    let mut served = Served::new(
        handle.clone(),
        config,
        db,
        Some(socket.clone()),
        hub.clone(),
    );
    served.cookie = Some(cookie);
    let daemon = Arc::new(Daemon {
        served,
        budget: Arc::new(Budget::default()),
    });
    let publisher = publish(&handle, hub);
    tracing::info!(
        name = %config.name,
        db = %db.display(),
        socket = %socket.display(),
        tcp = ?listen.tcp,
        host = ?host,
        agents = config.agents.len(),
        "serving"
    );
    let stopped = serve_until_stopped(&daemon, &unix, tcp.as_ref(), &mut task).await?;
    handle.shutdown();
    if stopped.is_none() {
        let _ = task.await;
    }
    publisher.abort();
    let _ = std::fs::remove_file(&socket);
    partner_core::doorman::remove_cookie(&socket);
    drop(lock);
    tracing::info!("stopped");
    match stopped {
        Some(why) => Err(why),
        None => Ok(()),
    }
}
