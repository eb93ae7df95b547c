//! One MCP server, supervised: started (a child speaking over its stdio,
//! or a streamable-HTTP endpoint reached by URL), its tools listed, and
//! started again with a growing pause when it stops — until the hub stops
//! it. Its stderr goes to the log a line at a time, each line cut.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, ServiceExt};
use serde::Serialize;
use tokio::io::AsyncBufReadExt;
use tokio::sync::Notify;

use crate::config::ServerConfig;
use crate::tools::{MAX_TOOLS, ToolInfo, cut};

/// A connected client.
pub(crate) type Client = RunningService<RoleClient, ()>;

/// Longest one message from a server may be; a longer line is dropped by
/// the transport (and the call waiting on it times out).
pub const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// Longest a server may take to start and answer `initialize` and
/// `tools/list`.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Longest pause between two starts of a server that keeps stopping.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Pages of `tools/list` read at most.
const MAX_PAGES: usize = 16;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// Being started.
    Starting,
    /// Running, its tools listed.
    Ready,
    /// Stopped or unreachable: why, and when it is tried again.
    Down {
        /// What went wrong.
        why: String,
    },
    /// Stopped by partner.
    Stopped,
}

/// A server as `partner mcp list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// How it is reached (`command args…` or the URL).
    pub reached: String,
    /// Where it stands.
    pub state: ServerState,
    /// Its tools.
    pub tools: Vec<ToolInfo>,
    /// Tools left out, and why.
    pub left_out: Vec<String>,
    /// Times it was started again after stopping.
    pub restarts: u32,
    /// The walls it runs behind, as raised at its last start (not what
    /// its entry asks for): `sandboxed (…)`, `PARTLY SANDBOXED (…)`, `NOT
    /// sandboxed (sandbox = false)`, `reached over HTTP`, or `not started`.
    pub walls: String,
}

/// One server and its supervision.
pub(crate) struct Server {
    pub config: ServerConfig,
    /// The folder relative paths in its entry are read from.
    pub base: PathBuf,
    pub state: Mutex<ServerState>,
    pub tools: Mutex<(Vec<ToolInfo>, Vec<String>)>,
    pub client: tokio::sync::Mutex<Option<Client>>,
    pub restarts: AtomicU32,
    /// Told when partner stops the server.
    pub stop: Notify,
    pub stopping: AtomicBool,
    /// Told when a call found the connection broken.
    pub broken: Notify,
    /// Told each time the server is ready or down after a start.
    pub settled: Notify,
    /// The walls raised at its last start, as [`ServerStatus::walls`].
    pub walls: Mutex<String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Server {
    pub fn new(config: ServerConfig, base: PathBuf) -> Self {
        Server {
            config,
            base,
            state: Mutex::new(ServerState::Starting),
            tools: Mutex::new((Vec::new(), Vec::new())),
            client: tokio::sync::Mutex::new(None),
            restarts: AtomicU32::new(0),
            stop: Notify::new(),
            stopping: AtomicBool::new(false),
            broken: Notify::new(),
            settled: Notify::new(),
            walls: Mutex::new("not started".into()),
        }
    }

    pub fn state(&self) -> ServerState {
        lock(&self.state).clone()
    }

    fn set_state(&self, state: ServerState) {
        if let ServerState::Down { why } = &state {
            tracing::warn!(server = %self.config.name, "MCP server down: {why}");
        }
        *lock(&self.state) = state;
        self.settled.notify_waiters();
    }

    /// What `partner mcp list` shows of it.
    pub fn status(&self) -> ServerStatus {
        let (tools, left_out) = lock(&self.tools).clone();
        let c = &self.config;
        let reached = match (&c.command, &c.url) {
            (Some(cmd), _) => std::iter::once(cmd.as_str())
                .chain(c.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            (None, Some(url)) => url.clone(),
            (None, None) => String::new(),
        };
        ServerStatus {
            name: c.name.clone(),
            reached,
            state: self.state(),
            tools,
            left_out,
            restarts: self.restarts.load(Ordering::Relaxed),
            walls: lock(&self.walls).clone(),
        }
    }

    /// Starts the server and keeps it running until partner stops it.
    pub async fn supervise(self: Arc<Self>) {
        let mut pause = Duration::from_millis(500);
        loop {
            if self.stopping.load(Ordering::SeqCst) {
                break;
            }
            // A server started again stays down, with why, until it is
            // ready: the state shown is the last one known.
            let ended = match self.config.command.is_some() {
                true => self.run_child().await,
                false => {
                    *lock(&self.walls) = "reached over HTTP".into();
                    self.run_remote().await
                }
            };
            *self.client.lock().await = None;
            if self.stopping.load(Ordering::SeqCst) {
                break;
            }
            match ended {
                Ok(ran_for) => {
                    if ran_for > MAX_BACKOFF {
                        pause = Duration::from_millis(500);
                    }
                }
                Err(why) => self.set_state(ServerState::Down { why }),
            }
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = self.stop.notified() => break,
            }
            pause = (pause * 2).min(MAX_BACKOFF);
            self.restarts.fetch_add(1, Ordering::Relaxed);
        }
        self.set_state(ServerState::Stopped);
    }

    /// Connects over `transport`, lists the tools, and keeps the client.
    async fn connect<T, E, A>(&self, transport: T) -> Result<(), String>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let client = tokio::time::timeout(START_TIMEOUT, ().serve(transport))
            .await
            .map_err(|_| format!("it did not start within {}s", START_TIMEOUT.as_secs()))?
            .map_err(|e| format!("it did not start: {e}"))?;
        let listed = tokio::time::timeout(START_TIMEOUT, list_tools(&self.config.name, &client))
            .await
            .map_err(|_| "it did not list its tools in time".to_string())??;
        *lock(&self.tools) = listed;
        *self.client.lock().await = Some(client);
        self.set_state(ServerState::Ready);
        Ok(())
    }

