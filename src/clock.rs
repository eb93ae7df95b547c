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

/// The longest span partner accepts anywhere — request timeouts, pulses,
/// reminders, approvals for a while — from an agent, a config file or the
/// command line: ten years. Anything longer is refused with a message, so
/// no later arithmetic on times can overflow.
pub const MAX_SPAN: Duration = Duration::from_secs(10 * 365 * 86_400);

/// The last instant RFC 3339 can write (9999-12-31T23:59:59.999Z).
const LAST_WRITABLE: Millis = 253_402_300_799_999;

/// Parses a span (`30m`, `1h 30m`, `24h`, `2weeks`) no longer than
/// [`MAX_SPAN`]; the error says what is wrong.
pub fn parse_span(text: &str) -> Result<Duration, String> {
    let span = humantime::parse_duration(text.trim()).map_err(|e| match e {
        humantime::DurationError::NumberOverflow => "it is too long; the most is 10 years".into(),
        other => other.to_string(),
    })?;
    check_span(span)
}

/// Refuses a span longer than [`MAX_SPAN`].
pub fn check_span(span: Duration) -> Result<Duration, String> {
    if span > MAX_SPAN {
        Err(format!(
            "{} is too long; the most is 10 years",
            humantime::format_duration(Duration::from_secs(span.as_secs()))
        ))
    } else {
        Ok(span)
    }
}

/// `at` moved by `span`, saturating instead of overflowing.
pub fn after(at: Millis, span: Duration) -> Millis {
    at.saturating_add(i64::try_from(span.as_millis()).unwrap_or(i64::MAX))
}

/// Formats a time as RFC 3339 in UTC, to the second. Every value gives a
/// result: times before 1970 or after the year 9999 are shown as those
/// bounds.
pub fn format_time(ms: Millis) -> String {
    let ms = ms.clamp(0, LAST_WRITABLE);
    let time = UNIX_EPOCH + Duration::from_millis(ms as u64);
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
