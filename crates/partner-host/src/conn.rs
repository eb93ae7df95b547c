//! One client's connection: its hello (version; a partner's token over
//! TCP; on the Unix socket the daemon's cookie or a token, from a process
//! outside every sandbox), its requests answered in order, and — once it subscribes — a snapshot
//! and then every event, through a bounded queue. A client that falls
//! more than the queue behind gets a fresh snapshot instead of a stream
//! with holes; a malformed or oversized line gets an error and the
//! connection is closed; the daemon carries on either way.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{broadcast, mpsc};

use super::budget::{HELLO_DEADLINE, Slot};
use super::hub::CLIENT_LAG;
use super::{Daemon, Served};
use partner_core::doorman::{Peer, same_cookie};
use partner_policy::Authority;
use partner_protocol::{Op, Request, ServerMsg, VERSION, line, parse, read_line};

/// How long a write to a client may take before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most requests of one client running at once; it waits for one to end
/// before more of its lines are read.
const MAX_IN_FLIGHT: usize = 32;
/// How long a partner's token is taken as still valid before it is
/// checked again (a revoked partner loses the connection within it).
const TOKEN_RECHECK: Duration = Duration::from_secs(1);

/// The token a client showed, checked again as it goes on: a partner
/// revoked while connected is told so and let go, subscription and all.
struct Standing {
    token: Option<String>,
    checked: std::sync::Mutex<(Instant, bool)>,
}

impl Standing {
    fn new(token: Option<String>) -> Arc<Standing> {
        Arc::new(Standing {
            token,
            checked: std::sync::Mutex::new((Instant::now(), true)),
        })
    }

    /// Whether the client still acts as a partner (always, without a
    /// token: the cookie's holder is the owner). A check that fails to
    /// reach the store keeps the last answer.
    async fn holds(&self, served: &Served) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        if let Ok(c) = self.checked.lock()
            && c.0.elapsed() < TOKEN_RECHECK
        {
            return c.1;
        }
        let valid = match partner_of(served, token.clone()).await {
            Ok(found) => found.is_some(),
            Err(_) => return self.checked.lock().map(|c| c.1).unwrap_or(true),
        };
        if let Ok(mut c) = self.checked.lock() {
            *c = (Instant::now(), valid);
        }
        valid
    }
}

/// What a client whose token was revoked is told as it is let go.
fn revoked(by: &Authority) -> String {
    format!("{by} was revoked, so this connection is closed")
}

/// How a client came in.
#[derive(Debug, Clone, Copy)]
pub enum Came {
    /// Through the Unix socket, from this process (as the kernel says).
    Unix(Peer),
    /// Over TCP, from this address.
    Tcp(std::net::SocketAddr),
}

/// Serves one client until it leaves or misbehaves, holding its `slot`
/// in the connection budget. Over TCP the client must show a partner's
/// token and acts as that partner. On the Unix socket — the owner's, but
/// a command the partner approved runs as the owner too — the client is
/// the unnamed local partner only with the daemon's cookie, or the
/// partner a token names; a process inside a command's sandbox is turned
/// away whatever it shows.
pub async fn serve<S>(daemon: Arc<Daemon>, stream: S, mut slot: Slot, came: Came)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (read, write) = tokio::io::split(stream);
    let mut reader = BufReader::new(read);
    let (tx, writer) = spawn_writer(write);
    let (who, by, token) = match hello(&daemon.served, &mut reader, came).await {
        Ok(Some(hello)) => hello,
        Ok(None) => return,
        Err(message) => {
            let _ = tx.send(ServerMsg::Error { message }).await;
            drop(tx);
            let _ = writer.await;
            return;
        }
    };
    slot.greeted();
    let _ = tx
        .send(ServerMsg::Welcome {
            version: VERSION,
            pid: std::process::id(),
            name: daemon.served.name.clone(),
            partner: Some(by.to_string()),
        })
        .await;
    daemon.served.clients.fetch_add(1, Ordering::SeqCst);
    tracing::info!(client = %who, partner = %by, "client connected");
    let standing = Standing::new(token);
    requests(&daemon, &mut reader, &tx, (&who, &by, came), &standing).await;
    daemon.served.clients.fetch_sub(1, Ordering::SeqCst);
    tracing::info!(client = %who, "client left");
    drop(tx);
    let _ = writer.await;
}

