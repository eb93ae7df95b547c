//! Counts and sizes that cannot hold an out-of-range value: each kind of
//! limit is one type, checked where it is read — a config file, the
//! protocol, a trace — so a new path that reads one cannot skip the check.
//! (Spans of time are [`crate::clock::TimeSpan`].)

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A whole number from `MIN` to `MAX`, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bounded<const MIN: u64, const MAX: u64>(u64);

impl<const MIN: u64, const MAX: u64> Bounded<MIN, MAX> {
    /// The smallest value.
    pub const MIN: u64 = MIN;
    /// The largest value.
    pub const MAX: u64 = MAX;

    /// `n`, or why it is out of range.
    pub fn new(n: u64) -> Result<Self, String> {
        if (MIN..=MAX).contains(&n) {
            Ok(Bounded(n))
        } else {
            Err(format!(
                "{n} is out of range: it must be from {MIN} to {MAX}"
            ))
        }
    }

    /// `n` when it is at least 0, or why not.
    pub fn from_signed(n: i64) -> Result<Self, String> {
        u64::try_from(n)
            .map_err(|_| format!("{n} is out of range: it must be from {MIN} to {MAX}"))
            .and_then(Self::new)
    }

    /// `n` brought into range.
    pub fn clamped(n: u64) -> Self {
        Bounded(n.clamp(MIN, MAX))
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }

    /// The number as a `usize` (every bound fits one).
    pub fn to_usize(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl<const MIN: u64, const MAX: u64> Serialize for Bounded<MIN, MAX> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// A whole number, checked against the bounds.
        struct Whole<const MIN: u64, const MAX: u64>;
        impl<const MIN: u64, const MAX: u64> serde::de::Visitor<'_> for Whole<MIN, MAX> {
            type Value = Bounded<MIN, MAX>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a whole number from {MIN} to {MAX}")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
                Bounded::new(n).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
                Bounded::from_signed(n).map_err(E::custom)
            }
        }
        d.deserialize_any(Whole::<MIN, MAX>)
    }
}

impl<const MIN: u64, const MAX: u64> std::fmt::Display for Bounded<MIN, MAX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Characters a memory block may hold.
pub type CharLimit = Bounded<1, 1_000_000>;
/// Model passes in one turn.
pub type MaxPasses = Bounded<1, 32>;
/// Messages of history sent with a prompt.
pub type HistoryLen = Bounded<0, 10_000>;
/// Tokens a model may write in one reply.
pub type MaxTokens = Bounded<1, 1_000_000>;
/// Bytes of one model reply read.
pub type ReplyBytes = Bounded<1024, { 16 << 20 }>;
/// Retries of a model call.
pub type Retries = Bounded<0, 10>;
/// Tokens of context a model server gives a call.
pub type ContextTokens = Bounded<256, 10_000_000>;

/// Bytes one archival entry may hold.
pub type ArchivalBytes = Bounded<1, { 16 << 20 }>;
/// Actions a rate limit lets through at once.
pub type Burst = Bounded<1, 1_000_000>;

/// Reads a `usize` field as an [`ArchivalBytes`].
pub fn archival_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    ArchivalBytes::deserialize(d).map(ArchivalBytes::to_usize)
}

/// Reads a `u32` field as a [`Burst`].
pub fn burst<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Burst::deserialize(d).map(|b| b.get() as u32)
}

/// Reads a rate per minute: a finite number above 0 and at most a million.
pub fn per_minute<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let rate = f64::deserialize(d)?;
    if rate.is_finite() && rate > 0.0 && rate <= 1_000_000.0 {
        Ok(rate)
    } else {
        Err(serde::de::Error::custom(format!(
            "{rate} is out of range: a rate per minute is above 0 and at most 1000000"
        )))
    }
}

/// Reads a `usize` field as a [`CharLimit`] (for `#[serde(deserialize_with)]`
/// on structs that keep a plain number).
pub fn char_limit<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    CharLimit::deserialize(d).map(CharLimit::to_usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_are_refused_where_they_are_read() {
        let read = |json: &str| serde_json::from_str::<MaxPasses>(json).map_err(|e| e.to_string());
        assert_eq!(read("4").unwrap().get(), 4);
        for bad in [
            "0",
            "-1",
            "33",
            "18446744073709551615",
            "1e9",
            "\"4\"",
            "NaN",
            "null",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
        assert!(read("99").unwrap_err().contains("from 1 to 32"));
        assert_eq!(ReplyBytes::clamped(0).get(), 1024);
    }
}
