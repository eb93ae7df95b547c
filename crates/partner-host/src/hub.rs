//! The daemon's event stream: every runtime event numbered in order, the
//! most recent kept for snapshots, and passed on to every client. Taking
//! the recent events and subscribing happen under one lock, so a client's
//! snapshot and the events after it join without a gap or a repeat.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use partner_protocol::{RECENT_EVENTS, Sequenced};
use partner_runtime::Event;

/// Events to clients.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    next: u64,
    recent: VecDeque<Sequenced>,
    /// Bytes of text the recent events hold.
    bytes: usize,
    out: broadcast::Sender<Sequenced>,
}

/// Most bytes of text the recent events hold: past it the oldest go,
/// whatever their number.
pub const RECENT_BYTES: usize = 64 << 20;

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
                bytes: 0,
                out,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Numbers an event, keeps it, and passes it on.
    pub fn publish(&self, mut event: Event) {
        let mut inner = self.lock();
        let size = event.text_len();
        let sequenced = Sequenced {
            seq: inner.next,
            event,
            cut: 0,
        };
        inner.next += 1;
        inner.bytes += size;
        inner.recent.push_back(sequenced.clone());
        while inner.recent.len() > RECENT_EVENTS
            || (inner.bytes > RECENT_BYTES && inner.recent.len() > 1)
        {
            if let Some(mut old) = inner.recent.pop_front() {
                inner.bytes -= old.event.text_len();
            }
        }
        let _ = inner.out.send(sequenced);
    }

    /// A recent event, whole, by its sequence number.
    pub fn event(&self, seq: u64) -> Option<Sequenced> {
        let inner = self.lock();
        let first = inner.recent.front()?.seq;
        let at = usize::try_from(seq.checked_sub(first)?).ok()?;
        inner.recent.get(at).cloned()
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
