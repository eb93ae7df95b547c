//! The daemon's event stream: every runtime event numbered in order, the
//! most recent kept for snapshots, and passed on to every client. Taking
//! the recent events and subscribing happen under one lock, so a client's
//! snapshot and the events after it join without a gap or a repeat.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::agent::Event;
use crate::protocol::{RECENT_EVENTS, Sequenced};

/// Events to clients.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    next: u64,
    recent: VecDeque<Sequenced>,
    out: broadcast::Sender<Sequenced>,
}

/// Events a client may be behind before it is sent a snapshot instead.
pub const CLIENT_LAG: usize = 1024;

impl Hub {
    /// An empty stream.
    pub fn new() -> Self {
        let (out, _) = broadcast::channel(CLIENT_LAG);
        Hub {
            inner: Arc::new(Mutex::new(Inner {
                next: 1,
                recent: VecDeque::new(),
                out,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers an event, keeps it, and passes it on.
    pub fn publish(&self, event: Event) {
        let mut inner = self.lock();
        let sequenced = Sequenced {
            seq: inner.next,
            event,
        };
        inner.next += 1;
        if inner.recent.len() >= RECENT_EVENTS {
            inner.recent.pop_front();
        }
        inner.recent.push_back(sequenced.clone());
        let _ = inner.out.send(sequenced);
    }

    /// The recent events, and a subscription to every event after them.
    pub fn join(&self) -> (Vec<Sequenced>, broadcast::Receiver<Sequenced>) {
        let inner = self.lock();
        (
            inner.recent.iter().cloned().collect(),
            inner.out.subscribe(),
        )
    }
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new()
    }
}
