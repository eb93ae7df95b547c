//! [`RemoteHost`]: a daemon reached over its socket, for a console
//! attached to it. Events arrive in order, each once (a snapshot
//! after a reconnection passes on only what came after the last event
//! seen); replies find their request by id; when the daemon goes away the
//! console is told, keeps its screen, and the link connects again every
//! second until the daemon is back.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixStream};

/// The reading half of a connection to a daemon (a socket or TCP).
type OwnedReadHalf = Box<dyn AsyncRead + Send + Unpin>;
/// The writing half.
type OwnedWriteHalf = Box<dyn AsyncWrite + Send + Unpin>;
use tokio::sync::{broadcast, oneshot};

use partner_protocol::host::Pending;
use partner_protocol::{
    Answer, Connection, Event, Host, Op, Request, ServerMsg, VERSION, line, parse, read_line,
};

/// The subscription: answered with a snapshot, then the events.
const SUBSCRIBE: Request = Request {
    id: 0,
    op: Op::Subscribe,
};

/// How long a request waits for its reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest wait for a command of the partner's to end.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

type Replies =
    Arc<Mutex<HashMap<u64, oneshot::Sender<(bool, String, partner_protocol::Returned)>>>>;

/// A daemon, over its socket.
pub struct RemoteHost {
    door: Door,
    writer: Arc<tokio::sync::Mutex<Option<OwnedWriteHalf>>>,
    replies: Replies,
    next_id: AtomicU64,
    events: broadcast::Sender<Event>,
    /// The daemon's process id (it changes when the daemon restarts).
    pub pid: Arc<AtomicU64>,
    /// The console subscribed: the link subscribes to the daemon then, so
    /// the snapshot's events reach it (a broadcast keeps nothing for
    /// receivers to come).
    subscribed: std::sync::atomic::AtomicBool,
    /// Whether the daemon answers now.
    connection: Arc<Mutex<Connection>>,
    /// The partner the daemon says this console acts as.
    partner: Option<String>,
}

/// Where a daemon listens, and the partner's token the console shows it
/// (none: the unnamed local partner, which only the socket admits).
#[derive(Debug, Clone)]
pub struct Door {
    /// The daemon's socket, or its TCP address.
    pub at: Address,
    /// A partner's token, to act under that partner's name.
    pub token: Option<String>,
}

impl Door {
    /// The daemon's socket, as the unnamed local partner.
    pub fn local(socket: PathBuf) -> Self {
        Door {
            at: Address::Socket(socket),
            token: None,
        }
    }
}

/// A daemon's listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// Its Unix socket, on this machine.
    Socket(PathBuf),
    /// Its TCP listener (`partner serve --listen`).
    Tcp(std::net::SocketAddr),
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Socket(path) => write!(f, "{}", path.display()),
            Address::Tcp(addr) => write!(f, "{addr}"),
        }
    }
}

/// Why a console could not open a connection to a daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// Nothing answered there (no daemon, or it did not answer in time).
    Unreachable(String),
    /// A daemon answered and refused this console (a token it does not
    /// take, a cookie it does not know): its words.
    Refused(String),
    /// A daemon answered with something that is not partner's protocol.
    Broken(String),
}

impl std::fmt::Display for Opening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Opening::Unreachable(why) | Opening::Broken(why) => f.write_str(why),
            Opening::Refused(why) => write!(f, "the daemon refused this console: {why}"),
        }
    }
}

/// Connects to `at` within the reply deadline: the two halves.
async fn connect(at: &Address) -> Result<(OwnedReadHalf, OwnedWriteHalf), String> {
    let refused = |e: std::io::Error| format!("no daemon listens on {at}: {e}");
    let connected = tokio::time::timeout(REPLY_TIMEOUT, async {
        match at {
            Address::Socket(path) => {
                let (read, write) = UnixStream::connect(path).await?.into_split();
                Ok::<(OwnedReadHalf, OwnedWriteHalf), std::io::Error>((
                    Box::new(read),
                    Box::new(write),
                ))
            }
            Address::Tcp(addr) => {
                let stream = TcpStream::connect(addr).await?;
                stream.set_nodelay(true)?;
                let (read, write) = stream.into_split();
                Ok((
                    Box::new(read) as OwnedReadHalf,
                    Box::new(write) as OwnedWriteHalf,
                ))
            }
        }
    })
    .await
    .map_err(|_| format!("{at} did not answer"))?;
    connected.map_err(refused)
}

