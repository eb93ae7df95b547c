//! Shared test helpers: an executor over a real SQLite file in a temp dir,
//! with a manual clock, and a tiny HTTP server on 127.0.0.1.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;

use partner::clock::ManualClock;
use partner::exec::{ActionReport, ActionStatus, ExecConfig, Executor, TurnContext};
use partner::memory::{BlockKind, BlockPermission, MemoryStore};
use partner::permission::Policy;
use partner::trace::{BlockSpec, TraceLog};

/// Noon, 2026-11-21 (UTC), in milliseconds.
pub const START: i64 = 1_795_262_400_000;

pub struct Rig {
    pub dir: tempfile::TempDir,
    pub exec: Executor,
    pub clock: ManualClock,
}

pub fn rig_with(policy: Policy, config: ExecConfig) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("constellation.db");
    let clock = ManualClock::new(START);
    let store = Arc::new(MemoryStore::open(&db).unwrap());
    let trace = TraceLog::open(partner::trace::trace_path_for(&db)).unwrap();
    let mut config = config;
    if config.agents.is_empty() {
        config.agents = vec!["ada".into(), "anchor".into(), "worker".into()];
    }
    let exec = Executor::with_parts(store, trace, policy, config, Arc::new(clock.clone())).unwrap();
    Rig { dir, exec, clock }
}

pub fn rig(policy: Policy) -> Rig {
    rig_with(policy, ExecConfig::default())
}

impl Rig {
    pub fn block(
        &self,
        agent: &str,
        label: &str,
        kind: BlockKind,
        permission: BlockPermission,
        value: &str,
    ) {
        self.exec
            .partner_set_block(BlockSpec {
                agent: agent.into(),
                label: label.into(),
                kind,
                permission,
                char_limit: 5000,
                description: String::new(),
                value: value.into(),
            })
            .unwrap();
    }

    /// Runs a turn for `agent` and returns every report.
    pub fn turn(&self, agent: &str, text: &str) -> Vec<ActionReport> {
        let mut ctx = TurnContext::new(agent, "main", "turn-1");
        let report = self.exec.run_turn(&mut ctx, text);
        assert!(report.errors.is_empty(), "{text:?}: {:?}", report.errors);
        report.actions
    }

    /// Runs one action and returns its only report.
    pub fn one(&self, agent: &str, text: &str) -> ActionReport {
        let reports = self.turn(agent, text);
        assert_eq!(reports.len(), 1, "{text:?}: {reports:?}");
        reports.into_iter().next().unwrap()
    }

    pub fn ok(&self, agent: &str, text: &str) -> ActionReport {
        let report = self.one(agent, text);
        assert_eq!(
            report.status,
            ActionStatus::Executed,
            "{text:?}: {}",
            report.text
        );
        report
    }

    pub fn value(&self, agent: &str, label: &str) -> Option<String> {
        partner::memory::blocks::get(&self.exec.store().conn(), agent, label)
            .unwrap()
            .map(|b| b.value)
    }

    pub fn trace(&self) -> Vec<partner::trace::TraceRecord> {
        let (records, warnings) = partner::trace::read_trace(self.exec.trace_path()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        records
    }
}

/// Serves each request with `respond(path)` → (status, content type, body),
/// on a thread, until the process ends. Returns the base URL.
pub fn http_server(
    respond: impl Fn(&str) -> (u16, &'static str, String) + Send + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                    break;
                }
            }
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .to_string();
            let (status, content_type, body) = respond(&path);
            let reason = if status == 200 { "OK" } else { "Error" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}
