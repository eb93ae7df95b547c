//! When a reminder is due: `in 20 minutes`, `in an hour`, `tomorrow
//! morning`, `tonight`, `next session`, or an ISO time. Times of day are
//! taken in UTC. An unparseable time is an error for the agent, never
//! silently dropped.

use partner_core::clock::Millis;

/// A resolved due time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The time, absent for "next session".
    pub at: Option<Millis>,
    /// True for "next session".
    pub next_session: bool,
}

const MINUTE: Millis = 60_000;
const HOUR: Millis = 60 * MINUTE;
const DAY: Millis = 24 * HOUR;

fn unit_ms(word: &str) -> Option<Millis> {
    Some(match word.trim_end_matches('s') {
        "sec" | "second" => 1000,
        "m" | "min" | "minute" => MINUTE,
        "h" | "hr" | "hour" => HOUR,
        "d" | "day" => DAY,
        "w" | "week" => 7 * DAY,
        _ => return None,
    })
}

fn at_hour(now: Millis, days_ahead: i64, hour: i64) -> Millis {
    (now.div_euclid(DAY) + days_ahead) * DAY + hour * HOUR
}

/// Checks how far ahead a reminder is: more than nothing and at most
/// [`partner_core::clock::MAX_SPAN`]; `None` (an overflow) is too far.
fn ahead(text: &str, ms: Option<Millis>) -> Result<Millis, String> {
    let max = partner_core::clock::MAX_SPAN.as_millis() as Millis;
    match ms {
        Some(ms) if ms <= 0 => Err(format!(
            "'{text}' is not in the future; a reminder must be ahead of now"
        )),
        Some(ms) if ms <= max => Ok(ms),
        _ => Err(format!(
            "'{text}' is too far ahead; a reminder can be at most 10 years away"
        )),
    }
}

/// Parses `text` relative to `now`.
pub fn parse_due(text: &str, now: Millis) -> Result<Due, String> {
    let lower = text.trim().to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let at = |ms: Millis| {
        Ok(Due {
            at: Some(ms),
            next_session: false,
        })
    };
    match words.as_slice() {
        ["next", "session"] | ["next", "time"] | ["later"] => {
            return Ok(Due {
                at: None,
                next_session: true,
            });
        }
        ["in", amount, unit] => {
            let n: Option<Millis> = match *amount {
                "a" | "an" | "one" => Some(1),
                "a few" => Some(3),
                n => n.parse().ok(),
            };
            if let (Some(n), Some(unit)) = (n, unit_ms(unit)) {
                return at(now.saturating_add(ahead(text, n.checked_mul(unit))?));
            }
        }
        ["in", compact] => {
            if let Ok(duration) = humantime::parse_duration(compact) {
                let ms = i64::try_from(duration.as_millis()).ok();
                return at(now.saturating_add(ahead(text, ms)?));
            }
        }
        ["tomorrow"] | ["tomorrow", "morning"] => return at(at_hour(now, 1, 9)),
        ["tomorrow", "afternoon"] => return at(at_hour(now, 1, 14)),
        ["tomorrow", "evening"] | ["tomorrow", "night"] => return at(at_hour(now, 1, 19)),
        ["tonight"] | ["this", "evening"] => {
            let today = at_hour(now, 0, 20);
            return at(if today > now { today } else { today + DAY });
        }
        ["this", "afternoon"] => {
            let today = at_hour(now, 0, 14);
            return at(if today > now { today } else { now + HOUR });
        }
        _ => {}
    }
    if let Ok(time) = humantime::parse_rfc3339_weak(text.trim()) {
        let ms = time
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| i64::try_from(d.as_millis()).ok());
        let Some(ms) = ms.filter(|ms| *ms > now) else {
            return Err(format!(
                "'{text}' has already passed; a reminder must be in the future"
            ));
        };
        ahead(text, Some(ms - now))?;
        return at(ms);
    }
    Err(format!(
        "I couldn't tell when '{text}' is; write it like \"in 20 minutes\", \"tomorrow morning\", \"tonight\", \"next session\" or 2026-11-22T09:00:00Z"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_forms() {
        let now = 10 * DAY + 8 * HOUR;
        assert_eq!(
            parse_due("in 20 minutes", now).unwrap().at,
            Some(now + 20 * MINUTE)
        );
        assert_eq!(parse_due("in an hour", now).unwrap().at, Some(now + HOUR));
        assert_eq!(parse_due("in 2h", now).unwrap().at, Some(now + 2 * HOUR));
        assert_eq!(
            parse_due("tomorrow morning", now).unwrap().at,
            Some(11 * DAY + 9 * HOUR)
        );
        assert_eq!(
            parse_due("tonight", now).unwrap().at,
            Some(10 * DAY + 20 * HOUR)
        );
        assert!(parse_due("next session", now).unwrap().next_session);
        assert_eq!(
            parse_due("1970-01-12T00:00:00Z", now).unwrap().at,
            Some(11 * DAY)
        );
        assert!(
            parse_due("when the moon is blue", now)
                .unwrap_err()
                .contains("couldn't tell when")
        );
    }

    #[test]
    fn times_out_of_range_are_refused() {
        let now = 10 * DAY;
        for text in [
            "in 999999999999999 hours",
            "in 9223372036854775807 weeks",
            "in 400000000y",
            "in 11 years",
            "in -5 hours",
            "in 0 minutes",
            "1970-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
        ] {
            assert!(parse_due(text, now).is_err(), "{text}");
        }
    }
}