/// A connection past its welcome.
struct Welcomed {
    read: OwnedReadHalf,
    write: OwnedWriteHalf,
    /// The daemon's process id.
    pid: u32,
    /// The partner the daemon says the connection acts as.
    partner: Option<String>,
}

/// Connects and says hello (and subscribes, when `subscribe`).
async fn open(door: &Door, subscribe: bool) -> Result<Welcomed, Opening> {
    let (read, mut write) = connect(&door.at).await.map_err(Opening::Unreachable)?;
    let broken = |e: String| Opening::Broken(e);
    let mut reader = BufReader::new(read);
    let hello = Request {
        id: 0,
        op: Op::Hello {
            version: VERSION,
            client: format!("console {}", std::process::id()),
            token: door.token.clone(),
            cookie: match &door.at {
                Address::Socket(path) => partner_core::doorman::read_cookie(path),
                Address::Tcp(_) => None,
            },
        },
    };
    write
        .write_all(line(&hello).as_bytes())
        .await
        .map_err(|e| Opening::Unreachable(e.to_string()))?;
    let welcome = tokio::time::timeout(REPLY_TIMEOUT, read_message(&mut reader))
        .await
        .map_err(|_| Opening::Unreachable("the daemon did not answer".into()))?
        .map_err(broken)?;
    let (pid, partner) = match welcome {
        Some(ServerMsg::Welcome { pid, partner, .. }) => (pid, partner),
        Some(ServerMsg::Error { message }) => return Err(Opening::Refused(message)),
        other => return Err(broken(format!("expected a welcome, got {other:?}"))),
    };
    if subscribe {
        write
            .write_all(line(&SUBSCRIBE).as_bytes())
            .await
            .map_err(|e| Opening::Unreachable(e.to_string()))?;
    }
    // Whatever the reader buffered past the welcome is still in `reader`:
    // hand back its inner half only when nothing is buffered.
    if !reader.buffer().is_empty() {
        return Err(broken(
            "the daemon sent more than a welcome before the subscription".into(),
        ));
    }
    Ok(Welcomed {
        read: reader.into_inner(),
        write,
        pid,
        partner,
    })
}

async fn read_message(reader: &mut BufReader<OwnedReadHalf>) -> Result<Option<ServerMsg>, String> {
    match read_line(reader).await? {
        Some(text) => parse(&text).map(Some),
        None => Ok(None),
    }
}

impl RemoteHost {
    /// Attaches to the daemon listening at `door`.
    pub async fn connect(door: &Door) -> Result<Arc<Self>, Opening> {
        let Welcomed {
            read,
            write,
            pid,
            partner,
        } = open(door, false).await?;
        let (events, _) = broadcast::channel(4096);
        let runtime = Arc::new(RemoteHost {
            door: door.clone(),
            writer: Arc::new(tokio::sync::Mutex::new(Some(write))),
            replies: Arc::new(Mutex::new(HashMap::new())),
            next_id: AtomicU64::new(1),
            events,
            pid: Arc::new(AtomicU64::new(u64::from(pid))),
            subscribed: std::sync::atomic::AtomicBool::new(false),
            connection: Arc::new(Mutex::new(Connection::Attached)),
            partner,
        });
        tokio::spawn(follow(
            Arc::downgrade(&runtime),
            read,
            Wires {
                events: runtime.events.clone(),
                replies: Arc::clone(&runtime.replies),
                writer: Arc::clone(&runtime.writer),
                pid: Arc::clone(&runtime.pid),
                door: runtime.door.clone(),
                connection: Arc::clone(&runtime.connection),
            },
        ));
        Ok(runtime)
    }

    /// The partner this console acts as, as the daemon said at hello
    /// (`partner:alice`; `partner` without a token).
    pub fn partner(&self) -> Option<&str> {
        self.partner.as_deref()
    }

