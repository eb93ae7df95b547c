//! Time for the runtime: a [`Clock`] trait so tests can move time by hand,
//! and helpers to show times.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, the unit every stored time uses.
pub type Millis = i64;

/// Where the runtime reads the current time from.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> Millis;
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as Millis)
    }
}

impl SystemClock {
    /// Now, without needing the [`Clock`] trait in scope.
    pub fn now_ms_public(self) -> Millis {
        self.now_ms()
    }
}

/// A clock that only moves when told to, for tests.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `start`.
    pub fn new(start: Millis) -> Self {
        ManualClock(Arc::new(AtomicI64::new(start)))
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_millis() as Millis, Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set(&self, to: Millis) {
        self.0.store(to, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}

/// A shared clock.
pub type SharedClock = Arc<dyn Clock>;

/// The system clock, shared.
pub fn system_clock() -> SharedClock {
    Arc::new(SystemClock)
}

/// Formats a time as RFC 3339 in UTC, to the second.
pub fn format_time(ms: Millis) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(time).to_string()
}

/// Wall time that moves with tokio's clock, so the runtime's timers and the
/// times it stores agree, including under tokio's paused test clock.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    origin_wall: Millis,
    origin: tokio::time::Instant,
}

impl TokioClock {
    /// A clock reading `wall` now.
    pub fn starting_at(wall: Millis) -> Self {
        TokioClock {
            origin_wall: wall,
            origin: tokio::time::Instant::now(),
        }
    }

    /// A clock reading the system time now.
    pub fn now() -> Self {
        Self::starting_at(SystemClock.now_ms())
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> Millis {
        self.origin_wall + self.origin.elapsed().as_millis() as Millis
    }
}
