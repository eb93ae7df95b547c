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

/// A span of time of at most [`MAX_SPAN`]: what every duration from an
/// agent, a config file, the command line or a client is read into, so
/// none can be longer. It reads from text (`90s`, `1h 30m`) or a whole
/// number of seconds, and is written as seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TimeSpan(Duration);

impl TimeSpan {
    /// No time at all.
    pub const ZERO: TimeSpan = TimeSpan(Duration::ZERO);

    /// A span from text, or why it is not one.
    pub fn parse(text: &str) -> Result<TimeSpan, String> {
        parse_span(text).map(TimeSpan)
    }

    /// A span of `secs` seconds, or why it is too long.
    pub fn from_secs(secs: u64) -> Result<TimeSpan, String> {
        check_span(Duration::from_secs(secs)).map(TimeSpan)
    }

    /// `span`, cut to [`MAX_SPAN`] when longer.
    pub fn saturating(span: Duration) -> TimeSpan {
        TimeSpan(span.min(MAX_SPAN))
    }

    /// The duration.
    pub fn get(self) -> Duration {
        self.0
    }

    /// Whole seconds.
    pub fn as_secs(self) -> u64 {
        self.0.as_secs()
    }
}

impl TryFrom<Duration> for TimeSpan {
    type Error = String;
    fn try_from(span: Duration) -> Result<TimeSpan, String> {
        check_span(span).map(TimeSpan)
    }
}

impl serde::Serialize for TimeSpan {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0.as_secs())
    }
}

impl<'de> serde::Deserialize<'de> for TimeSpan {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TimeSpan, D::Error> {
        /// Text (`90s`) or whole seconds.
        struct Written;
        impl serde::de::Visitor<'_> for Written {
            type Value = TimeSpan;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a span of time: text like \"90s\" or whole seconds")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<TimeSpan, E> {
                TimeSpan::parse(text).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, secs: u64) -> Result<TimeSpan, E> {
                TimeSpan::from_secs(secs).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, secs: i64) -> Result<TimeSpan, E> {
                u64::try_from(secs)
                    .map_err(|_| E::custom(format!("{secs} seconds is not a span of time")))
                    .and_then(|s| self.visit_u64(s))
            }
        }
        d.deserialize_any(Written)
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
