//! [`McpHub`]: a constellation's MCP servers, each supervised on a small
//! runtime of the hub's own, and the calls of their tools — blocking, so
//! that a verb's handler (on a blocking thread) and a command (with no
//! runtime at all) call alike; each bounded in time and size and stopped
//! when the agent is halted.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use partner_core::cancel::{Cancel, cancelled};
use rmcp::model::{CallToolRequestParams, ContentBlock};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::ServerConfig;
use crate::server::{Server, ServerState, ServerStatus};
use crate::tools::{ToolInfo, cut};

/// Largest result kept of a call, as JSON; a larger one is refused.
pub const MAX_RESULT_BYTES: usize = 1024 * 1024;

/// Longest text of a result told to the agent (the whole is in the trace).
pub const MAX_RESULT_TEXT: usize = 16 * 1024;

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// Its content as text: text blocks as they are, other blocks named.
    pub text: String,
    /// The tool said the call failed (`isError`).
    pub is_error: bool,
    /// The result as the server sent it (content blocks, structured
    /// content, `isError`).
    pub result: Value,
    /// Time the server took, in microseconds.
    pub server_us: u64,
}

/// Why a call did not return a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No server has a tool of that verb.
    #[error("no MCP tool is called {0}")]
    NoTool(String),
    /// The server is not running now.
    #[error("MCP server {server} is not running: {why}")]
    Down {
        /// The server.
        server: String,
        /// Why.
        why: String,
    },
    /// It took longer than the server's timeout.
    #[error("{verb} took longer than {secs}s")]
    TimedOut {
        /// The tool's verb.
        verb: String,
        /// The timeout.
        secs: u64,
    },
    /// The server stopped or broke the protocol during the call.
    #[error("{verb} failed: {why}")]
    Failed {
        /// The tool's verb.
        verb: String,
        /// What happened.
        why: String,
    },
    /// The agent was halted.
    #[error("{0} was stopped: the agent was halted")]
    Cancelled(String),
}

/// A constellation's MCP servers.
pub struct McpHub {
    runtime: Option<tokio::runtime::Runtime>,
    servers: Vec<Arc<Server>>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.servers.len())
            .finish()
    }
}

