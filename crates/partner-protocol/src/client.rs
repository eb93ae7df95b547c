//! A client of a running daemon for commands and tests: connects to its
//! socket, says hello, sends requests and reads replies, every read and
//! write with a timeout and every line bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use super::{MAX_LINE, Op, Request, ServerMsg, VERSION, line, parse};

/// How long a client waits for the daemon to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The reading half of a connection: a Unix or a TCP stream.
trait Incoming: Read + Send {
    fn set_read_timeout(&self, wait: Option<Duration>) -> std::io::Result<()>;
}

impl Incoming for UnixStream {
    fn set_read_timeout(&self, wait: Option<Duration>) -> std::io::Result<()> {
        UnixStream::set_read_timeout(self, wait)
    }
}

impl Incoming for TcpStream {
    fn set_read_timeout(&self, wait: Option<Duration>) -> std::io::Result<()> {
        TcpStream::set_read_timeout(self, wait)
    }
}

/// A connection to a daemon.
pub struct Client {
    reader: BufReader<Box<dyn Incoming>>,
    writer: Box<dyn Write + Send>,
    next_id: u64,
    /// The daemon's process id (from its welcome).
    pub pid: u32,
    /// The constellation's name.
    pub name: String,
}

/// Why a client could not talk to a daemon.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens there (no daemon runs for that database).
    #[error("no daemon listens on {0}")]
    NoDaemon(String),
    /// The daemon refused or broke the conversation.
    #[error("the daemon: {0}")]
    Protocol(String),
    /// The connection failed or timed out.
    #[error("the connection to the daemon failed: {0}")]
    Io(String),
}

fn io(e: std::io::Error) -> ClientError {
    ClientError::Io(e.to_string())
}

impl Client {
    /// Connects to the daemon listening on `socket` and says hello as
    /// `who` (`cli`, `console`: for the daemon's log).
    pub fn connect(socket: &Path, who: &str) -> Result<Self, ClientError> {
        Self::connect_as(socket, who, None)
    }

    /// [`Client::connect`] showing a partner's token, to act under that
    /// partner's name.
    pub fn connect_as(socket: &Path, who: &str, token: Option<&str>) -> Result<Self, ClientError> {
        let cookie = partner_core::doorman::read_cookie(socket);
        Self::connect_with(socket, who, token, cookie)
    }