    async fn request(&self, op: Op) -> Result<Answer, String> {
        let deadline = deadline(&op);
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.replies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        {
            let mut writer = self.writer.lock().await;
            let Some(w) = writer.as_mut() else {
                return Err("the daemon is not reachable now".into());
            };
            if let Err(e) = w.write_all(line(&Request { id, op }).as_bytes()).await {
                return Err(format!("the daemon is not reachable now: {e}"));
            }
        }
        match tokio::time::timeout(deadline, rx).await {
            Ok(Ok((true, message, data))) => Ok(Answer { message, data }),
            Ok(Ok((false, message, _))) => Err(message),
            Ok(Err(_)) => Err("the daemon went away before answering".into()),
            Err(_) => Err("the daemon did not answer in time".into()),
        }
    }
}

/// How long to wait for the answer to `op`: a command of the partner's
/// runs as long as its time limit allows (`StopCommand` stops it sooner).
fn deadline(op: &Op) -> Duration {
    match op {
        Op::RunCommand { .. } => COMMAND_TIMEOUT,
        _ => REPLY_TIMEOUT,
    }
}

/// What the reader of a link shares with the link itself.
struct Wires {
    events: broadcast::Sender<Event>,
    replies: Replies,
    writer: Arc<tokio::sync::Mutex<Option<OwnedWriteHalf>>>,
    pid: Arc<AtomicU64>,
    door: Door,
    connection: Arc<Mutex<Connection>>,
}

/// Reads the daemon's messages for as long as the console keeps the link:
/// events on, replies to their requests; connects again when it goes away.
async fn follow(link: std::sync::Weak<RemoteHost>, mut read: OwnedReadHalf, wires: Wires) {
    let mut last_seq = 0u64;
    loop {
        let mut reader = BufReader::new(read);
        loop {
            if link.strong_count() == 0 {
                return;
            }
            match read_message(&mut reader).await {
                Ok(Some(msg)) => wires.on_message(msg, &mut last_seq).await,
                Ok(None) | Err(_) => break,
            }
        }
        wires.went_away().await;
        match wires.reconnect(&link, &mut last_seq).await {
            Some(again) => read = again,
            None => return,
        }
    }
}

impl Wires {
    /// One message from the daemon: events passed on once each (their cut
    /// texts fetched whole), a reply to the request that waits for it.
    async fn on_message(&self, msg: ServerMsg, last_seq: &mut u64) {
        match msg {
            ServerMsg::Event(e) => {
                if e.seq > *last_seq {
                    *last_seq = e.seq;
                    let mut budget = WHOLE_BUDGET;
                    let _ = self.events.send(whole(&self.door, e, &mut budget).await);
                }
            }
            ServerMsg::Snapshot { snapshot } => {
                if snapshot.left_out > 0 && *last_seq == 0 {
                    let _ = self.events.send(Event::Error {
                        agent: None,
                        message: format!(
                            "{} older events did not fit the daemon's snapshot; `partner trace` has them",
                            snapshot.left_out
                        ),
                    });
                }
                // What the console has not seen of the recent events,
                // their cut texts fetched whole.
                let mut budget = WHOLE_BUDGET;
                for e in snapshot.recent {
                    if e.seq > *last_seq {
                        *last_seq = e.seq;
                        let _ = self.events.send(whole(&self.door, e, &mut budget).await);
                    }
                }
            }
            ServerMsg::Reply {
                id,
                ok,
                message,
                data,
            } => {
                let waiting = self
                    .replies
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                if let Some(tx) = waiting {
                    let _ = tx.send((ok, message, data));
                }
            }
            ServerMsg::Error { message } => {
                let _ = self.events.send(Event::Error {
                    agent: None,
                    message: format!("the daemon: {message}"),
                });
            }
            ServerMsg::Welcome { .. } => {}
        }
    }

    /// The daemon went away: nothing more can be sent, the requests that
    /// wait are told (their senders dropped), and the console is told.
    async fn went_away(&self) {
        *self.writer.lock().await = None;
        self.set(Connection::Gone {
            since: partner_core::clock::system_clock().now_ms(),
        });
        self.replies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let _ = self.events.send(Event::Error {
            agent: None,
            message: "the daemon went away; the agents may be stopped. Reconnecting…".into(),
        });
    }