impl McpHub {
    /// Starts every server of `configs` (relative paths read from `base`)
    /// and waits until each is ready or down, for at most `wait`.
    pub fn start(configs: &[ServerConfig], base: &Path, wait: Duration) -> Result<McpHub, String> {
        for c in configs {
            c.check()?;
        }
        if configs.iter().any(|c| c.command.is_some() && c.sandbox) {
            // What the machine's walls are is found once per process by
            // running a command behind them: here, not on the hub's one
            // worker, which the servers' own work needs.
            let _ = partner_gate::sandbox::walls();
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("partner-mcp")
            .enable_all()
            .build()
            .map_err(|e| format!("the MCP runtime: {e}"))?;
        let servers: Vec<Arc<Server>> = configs
            .iter()
            .map(|c| Arc::new(Server::new(c.clone(), base.to_path_buf())))
            .collect();
        for s in &servers {
            runtime.spawn(Arc::clone(s).supervise());
        }
        let hub = McpHub {
            runtime: Some(runtime),
            servers,
        };
        hub.settle(wait);
        Ok(hub)
    }

    /// Waits until no server is starting, for at most `wait`.
    fn settle(&self, wait: Duration) {
        let until = Instant::now() + wait;
        while self
            .servers
            .iter()
            .any(|s| s.state() == ServerState::Starting)
            && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every tool of every ready server.
    pub fn tools(&self) -> Vec<ToolInfo> {
        self.servers.iter().flat_map(|s| s.status().tools).collect()
    }

    /// The tool of a verb.
    pub fn tool(&self, verb: &str) -> Option<ToolInfo> {
        self.tools().into_iter().find(|t| t.verb == verb)
    }

    /// Where `server` may write, absolute: its `writes` and the directory
    /// it starts in (`cwd`), as its entry names them (none for a server
    /// reached over HTTP, or one run without a sandbox).
    pub fn roots(&self, server: &str) -> Vec<std::path::PathBuf> {
        self.servers
            .iter()
            .filter(|s| s.config.name == server && s.config.command.is_some() && s.config.sandbox)
            .flat_map(|s| {
                s.config
                    .cwd
                    .iter()
                    .chain(&s.config.writes)
                    .map(|w| s.base.join(w))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Whether `agent` may use the tools of `server`.
    pub fn serves(&self, server: &str, agent: &str) -> bool {
        self.servers
            .iter()
            .any(|s| s.config.name == server && s.config.serves(agent))
    }

    /// Each server as `partner mcp list` shows it.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    /// Calls the tool of `verb` with `args`, waiting for its result at most
    /// the server's timeout, or until `cancel` turns true.
    pub fn call(
        &self,
        verb: &str,
        args: Map<String, Value>,
        cancel: Option<Cancel>,
    ) -> Result<ToolResult, CallError> {
        let tool = self
            .tool(verb)
            .ok_or_else(|| CallError::NoTool(verb.to_string()))?;
        let server = self
            .servers
            .iter()
            .find(|s| s.config.name == tool.server)
            .cloned()
            .ok_or_else(|| CallError::NoTool(verb.to_string()))?;
        let runtime = self.runtime.as_ref().ok_or_else(|| CallError::Down {
            server: tool.server.clone(),
            why: "partner is stopping".into(),
        })?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let verb = verb.to_string();
        runtime.spawn(async move {
            let work = call_on(&server, &tool, args);
            let outcome = match cancel {
                Some(mut cancel) => tokio::select! {
                    done = work => done,
                    () = cancelled(&mut cancel) => Err(CallError::Cancelled(verb)),
                },
                None => work.await,
            };
            let _ = tx.send(outcome);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(CallError::Down {
                server: String::new(),
                why: "partner's MCP runtime stopped".into(),
            })
        })
    }

    /// Stops every server (a child is killed) and the hub's runtime.
    pub fn stop(&mut self) {
        for s in &self.servers {
            s.stopping.store(true, Ordering::SeqCst);
            s.stop.notify_waiters();
        }
        if let Some(runtime) = self.runtime.take() {
            // Not waited for: a hub may be dropped on an async worker. The
            // tasks are dropped, and a child with them (killed on drop).
            runtime.shutdown_background();
        }
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One call on a server's client, bounded by its timeout.
async fn call_on(
    server: &Server,
    tool: &ToolInfo,
    args: Map<String, Value>,
) -> Result<ToolResult, CallError> {
    let verb = tool.verb.clone();
    let timeout = server.config.call_timeout();
    let peer = {
        let client = server.client.lock().await;
        match client.as_ref() {
            Some(c) => c.peer().clone(),
            None => {
                let why = match server.state() {
                    ServerState::Down { why } => why,
                    ServerState::Starting => "it is starting".into(),
                    _ => "it stopped".into(),
                };
                return Err(CallError::Down {
                    server: tool.server.clone(),
                    why,
                });
            }
        }
    };
    let params = CallToolRequestParams::new(tool.name.clone()).with_arguments(args);
    let started = Instant::now();
    let result = match tokio::time::timeout(timeout, peer.call_tool(params)).await {
        Err(_) => {
            return Err(CallError::TimedOut {
                verb,
                secs: timeout.as_secs(),
            });
        }
        Ok(Err(e)) => {
            // The connection is gone or the server broke the protocol:
            // it is started again, and this call failed.
            server.broken.notify_waiters();
            return Err(CallError::Failed {
                verb,
                why: e.to_string(),
            });
        }
        Ok(Ok(result)) => result,
    };
    let server_us = started.elapsed().as_micros() as u64;
    let json = serde_json::to_value(&result).map_err(|e| CallError::Failed {
        verb: verb.clone(),
        why: e.to_string(),
    })?;
    let size = serde_json::to_vec(&json).map_or(usize::MAX, |b| b.len());
    if size > MAX_RESULT_BYTES {
        return Err(CallError::Failed {
            verb,
            why: format!("its result is {size} bytes (at most {MAX_RESULT_BYTES})"),
        });
    }
    let text = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image, {}]", i.mime_type),
            ContentBlock::Audio(a) => format!("[audio, {}]", a.mime_type),
            ContentBlock::Resource(_) => "[a resource]".to_string(),
            ContentBlock::ResourceLink(r) => format!("[resource {}]", r.uri),
            _ => "[content of a kind partner does not know]".to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let text = match (&result.structured_content, text.is_empty()) {
        (Some(structured), true) => structured.to_string(),
        _ => text,
    };
    Ok(ToolResult {
        text: cut(&text, MAX_RESULT_TEXT),
        is_error: result.is_error.unwrap_or(false),
        result: json,
        server_us,
    })
}