    /// Runs a stdio server until it exits or is stopped; how long it ran.
    async fn run_child(&self) -> Result<Duration, String> {
        let c = &self.config;
        let mut command = tokio::process::Command::new(c.command.as_deref().unwrap_or(""));
        command
            .args(&c.args)
            .env_clear()
            .envs(
                ["PATH", "HOME", "LANG", "TMPDIR"]
                    .iter()
                    .filter_map(|k| std::env::var(k).ok().map(|v| (*k, v))),
            )
            .envs(&c.env)
            .current_dir(
                c.cwd
                    .as_ref()
                    .map_or(self.base.clone(), |d| self.base.join(d)),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let contained = if c.sandbox {
            let writes: Vec<PathBuf> = c.writes.iter().map(|w| self.base.join(w)).collect();
            let cwd = c.cwd.as_ref().map(|d| self.base.join(d));
            let contained =
                partner_gate::sandbox::server::contain(cwd.as_deref(), &writes, c.network, &[])
                    .map_err(|e| format!("its sandbox: {e}"))?;
            command.current_dir(&contained.dir);
            let w = &contained.walls;
            *lock(&self.walls) = if w.complete() {
                format!("sandboxed ({})", w.raised())
            } else {
                format!(
                    "PARTLY SANDBOXED ({}; missing: {})",
                    w.raised(),
                    w.missing().unwrap_or_default()
                )
            };
            let mut prepared = contained.prepared;
            // SAFETY: `apply` makes only system calls on values built
            // before the fork (the shell's sandbox does the same).
            unsafe {
                command.pre_exec(move || prepared.apply());
            }
            Some((contained.report, (contained.tmp, contained.own_dir)))
        } else {
            *lock(&self.walls) = "NOT sandboxed (sandbox = false)".into();
            None
        };
        // Spawning waits for the child to exec (or fail to): off the
        // runtime's workers, which other servers' work needs meanwhile.
        let spawned = tokio::task::spawn_blocking(move || command.spawn())
            .await
            .map_err(|e| format!("starting it failed: {e}"))?;
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let why = contained
                    .and_then(|(report, _)| report.read())
                    .unwrap_or_else(|| e.to_string());
                return Err(format!("{}: {why}", c.command.as_deref().unwrap_or("")));
            }
        };
        // The private /tmp lives as long as the server.
        let _tmp = contained.map(|(_, tmp)| tmp);
        let started = std::time::Instant::now();
        let (Some(stdout), Some(stdin), Some(stderr)) =
            (child.stdout.take(), child.stdin.take(), child.stderr.take())
        else {
            return Err("its pipes could not be opened".into());
        };
        tokio::spawn(log_stderr(c.name.clone(), stderr));
        let transport = AsyncRwTransport::<RoleClient, _, _>::new_client(stdout, stdin)
            .with_max_line_length(MAX_MESSAGE);
        tokio::select! {
            connected = self.connect(transport) => connected?,
            status = child.wait() => return Err(exit_text(status)),
        }
        tokio::select! {
            status = child.wait() => Err(exit_text(status)),
            () = self.broken.notified() => {
                let _ = child.kill().await;
                Err("a call found it not answering".into())
            }
            () = self.stop.notified() => {
                let _ = child.kill().await;
                Ok(started.elapsed())
            }
        }
    }

    /// Keeps a streamable-HTTP server's client until a call finds it
    /// broken or partner stops it.
    async fn run_remote(&self) -> Result<Duration, String> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let c = &self.config;
        // The HTTP client's TLS needs a crypto provider: ring, as the rest
        // of partner uses (one installed first is kept).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(c.url.clone().unwrap_or_default());
        if let Some(token) = c.token()? {
            config = config.auth_header(token);
        }
        let started = std::time::Instant::now();
        self.connect(StreamableHttpClientTransport::from_config(config))
            .await?;
        tokio::select! {
            () = self.broken.notified() => Err("a call found it not answering".into()),
            () = self.stop.notified() => Ok(started.elapsed()),
        }
    }
}

fn exit_text(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(s) => format!("it exited ({s})"),
        Err(e) => format!("it could not be waited on: {e}"),
    }
}

/// The server's stderr, a line at a time, each cut to 500 characters,
/// into the log.
async fn log_stderr(name: String, stderr: tokio::process::ChildStderr) {
    let mut lines = tokio::io::BufReader::new(stderr).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        let text = String::from_utf8_lossy(&line[..line.len().min(2_000)]).into_owned();
        tracing::info!(server = %name, "{}", cut(text.trim_end(), 500));
    }
}

/// The tools a server lists, page by page up to [`MAX_TOOLS`]; the ones
/// left out, with why.
async fn list_tools(server: &str, client: &Client) -> Result<(Vec<ToolInfo>, Vec<String>), String> {
    let mut tools: Vec<ToolInfo> = Vec::new();
    let mut left_out = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = client
            .peer()
            .list_tools(params)
            .await
            .map_err(|e| format!("tools/list: {e}"))?;
        for tool in &page.tools {
            if tools.len() >= MAX_TOOLS {
                left_out.push(format!(
                    "{}: more than {MAX_TOOLS} tools",
                    cut(&tool.name, 40)
                ));
                continue;
            }
            match ToolInfo::of(server, tool) {
                Ok(info) if tools.iter().any(|t| t.verb == info.verb) => {
                    left_out.push(format!("{}: its verb {} is taken", info.name, info.verb));
                }
                Ok(info) => tools.push(info),
                Err(why) => left_out.push(why),
            }
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok((tools, left_out))
}