/// Everything the client is sent goes through one bounded queue and one
/// writer, so replies and events never interleave within a line; the
/// writer stops after an error (the connection then closes) or a write
/// that takes too long.
fn spawn_writer<W>(mut write: W) -> (mpsc::Sender<ServerMsg>, tokio::task::JoinHandle<()>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::channel::<ServerMsg>(CLIENT_LAG);
    let writer = tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            let closing = matches!(msg, ServerMsg::Error { .. });
            let text = line(&partner_protocol::fit::fit(msg));
            match tokio::time::timeout(WRITE_TIMEOUT, write.write_all(text.as_bytes())).await {
                Ok(Ok(())) => {}
                _ => break,
            }
            if closing {
                break;
            }
        }
        let _ = write.shutdown().await;
    });
    (tx, writer)
}

/// The client's hello, within its deadline: who it says it is and the
/// partner it acts as; `None` when it left first; why it is refused (an
/// old version, no partner's token over TCP, a token that is not one,
/// anything but a hello).
async fn hello<R: AsyncRead + Unpin>(
    served: &Served,
    reader: &mut BufReader<R>,
    came: Came,
) -> Result<Option<(String, Authority, Option<String>)>, String> {
    let hello = match tokio::time::timeout(HELLO_DEADLINE, read_line(reader)).await {
        Ok(Ok(Some(text))) => parse::<Request>(&text)?,
        Ok(Ok(None)) => return Ok(None),
        Ok(Err(e)) => return Err(e),
        Err(_) => {
            return Err(format!(
                "no hello within {} seconds",
                HELLO_DEADLINE.as_secs()
            ));
        }
    };
    let Op::Hello {
        version,
        client,
        token,
        cookie,
    } = hello.op
    else {
        return Err("the first message must be hello".into());
    };
    if version != VERSION {
        return Err(format!(
            "protocol version {version}; this daemon speaks version {VERSION}"
        ));
    }
    if let Came::Unix(peer) = came
        && let Some(why) = peer.sandboxed()
    {
        tracing::warn!(client = %client, pid = peer.pid, uid = peer.uid, "refused a client inside a sandbox: {why}");
        return Err(format!("refused: {why}"));
    }
    let token = token.filter(|t| !t.trim().is_empty());
    let shown = token.clone();
    let by = match (token, came) {
        (None, Came::Tcp(_)) => {
            tracing::warn!(client = %client, "refused a TCP client without a token");
            return Err(
                "a partner's token is needed to connect over TCP (`partner partners add NAME` makes one)"
                    .into(),
            );
        }
        (None, Came::Unix(peer)) => {
            let shown = cookie.as_deref().unwrap_or("");
            match &served.cookie {
                Some(ours) if same_cookie(shown, ours) => Authority::Partner,
                _ => {
                    tracing::warn!(client = %client, pid = peer.pid, uid = peer.uid, "refused a client without the socket's cookie");
                    return Err(no_cookie(served));
                }
            }
        }
        (Some(token), _) => match partner_of(served, token).await? {
            Some(name) => Authority::Named(name),
            None => {
                tracing::warn!(client = %client, "refused a client whose token is no partner's");
                return Err("that token is not a partner's (or it was revoked)".into());
            }
        },
    };
    Ok(Some((client, by, shown)))
}

/// What a client of the Unix socket without the cookie or a token is
/// told.
fn no_cookie(served: &Served) -> String {
    let kept = served
        .socket
        .as_deref()
        .and_then(partner_core::doorman::cookie_path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "partner's data directory".into());
    format!(
        "this daemon's socket needs its cookie, kept in {kept} for the user who started it (with the same HOME), or a partner's token"
    )
}