    /// Connects again every second while the console keeps the link: the
    /// new connection's reading half (`None`: the console let go).
    async fn reconnect(
        &self,
        link: &std::sync::Weak<RemoteHost>,
        last_seq: &mut u64,
    ) -> Option<OwnedReadHalf> {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if link.strong_count() == 0 {
                return None;
            }
            let opened = match open(&self.door, true).await {
                Ok(opened) => opened,
                Err(Opening::Refused(why)) => {
                    self.refused(why);
                    continue;
                }
                Err(_) => continue,
            };
            let Welcomed {
                read: r,
                write: w,
                pid: new_pid,
                ..
            } = opened;
            if u64::from(new_pid) != self.pid.swap(u64::from(new_pid), Ordering::SeqCst) {
                // A new daemon numbers its events from 1 again.
                *last_seq = 0;
            }
            *self.writer.lock().await = Some(w);
            self.set(Connection::Attached);
            let _ = self.events.send(Event::Error {
                agent: None,
                message: format!("attached again to the daemon (pid {new_pid})"),
            });
            return Some(r);
        }
    }

    /// The daemon answers but refuses this console (its partner's token
    /// was revoked): said once, and shown until it lets the console in.
    fn refused(&self, why: String) {
        let already = matches!(
            *self.connection.lock().unwrap_or_else(|e| e.into_inner()),
            Connection::Refused { .. }
        );
        if already {
            return;
        }
        self.set(Connection::Refused {
            since: partner_core::clock::system_clock().now_ms(),
        });
        let _ = self.events.send(Event::Error {
            agent: None,
            message: format!(
                "the daemon refused this console: {why}; nothing is decided or sent from here until it lets this partner in"
            ),
        });
    }

    fn set(&self, state: Connection) {
        *self.connection.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }
}

/// Most bytes of cut texts fetched whole for one snapshot or event; past
/// it, events stay cut (their marker says so).
const WHOLE_BUDGET: usize = 32 << 20;

/// The event whole: when the daemon cut its texts to fit a line, they
/// are fetched over a connection of their own (the stream waits), within
/// `budget` bytes; on any failure the cut event, marker and all.
async fn whole(door: &Door, e: partner_protocol::Sequenced, budget: &mut usize) -> Event {
    if e.cut == 0 || (e.cut as usize) > *budget {
        return e.event;
    }
    let fetched = tokio::time::timeout(REPLY_TIMEOUT, fetch(door, e.seq)).await;
    match fetched {
        Ok(Ok(event)) => {
            *budget = budget.saturating_sub(e.cut as usize);
            event
        }
        _ => e.event,
    }
}

/// Fetches recent event `seq` whole, piece by piece.
async fn fetch(door: &Door, seq: u64) -> Result<Event, String> {
    let Welcomed {
        read, mut write, ..
    } = open(door, false).await.map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(read);
    let mut pieces = partner_protocol::client::EventPieces::default();
    for id in 1.. {
        let ask = Request {
            id,
            op: Op::Event {
                seq,
                offset: pieces.offset(),
            },
        };
        write
            .write_all(line(&ask).as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let data = match read_message(&mut reader).await? {
            Some(ServerMsg::Reply {
                ok: true,
                data: data @ partner_protocol::Returned::EventPiece { .. },
                ..
            }) => data,
            other => return Err(format!("no piece of event {seq}: {other:?}")),
        };
        if !pieces.add(&data)? {
            break;
        }
    }
    pieces.event()
}

impl Host for RemoteHost {
    fn events(&self) -> broadcast::Receiver<Event> {
        let receiver = self.events.subscribe();
        if !self.subscribed.swap(true, Ordering::SeqCst) {
            let writer = Arc::clone(&self.writer);
            tokio::spawn(async move {
                if let Some(w) = writer.lock().await.as_mut() {
                    let _ = w.write_all(line(&SUBSCRIBE).as_bytes()).await;
                }
            });
        }
        receiver
    }

    fn call(&self, op: Op) -> Pending<'_, Result<Answer, String>> {
        Box::pin(self.request(op))
    }

    fn connection(&self) -> Connection {
        *self.connection.lock().unwrap_or_else(|e| e.into_inner())
    }
}