    /// [`Client::connect_as`] showing `cookie` (the daemon's, read from
    /// where it keeps it) rather than the one this process would find.
    pub fn connect_with(
        socket: &Path,
        who: &str,
        token: Option<&str>,
        cookie: Option<String>,
    ) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(socket)
            .map_err(|_| ClientError::NoDaemon(socket.display().to_string()))?;
        stream.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
        stream.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
        let writer = stream.try_clone().map_err(io)?;
        Self::greet(Box::new(stream), Box::new(writer), who, token, cookie)
    }

    /// Connects to a daemon's TCP listener at `addr` with a partner's
    /// token (within [`TIMEOUT`]).
    pub fn connect_tcp(
        addr: std::net::SocketAddr,
        who: &str,
        token: &str,
    ) -> Result<Self, ClientError> {
        let stream = TcpStream::connect_timeout(&addr, TIMEOUT)
            .map_err(|_| ClientError::NoDaemon(addr.to_string()))?;
        stream.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
        stream.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        let writer = stream.try_clone().map_err(io)?;
        Self::greet(Box::new(stream), Box::new(writer), who, Some(token), None)
    }

    /// Says hello and reads the welcome.
    fn greet(
        read: Box<dyn Incoming>,
        writer: Box<dyn Write + Send>,
        who: &str,
        token: Option<&str>,
        cookie: Option<String>,
    ) -> Result<Self, ClientError> {
        let mut client = Client {
            reader: BufReader::new(read),
            writer,
            next_id: 1,
            pid: 0,
            name: String::new(),
        };
        client.send(&Op::Hello {
            version: VERSION,
            client: format!("{who} {}", std::process::id()),
            token: token.map(str::to_string),
            cookie,
        })?;
        match client.read()? {
            ServerMsg::Welcome { pid, name, .. } => {
                client.pid = pid;
                client.name = name;
                Ok(client)
            }
            ServerMsg::Error { message } => Err(ClientError::Protocol(message)),
            other => Err(ClientError::Protocol(format!(
                "expected a welcome, got {other:?}"
            ))),
        }
    }

    fn send(&mut self, op: &Op) -> Result<u64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let text = line(&Request { id, op: op.clone() });
        self.writer.write_all(text.as_bytes()).map_err(io)?;
        self.writer.flush().map_err(io)?;
        Ok(id)
    }

    /// Reads the next message.
    pub fn read(&mut self) -> Result<ServerMsg, ClientError> {
        let mut buf = Vec::new();
        let read = (&mut self.reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(io)?;
        if read == 0 {
            return Err(ClientError::Protocol(
                "the daemon closed the connection".into(),
            ));
        }
        let text = String::from_utf8_lossy(&buf);
        parse(&text).map_err(ClientError::Protocol)
    }

    /// Sends `op` and waits for its reply (events that arrive meanwhile
    /// are skipped): what it said, and its data.
    pub fn request(&mut self, op: Op) -> Result<(String, crate::Returned), ClientError> {
        let id = self.send(&op)?;
        loop {
            match self.read()? {
                ServerMsg::Reply {
                    id: got,
                    ok,
                    message,
                    data,
                } if got == id => {
                    return if ok {
                        Ok((message, data))
                    } else {
                        Err(ClientError::Protocol(message))
                    };
                }
                ServerMsg::Error { message } => return Err(ClientError::Protocol(message)),
                _ => continue,
            }
        }
    }

    /// Asks for the snapshot and the events after it; read them with
    /// [`Client::read`].
    pub fn subscribe(&mut self) -> Result<(), ClientError> {
        self.send(&Op::Subscribe).map(|_| ())
    }

    /// Waits at most `wait` for each message read from now on.
    pub fn set_timeout(&mut self, wait: Duration) -> Result<(), ClientError> {
        self.reader
            .get_ref()
            .set_read_timeout(Some(wait))
            .map_err(io)
    }
}

/// Most bytes of JSON one whole event may take when fetched (a hostile
/// daemon cannot make a client read forever).
pub const MAX_EVENT_JSON: usize = 64 << 20;

/// An event put back together from the pieces [`Op::Event`] replies
/// carry, bounded by [`MAX_EVENT_JSON`].
#[derive(Debug, Default)]
pub struct EventPieces {
    json: String,
    offset: usize,
}

impl EventPieces {
    /// Where the next piece starts.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Adds a reply's data; true when more pieces follow.
    pub fn add(&mut self, data: &crate::Returned) -> Result<bool, String> {
        let crate::Returned::EventPiece { json, next, .. } = data else {
            return Err("an event piece without its json".into());
        };
        self.json.push_str(json);
        if self.json.len() > MAX_EVENT_JSON {
            return Err(format!("an event over {MAX_EVENT_JSON} bytes"));
        }
        match *next {
            Some(next) if next > self.offset => {
                self.offset = next;
                Ok(true)
            }
            Some(_) => Err("an event piece that does not move on".into()),
            None => Ok(false),
        }
    }

    /// The event the pieces make.
    pub fn event(self) -> Result<crate::Event, String> {
        serde_json::from_str(&self.json).map_err(|e| format!("an event that does not read: {e}"))
    }
}

/// Fetches recent event `seq` whole, however long its texts.
pub fn fetch_event(client: &mut Client, seq: u64) -> Result<crate::Event, ClientError> {
    let mut pieces = EventPieces::default();
    loop {
        let offset = pieces.offset();
        let (_, data) = client.request(Op::Event { seq, offset })?;
        if !pieces.add(&data).map_err(ClientError::Protocol)? {
            return pieces.event().map_err(ClientError::Protocol);
        }
    }
}