/// The active partner whose token this is.
async fn partner_of(served: &Served, token: String) -> Result<Option<String>, String> {
    super::ops::blocking(served, move |ex| {
        ex.store()
            .partners()
            .partner_of(&token)
            .map_err(|e| format!("cannot check the token: {e}"))
    })
    .await?
}

/// The client's requests, each answered on its own (at most
/// `MAX_IN_FLIGHT` at once), until it leaves or sends a bad line; after a
/// subscription, the snapshot and events go out beside them.
async fn requests<R: AsyncRead + Unpin>(
    daemon: &Arc<Daemon>,
    reader: &mut BufReader<R>,
    tx: &mpsc::Sender<ServerMsg>,
    (who, by, came): (&str, &Authority, Came),
    standing: &Arc<Standing>,
) {
    let mut forward: Option<tokio::task::JoinHandle<()>> = None;
    let in_flight = Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT));
    loop {
        let request = match read_line(reader).await {
            Ok(Some(text)) if text.trim().is_empty() => continue,
            Ok(Some(text)) => parse::<Request>(&text),
            Ok(None) => break,
            Err(e) => Err(e),
        };
        let request = match request {
            Ok(request) => request,
            Err(e) => {
                tracing::warn!(client = %who, error = %e, "closed a client's connection");
                let _ = tx.send(ServerMsg::Error { message: e }).await;
                break;
            }
        };
        if !standing.holds(&daemon.served).await {
            tracing::warn!(client = %who, partner = %by, "closed the connection of a revoked partner");
            let _ = tx
                .send(ServerMsg::Error {
                    message: revoked(by),
                })
                .await;
            break;
        }
        match request.op {
            Op::Subscribe => {
                if forward.is_none() {
                    let (daemon, tx, standing) =
                        (Arc::clone(daemon), tx.clone(), Arc::clone(standing));
                    let by = by.clone();
                    forward = Some(tokio::spawn(follow(daemon, tx, (standing, by))));
                }
            }
            op => {
                if let Op::Decide { request, decision } = &op {
                    let from = match came {
                        Came::Unix(p) => format!("unix socket, pid {} uid {}", p.pid, p.uid),
                        Came::Tcp(addr) => format!("tcp {addr}"),
                    };
                    tracing::info!(client = %who, partner = %by, from = %from, request = %request, decision = ?decision, "decision asked");
                }
                // Each request runs on its own, so a decision that waits on
                // the database does not hold the client's other requests.
                let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else {
                    break;
                };
                let daemon = Arc::clone(daemon);
                let tx = tx.clone();
                let by = by.clone();
                tokio::spawn(async move {
                    let answer = super::ops::run(&daemon.served, request.id, op, &by).await;
                    let _ = tx.send(answer).await;
                    drop(permit);
                });
            }
        }
    }
    if let Some(forward) = forward {
        forward.abort();
    }
}

/// A snapshot, then every event; a fresh snapshot whenever the client
/// fell too far behind.
async fn follow(
    daemon: Arc<Daemon>,
    tx: mpsc::Sender<ServerMsg>,
    (standing, by): (Arc<Standing>, Authority),
) {
    loop {
        let (recent, mut events) = daemon.served.hub.join();
        let snapshot = super::ops::snapshot(&daemon.served, recent).await;
        if tx
            .send(ServerMsg::Snapshot {
                snapshot: Box::new(snapshot),
            })
            .await
            .is_err()
        {
            return;
        }
        loop {
            let event = events.recv().await;
            if !standing.holds(&daemon.served).await {
                let _ = tx
                    .send(ServerMsg::Error {
                        message: revoked(&by),
                    })
                    .await;
                return;
            }
            match event {
                Ok(event) => match tx.try_send(ServerMsg::Event(event)) {
                    Ok(()) => {}
                    // Too slow: start again from a snapshot.
                    Err(mpsc::error::TrySendError::Full(_)) => break,
                    Err(mpsc::error::TrySendError::Closed(_)) => return,
                },
                Err(broadcast::error::RecvError::Lagged(_)) => break,
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
        tracing::info!("a client fell behind; sending it a fresh snapshot");
    }
}
