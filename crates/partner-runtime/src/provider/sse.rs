//! A small server-sent-events parser for the providers' streams: `event:`
//! and `data:` lines, an empty line ends an event, `:` lines are comments.
//! A model server is untrusted: a line longer than [`MAX_LINE`] (see
//! [`partner_engine::net::Lines`]) or an event larger than [`MAX_EVENT`] is an
//! error, never unbounded memory.

/// Longest line read from a stream.
pub const MAX_LINE: usize = 1024 * 1024;

/// Largest event (all its `data:` lines together).
pub const MAX_EVENT: usize = 4 * 1024 * 1024;

/// An event larger than [`MAX_EVENT`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventTooLarge;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` name, if any.
    pub event: Option<String>,
    /// The `data:` lines, joined with newlines.
    pub data: String,
}

/// Builds events from lines.
#[derive(Debug, Default)]
pub struct SseParser {
    event: Option<String>,
    data: Vec<String>,
    size: usize,
}

impl SseParser {
    /// Feeds one line (without its line ending); returns an event when the
    /// line ends one, or an error when the event grew past [`MAX_EVENT`].
    pub fn line(&mut self, line: &str) -> Result<Option<SseEvent>, EventTooLarge> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            return Ok(self.finish());
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        self.size += value.len() + 1;
        if self.size > MAX_EVENT {
            self.event = None;
            self.data.clear();
            self.size = 0;
            return Err(EventTooLarge);
        }
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
        Ok(None)
    }

    /// Ends the stream: returns a last event not followed by an empty line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.size = 0;
        if self.data.is_empty() && self.event.is_none() {
            return None;
        }
        Some(SseEvent {
            event: self.event.take(),
            data: std::mem::take(&mut self.data).join("\n"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_data_and_comments() {
        let mut p = SseParser::default();
        let mut events = Vec::new();
        for line in [
            ": ping",
            "event: content_block_delta",
            "data: {\"a\":1}",
            "",
            "data: one",
            "data: two",
            "",
        ] {
            events.extend(p.line(line).unwrap());
        }
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event.as_deref(), Some("content_block_delta"));
        assert_eq!(events[1].data, "one\ntwo");
    }

    #[test]
    fn large_events_are_refused() {
        let mut p = SseParser::default();
        let chunk = format!("data: {}", "y".repeat(MAX_LINE - 10));
        let mut refused = false;
        for _ in 0..5 {
            refused |= p.line(&chunk).is_err();
        }
        assert!(refused);
    }
}
